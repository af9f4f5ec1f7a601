/* The portable build (OOMLINT_PORTABLE) links libstdc++ statically. GCC 12's libstdc++ was built
 * against glibc 2.36 and seeds std::random_device from arc4random(), which glibc only has since
 * 2.36: that one symbol alone would lift the binaries' glibc floor above Ubuntu 22.04's 2.35.
 * The link wraps it (-Wl,--wrap=arc4random) to this, which asks the kernel as arc4random does,
 * through getrandom() (glibc 2.25). */
#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

uint32_t __wrap_arc4random(void) {
  uint32_t value = 0;
  unsigned char* out = (unsigned char*)&value;
  size_t got = 0;
  while (got < sizeof value) {
    ssize_t n = getrandom(out + got, sizeof value - got, 0);
    if (n > 0) got += (size_t)n;
    else if (errno != EINTR) break; /* no entropy source at all: keep what there is */
  }
  return value;
}
