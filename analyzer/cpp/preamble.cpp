#include "cpp/preamble.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <sys/time.h>
#include <unistd.h>

namespace oomlint::cpp {
namespace {

/// Writes a precompiled header of its input to a chosen path (GeneratePCHAction takes the path
/// from the command line, which the tool's adjusters strip).
class WritePch : public clang::GeneratePCHAction {
 public:
  explicit WritePch(std::string out) : out_(std::move(out)) {}

 protected:
  bool BeginInvocation(clang::CompilerInstance& ci) override {
    ci.getFrontendOpts().OutputFile = out_;
    ci.getFrontendOpts().ProgramAction = clang::frontend::GeneratePCH;
    return true;
  }

 private:
  std::string out_;
};

class WritePchFactory : public clang::tooling::FrontendActionFactory {
 public:
  explicit WritePchFactory(std::string out) : out_(std::move(out)) {}
  std::unique_ptr<clang::FrontendAction> create() override { return std::make_unique<WritePch>(out_); }

 private:
  std::string out_;
};

class Silent : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level >= clang::DiagnosticsEngine::Error && std::getenv("OOMLINT_DEBUG_CLANG")) {
      llvm::SmallString<128> text;
      info.FormatDiagnostic(text);
      llvm::errs() << "clang (preamble): " << text << "\n";
    }
  }
};

/// Keeps the preamble cache bounded by size: a project's distinct #include blocks each get a PCH
/// (~100 MB with real LibTorch headers, ~10 MB with the bundled declarations), and past
/// kMaxBytes the least recently used go (a reused one is touched), the one just written aside.
void evictOldPreambles(const std::string& dir, const std::string& keep) {
  constexpr uint64_t kMaxBytes = uint64_t{1} << 30;
  struct Found {
    llvm::sys::TimePoint<> used;
    uint64_t size;
    std::string path;
  };
  std::vector<Found> found;
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef p = it->path();
    llvm::sys::fs::file_status st;
    if (!p.endswith(".pch") || llvm::sys::fs::status(p, st)) continue;
    total += st.getSize();
    if (p != keep) found.push_back({st.getLastModificationTime(), st.getSize(), p.str()});
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.used < b.used; });
  for (size_t i = 0; i < found.size() && total > kMaxBytes; ++i) {
    llvm::sys::fs::remove(found[i].path);
    llvm::sys::fs::remove(found[i].path + ".h");
    total -= found[i].size;
  }
}

/// Flags whose value, joined (`-Iinclude`, `--sysroot=sdk`) or as the next word, is a path; longer
/// names come before their prefixes.
constexpr std::string_view kPathFlags[] = {
    "-I", "-isystem-after", "-isystem", "-iquote", "-idirafter", "-include-pch", "-include", "-imacros", "-isysroot",
    "-iwithsysroot", "-iframeworkwithsysroot", "-iframework", "-iprefix", "-iwithprefixbefore", "-iwithprefix",
    "-ivfsoverlay", "-cxx-isystem", "-stdlib++-isystem", "-F", "-B", "-L", "--sysroot=", "--sysroot",
    "--include-directory-after=", "--include-directory-after", "--include-directory=", "--include-directory",
    "--include-with-prefix-after=", "--include-with-prefix-before=", "--include-with-prefix=", "--include-prefix=",
    "--prefix=", "--prefix", "-resource-dir=", "-resource-dir", "--gcc-toolchain=", "-fmodules-cache-path=",
    "-fmodule-map-file=", "-fprebuilt-module-path=", "-fprofile-use=", "-fprofile-instr-use=",
    "-fsanitize-blacklist=", "-fsanitize-ignorelist="};

/// Flags whose next word is a value that is never a path.
constexpr std::string_view kValueFlags[] = {"-x", "-D", "-U", "-Xclang", "-target", "-arch", "-mllvm", "--param"};

}  // namespace

bool flagsNameOnlyAbsolutePaths(const std::vector<std::string>& flags) {
  auto absolute = [](llvm::StringRef v) { return v.startswith("/"); };
  for (size_t i = 0; i < flags.size(); ++i) {
    llvm::StringRef f = flags[i];
    // A response file is found from the folder; a word no flag before it took is an input or a
    // value of a flag not known here (`/Iinclude` of clang-cl): either may be a relative path.
    if (!f.startswith("-")) return false;
    if (std::find(std::begin(kValueFlags), std::end(kValueFlags), std::string_view(f.data(), f.size())) != std::end(kValueFlags)) {
      ++i;  // its value is no path
      continue;
    }
    for (std::string_view p : kPathFlags) {
      if (!f.startswith(p)) continue;
      llvm::StringRef joined = f.drop_front(p.size());
      if (joined.empty()) {
        if (i + 1 >= flags.size() || !absolute(flags[i + 1])) return false;
        ++i;
      } else if (!absolute(joined)) {
        return false;
      }
      break;
    }
  }
  return true;
}

std::string precompiledPreamble(const std::string& cacheDir, const std::vector<std::string>& flags,
                                const std::string& preamble, const std::string& workDir, std::string_view salt,
                                llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs) {
  if (cacheDir.empty() || preamble.empty()) return {};
  std::string key = LLVM_VERSION_STRING "|prefix|" + (flagsNameOnlyAbsolutePaths(flags) ? std::string() : workDir) + "|" + preamble;
  for (const std::string& f : flags) key += "|" + f;
  size_t h = std::hash<std::string>{}(key) ^ (std::hash<std::string_view>{}(salt) * 31);
  char name[64];
  std::snprintf(name, sizeof(name), "preamble-%016zx.pch", h);
  std::string path = cacheDir + "/" + name;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (llvm::sys::fs::exists(path)) {
    ::utimes(path.c_str(), nullptr);  // used now: the eviction keeps what is in use
    return path;
  }
  if (llvm::sys::fs::create_directories(cacheDir)) return {};
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  // The preamble's text as a real file: the PCH refers to it, and every later parse checks it.
  std::string header = cacheDir + "/" + name + ".h";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(header, ec);
    if (ec) return {};
    out << preamble;
  }
  // The preamble is a header whatever the file is: its own `-x` goes, `-x c++-header` comes first.
  std::vector<std::string> pchFlags;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "-x" && i + 1 < flags.size()) {
      ++i;
      continue;
    }
    pchFlags.push_back(flags[i]);
  }
  // Not -fpch-instantiate-templates: the parses that load the PCH skip end-of-file instantiation
  // anyway (LowerAction parses a TU prefix), and the function bodies it would store bring
  // thousands of trait specializations that each later lookup of those templates deserialises.
  clang::tooling::FixedCompilationDatabase db(workDir, pchFlags);
  clang::tooling::ClangTool tool(db, {header}, std::make_shared<clang::PCHContainerOperations>(), fs);
  tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster({"-x", "c++-header"}, clang::tooling::ArgumentInsertPosition::BEGIN));
  Silent quiet;
  tool.setDiagnosticConsumer(&quiet);
  tool.setPrintErrorMessage(false);
  WritePchFactory factory(tmp);
  if (tool.run(&factory) != 0 || quiet.getNumErrors() > 0 || llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    llvm::sys::fs::remove(header);
    return {};
  }
  evictOldPreambles(cacheDir, path);
  return path;
}

}  // namespace oomlint::cpp
