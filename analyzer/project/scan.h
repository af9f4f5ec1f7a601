#pragma once
/// A quick look at a Python source's import statements, before it is parsed: the order in which
/// the project's modules are analysed (the modules a file imports before the file) comes from it.
/// It only orders work: a name it misses or invents costs a second analysis, never a wrong answer.

#include <string>
#include <string_view>
#include <vector>

#include "facts/project_view.h"

namespace oomlint::project {

/// One module an import statement loads: `name`, or when that is not a module, `fallback`
/// (`from pkg import a` loads the submodule pkg.a when there is one, else takes `a` from pkg).
struct ScannedImport {
  std::string name, fallback;
  bool plain = false;  // `import name`: what the file uses of it is named through it, later
  bool nested = false; // inside a block (a function, `try:`, `if TYPE_CHECKING:`): may not run at import
};

/// The modules the source's import statements may load, top-level and nested.
std::vector<ScannedImport> scanImports(std::string_view source);

/// scanImports' result as text a cache keeps (ResultCache::storeScan), and back. Each is false
/// when it cannot: a name with a tab or a line break in it (kept out of the cache), text encode
/// did not write.
bool encodeImports(const std::vector<ScannedImport>& imports, std::string& out);
bool decodeImports(std::string_view text, std::vector<ScannedImport>& out);

/// What a quick look at an unanalysed module's text says of the facts its programs share
/// (Project::guessPrograms), and the project modules its imports load.
struct ProgramGuess {
  bool scanned = false;
  ProgramFacts own;           // bindsDevice, usesGradScaler, mentionsCuda as its text suggests
  bool importsTorch = false;  // an import of torch or a torch submodule
  std::vector<size_t> imports;
};

/// The facts a module's text suggests (its words `set_device`, `GradScaler`, `cuda` ...): a
/// guess at what its analysis will export, wrong only in costing a second analysis.
ProgramFacts guessOwnFacts(std::string_view source);

/// The names the module's top level defines (`def`, `class`), sorted: what another module may
/// learn something of from it. (Names it imports or assigns are not among them: an answer that
/// changes through them costs a parse more, never a wrong answer.)
std::vector<std::string> scanDefinitions(std::string_view source);

}  // namespace oomlint::project
