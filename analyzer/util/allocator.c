/* The oomlint executable allocates with jemalloc (linked in from Debian's static archive; see
 * OOMLINT_JEMALLOC in CMakeLists.txt), configured here at compile time through the symbol jemalloc
 * reads before its first allocation.
 *
 * Why: a check is short and allocation-heavy (syntax trees, the model, facts), so much of its time
 * is the kernel's first touch of fresh pages. On a virtual machine a 4 KiB page fault costs ~15 us
 * (a 200-cell notebook faulted ~5,200 times: half of its check), and glibc's malloc backs memory
 * with 4 KiB pages unless the process starts with GLIBC_TUNABLES set. With transparent huge pages
 * one fault maps 2 MiB. Options (jemalloc's manual, "opt.*"):
 *   thp:always           every mapping jemalloc makes is advised MADV_HUGEPAGE (the kernel's
 *                        "madvise" THP mode, Debian's and Ubuntu's default, then backs it with
 *                        huge pages; under "never" nothing changes);
 *   metadata_thp:always  the same for jemalloc's own bookkeeping. */
const char* malloc_conf = "thp:always,metadata_thp:always";
