#pragma once
/// Python front end: tree-sitter-python parse, lowered into the program model.

#include <memory>
#include <string>

#include "model/model.h"

namespace oomlint::python {

/// Parses `source` and lowers it. Never throws on bad input: syntax errors become
/// Module::syntaxIssues and lowering covers whatever tree-sitter recovered.
std::unique_ptr<Module> parse(std::string path, std::string source);

/// True when `source` parses without any error node (used to refuse fixes that break code).
bool parsesCleanly(const std::string& source);

}  // namespace oomlint::python
