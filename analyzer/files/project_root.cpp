#include "files/project_root.h"

#include <sys/stat.h>

namespace oomlint {

namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

bool isDirectory(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The folder above `p`; "" above a top-level folder (the walk stops before "/").
std::string parentOf(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : p.substr(0, slash);
}

}  // namespace

std::string findProjectRoot(const std::string& absPath) {
  std::string dir = isDirectory(absPath) ? absPath : parentOf(absPath);
  for (; !dir.empty(); dir = parentOf(dir))
    for (const char* marker : {"/pyproject.toml", "/setup.cfg", "/setup.py", "/.git"})
      if (exists(dir + marker)) return dir;
  return {};
}

}  // namespace oomlint
