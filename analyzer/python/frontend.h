#pragma once
/// Python front end: tree-sitter-python parse, lowered into the program model.

#include <memory>
#include <string>

#include "model/model.h"

struct TSTree;

namespace oomlint::python {

/// Parses `source` and lowers it. Never throws on bad input: syntax errors become
/// Module::syntaxIssues and lowering covers whatever tree-sitter recovered.
std::unique_ptr<Module> parse(std::string path, std::string source);

/// Same, reusing a previous tree of the same document whose edits were already applied with
/// ts_tree_edit (the LSP server's incremental path). Takes ownership of the new tree in `*tree`.
std::unique_ptr<Module> parseIncremental(std::string path, std::string source, TSTree** tree);

/// True when `source` parses without any error node (used to refuse fixes that break code).
bool parsesCleanly(const std::string& source);

}  // namespace oomlint::python
