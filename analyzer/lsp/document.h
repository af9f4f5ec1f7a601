#pragma once
/// A text document the language server holds: its text, its incremental model and its findings.
/// A notebook's cells are documents too, whose findings come from their notebook.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/rule.h"
#include "python/incremental.h"

namespace oomlint::lsp {

struct Document {
  std::string uri, path, languageId, text;
  std::string notebook;  // a notebook cell: the notebook's URI (its findings come from there)
  std::string parsedText;  // a cell: the text `module` was parsed from (re-parsed only when it changes)
  std::string published;   // a cell: the diagnostics last published (unchanged ones are not re-sent)
  int64_t version = 0;
  python::IncrementalDocument python;  // re-parses only the statements an edit touched
  std::unique_ptr<Module> module;
  std::vector<Finding> findings;
};

/// The file path of a `file://` URI (percent-decoded); other URIs are returned decoded as they are.
std::string uriToPath(const std::string& uri);

}  // namespace oomlint::lsp
