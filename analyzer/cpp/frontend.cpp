// The Clang front end, built as liboomlint-cpp.so and loaded by oomlint on its first C++ file.
//
// A file is parsed with its real flags when a compile_commands.json covers it (`-p DIR`, or found in
// a parent folder as clang-tidy does). Otherwise oomlint's bundled declarations of the LibTorch API
// (analyzer/cpp/include/torch/torch.h, embedded here) stand in for <torch/torch.h> and friends. In
// both modes an #include that cannot be found is replaced by an empty file instead of ending the
// parse, so one missing project header does not cost the whole file's analysis.

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticIDs.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Lex/Lexer.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Sema/Sema.h>
#include <clang/Sema/SemaConsumer.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <mutex>
#include <dlfcn.h>
#include <unistd.h>

#include "cpp/lower.h"
#include "cpp/plugin_api.h"
#include "cpp/preamble.h"
#include "cpp/standins.h"
#include "util/path.h"

namespace oomlint::cpp {
namespace {

#include "bundled_torch_header.inc"  // kBundledTorchHeader: the text of analyzer/cpp/include/torch/torch.h
#include "bundled_prelude.inc"  // kBundledPrelude: analyzer/cpp/bundled_prelude.h, precompiled in bundled mode

constexpr const char* kBundledDir = "/oomlint-bundled/include";
constexpr const char* kMissingDir = "/oomlint-missing";

/// Header names a LibTorch program includes; in bundled mode each one is the stand-in.
constexpr std::array<const char*, 19> kTorchHeaders = {
    "torch/script.h", "torch/nn.h", "torch/optim.h", "torch/data.h", "torch/cuda.h", "torch/serialize.h",
    "torch/all.h", "torch/extension.h", "torch/nn/functional.h", "torch/nn/module.h", "torch/utils.h",
    "torch/autograd.h", "ATen/ATen.h", "ATen/autocast_mode.h", "c10/cuda/CUDACachingAllocator.h",
    "c10/core/Device.h", "c10/cuda/CUDAFunctions.h", "ATen/cuda/CUDAContext.h", "torch/types.h"};

void computeLineStarts(Module& m) { m.lineStarts = lineStartsOf(m.source); }

/// Comments that may carry suppressions (NOLINT..., noqa, oomlint:), found by a small scanner
/// that skips string and character literals.
void collectDirectiveComments(Module& m) {
  const std::string& s = m.source;
  size_t i = 0;
  auto keep = [&](size_t b, size_t e) {
    std::string_view text(s.data() + b, e - b);
    if (text.find("NOLINT") == std::string_view::npos && text.find("noqa") == std::string_view::npos &&
        text.find("NOQA") == std::string_view::npos && text.find("oomlint:") == std::string_view::npos)
      return;
    Comment c;
    c.begin = static_cast<uint32_t>(b);
    c.end = static_cast<uint32_t>(e);
    c.line = m.lineOf(c.begin);
    m.comments.push_back(c);
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      size_t e = s.find('\n', i);
      if (e == std::string::npos) e = s.size();
      size_t end = e;
      if (end > i && s[end - 1] == '\r') --end;
      keep(i, end);
      i = e;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t e = s.find("*/", i + 2);
      e = e == std::string::npos ? s.size() : e + 2;
      keep(i, e);
      i = e;
    } else if (c == 'R' && i + 1 < s.size() && s[i + 1] == '"') {
      // Raw string R"delim( ... )delim".
      size_t open = s.find('(', i + 2);
      if (open == std::string::npos || open - i > 20) {
        ++i;
        continue;
      }
      std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
      size_t e = s.find(close, open);
      i = e == std::string::npos ? s.size() : e + close.size();
    } else if (c == '"' || c == '\'') {
      // A digit separator (1'000) is not a character literal.
      if (c == '\'' && i > 0 && std::isalnum(static_cast<unsigned char>(s[i - 1]))) {
        ++i;
        continue;
      }
      ++i;
      while (i < s.size() && s[i] != c && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
      ++i;
    } else {
      ++i;
    }
  }
}

/// Keeps the first syntax error of the main file; semantic errors are expected in bundled mode
/// (the stand-in header does not declare everything) and say nothing about the user's code.
/// In bundled mode even some "parse issues" are echoes of an undeclared name (`foo<float>(x)`
/// with `foo` unknown reads as a comparison), so only errors no declaration can cause count there.
/// With the file's real flags (compile_commands.json) it fails closed, as clang-tidy does: the
/// first error of any kind, in the file, in a header it includes, or in the flags themselves,
/// means the analysis may be missing code, and is reported.
class FirstSyntaxError : public clang::DiagnosticConsumer {
 public:
  /// `flags`: where the real flags came from, for the message ("compile_commands.json").
  FirstSyntaxError(Module& m, bool bundled, std::string flags)
      : m_(m), bundled_(bundled), debug_(std::getenv("OOMLINT_DEBUG_CLANG") != nullptr) {
    flags_ = std::move(flags);
  }
  /// A precompiled preamble that could not be used (stale, or built with other flags).
  bool pchRejected() const { return pchRejected_; }
  /// The C++ standard library's headers were not found: the parse is too broken to analyse.
  bool noStandardLibrary() const { return noStandardLibrary_; }
  /// The main file's errors about names nothing declares (Standins reads them).
  std::vector<UnresolvedName> takeUnresolved() { return std::move(unresolved_); }
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level >= clang::DiagnosticsEngine::Fatal) {
      llvm::SmallString<128> text;
      info.FormatDiagnostic(text);
      llvm::StringRef t = text.str();
      if (t.contains("precompiled header") || t.contains("PCH") || t.contains("AST file")) pchRejected_ = true;
    }
    if (debug_ && level >= clang::DiagnosticsEngine::Warning) {
      llvm::SmallString<128> text;
      info.FormatDiagnostic(text);
      std::string where = info.hasSourceManager() ? info.getLocation().printToString(info.getSourceManager()) : "";
      llvm::errs() << "clang: " << where << ": " << text << "\n";
    }
    if (level < clang::DiagnosticsEngine::Error) return;
    if (!info.hasSourceManager() || info.getLocation().isInvalid()) {
      if (!bundled_ && flagsError_.empty()) {  // the driver: an option Clang does not know, a missing input
        llvm::SmallString<128> text;
        info.FormatDiagnostic(text);
        flagsError_ = text.str().str();
      }
      return;
    }
    const clang::SourceManager& sm = info.getSourceManager();
    clang::SourceLocation loc = sm.getFileLoc(info.getLocation());
    if (!sm.isWrittenInMainFile(loc)) {
      if (!bundled_ && firstError_.message.empty()) noteHeaderError(sm, loc, info);
      return;
    }
    uint32_t off = sm.getFileOffset(loc);
    uint32_t line = m_.lineOf(off);
    llvm::SmallString<128> text;
    info.FormatDiagnostic(text);
    llvm::StringRef t = text.str();
    unsigned category = clang::DiagnosticIDs::getCategoryNumberForDiag(info.getID());
    if (clang::DiagnosticIDs::getCategoryNameFromID(category) != llvm::StringRef("Parse Issue")) {
      if (!bundled_ && firstError_.message.empty()) firstError_ = issueAt(off, "C++ error: " + t.str());
      // A name the stand-in (or an include that could not be found) does not declare: the
      // parse issues of that line are its echo (`ns::Type x(1);` then reads as an expression).
      if (bundled_ && (t.startswith("use of undeclared") || t.startswith("unknown type name") || t.startswith("no template named") ||
                       t.startswith("no member named") || t.startswith("no type named") || t.contains("undeclared identifier")))
        undeclaredLines_.push_back(line);
      if (isUnresolvedNameError(std::string_view(t.data(), t.size()))) unresolved_.push_back({t.str(), off});
      return;
    }
    if (!bundled_ && firstError_.message.empty()) firstError_ = issueAt(off, "C++ syntax error: " + t.str());
    if (bundled_ && !(t.startswith("expected ';'") || t.startswith("expected '}'") || t.startswith("extraneous closing brace") ||
                      t.startswith("missing terminating") || t.startswith("unterminated")))
      return;
    SyntaxIssue issue;
    issue.span.begin = issue.span.end = off;
    issue.span.line = line;
    issue.span.col = off - m_.lineStarts[issue.span.line - 1];
    issue.span.endLine = issue.span.line;
    issue.span.endCol = issue.span.col;
    issue.message = "C++ syntax error: " + std::string(text.str());
    candidates_.push_back(std::move(issue));
  }

  using clang::DiagnosticConsumer::finish;  // Clang's own end-of-file hook stays as it is

  /// After the parse: the first syntax error that is not the echo of an undeclared name; with
  /// real flags, else the flags' error, a missing header, another error of the file or one of a
  /// header it includes.
  void finish(const std::vector<std::pair<uint32_t, std::string>>& missingHeaders, const std::vector<std::string>& missingStandard) {
    if (!missingStandard.empty()) {
      noStandardLibrary_ = true;
      // No C++ standard library on the search paths (a machine without a C++ compiler): neither
      // the bundled LibTorch declarations nor the file can be read, so the file is not checked.
      m_.syntaxIssues.push_back(issueAt(0, "C++ standard library headers not found (<" + missingStandard.front() +
                                               ">): Clang reads C++ with a C++ compiler's headers; install g++ "
                                               "(Debian, Ubuntu: apt-get install g++)"));
      return;
    }
    if (!bundled_) {
      // Real flags: the flags' own error, else a header that is not there (the errors after it
      // are its echoes), else the first error wherever it is.
      std::string why = " (with the flags of " + flags_ + "; the analysis may be missing code)";
      if (!flagsError_.empty()) m_.syntaxIssues.push_back(issueAt(0, "C++ flags rejected by Clang: " + flagsError_ + why));
      else if (!missingHeaders.empty())
        m_.syntaxIssues.push_back(issueAt(missingHeaders.front().first, "C++ error: '" + missingHeaders.front().second + "' file not found" + why));
      else if (!firstError_.message.empty()) m_.syntaxIssues.push_back(issueAt(firstError_.span.begin, firstError_.message + why));
      return;
    }
    for (SyntaxIssue& issue : candidates_) {
      if (std::find(undeclaredLines_.begin(), undeclaredLines_.end(), issue.span.line) != undeclaredLines_.end()) continue;
      m_.syntaxIssues.push_back(std::move(issue));
      return;
    }
  }

 private:
  SyntaxIssue issueAt(uint32_t off, std::string message) const {
    SyntaxIssue issue;
    issue.span.begin = issue.span.end = off;
    issue.span.line = m_.lineOf(off);
    issue.span.col = off - m_.lineStarts[issue.span.line - 1];
    issue.span.endLine = issue.span.line;
    issue.span.endCol = issue.span.col;
    issue.message = std::move(message);
    return issue;
  }

  /// An error inside an included header: reported at the main file's #include that leads to it.
  void noteHeaderError(const clang::SourceManager& sm, clang::SourceLocation loc, const clang::Diagnostic& info) {
    clang::SourceLocation at = loc;
    for (int guard = 0; guard < 64 && at.isValid() && !sm.isWrittenInMainFile(at); ++guard) at = sm.getIncludeLoc(sm.getFileID(at));
    if (at.isInvalid() || !sm.isWrittenInMainFile(at)) return;  // the preamble or a forced include
    llvm::SmallString<128> text;
    info.FormatDiagnostic(text);
    clang::PresumedLoc where = sm.getPresumedLoc(loc);
    std::string place = where.isValid() ? std::string(where.getFilename()) + ":" + std::to_string(where.getLine()) : "a header";
    firstError_ = issueAt(sm.getFileOffset(sm.getFileLoc(at)), "C++ error in " + place + ": " + text.str().str());
  }

  std::string flags_;
  std::string flagsError_;
  SyntaxIssue firstError_;  // real flags: the first error of the file or of a header it includes
  Module& m_;
  bool bundled_;
  bool debug_;
  bool pchRejected_ = false;
  bool noStandardLibrary_ = false;
  std::vector<SyntaxIssue> candidates_;
  std::vector<uint32_t> undeclaredLines_;
  std::vector<UnresolvedName> unresolved_;
};

/// A header of the C++ standard library (found on the compiler's paths, never in the project).
bool isStandardLibraryHeader(llvm::StringRef name) {
  static const std::array<llvm::StringRef, 40> kNames = {
      "algorithm", "array",    "atomic",     "chrono",  "cmath",     "cstddef",       "cstdint",  "cstdio",
      "cstdlib",   "cstring",  "deque",      "exception", "fstream", "functional",    "initializer_list", "iomanip",
      "iostream",  "istream",  "iterator",   "limits",  "list",      "map",           "memory",   "mutex",
      "numeric",   "optional", "ostream",    "random",  "set",       "sstream",       "stdexcept", "string",
      "string_view", "thread", "tuple",      "type_traits", "unordered_map", "unordered_set", "utility", "vector"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

/// Turns a missing #include into an empty header (or, for LibTorch names, the stand-in), and
/// remembers where the main file asked for it.
class MissingIncludes : public clang::PPCallbacks {
 public:
  MissingIncludes(llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fs, const clang::SourceManager& sm,
                  std::vector<std::pair<uint32_t, std::string>>& missing, std::vector<std::string>& missingStandard)
      : fs_(std::move(fs)), sm_(sm), missing_(missing), missingStandard_(missingStandard) {}
  void InclusionDirective(clang::SourceLocation hash, const clang::Token&, llvm::StringRef name, bool, clang::CharSourceRange,
                          const clang::FileEntry* file, llvm::StringRef, llvm::StringRef, const clang::Module*,
                          clang::SrcMgr::CharacteristicKind) override {
    if (file && file->getName().startswith(kMissingDir) && sm_.isWrittenInMainFile(hash))
      missing_.emplace_back(sm_.getFileOffset(hash), name.str());
  }
  bool FileNotFound(llvm::StringRef name, llvm::SmallVectorImpl<char>& recovery) override {
    if (name.empty() || name.startswith("/") || name.contains("..")) return false;
    if (isStandardLibraryHeader(name)) missingStandard_.push_back(name.str());
    bool torch = name.startswith("torch/") || name.startswith("ATen/") || name.startswith("c10/");
    // A folder of its own for each missing header: Clang looked for this one in the folders of the
    // earlier ones, and its file manager remembers that it was not there.
    std::string dir = std::string(kMissingDir) + "/" + std::to_string(recovered_++);
    fs_->addFile(dir + "/" + name.str(), 0, llvm::MemoryBuffer::getMemBufferCopy(torch ? "#include <torch/torch.h>\n" : ""));
    recovery.assign(dir.begin(), dir.end());
    return true;
  }

 private:
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fs_;
  const clang::SourceManager& sm_;
  std::vector<std::pair<uint32_t, std::string>>& missing_;
  std::vector<std::string>& missingStandard_;
  uint32_t recovered_ = 0;
};

class LowerConsumer : public clang::SemaConsumer {
 public:
  LowerConsumer(Module& m, std::string projectRoot) : m_(m), projectRoot_(std::move(projectRoot)) {}
  void InitializeSema(clang::Sema& sema) override { sema_ = &sema; }
  void ForgetSema() override { sema_ = nullptr; }
  bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
    for (const clang::Decl* d : group) topLevel_.push_back(d);
    // Function template bodies used so far would be instantiated at the end of the translation
    // unit: code generation needs them, the model does not (templates are lowered from their
    // patterns), and for LibTorch code they are most of the parse. Errors inside them are
    // semantic, which the front end does not report anyway.
    if (sema_) sema_->PendingInstantiations.clear();
    return true;
  }
  // Declarations a precompiled preamble hands over eagerly are never spelled in the main file.
  void HandleInterestingDecl(clang::DeclGroupRef) override {}
  void HandleTranslationUnit(clang::ASTContext& ctx) override { lowerTranslationUnit(ctx, topLevel_, m_, projectRoot_); }

 private:
  Module& m_;
  std::string projectRoot_;
  clang::Sema* sema_ = nullptr;
  std::vector<const clang::Decl*> topLevel_;  // parsed from this file, never from the preamble
};

class LowerAction : public clang::ASTFrontendAction {
 public:
  LowerAction(Module& m, llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fs, std::string projectRoot,
              std::vector<std::pair<uint32_t, std::string>>& missing, std::vector<std::string>& missingStandard)
      : m_(m), fs_(std::move(fs)), projectRoot_(std::move(projectRoot)), missing_(missing), missingStandard_(missingStandard) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<LowerConsumer>(m_, projectRoot_);
  }
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    ci.getPreprocessor().addPPCallbacks(std::make_unique<MissingIncludes>(fs_, ci.getSourceManager(), missing_, missingStandard_));
    return true;
  }
  // Parsed as a translation-unit prefix: Sema then skips its end-of-file work (defining the vtables
  // and instantiating the functions the file used, checking tentative definitions and unused
  // declarations), which serves code generation and warnings, not the model. With a precompiled
  // preamble that work mostly deserialises the preamble's classes again: half of the time of a
  // small LibTorch file.
  clang::TranslationUnitKind getTranslationUnitKind() override { return clang::TU_Prefix; }

 private:
  Module& m_;
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fs_;
  std::string projectRoot_;
  std::vector<std::pair<uint32_t, std::string>>& missing_;
  std::vector<std::string>& missingStandard_;
};

class LowerActionFactory : public clang::tooling::FrontendActionFactory {
 public:
  LowerActionFactory(Module& m, llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fs, std::string projectRoot)
      : m_(m), fs_(std::move(fs)), projectRoot_(std::move(projectRoot)) {}
  std::unique_ptr<clang::FrontendAction> create() override { return std::make_unique<LowerAction>(m_, fs_, projectRoot_, missing, missingStandard); }
  /// Where the main file #includes a header that could not be found: (offset, name).
  std::vector<std::pair<uint32_t, std::string>> missing;
  /// C++ standard library headers that could not be found, wherever they were included from.
  std::vector<std::string> missingStandard;

 private:
  Module& m_;
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fs_;
  std::string projectRoot_;
};

bool isHeaderPath(llvm::StringRef path) {
  return path.endswith(".h") || path.endswith(".hpp") || path.endswith(".hh") || path.endswith(".cuh");
}

/// The compile command for `file`, or none.
std::unique_ptr<clang::tooling::CompilationDatabase> findDatabase(const std::string& file, const std::string& buildDir,
                                                                  std::string& error) {
  std::unique_ptr<clang::tooling::CompilationDatabase> db;
  if (!buildDir.empty()) {
    db = clang::tooling::CompilationDatabase::loadFromDirectory(buildDir, error);
    if (!db) error = "cannot load compile_commands.json from " + buildDir + ": " + error;
  } else {
    std::string ignored;
    db = clang::tooling::CompilationDatabase::autoDetectFromSource(file, ignored);
  }
  if (!db) return nullptr;
  if (db->getCompileCommands(file).empty()) db = clang::tooling::inferMissingCompileCommands(std::move(db));
  if (db->getCompileCommands(file).empty()) return nullptr;
  return db;
}

/// Debugging aid (OOMLINT_DUMP_MODEL=1): the lowered statements and expressions.
void dumpModel(const Module& m) {
  static const char* kExpr[] = {"Name", "Attribute", "Call", "Subscript", "BinOp", "UnaryOp", "Compare", "BoolOp",
                                "Number", "String", "Bool", "None", "Container", "Lambda", "Conditional", "Other"};
  static const char* kStmt[] = {"Expr", "Assign", "AugAssign", "For", "While", "If", "With", "Try", "Return", "Delete",
                                "FunctionDef", "ClassDef", "Import", "Break", "Continue", "Raise", "Pass", "Other"};
  for (size_t i = 0; i < m.stmts.size(); ++i) {
    const Stmt& s = m.stmts[i];
    llvm::errs() << "stmt " << i << " " << kStmt[static_cast<int>(s.kind)] << " line " << s.span.line << "-" << s.span.endLine
                 << " fn " << s.function << " parent " << static_cast<int>(s.parent) << " target " << static_cast<int>(s.target)
                 << " value " << static_cast<int>(s.value) << "\n";
  }
  for (size_t i = 0; i < m.exprs.size(); ++i) {
    const Expr& e = m.exprs[i];
    llvm::errs() << "expr " << i << " " << kExpr[static_cast<int>(e.kind)] << " '" << e.text << "' [" << m.textOf(e.span)
                 << "] canon=" << m.names[e.canonical] << " lhs " << static_cast<int>(e.lhs) << " stmt " << static_cast<int>(e.stmt);
    for (uint32_t a = 0; a < e.argCount; ++a)
      llvm::errs() << " " << m.args[e.firstArg + a].keyword << "=" << m.args[e.firstArg + a].value;
    llvm::errs() << "\n";
  }
}


/// Compiler flags for `file` (without the compiler name and the input): the compile command's,
/// stripped of what only a build needs, or oomlint's bundled-mode defaults.
/// Clang's builtin headers (stddef.h, the intrinsics): a `clang` folder beside this shared object
/// where a relocatable install (the wheel, the tarball) ships them, else the build machine's.
const std::string& resourceDir() {
  static const std::string dir = [] {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&resourceDir), &info) && info.dli_fname) {
      std::string beside = parentDirectory(absolutePath(info.dli_fname)) + "/clang";
      if (::access((beside + "/include/stddef.h").c_str(), R_OK) == 0) return beside;
    }
    return std::string(OOMLINT_CLANG_RESOURCE_DIR);
  }();
  return dir;
}

/// `path` made absolute against `directory` when relative, with `.` and `..` removed.
std::string absoluteIn(const std::string& directory, const std::string& path) {
  llvm::SmallString<256> abs(path);
  if (!llvm::sys::path::is_absolute(abs)) {
    abs = directory;
    llvm::sys::path::append(abs, path);
  }
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  return std::string(abs.str());
}

std::vector<std::string> flagsFor(const std::string& file, const clang::tooling::CompileCommand* cmd, std::string& directory) {
  std::vector<std::string> flags;
  bool header = isHeaderPath(file);
  bool cuda = llvm::StringRef(file).endswith(".cu") || llvm::StringRef(file).endswith(".cuh");
  if (header) flags.insert(flags.end(), {"-x", "c++-header"});
  if (!cmd) {
    directory = ".";
    // CUDA sources are read as C++ (host code is what the rules read; Clang's CUDA mode would
    // want a CUDA installation), with the CUDA keywords defined away.
    if (cuda && !header) flags.insert(flags.end(), {"-x", "c++"});
    flags.insert(flags.end(), {"-std=c++17", "-I", kBundledDir});
    if (cuda)
      flags.insert(flags.end(), {"-D__global__=", "-D__device__=", "-D__host__=", "-D__shared__=", "-D__CUDACC__"});
  } else {
    directory = cmd->Directory;
    std::string given = cmd->Filename;
    std::string givenAbs = absoluteIn(directory, given);
    std::string fileAbs = absoluteIn(directory, file);
    const std::vector<std::string>& cl = cmd->CommandLine;
    for (size_t i = 1; i < cl.size(); ++i) {
      const std::string& a = cl[i];
      if (a == given || a == file) continue;
      // The source, however the database spells it (`m.cpp` run in `directory`, `./m.cpp`,
      // `/abs/m.cpp`): ClangTool adds it once itself, and a second copy is a second input.
      if (!a.empty() && a[0] != '-') {
        std::string abs = absoluteIn(directory, a);
        if (abs == givenAbs || abs == fileAbs) continue;
      }
      if (a == "-c" || a == "-MD" || a == "-MMD" || a == "-M" || a == "-MM") continue;
      if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ") {
        ++i;
        continue;
      }
      if (llvm::StringRef(a).startswith("-o") && a.size() > 2) continue;
      // Never load code named by a (possibly untrusted) build database: Clang plugins are
      // shared objects it would dlopen.
      if (llvm::StringRef(a).startswith("-fplugin") || llvm::StringRef(a).startswith("-fpass-plugin")) continue;
      if (a == "-Xclang" && i + 1 < cl.size()) {
        llvm::StringRef next = cl[i + 1];
        if (next == "-load" || next == "-plugin" || next == "-add-plugin" || next.startswith("-plugin-arg")) {
          ++i;                                                      // `-Xclang -load`
          if (i + 2 < cl.size() && cl[i + 1] == "-Xclang") i += 2;  // `-Xclang evil.so`
          continue;
        }
      }
      flags.push_back(a);
    }
    // Real headers win; the stand-in only fills in when LibTorch's are not on the paths.
    flags.insert(flags.end(), {"-idirafter", kBundledDir});
  }
  flags.insert(flags.end(), {"-w", "-ferror-limit=0", "-fno-spell-checking", "-Qunused-arguments", "-fno-caret-diagnostics",
                             "-Wno-unknown-warning-option", "-resource-dir=" + resourceDir()});
  return flags;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> bundledFiles() {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  memory->addFile(std::string(kBundledDir) + "/torch/torch.h", 0, llvm::MemoryBuffer::getMemBuffer(kBundledTorchHeader));
  for (const char* name : kTorchHeaders)
    memory->addFile(std::string(kBundledDir) + "/" + name, 0, llvm::MemoryBuffer::getMemBuffer("#include <torch/torch.h>\n"));
  memory->addFile(std::string(kMissingDir) + "/.keep", 0, llvm::MemoryBuffer::getMemBuffer(""));
  return memory;
}

/// One Clang run over `source`: fills `m` (module, syntax issue). False when Clang did not run.
bool parseOnce(Module& m, const std::string& file, const std::string& directory, std::vector<std::string> flags,
               const std::string& pch, bool bundled, const std::string& flagsOrigin, const std::string& projectRoot, bool& pchRejected,
               bool& noStandardLibrary, const std::string& standinHeader, std::vector<UnresolvedName>& unresolved) {
  auto memory = bundledFiles();
  if (!standinHeader.empty()) {
    std::string path = std::string(kMissingDir) + "/oomlint-standins.h";
    memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(standinHeader));
    flags.insert(flags.end(), {"-include", path});
  }
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(memory);
  if (!pch.empty()) flags.insert(flags.end(), {"-include-pch", pch});
  clang::tooling::FixedCompilationDatabase db(directory, flags);
  clang::tooling::ClangTool tool(db, {file}, std::make_shared<clang::PCHContainerOperations>(), overlay);
  tool.mapVirtualFile(file, m.source);
  FirstSyntaxError diagnostics(m, bundled, flagsOrigin);
  tool.setDiagnosticConsumer(&diagnostics);
  tool.setPrintErrorMessage(false);
  LowerActionFactory factory(m, memory, projectRoot);
  tool.run(&factory);
  diagnostics.finish(factory.missing, factory.missingStandard);
  pchRejected = diagnostics.pchRejected();
  noStandardLibrary = diagnostics.noStandardLibrary();
  unresolved = diagnostics.takeUnresolved();
  return !m.functions.empty();
}

std::string defaultPchDir() {
  if (const char* d = std::getenv("OOMLINT_PCH_DIR")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/oomlint/pch";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/oomlint/pch";
  return {};
}

}  // namespace
}  // namespace oomlint::cpp

extern "C" __attribute__((visibility("default"))) void oomlint_cpp_parse_v1(const oomlint::cpp::ParseRequest& req,
                                                                             oomlint::cpp::ParseResult& res) {
  using namespace oomlint;
  using namespace oomlint::cpp;
  auto fresh = [&] {
    auto m = std::make_unique<Module>();
    m->lang = Lang::Cpp;
    m->path = req.path;
    m->source = req.source;
    computeLineStarts(*m);
    collectDirectiveComments(*m);
    return m;
  };
  std::unique_ptr<Module> m = fresh();

  std::string file = absolutePath(req.path.empty() || req.path == "-" ? "stdin.cpp" : req.path);
  std::vector<clang::tooling::CompileCommand> commands;
  if (req.useFixedFlags) {
    // `-- FLAGS`, as clang-tidy reads them: the flags for every file, in the working directory.
    std::vector<std::string> line{"clang++"};
    line.insert(line.end(), req.fixedFlags.begin(), req.fixedFlags.end());
    line.push_back(file);
    commands.emplace_back(".", file, std::move(line), "");
  } else {
    std::string dbError;
    std::unique_ptr<clang::tooling::CompilationDatabase> db = findDatabase(file, req.buildDir, dbError);
    if (!dbError.empty() && !db) {
      res.error = dbError;
      return;
    }
    if (db) commands = db->getCompileCommands(file);
  }
  bool bundled = commands.empty();
  res.mode = bundled ? "bundled" : req.useFixedFlags ? "fixed flags" : "compile_commands";
  std::string directory;
  std::vector<std::string> flags = flagsFor(file, bundled ? nullptr : &commands.front(), directory);
  flags.insert(flags.begin(), req.extraArgsBefore.begin(), req.extraArgsBefore.end());
  flags.insert(flags.end(), req.extraArgs.begin(), req.extraArgs.end());
  res.directory = directory;
  // LibTooling aborts the process on a working directory it cannot enter: refuse it first.
  if (!bundled && !llvm::sys::fs::is_directory(directory)) {
    res.error = "the compile command of " + req.path + " runs in " + directory + ", which is not a folder";
    return;
  }
  res.commandLine = "clang";
  for (const std::string& f : flags) res.commandLine += " " + f;
  res.commandLine += " " + file;

  // The shared preamble, precompiled: the bundled prelude, or the file's own #include block.
  std::string preamble;
  if (bundled) {
    preamble = kBundledPrelude;
  } else {
    clang::LangOptions lo;
    lo.CPlusPlus = lo.CPlusPlus11 = lo.CPlusPlus14 = lo.CPlusPlus17 = true;
    clang::PreambleBounds bounds = clang::Lexer::ComputePreamble(m->source, lo);
    preamble = m->source.substr(0, bounds.Size);
  }
  std::string pchDir = std::getenv("OOMLINT_NO_PCH") ? std::string() : defaultPchDir();
  std::string pch;
  if (!pchDir.empty() && !preamble.empty()) {
    auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
    overlay->pushOverlay(bundledFiles());
    pch = precompiledPreamble(pchDir, flags, preamble, directory, kBundledTorchHeader, overlay);
  }
  bool pchRejected = false;
  std::string origin = req.useFixedFlags ? "`--`" : "compile_commands.json";
  bool noStandardLibrary = false;
  std::vector<UnresolvedName> unresolved;
  bool ran = parseOnce(*m, file, directory, flags, pch, bundled, origin, req.projectRoot, pchRejected, noStandardLibrary, "", unresolved);
  if (pchRejected) {
    // Stale (a header changed since) or incompatible: drop it, parse without, rebuild next time.
    llvm::sys::fs::remove(pch);
    pch.clear();
    m = fresh();
    ran = parseOnce(*m, file, directory, flags, "", bundled, origin, req.projectRoot, pchRejected, noStandardLibrary, "", unresolved);
  }
  // Names no header of the parse declares (a project header that is not there, an API the
  // bundled header lacks): parse again with stand-ins for them (cpp/standins.h), at most twice.
  // The first parse's syntax issues stay the file's: the stand-ins only recover code.
  Standins standins;
  if (bundled) standins.setBundledHeader(kBundledTorchHeader);
  for (int again = 0; ran && !noStandardLibrary && again < 2 && standins.learn(unresolved, m->source); ++again) {
    if (std::getenv("OOMLINT_DEBUG_CLANG")) llvm::errs() << "standins:\n" << standins.header() << "\n";
    std::unique_ptr<Module> next = fresh();
    bool unusedRejected = false, unusedNoStd = false;
    std::vector<UnresolvedName> more;
    if (!parseOnce(*next, file, directory, flags, pch, bundled, origin, req.projectRoot, unusedRejected, unusedNoStd, standins.header(), more))
      break;
    if (next->stmts.size() + next->exprs.size() < m->stmts.size() + m->exprs.size()) break;  // the stand-ins cost code
    next->syntaxIssues = std::move(m->syntaxIssues);
    m = std::move(next);
    unresolved = std::move(more);
  }
  if (!ran) {
    // Clang could not run (bad flags in compile_commands.json): say so, do not guess.
    res.error = "Clang could not parse " + req.path + (bundled ? std::string() : " with its compile_commands.json flags");
    return;
  }
  if (noStandardLibrary) {
    // Only the error is reported: findings from a parse that lacked every standard type and
    // LibTorch's declarations would rest on guesses.
    m->importsTorch = false;
    res.module = std::move(m);
    return;
  }
  for (const auto& name : m->names)
    if (name.rfind("torch.", 0) == 0) {
      m->importsTorch = true;
      break;
    }
  if (!m->importsTorch) m->importsTorch = m->source.find("<torch/") != std::string::npos || m->source.find("<ATen/") != std::string::npos;
  if (std::getenv("OOMLINT_DUMP_MODEL")) dumpModel(*m);
  res.module = std::move(m);
}
