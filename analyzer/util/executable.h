#pragma once
/// Where the running oomlint is: the C++ front end, the probe and the trace bootstrap are all
/// found beside it (build tree) or under ../lib/oomlint (installed). Header-only, like path.h.

#include <limits.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace oomlint {

/// The running binary: /proc/self/exe, else (no /proc: containers, chroots) the path it was
/// started by (AT_EXECFN) with its links resolved; "" when neither is known.
inline std::string executablePath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  if (const char* started = reinterpret_cast<const char*>(::getauxval(AT_EXECFN)))
    if (::realpath(started, buf)) return buf;
  return {};
}

/// The running binary's folder ("." when unknown).
inline std::string executableDir() {
  std::string path = executablePath();
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace oomlint
