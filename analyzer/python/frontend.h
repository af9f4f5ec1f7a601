#pragma once
/// Python front end: tree-sitter-python parse, lowered into the program model.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace oomlint::python {

/// Parses `source` and lowers it. Never throws on bad input: syntax errors become
/// Module::syntaxIssues and lowering covers whatever tree-sitter recovered.
std::unique_ptr<Module> parse(std::string path, std::string source);

/// parse() of a text whose top-level statements start at the offsets `starts` (a notebook's
/// cells): each run is parsed on its own, on up to `threads` threads, and the pieces spliced. The
/// model equals parse(source); a run that does not stand on its own makes it parse the whole.
std::unique_ptr<Module> parseRuns(std::string path, std::string source, const std::vector<uint32_t>& starts,
                                  unsigned threads);

/// True when `source` parses without any error node (used to refuse fixes that break code).
bool parsesCleanly(const std::string& source);

}  // namespace oomlint::python
