#pragma once
// Precompiled preambles: the #include block a file's parses share (LibTorch's headers take
// seconds to parse), written once per block and set of flags into a cache folder and reused by
// every later parse, in this process and the next.

#include <llvm/ADT/IntrusiveRefCntPtr.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <string>
#include <string_view>
#include <vector>

namespace oomlint::cpp {

/// The .pch of `preamble` parsed with `flags` in `workDir`, from `cacheDir` or written there now;
/// "" when none can be had (no folder, Clang failed on it). `salt` is folded into the key, so a
/// change of what the preamble may include from `fs` (the bundled declarations) makes a new one.
/// The folder counts in the key only when a flag names a path relative to it: a preamble whose
/// flags name absolute paths is the same wherever the compile command runs (each CMake build
/// folder of a source tree, a test's scratch folder).
std::string precompiledPreamble(const std::string& cacheDir, const std::vector<std::string>& flags,
                                const std::string& preamble, const std::string& workDir, std::string_view salt,
                                llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs);

/// True when every path among the compiler flags is absolute, so that the folder the compiler
/// runs in changes nothing they name. A value that may be a path and is not absolute (`-I include`,
/// `-Iinclude`, `--include-directory=include`, `@flags.rsp`, `--sysroot=sdk`) makes it false; so
/// does any word that no flag before it is known to take.
bool flagsNameOnlyAbsolutePaths(const std::vector<std::string>& flags);

}  // namespace oomlint::cpp
