#pragma once
/// The engine: parse a file, compute facts, run the enabled rules in one walk, apply
/// suppressions. Thread-safe: many files may be checked at once.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/rule.h"
#include "notebook/notebook.h"
#include "engine/selection.h"

namespace oomlint {

/// Every rule oomlint knows, in code order. The registry is the one place a rule is named.
const std::vector<const Rule*>& allRules();
const Rule* findRule(std::string_view code);

/// Codes for findings the engine itself makes.
inline constexpr std::string_view kParseErrorCode = "OOM000";
inline constexpr std::string_view kIoErrorCode = "OOM001";
/// The rule the suppression pass reports for directives that suppress nothing.
inline constexpr std::string_view kUnusedNoqaCode = "OOM900";

struct FileResult {
  std::string path;
  std::vector<Finding> findings;  // sorted by position
  std::string source;             // kept for output (source lines, fixes)
  Lang lang = Lang::Python;
  bool ioError = false;
  std::string skippedReason;  // set when the file was deliberately not analysed
  /// For a notebook: its cells. `source` is then the module the cells make, and findings'
  /// spans are in it; reports map them to cells (and to lines of the notebook's JSON).
  std::shared_ptr<const Notebook> notebook;
  /// Other files the findings were made from (a C++ file's project headers whose code was
  /// analysed with it): the results cache keeps them valid only while these are unchanged.
  std::vector<std::string> dependencies;
};

/// True for the C++ / CUDA extensions the (future) Clang front end reads.
bool isCppPath(const std::string& path);

struct CheckOptions {
  RuleSelection selection;
  bool respectNoqa = true;  // false for --add-noqa's own pass and for OOM900's look
  /// The file's project: what its other modules say of the names this file imports. Null: the
  /// file is analysed alone.
  const ProjectView* project = nullptr;
  /// Called once the file's facts are built (null facts: not PyTorch code, none were built), so
  /// the project analysis can read what the file exports. Runs on the checking thread.
  std::function<void(const Module&, const Facts*)> onFacts;
  bool reportFindings = true;  // false: a file read only for what it exports, no rules run
};

/// All findings for a parsed module (syntax, rules, OOM900, noqa applied), sorted by position.
std::vector<Finding> analyzeModule(const Module& m, const CheckOptions& opts);

/// Checks one in-memory document. `path` decides the language and is reported.
FileResult checkSource(const std::string& path, std::string source, const CheckOptions& opts);

/// Reads a whole file. Returns "" on success, else a message for an OOM001 finding.
std::string readSourceFile(const std::string& path, std::string& out);

/// An OOM001 result for a file that could not be read or written.
FileResult ioErrorResult(const std::string& path, std::string message);

/// Reads and checks one file; I/O problems become an OOM001 finding, never an exception.
FileResult checkFile(const std::string& path, const CheckOptions& opts);

/// checkFile that also hands back the parsed module of a Python source file (null for anything
/// else), so that a project's later rounds can analyse it again with other answers unparsed.
FileResult checkFileKeeping(const std::string& path, const CheckOptions& opts, std::unique_ptr<Module>& parsed);

/// What checkFile gives for the file `m` was parsed from, from the module itself.
FileResult recheckModule(const std::string& path, const Module& m, const CheckOptions& opts);

/// Blanks every line of `r.source` that no finding or fix edit touches, keeping each line break,
/// and remaps the byte offsets into it: line numbers, columns and rendered snippets stay exactly
/// what they were, while a run over many files holds its findings' lines instead of whole files.
void keepOnlyReportedLines(FileResult& r);

/// Runs the rules only (no suppression), for callers that hold a parsed module (LSP, tests).
std::vector<Finding> runRules(const Module& m, const RuleSelection& selection);
std::vector<Finding> runRules(const Module& m, const CheckOptions& opts);

/// True for files the analyzer reads as Python.
bool isPythonPath(const std::string& path);

}  // namespace oomlint
