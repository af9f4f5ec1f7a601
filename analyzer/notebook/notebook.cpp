// Reading notebooks: one pass over the JSON text (notebook/scan.h) finds where each code cell's
// "source" sits, so fixes can be written back in place, and, for a plainly written notebook, what
// it says; anything else is parsed as a JSON document (nlohmann) for its meaning and its errors.
#include "notebook/notebook.h"
#include "notebook/scan.h"
#include "util/lines.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <nlohmann/json.hpp>

namespace oomlint {

bool isNotebookPath(std::string_view path) { return path.size() > 6 && path.substr(path.size() - 6) == ".ipynb"; }

namespace {

using nlohmann::json;

std::string_view trimmedLeft(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

/// `files = !ls`, `t = %timeit -o f()`: an assignment from a magic or a shell escape.
bool assignsMagic(std::string_view s) {
  size_t i = 0;
  auto name = [&] {
    size_t b = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) ++i;
    return i > b;
  };
  auto spaces = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  spaces();
  if (!name()) return false;
  spaces();
  while (i < s.size() && s[i] == ',') {
    ++i;
    spaces();
    if (!name()) return false;
    spaces();
  }
  if (i >= s.size() || s[i] != '=' || (i + 1 < s.size() && s[i + 1] == '=')) return false;
  ++i;
  spaces();
  return i < s.size() && (s[i] == '!' || s[i] == '%');
}

/// IPython syntax that is not Python: `%magic`, `!shell`, `x?` / `?x` help, `v = !cmd`.
bool isIPythonLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::string_view t = trimmedLeft(line);
  if (t.empty()) return false;
  if (t[0] == '%' || t[0] == '!' || t[0] == '?') return true;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  // Help: `obj?`, `obj.attr??`, `losses[-1]?`, `np.*load*?`. Python never ends a line with '?'
  // outside a comment or a string, so a line without either that does is IPython's.
  if (t.back() == '?' && t.find_first_of("#'\"") == std::string_view::npos) return true;
  return assignsMagic(t);
}


/// The module line where a cell appended now begins.
uint32_t nextFirstLine(const Notebook& nb) {
  return nb.cells.empty() ? 1 : nb.cells.back().firstLine + static_cast<uint32_t>(nb.cells.back().lines.size());
}

/// Adds a code cell's source to the module: its lines, the IPython ones blanked.
void appendCell(Notebook& nb, NotebookCell& c, const std::string& source) {
  c.lines = splitKeepingBreaks(source);
  c.endsWithNewline = !source.empty() && source.back() == '\n';
  bool cellMagic = false;
  for (const std::string& l : c.lines)
    if (!trimmedLeft(l).empty() && trimmedLeft(l)[0] != '\n') {
      cellMagic = trimmedLeft(l).substr(0, 2) == "%%";
      break;
    }
  auto continues = [](std::string_view l) {  // `!pip install a \` goes on on the next line
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) l.remove_suffix(1);
    return !l.empty() && l.back() == '\\';
  };
  for (size_t k = 0; k < c.lines.size(); ++k)
    c.blanked.push_back(cellMagic || isIPythonLine(c.lines[k]) || (k > 0 && c.blanked[k - 1] && continues(c.lines[k - 1])));
  c.begin = static_cast<uint32_t>(nb.module.size());
  c.firstLine = nextFirstLine(nb);
  for (size_t k = 0; k < c.lines.size(); ++k) nb.module += c.blanked[k] ? std::string("\n") : c.lines[k];
  if (!nb.module.empty() && nb.module.back() != '\n') nb.module += '\n';
}

}  // namespace

namespace {

/// Whether the cell's lines are exactly `text`.
bool holds(const NotebookCell& c, std::string_view text) {
  size_t at = 0;
  for (const std::string& l : c.lines) {
    if (text.compare(at, l.size(), l) != 0) return false;
    at += l.size();
  }
  return at == text.size();
}

}  // namespace

Notebook notebookFromCells(const std::vector<std::string>& cellTexts, Notebook* spent) {
  Notebook none;
  Notebook& previous = spent ? *spent : none;
  Notebook nb;
  nb.module.reserve(previous.module.size());
  for (size_t i = 0; i < cellTexts.size(); ++i) {
    NotebookCell c;
    if (i < previous.cells.size() && holds(previous.cells[i], cellTexts[i])) {
      // Unchanged: its lines and blanking are kept, and its part of the module is the same text
      // (a cell's part depends on its own source only: every part ends with '\n').
      NotebookCell& kept = previous.cells[i];
      uint32_t end = i + 1 < previous.cells.size() ? previous.cells[i + 1].begin : static_cast<uint32_t>(previous.module.size());
      c.lines = std::move(kept.lines);
      c.blanked = std::move(kept.blanked);
      c.endsWithNewline = kept.endsWithNewline;
      c.begin = static_cast<uint32_t>(nb.module.size());
      c.firstLine = nextFirstLine(nb);
      nb.module.append(previous.module, kept.begin, end - kept.begin);
    } else {
      appendCell(nb, c, cellTexts[i]);
    }
    c.number = static_cast<uint32_t>(i + 1);
    c.jsonLines.assign(c.lines.size(), 0);
    nb.cells.push_back(std::move(c));
  }
  return nb;
}

namespace {

using ScannedCell = notebook_scan::Cell;

/// Where each JSON line of the notebook starts.
class JsonLines {
 public:
  explicit JsonLines(std::string_view text) {
    for (size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1)) starts_.push_back(at + 1);
  }
  uint32_t lineOf(size_t offset) const {
    return static_cast<uint32_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin());
  }

 private:
  std::vector<size_t> starts_{0};
};

/// A code cell (the `number`th cell) added to the module: its text and where it sits in the JSON.
void addCodeCell(Notebook& nb, uint32_t number, const ScannedCell& span, const std::string& source,
                 const std::vector<size_t>& itemStarts, const JsonLines& json) {
  NotebookCell c;
  c.number = number;
  c.sourceBegin = span.begin;
  c.sourceEnd = span.end;
  c.sourceIsArray = span.array;
  c.items = span.items;
  appendCell(nb, c, source);
  // The text, and where each item starts in it (a line belongs to the item it starts in).
  size_t offset = 0;
  for (const std::string& l : c.lines) {
    size_t item = static_cast<size_t>(std::upper_bound(itemStarts.begin(), itemStarts.end(), offset) - itemStarts.begin()) - 1;
    c.jsonLines.push_back(json.lineOf(span.items[item].first));
    offset += l.size();
  }
  nb.cells.push_back(std::move(c));
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string notPythonKernel(const std::string& language) {
  return "the notebook's kernel language is " + language + ", not Python; not checked";
}

}  // namespace

Notebook readThroughDocument(std::string_view text) {
  Notebook nb;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    nb.error = std::string("not a valid notebook: malformed JSON (") + e.what() + ")";
    return nb;
  }
  if (!doc.is_object() || !doc.contains("cells") || !doc["cells"].is_array()) {
    nb.error = "not a valid notebook: the JSON has no \"cells\" list";
    return nb;
  }
  if (!doc.contains("nbformat") || !doc["nbformat"].is_number_integer() || doc["nbformat"].get<int>() != 4) {
    nb.error = "not a notebook oomlint can read: only nbformat 4 is supported";
    return nb;
  }
  std::string language;
  static const json kNone = json::object();
  auto metaAt = doc.find("metadata");
  const json& meta = metaAt == doc.end() ? kNone : *metaAt;  // read in place: value() copies
  if (meta.is_object()) {
    if (meta.contains("kernelspec") && meta["kernelspec"].is_object() && meta["kernelspec"].contains("language") &&
        meta["kernelspec"]["language"].is_string())
      language = meta["kernelspec"]["language"].get<std::string>();
    else if (meta.contains("language_info") && meta["language_info"].is_object() && meta["language_info"].contains("name") &&
             meta["language_info"]["name"].is_string())
      language = meta["language_info"]["name"].get<std::string>();
  }
  if (!language.empty() && lowercase(language) != "python") {
    nb.skipped = notPythonKernel(language);
    return nb;
  }
  notebook_scan::Scanned scanned;
  std::vector<ScannedCell>& spans = scanned.cells;
  if (!notebook_scan::scan(text, scanned, false) || spans.size() != doc["cells"].size()) {
    nb.error = "not a valid notebook: its cells could not be located in the JSON text";
    return nb;
  }
  JsonLines jsonLines(text);
  for (size_t i = 0; i < spans.size(); ++i) {
    const json& cell = doc["cells"][i];
    if (!cell.is_object() || cell.value("cell_type", "") != "code") continue;
    const ScannedCell& span = spans[i];
    uint32_t number = static_cast<uint32_t>(i + 1);
    std::string source;
    std::vector<size_t> itemStarts;
    static const json kNoSource = json::array();
    auto srcAt = cell.find("source");
    const json& src = srcAt == cell.end() ? kNoSource : *srcAt;  // in place: value() copies the cell's text
    if (src.is_string()) {
      itemStarts.push_back(0);
      source = src.get_ref<const std::string&>();
    } else if (src.is_array()) {
      for (const json& item : src) {
        if (!item.is_string()) {
          nb.error = "not a valid notebook: cell " + std::to_string(number) + "'s source is not text";
          return nb;
        }
        itemStarts.push_back(source.size());
        source += item.get_ref<const std::string&>();
      }
    } else {
      nb.error = "not a valid notebook: cell " + std::to_string(number) + "'s source is not text";
      return nb;
    }
    if (!span.hasSource || itemStarts.size() != span.items.size()) {
      nb.error = "not a valid notebook: cell " + std::to_string(number) + "'s source could not be located";
      return nb;
    }
    addCodeCell(nb, number, span, source, itemStarts, jsonLines);
  }
  if (nb.cells.empty()) nb.error = "the notebook has no code cells";
  return nb;
}

Notebook readNotebook(std::string_view text) {
  // The one pass reads a plainly written notebook whole: a JSON document is not built (for a
  // long notebook, lexing it into one took as long as a tenth of the check).
  notebook_scan::Scanned scanned;
  if (!notebook_scan::scan(text, scanned, true) || scanned.nbformat != "4") return readThroughDocument(text);
  for (const ScannedCell& c : scanned.cells)
    if (c.type == "code" && !c.hasSource) return readThroughDocument(text);  // its error is the document's to give
  Notebook nb;
  const std::optional<std::string>& language = scanned.kernelLanguage ? scanned.kernelLanguage : scanned.languageName;
  if (language && !language->empty() && lowercase(*language) != "python") {
    nb.skipped = notPythonKernel(*language);
    return nb;
  }
  JsonLines jsonLines(text);
  for (size_t i = 0; i < scanned.cells.size(); ++i) {
    const ScannedCell& span = scanned.cells[i];
    if (span.type == "code") addCodeCell(nb, static_cast<uint32_t>(i + 1), span, span.text, span.itemStarts, jsonLines);
  }
  if (nb.cells.empty()) nb.error = "the notebook has no code cells";
  return nb;
}

std::string cellLinesIn(const Notebook& nb, std::string_view basis) {
  static constexpr std::string_view kAt = "` at line ";  // how facts/sizes.cpp names a line
  std::string out;
  size_t from = 0;
  for (size_t at = basis.find(kAt); at != std::string_view::npos; at = basis.find(kAt, from)) {
    size_t digits = at + kAt.size(), end = digits;
    while (end < basis.size() && basis[end] >= '0' && basis[end] <= '9') ++end;
    out.append(basis.substr(from, at + 1 - from));
    from = end;
    CellPosition p = end > digits ? cellPosition(nb, static_cast<uint32_t>(std::stoul(std::string(basis.substr(digits, end - digits)))))
                                  : CellPosition{};
    if (p.cell == 0) {  // not a line of a cell: left as it was
      out.append(basis.substr(at + 1, end - at - 1));
      continue;
    }
    out += " at cell " + std::to_string(p.cell) + ", line " + std::to_string(p.line);
  }
  out.append(basis.substr(from));
  return out;
}

std::vector<uint32_t> cellStartsOf(const Notebook& nb) {
  std::vector<uint32_t> starts;
  for (const NotebookCell& c : nb.cells)  // an empty cell starts where the next one does
    if (starts.empty() || c.begin > starts.back()) starts.push_back(c.begin);
  return starts;
}

int cellAt(const Notebook& nb, uint32_t offset) {
  // Cells in module order; empty ones share the next cell's offset and hold nothing.
  auto after = std::upper_bound(nb.cells.begin(), nb.cells.end(), offset,
                                [](uint32_t off, const NotebookCell& c) { return off < c.begin; });
  while (after != nb.cells.begin() && std::prev(after)->lines.empty()) --after;
  return after == nb.cells.begin() ? -1 : static_cast<int>(std::prev(after) - nb.cells.begin());
}

CellPosition cellPosition(const Notebook& nb, uint32_t moduleLine) {
  CellPosition p;
  auto after = std::upper_bound(nb.cells.begin(), nb.cells.end(), moduleLine,
                                [](uint32_t line, const NotebookCell& c) { return line < c.firstLine; });
  while (after != nb.cells.begin() && std::prev(after)->lines.empty()) --after;
  if (after == nb.cells.begin()) return p;
  const NotebookCell& c = *std::prev(after);
  uint32_t k = moduleLine - c.firstLine;
  if (k >= c.lines.size()) return p;
  p.cell = c.number;
  p.line = k + 1;
  p.jsonLine = c.jsonLines[k];
  return p;
}

}  // namespace oomlint
