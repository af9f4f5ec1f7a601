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

/// A Python file oomlint ships (`name` under packaging/python, as "oomlint/trace.py"): beside a
/// build tree's binary (python/NAME) or under an installed one's ../lib/oomlint/python/NAME; ""
/// when neither is there.
inline std::string shippedPythonFile(const std::string& name) {
  std::string dir = executableDir();
  for (const std::string& p : {dir + "/python/" + name, dir + "/../lib/oomlint/python/" + name})
    if (::access(p.c_str(), R_OK) == 0) return p;
  return {};
}

}  // namespace oomlint
