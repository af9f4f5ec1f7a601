#pragma once
/// Absolute, normalised paths (`..` and `.` resolved lexically, as ruff reports them): shared by
/// the file walk, the configuration lookup, the LSP server and the C++ front end, header-only so
/// the front end's shared object needs nothing of the analyzer library.

#include <unistd.h>

#include <string>
#include <vector>

namespace oomlint {

/// True when `path` is absolute and already in absolutePath's form: no empty, `.` or `..`
/// component and no trailing slash (what the walk and the project discovery pass around).
inline bool isNormalAbsolute(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() == 1) return true;
  if (path.back() == '/') return false;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '/') continue;
    // path[i] starts a component: it must not be empty, "." or "..".
    size_t next = i + 1;
    if (next == path.size() || path[next] == '/') return false;
    if (path[next] == '.') {
      size_t after = next + 1;
      if (after == path.size() || path[after] == '/') return false;
      if (path[after] == '.' && (after + 1 == path.size() || path[after + 1] == '/')) return false;
    }
  }
  return true;
}

inline std::string absolutePath(const std::string& path) {
  if (isNormalAbsolute(path)) return path;  // most calls: no allocation beyond the copy
  std::string p = path;
  if (p.empty() || p[0] != '/') {
    char buf[4096];
    if (::getcwd(buf, sizeof buf)) p = std::string(buf) + "/" + p;
  }
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    std::string part = p.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (const std::string& s : parts) out += "/" + s;
  return out.empty() ? "/" : out;
}

/// The folder holding `path`: "/" for a file at the root, "." for a bare name.
inline std::string parentDirectory(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace oomlint
