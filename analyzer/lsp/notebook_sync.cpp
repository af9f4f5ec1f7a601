// LSP 3.17 notebook documents: cells kept in order, their text documents edited, the code cells
// analysed together and each cell's findings published in its own coordinates.
#include "lsp/notebook_sync.h"

#include <algorithm>
#include <thread>

#include "engine/frontends.h"
#include "util/changed_range.h"

namespace oomlint::lsp {

using nlohmann::json;

void NotebookSync::openCell(const json& item, const std::string& notebook) {
  auto d = std::make_unique<Document>();
  d->uri = item.value("uri", "");
  d->path = uriToPath(d->uri);
  d->languageId = item.value("languageId", "python");
  d->text = item.value("text", "");
  d->version = item.value("version", int64_t{0});
  d->notebook = notebook;
  host_.documents()[d->uri] = std::move(d);
}

void NotebookSync::closeCell(const std::string& uri) {
  host_.documents().erase(uri);
  host_.notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
}

namespace {

void codeCellsOf(const json& cells, std::vector<std::pair<std::string, bool>>& out) {
  for (const json& c : cells)
    if (c.is_object()) out.emplace_back(c.value("document", ""), c.value("kind", 2) == 2);
}

}  // namespace

void NotebookSync::didOpen(json& params) {
  json& nbj = params["notebookDocument"];
  NotebookDoc& nb = notebooks_[nbj.value("uri", "")];
  nb = NotebookDoc{};
  nb.uri = nbj.value("uri", "");
  nb.path = uriToPath(nb.uri);
  for (const json& item : params.value("cellTextDocuments", json::array())) openCell(item, nb.uri);
  std::vector<std::pair<std::string, bool>> cells;
  codeCellsOf(nbj.value("cells", json::array()), cells);
  nb.allCells = cells;
  analyze(nb);
}

void NotebookSync::didChange(json& params) {
  auto it = notebooks_.find(params["notebookDocument"].value("uri", ""));
  if (it == notebooks_.end()) return;
  NotebookDoc& nb = it->second;
  json change = params.value("change", json::object());
  json cells = change.value("cells", json::object());
  if (!cells.is_object()) cells = json::object();
  std::vector<std::pair<std::string, bool>>& all = nb.allCells;
  if (cells.contains("structure") && cells["structure"].is_object()) {
    const json& st = cells["structure"];
    for (const json& item : st.value("didOpen", json::array())) openCell(item, nb.uri);
    for (const json& id : st.value("didClose", json::array())) closeCell(id.value("uri", ""));
    const json& arr = st.value("array", json::object());
    size_t start = std::min<size_t>(arr.value("start", size_t{0}), all.size());
    size_t count = std::min<size_t>(arr.value("deleteCount", size_t{0}), all.size() - start);
    std::vector<std::pair<std::string, bool>> inserted;
    codeCellsOf(arr.value("cells", json::array()), inserted);
    all.erase(all.begin() + static_cast<std::ptrdiff_t>(start), all.begin() + static_cast<std::ptrdiff_t>(start + count));
    all.insert(all.begin() + static_cast<std::ptrdiff_t>(start), inserted.begin(), inserted.end());
  }
  for (const json& c : cells.value("data", json::array()))  // a cell changed kind (code <-> markdown)
    for (auto& [uri, code] : all)
      if (c.is_object() && uri == c.value("document", "")) code = c.value("kind", 2) == 2;
  for (const json& tc : cells.value("textContent", json::array())) {
    auto d = host_.documents().find(tc["document"].value("uri", ""));
    if (d == host_.documents().end()) continue;
    d->second->version = tc["document"].value("version", d->second->version);
    host_.applyChanges(*d->second, tc.value("changes", json::array()));
  }
  analyze(nb);
}

void NotebookSync::didSave(json& params) {
  auto it = notebooks_.find(params["notebookDocument"].value("uri", ""));
  if (it != notebooks_.end()) analyze(it->second);  // configuration may have changed with it
}

void NotebookSync::didClose(json& params) {
  std::string uri = params["notebookDocument"].value("uri", "");
  for (const json& id : params.value("cellTextDocuments", json::array())) closeCell(id.value("uri", ""));
  auto it = notebooks_.find(uri);
  if (it == notebooks_.end()) return;
  for (const auto& [cell, code] : it->second.allCells)
    if (host_.documents().count(cell)) closeCell(cell);
  notebooks_.erase(it);
}

const Module* NotebookSync::cellModule(Document& cell) {
  if (!cell.module || cell.parsedText != cell.text) {
    cell.module = parseDocument(cell.path, cell.text, DocumentLanguage::Python).module;
    cell.parsedText = cell.text;
  }
  return cell.module.get();
}

void NotebookSync::cellChanged(const Document& cell) {
  auto it = notebooks_.find(cell.notebook);
  if (it != notebooks_.end()) analyze(it->second);
}

/// The code cells checked as one module (only what an edit changed is re-parsed); each cell gets
/// the findings that start in it.
void NotebookSync::analyze(NotebookDoc& nb) {
  nb.codeCells.clear();
  std::vector<std::string> texts;
  for (const auto& [uri, code] : nb.allCells)
    if (code && host_.documents().count(uri)) {
      nb.codeCells.push_back(uri);
      texts.push_back(host_.documents()[uri]->text);
    }
  Notebook cells = notebookFromCells(texts, &nb.cells);  // nb.cells keeps its module text
  const std::string &before = nb.cells.module, &after = cells.module;
  const auto [p, s] = changedRange(before, after);
  if (before != after)
    nb.python.edited(static_cast<uint32_t>(p), static_cast<uint32_t>(before.size() - s), static_cast<uint32_t>(after.size() - p - s));
  nb.cells = std::move(cells);
  // Nothing kept (the notebook was just opened): each cell is parsed on its own, on all cores.
  if (nb.python.chunkCount() == 0) nb.python.seed(cellStartsOf(nb.cells), static_cast<uint32_t>(nb.cells.module.size()));
  nb.module = nb.python.model(nb.path, nb.cells.module, std::max(1u, std::thread::hardware_concurrency()), std::move(nb.module));
  nb.findings = nb.module ? analyzeModule(*nb.module, host_.optionsFor(nb.path)) : std::vector<Finding>{};
  for (Finding& f : nb.findings)
    if (f.estimated.present) f.estimated.basis = cellLinesIn(nb.cells, f.estimated.basis);
  std::vector<uint32_t> moduleLines = lineStartsOf(nb.cells.module);
  // Each finding belongs to the cell it starts in.
  std::vector<std::vector<const Finding*>> byCell(nb.codeCells.size());
  for (const Finding& f : nb.findings)
    if (int c = cellAt(nb.cells, f.span.begin); c >= 0 && static_cast<size_t>(c) < byCell.size()) byCell[static_cast<size_t>(c)].push_back(&f);
  for (size_t i = 0; i < nb.codeCells.size(); ++i) {
    Document& d = *host_.documents()[nb.codeCells[i]];
    d.findings.clear();
    // A cell that is not text (NUL bytes) gets no findings: it has no model for their quick fixes.
    if (d.text.find('\0') != std::string::npos) byCell[i].clear();
    if (byCell[i].empty() && d.published == "[]") continue;  // still no diagnostics: nothing to send
    const NotebookCell& cell = nb.cells.cells[i];
    std::vector<uint32_t> cellLines = lineStartsOf(d.text);
    // A module offset as an offset of the cell's text (lines are the same; blanked ones empty).
    auto toCell = [&](uint32_t offset, Span* s) {
      uint32_t line = static_cast<uint32_t>(std::upper_bound(moduleLines.begin(), moduleLines.end(), offset) - moduleLines.begin());
      uint32_t k = line >= cell.firstLine ? line - cell.firstLine : 0;
      k = std::min<uint32_t>(k, cellLines.empty() ? 0 : static_cast<uint32_t>(cellLines.size() - 1));
      uint32_t col = offset - moduleLines[line - 1];
      if (k < cell.blanked.size() && cell.blanked[k]) col = 0;
      uint32_t lineEnd = k + 1 < cellLines.size() ? cellLines[k + 1] : static_cast<uint32_t>(d.text.size());
      uint32_t at = cellLines.empty() ? 0 : std::min(cellLines[k] + col, lineEnd);
      if (s) {
        s->line = k + 1;
        s->col = at - (cellLines.empty() ? 0 : cellLines[k]);
      }
      return at;
    };
    auto remap = [&](Span& sp) {
      Span start = sp, end = sp;
      sp.begin = toCell(sp.begin, &start);
      sp.end = toCell(sp.end, &end);
      sp.line = start.line;
      sp.col = start.col;
      sp.endLine = end.line;
      sp.endCol = end.col;
    };
    for (const Finding* f : byCell[i]) {
      Finding g = *f;
      remap(g.span);
      std::vector<Related> related;
      for (Related r : g.related)  // evidence in this cell (other cells' lines are not this document's)
        if (cellAt(nb.cells, r.span.begin) == static_cast<int>(i)) {
          remap(r.span);
          related.push_back(std::move(r));
        }
      g.related = std::move(related);
      bool editsInCell = true;
      for (const Edit& e : g.fix.edits)
        if (cellAt(nb.cells, e.begin) != static_cast<int>(i) || cellAt(nb.cells, e.end == 0 ? 0 : e.end - 1) != static_cast<int>(i))
          editsInCell = false;
      if (!editsInCell) g.hasFix = false, g.fix.edits.clear();
      for (Edit& e : g.fix.edits) {
        e.begin = toCell(e.begin, nullptr);
        e.end = toCell(e.end, nullptr);
      }
      d.findings.push_back(std::move(g));
    }
    json diagnostics = host_.diagnosticsOf(d);
    std::string published = diagnostics.dump(-1, ' ', false, json::error_handler_t::replace);
    if (published == d.published) continue;  // what the client shows for this cell is still right
    d.published = std::move(published);
    host_.notify("textDocument/publishDiagnostics", {{"uri", d.uri}, {"version", d.version}, {"diagnostics", std::move(diagnostics)}});
  }
}

}  // namespace oomlint::lsp
