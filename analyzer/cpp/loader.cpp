#include "cpp/loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "cpp/plugin_api.h"
#include "files/project_root.h"
#include "util/executable.h"
#include "util/path.h"

namespace oomlint::cpp {
namespace {

struct Loaded {
  ParseFunction parse = nullptr;
  std::string error;
};

Settings& settings() {
  static Settings s;
  return s;
}

/// Where the shared object can be: an explicit override, next to the binary (build tree), or
/// ../lib/oomlint beside an installed binary.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("OOMLINT_CPP_FRONTEND")) out.emplace_back(env);
  std::string dir = executableDir();
  out.push_back(dir + "/liboomlint-cpp.so");
  out.push_back(dir + "/../lib/oomlint/liboomlint-cpp.so");
  return out;
}

const Loaded& load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& path : candidates()) {
      if (::access(path.c_str(), R_OK) != 0) {
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
      void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* err = ::dlerror();
        loaded.error = "cannot load the C++ front end " + path + ": " + (err ? err : "unknown error");
        return;
      }
      void* sym = ::dlsym(handle, kParseSymbol);
      if (!sym) {
        loaded.error = path + " is not an oomlint C++ front end of this version";
        return;
      }
      loaded.parse = reinterpret_cast<ParseFunction>(sym);
      return;
    }
    loaded.error = "the C++ front end (liboomlint-cpp.so) is not installed with this oomlint (looked in " + tried + ")";
  });
  return loaded;
}

}  // namespace

void configure(Settings s) { settings() = std::move(s); }

bool available(std::string* why) {
  const Loaded& l = load();
  if (why) *why = l.error;
  return l.parse != nullptr;
}

/// The folder whose headers are the file's project's own, or "" when the file is checked alone.
static std::string projectRootFor(const std::string& path) {
  const Settings& s = settings();
  if (s.alone) return {};
  if (!s.projectRoot.empty()) return absolutePath(s.projectRoot);
  std::string abs = absolutePath(path.empty() || path == "-" ? "stdin.cpp" : path);
  std::string root = findProjectRoot(abs);
  if (!root.empty()) return root;
  // A CMake project without a repository: its top CMakeLists.txt (each source folder may have one).
  for (std::string dir = parentDirectory(abs); dir.size() > 1; dir = parentDirectory(dir))
    if (::access((dir + "/CMakeLists.txt").c_str(), F_OK) == 0) root = dir;
  return root.empty() ? parentDirectory(abs) : root;
}

std::unique_ptr<Module> parse(const std::string& path, std::string source, std::string& error, std::string* mode) {
  const Loaded& l = load();
  if (!l.parse) {
    error = l.error;
    return nullptr;
  }
  ParseRequest req;
  req.path = path;
  req.source = std::move(source);
  req.buildDir = settings().buildDir;
  req.projectRoot = projectRootFor(path);
  req.extraArgsBefore = settings().extraArgsBefore;
  req.extraArgs = settings().extraArgs;
  req.fixedFlags = settings().fixedFlags;
  req.useFixedFlags = settings().useFixedFlags;
  ParseResult res;
  l.parse(req, res);
  if (settings().verbose && !res.commandLine.empty()) {
    static std::mutex printing;
    std::lock_guard<std::mutex> lock(printing);
    std::fprintf(stderr, "oomlint: %s (%s, in %s): %s\n", path.c_str(), res.mode.c_str(), res.directory.c_str(), res.commandLine.c_str());
  }
  if (mode) *mode = res.mode;
  if (!res.module) error = res.error.empty() ? "the C++ front end failed on " + path : res.error;
  return std::move(res.module);
}

bool parsesCleanly(const std::string& path, const std::string& source) {
  std::string error;
  std::unique_ptr<Module> m = parse(path, source, error);
  return m && m->syntaxIssues.empty();
}

}  // namespace oomlint::cpp
