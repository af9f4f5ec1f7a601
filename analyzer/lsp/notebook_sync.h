#pragma once
/// LSP 3.17 notebook documents: the notebook's cells (code and markdown, in order), their text
/// documents, and one analysis of the code cells as a module after every change. Kept apart from
/// the server's text-document handling; the server is its host.

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "lsp/document.h"
#include "notebook/notebook.h"

namespace oomlint::lsp {

/// What the notebook handling needs of the server.
class NotebookHost {
 public:
  virtual ~NotebookHost() = default;
  virtual std::map<std::string, std::unique_ptr<Document>>& documents() = 0;
  /// Applies LSP content changes (incremental or whole) to a document's text.
  virtual void applyChanges(Document& d, const nlohmann::json& changes) = 0;
  /// The document's findings as LSP diagnostics.
  virtual nlohmann::json diagnosticsOf(const Document& d) const = 0;
  virtual void notify(const std::string& method, const nlohmann::json& params) = 0;
  /// The rule selection of the project configuration for a path.
  virtual CheckOptions optionsFor(const std::string& path) = 0;
};

class NotebookSync {
 public:
  explicit NotebookSync(NotebookHost& host) : host_(host) {}
  void didOpen(nlohmann::json& params);
  /// Structure (cells added, removed, moved), cell kinds and cell text edits; then one analysis.
  void didChange(nlohmann::json& params);
  void didSave(nlohmann::json& params);
  void didClose(nlohmann::json& params);
  /// Re-checks the notebook a cell belongs to (a cell was edited as a text document).
  void cellChanged(const Document& cell);
  /// A cell's own model (its noqa comments and lines, for quick fixes; null when it is not text),
  /// parsed when first asked after its text changed, so an edit's diagnostics do not wait for it.
  static const Module* cellModule(Document& cell);

 private:
  struct NotebookDoc {
    std::string uri, path;
    std::vector<std::pair<std::string, bool>> allCells;  // every cell: its text document's URI, is it code
    std::vector<std::string> codeCells;                   // at the last analysis
    Notebook cells;                                       // the module the code cells made then
    python::IncrementalDocument python;
    std::unique_ptr<Module> module;
    std::vector<Finding> findings;
  };

  void openCell(const nlohmann::json& item, const std::string& notebook);
  void closeCell(const std::string& uri);
  void analyze(NotebookDoc& nb);

  NotebookHost& host_;
  std::map<std::string, NotebookDoc> notebooks_;
};

}  // namespace oomlint::lsp
