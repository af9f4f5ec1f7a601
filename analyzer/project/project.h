#pragma once
/// The project: its root, its Python modules and their names, the import graph, and what each
/// module exports, linked into the answers one file's facts ask for (project_view.h).
///
/// Module names follow Python's rules where they can be known without running anything: a file
/// is named by the packages (`__init__.py` folders) above it, and also relative to the project
/// root and to `src/` (namespace packages, src layouts); a script also sees the modules beside it
/// and in the folders above it up to the root (what `python train.py` and `sys.path` tweaks give).
/// Relative imports resolve against the importing module's package; names re-exported through a
/// module's imports (`__init__.py`) are followed.

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "facts/project_view.h"
#include "project/exports.h"
#include "project/scan.h"
#include "project/serialize.h"

namespace oomlint::project {

/// The Python modules directly in `dir` (not in its subfolders): the project of a file that has
/// no root above it is the folder it sits in.
std::vector<std::string> modulesBeside(const std::string& dir);

/// A symbol of the project: a module (name empty) or a name defined in it (`evaluate`, `Trainer.fit`).
struct Symbol {
  size_t file = SIZE_MAX;
  std::string name;
  bool found() const { return file != SIZE_MAX; }
};

class FileView;

class Project {
 public:
  /// `files`: absolute paths of the project's Python modules.
  Project(std::string root, std::vector<std::string> files);

  const std::string& root() const { return root_; }
  size_t size() const { return files_.size(); }
  const std::string& file(size_t i) const { return files_[i]; }
  /// The module is a package's `__init__`.
  bool isPackage(size_t i) const;
  /// Index of an absolute path, or SIZE_MAX.
  size_t indexOf(const std::string& absPath) const;

  /// The module a dotted module name denotes from file `from` (`.utils`, `pkg.utils`, `utils`), or SIZE_MAX.
  size_t resolveModule(size_t from, std::string_view dotted) const;
  /// What a dotted name used in file `from` denotes, following re-exports; needs the exports of
  /// the modules it passes through.
  Symbol resolve(size_t from, std::string_view dotted) const;
  /// The module holding what a dotted name denotes (its longest prefix that is a module; no
  /// re-exports followed): the import graph's edge for an import.
  size_t importedModule(size_t from, std::string_view dotted) const;
  /// The name's first component names a module of the project (cheap; no exports needed).
  bool mayBeProject(size_t from, std::string_view dotted) const;

  /// Sets a file's exports (between rounds of analysis, never while views are in use).
  void setExports(size_t i, FileExports e);
  /// Sets a file's exports while other files are analysed: its functions and classes answer the
  /// views of files analysed after it at once (callers and programs wait for link()).
  void publish(size_t i, FileExports e);
  const FileExports& exports(size_t i) const { return exports_[i]; }
  /// Works out what the exports imply together: class hierarchies, the callers of each function,
  /// each program's facts. Call after setting exports, before making views. `threads` resolve
  /// the modules' calls side by side.
  void link(unsigned threads = 1);
  /// Program facts guessed before the first analysis from each unanalysed file's text (the rest
  /// from their exports), so that modules analysed before their importers see their programs'
  /// facts: a right guess saves a second analysis, a wrong one costs what no guess does (link()
  /// replaces them, and a file whose answer changed is analysed again).
  void guessPrograms(const std::vector<ProgramGuess>& guesses);

  /// What each module's top level defines, from a quick look (scanDefinitions), for modules not
  /// analysed yet; null or an empty list: unknown.
  void useDefinitions(const std::vector<std::vector<std::string>>* d) { definitions_ = d; }
  /// Module `i` is not analysed yet and its top level may define `name`'s first component: an
  /// answer about the name given now may change once it is.
  bool unanalysedMayDefine(size_t i, std::string_view name) const;

  /// A view for analysing file `i`: answers from the linked state, recording each question.
  std::unique_ptr<FileView> viewFor(size_t i) const;

 private:
  friend class FileView;
  /// Each file's ProgramFacts from the import graph (`edges`: what each file imports), each
  /// file's own facts and whether it imports torch (programs.cpp).
  void computePrograms(const std::vector<std::vector<size_t>>& edges, std::vector<ProgramFacts> own, const std::vector<char>& importsTorch);
  /// File `i`'s own facts for its programs, from its exports (ProgramFacts::usesTorch aside).
  ProgramFacts ownProgramFacts(size_t i) const;
  struct ClassState {
    ImportedClass info;
    bool informative = false;  // module, accumulator, or a method with a summary
    bool tensor = false;       // a tensor subclass (never informative: tensors' methods are known)
  };
  const ImportedFunction* findFunction(const Symbol& s, int depth = 0) const;
  const ClassState* findClass(const Symbol& s) const;
  Symbol resolveIn(size_t from, std::string_view dotted, int depth) const;
  /// resolveIn(j, target, depth) for a re-export's target, memoised.
  Symbol resolveThrough(size_t j, const std::string& target, int depth) const;
  std::string packageOf(size_t i) const;
  /// The module the longest prefix of a dotted name (split) denotes; `k` its number of parts.
  size_t longestModule(size_t from, const std::string& dots, const std::vector<std::string_view>& parts, size_t& k) const;
  /// A call of module `i` resolved to the function it runs: the key of that function's callers.
  struct ResolvedCall {
    std::string key;
    const ExportedCall* call;
  };
  /// Module `i`'s calls that tell a function of another module something, each keyed to the
  /// function; every module a call or import reaches goes into `edges`.
  std::vector<ResolvedCall> resolveCalls(size_t i, std::vector<size_t>& edges) const;
  void addFunctions(size_t j);
  void addClasses(size_t j);
  /// The modules' names and the maps that resolve imports, built on first use: a warm check of an
  /// unchanged project takes its findings from the cache and resolves nothing.
  void buildNames() const;
  void names() const { std::call_once(namesOnce_, [this] { buildNames(); }); }
  mutable std::once_flag namesOnce_;
  mutable std::shared_mutex lock_;  // views read while publish() writes

  std::string root_;
  std::vector<std::string> files_;
  std::unordered_map<std::string, size_t> byPath_;
  /// Looked up by string_view: resolution runs for every name every file asks about.
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using NameMap = std::unordered_map<std::string, size_t, ViewHash, std::equal_to<>>;
  mutable NameMap byModule_;   // dotted module name -> file
  mutable NameMap byRelPath_;  // root-relative path without `.py` (and package folders) -> file
  /// A name (a module's or a folder's last component) -> the root-relative folders holding an
  /// entry so named: where a script's `import name` can find it, without building paths to try.
  mutable std::unordered_map<std::string, std::vector<std::string>, ViewHash, std::equal_to<>> entryDirs_;
  mutable std::vector<std::string> moduleName_;                // per file: its package-climbed name ("" when outside packages)
  mutable std::vector<std::string> relDir_;                    // per file: its folder, root-relative ("" at the root)
  std::vector<FileExports> exports_;
  std::vector<char> hasExports_;  // per file: analysed (or read from the cache) in this run
  const std::vector<std::vector<std::string>>* definitions_ = nullptr;
  struct Hop {
    Symbol symbol;
    bool settled = true;  // false: it stopped at a module not analysed then
    bool found() const { return symbol.found(); }
  };
  mutable std::mutex memoLock_;
  mutable std::unordered_map<std::string, Hop> throughMemo_;
  // linked state
  std::unordered_map<std::string, ImportedFunction> functions_;     // "<file>\n<name>" -> function
  std::unordered_map<std::string, ClassState> classes_;          // "<file>\n<class>" -> state
  std::unordered_map<std::string, CallerContext> callers_;       // "<file>\n<name>" -> callers elsewhere
  /// Functions that exported a summary at some link of this run: their callers keep counting after
  /// the summary empties. A summary can empty because of what the callers say (every call under
  /// `no_grad`), and dropping the callers then would bring it back: the rounds would flip forever.
  std::unordered_set<std::string> summarisedOnce_;
  std::vector<ProgramFacts> programs_;                           // per file
  std::deque<Summary> summaries_;                                // stable storage for functions_
  mutable std::vector<std::string> topNames_;                            // first components of module names
};

/// The answers one file's facts get, each question recorded with its answer so a later run can
/// tell whether anything the file relied on changed.
class FileView final : public ProjectView {
 public:
  FileView(const Project& p, size_t file) : p_(p), file_(file) {}
  const ImportedFunction* function(std::string_view dotted) const override;
  const ImportedClass* cls(std::string_view dotted) const override;
  const CallerContext* callers(std::string_view qualified) const override;
  bool programFact(ProgramFact which) const override;
  /// A hash of every answer the project gives now to the questions asked (0 when none says
  /// anything: the file alone). Differs from answered() exactly when an answer changed.
  uint64_t fingerprint() const;
  /// The same hash over the answers given when the questions were asked.
  uint64_t answered() const;
  /// The questions whose answers changed since they were asked (for --verbose).
  std::string changedAnswers() const;
  /// The questions asked, for the cache; restore() gives a view of a cached module the same
  /// questions (their old answers are not needed: fingerprint() asks afresh).
  Questions questions() const;
  void restore(const Questions& q);
  /// Some answer was given before the module it is about was analysed, and that module may
  /// define the name: the answer is likely to change, so the caller keeps the parsed file.
  bool askedTooEarly() const { return tooEarly_; }

 private:
  struct Answer {
    const void* value = nullptr;
    uint64_t hash = 0;  // 0: says nothing
  };
  /// `asking`: the question is asked now (not asked again for a fingerprint).
  Answer functionAnswer(std::string_view dotted, bool asking = false) const;
  Answer classAnswer(std::string_view dotted, bool asking = false) const;
  void noteTooEarly(const Symbol& s) const;
  Answer callersAnswer(std::string_view qualified) const;
  /// The program's facts as bits (ProgramFact), all of them.
  uint8_t programBits() const;
  uint64_t combine(bool fresh) const;

  const Project& p_;
  size_t file_;
  /// Looked up by string_view: the passes ask the same names again and again, allocating nothing.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Memo = std::unordered_map<std::string, Answer, NameHash, std::equal_to<>>;
  // Every question asked so far, with the answer given (memoised: the passes ask the same names often).
  mutable Memo functions_, classes_, callers_;
  mutable uint8_t askedProgram_ = 0;  // the ProgramFact bits read
  mutable uint8_t programAnswer_ = 0;  // their values when read
  mutable bool tooEarly_ = false;
};

}  // namespace oomlint::project
