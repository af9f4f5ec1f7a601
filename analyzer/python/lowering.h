#pragma once
/// Inside the Python front end: the pieces `parse` is made of, shared with the incremental
/// document that the LSP server keeps (python/incremental.h).

#include <tree_sitter/api.h>

#include <memory>
#include <string>

#include "model/model.h"

namespace oomlint::python {

/// The calling thread's parser, set to tree-sitter-python with a new external scanner.
TSParser* threadParser();

/// Lowers a whole parsed document: statements, syntax issues, suppression comments, names.
std::unique_ptr<Module> lowerTree(std::string path, std::string source, TSTree* tree);

/// Lowers the top-level statements of `tree` that start inside `text`, which sits at
/// `originByte` / `originPoint` of the tree's text. The result is in `text`'s own coordinates,
/// has no path, and its names are not resolved (imports elsewhere in the file decide them).
std::unique_ptr<Module> lowerChunk(std::string text, TSTree* tree, TSPoint originPoint, uint32_t originByte);

/// Resolves Name / Attribute chains to canonical dotted names through `m.imports`.
void resolveNames(Module& m);

}  // namespace oomlint::python
