#pragma once
/// The seam between oomlint and its Clang front end. The front end lives in a shared object
/// (liboomlint-cpp.so) that oomlint loads the first time it meets a C++ file: Clang and LLVM are
/// ~100 MB of shared libraries, and a run over Python files must not pay to map and relocate them.
/// Both sides are built by the same build with the same compiler, so C++ types cross the seam.

#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace oomlint::cpp {

struct ParseRequest {
  std::string path;      // reported path; also what compile_commands.json is searched for
  std::string source;    // the document's text (may differ from disk: editor buffers, stdin)
  std::string buildDir;  // `-p`: a folder holding compile_commands.json; empty = search parents
  std::string cacheDir;  // where precompiled preambles are kept; empty = do not cache
  /// Headers below this folder are the project's own: what the file calls from them is lowered
  /// too, for its summaries. Empty = the file alone.
  std::string projectRoot;
  /// clang-tidy's `--extra-arg-before`, `--extra-arg` and `-- FLAGS` (flags that stand for
  /// compile_commands.json; empty `fixedFlags` with `useFixedFlags` false: not given).
  std::vector<std::string> extraArgsBefore, extraArgs, fixedFlags;
  bool useFixedFlags = false;
};

struct ParseResult {
  std::unique_ptr<Module> module;  // null only when Clang could not run at all
  std::string error;               // why module is null
  /// How the file was read: "compile_commands" (its real flags) or "bundled" (oomlint's own
  /// declarations stand in for LibTorch). Reported by `--verbose`-style messages and tests.
  std::string mode;
  /// The Clang command the file was parsed with (`--verbose` prints it), and its directory.
  std::string commandLine, directory;
};

using ParseFunction = void (*)(const ParseRequest&, ParseResult&);

/// Name of the one symbol the shared object exports.
inline constexpr const char* kParseSymbol = "oomlint_cpp_parse_v1";

}  // namespace oomlint::cpp
