#pragma once
/// Inside the Python front end: the pieces `parse` is made of, shared with the incremental
/// document that the LSP server keeps (python/incremental.h).

#include <tree_sitter/api.h>

#include <memory>
#include <string>
#include <string_view>

#include "model/model.h"

namespace oomlint::python {

/// The calling thread's parser, set to tree-sitter-python with a new external scanner.
TSParser* threadParser();

/// A parser made inside a ParseArena and deleted before it ends (its buffers live in the arena).
/// Being new, it also starts with a new external scanner: see threadParser.
struct ArenaParser {
  TSParser* parser;
  ArenaParser();
  ~ArenaParser();
  ArenaParser(const ArenaParser&) = delete;
  ArenaParser& operator=(const ArenaParser&) = delete;
};

/// Lowers a whole parsed document: statements, syntax issues, suppression comments, names.
std::unique_ptr<Module> lowerTree(std::string path, std::string source, TSTree* tree);

/// Lowers the top-level statements of `tree` that start inside `text`, which sits at
/// `originByte` / `originPoint` of the tree's text. The result is in `text`'s own coordinates,
/// has no path, and its names are not resolved (imports elsewhere in the file decide them).
std::unique_ptr<Module> lowerChunk(std::string text, TSTree* tree, TSPoint originPoint, uint32_t originByte);

/// tree-sitter-python 0.23.6 rejects valid Python: a starred parenthesised operand in a bare
/// expression list (`return a, *(int(x) for x in s)`, `x = a, *(y)`). When `tree` has errors,
/// returns a copy of `text` of the same length with each such `*` inside an error region turned
/// into a space (the model reads names and calls, not the unpacking), else "".
std::string repairMisparses(std::string_view text, TSTree* tree);

/// Parses `text` with `parser`, and again repaired (repairMisparses) when that removes every
/// error. `repaired` keeps the repaired text alive while the returned tree is used.
TSTree* parseWithRepairs(TSParser* parser, std::string_view text, std::string& repaired);

/// Resolves Name / Attribute chains to canonical dotted names through `m.imports`.
void resolveNames(Module& m);

}  // namespace oomlint::python
