#pragma once
/// oomlint/trace_run.h: for oomlint/trace.h, what a recorded run says about itself: JSON text, the
/// command line and folder it ran with, and which source files are the program's own. Needs no
/// LibTorch.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace oomlint::trace::detail {

/// JSON text of `s`, quoted.
inline std::string jsonText(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// The program's own source: a file under the folder it runs in, and no installed package's. Its
/// debug information names LibTorch's own sources too (relative, from LibTorch's build), so the
/// file must be there on disk. This header's frames are the recorder's, not the program's.
inline bool isUserFile(const std::string& path, const std::string& cwd) {
  if (path.empty() || path == "??" || path[0] == '<') return false;
  const std::string self = "oomlint/trace.h";
  if (path.size() >= self.size() && path.compare(path.size() - self.size(), self.size(), self) == 0) return false;
  if (path.find("/site-packages/") != std::string::npos || path.find("/dist-packages/") != std::string::npos) return false;
  const std::string full = path[0] == '/' ? path : cwd + "/" + path;
  struct stat st {};
  return full.rfind(cwd + "/", 0) == 0 && ::stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

inline std::string shownPath(const std::string& path, const std::string& cwd) {
  return path.rfind(cwd + "/", 0) == 0 ? path.substr(cwd.size() + 1) : path;
}

inline std::vector<std::string> commandLine() {
  std::vector<std::string> argv;
  if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    std::string arg;
    for (int c; (c = std::fgetc(f)) != EOF;) {
      if (c) {
        arg += static_cast<char>(c);
      } else {
        argv.push_back(arg);
        arg.clear();
      }
    }
    std::fclose(f);
  }
  return argv;
}

inline std::string currentFolder() {
  std::vector<char> buf(4096);
  return getcwd(buf.data(), buf.size()) ? std::string(buf.data()) : std::string();
}

}  // namespace oomlint::trace::detail
