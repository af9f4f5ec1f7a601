/* The portable build's stand-in for terminfo (OOMLINT_PORTABLE): LLVM asks it only whether a
 * terminal shows colours, for diagnostics the C++ front end collects instead of printing.
 * Debian's libtinfo.a is not position-independent, so it cannot go into the shared module, and
 * linking libtinfo.so would add a dependency beyond glibc. Answering "no terminal description"
 * makes LLVM print without colours, as it does on a dumb terminal. */
struct term;

int setupterm(const char* term, int fd, int* errret) {
  (void)term;
  (void)fd;
  if (errret) *errret = 0; /* no terminal description found */
  return -1;               /* ERR */
}

int tigetnum(const char* capname) {
  (void)capname;
  return -2; /* not a numeric capability */
}

struct term* set_curterm(struct term* t) {
  (void)t;
  return 0;
}

int del_curterm(struct term* t) {
  (void)t;
  return 0;
}
