#pragma once
/// oomlint's side of the C++ front end: finds and loads liboomlint-cpp.so the first time a C++
/// file is checked, and forwards parse requests to it. Thread-safe.

#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace oomlint::cpp {

/// Settings every C++ parse uses; set once from the command line before checking starts.
struct Settings {
  std::string buildDir;  // `-p DIR`: where compile_commands.json is; empty = search parent folders
  /// `--project-root`: headers below it are the project's own. Empty = the nearest folder above
  /// the file with pyproject.toml, setup.cfg, setup.py or .git; else the outermost folder above
  /// it with a CMakeLists.txt; else the file's own folder.
  std::string projectRoot;
  bool alone = false;    // `--no-project`: the file alone, without what its project's headers define
  bool verbose = false;  // `-v`: each file's Clang command line on standard error
  std::vector<std::string> extraArgsBefore, extraArgs;  // `--extra-arg-before`, `--extra-arg`
  std::vector<std::string> fixedFlags;                  // `-- FLAGS`: every file's flags, no database
  bool useFixedFlags = false;
};
void configure(Settings settings);

/// Parses one C++ document into the program model. On failure returns null and says why in
/// `error` (the front end is not installed, or Clang could not run with the file's flags).
/// `mode` receives "compile_commands" or "bundled".
std::unique_ptr<Module> parse(const std::string& path, std::string source, std::string& error, std::string* mode = nullptr);

/// True when Clang parses `source` (as `path`) without a syntax error. Used to refuse a fix
/// that would break the file.
bool parsesCleanly(const std::string& path, const std::string& source);

/// Whether the front end can be loaded, and if not, why.
bool available(std::string* why = nullptr);

}  // namespace oomlint::cpp
