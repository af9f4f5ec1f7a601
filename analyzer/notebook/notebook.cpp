// Reading notebooks: the JSON parsed for its meaning (nlohmann) and walked once more for where
// each code cell's "source" sits in the text, so fixes can be written back in place.
#include "notebook/notebook.h"
#include "util/lines.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <nlohmann/json.hpp>

namespace oomlint {

bool isNotebookPath(std::string_view path) { return path.size() > 6 && path.substr(path.size() - 6) == ".ipynb"; }

namespace {

using nlohmann::json;

/// The byte ranges of each cell's "cell_type" and "source" values in the notebook text.
class SourceScanner {
 public:
  struct Cell {
    std::string type;
    bool hasSource = false, array = false;
    size_t begin = 0, end = 0;
    std::vector<std::pair<size_t, size_t>> items;
  };

  explicit SourceScanner(std::string_view t) : t_(t) {}

  bool scan(std::vector<Cell>& cells) {
    bool ok = object([&](std::string_view key) { return key == "cells" ? cellList(cells) : skipValue(); });
    ws();
    return ok && i_ == t_.size();
  }

 private:
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool at(char c) {
    ws();
    return i_ < t_.size() && t_[i_] == c;
  }
  /// A string token; its decoded text when asked for.
  bool string(std::string* decoded = nullptr) {
    if (!at('"')) return false;
    size_t start = i_++;
    bool escapes = false;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] == '\\') {
        escapes = true;
        ++i_;
      }
      ++i_;
    }
    if (i_ >= t_.size()) return false;
    ++i_;
    if (decoded) {
      if (!escapes) decoded->assign(t_.substr(start + 1, i_ - start - 2));
      else *decoded = json::parse(t_.substr(start, i_ - start)).get<std::string>();
    }
    return true;
  }
  bool object(const std::function<bool(std::string_view)>& value) {
    if (!at('{')) return false;
    ++i_;
    if (at('}')) return ++i_, true;
    for (;;) {
      std::string key;
      if (!string(&key) || !at(':')) return false;
      ++i_;
      if (!value(key)) return false;
      if (at(',')) {
        ++i_;
        continue;
      }
      if (!at('}')) return false;
      ++i_;
      return true;
    }
  }
  bool array(const std::function<bool()>& element) {
    if (!at('[')) return false;
    ++i_;
    if (at(']')) return ++i_, true;
    for (;;) {
      if (!element()) return false;
      if (at(',')) {
        ++i_;
        continue;
      }
      if (!at(']')) return false;
      ++i_;
      return true;
    }
  }
  bool skipValue() {
    ws();
    if (i_ >= t_.size()) return false;
    char c = t_[i_];
    if (c == '{') return object([&](std::string_view) { return skipValue(); });
    if (c == '[') return array([&] { return skipValue(); });
    if (c == '"') return string();
    size_t start = i_;
    while (i_ < t_.size() && std::string_view(",]} \t\r\n").find(t_[i_]) == std::string_view::npos) ++i_;
    return i_ > start;
  }
  bool cellList(std::vector<Cell>& cells) {
    return array([&] {
      Cell c;
      bool ok = object([&](std::string_view key) {
        if (key == "cell_type") return string(&c.type);
        if (key != "source") return skipValue();
        ws();
        c.hasSource = true;
        c.begin = i_;
        bool done;
        if (at('[')) {
          c.array = true;
          done = array([&] {
            ws();
            size_t b = i_;
            if (!string()) return false;
            c.items.emplace_back(b, i_);
            return true;
          });
        } else {
          size_t b = i_;
          done = string();
          c.items.emplace_back(b, i_);
        }
        c.end = i_;
        return done;
      });
      cells.push_back(std::move(c));
      return ok;
    });
  }

  std::string_view t_;
  size_t i_ = 0;
};

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

Notebook readNotebook(std::string_view text) {
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
  const json& meta = doc.value("metadata", json::object());
  if (meta.is_object()) {
    if (meta.contains("kernelspec") && meta["kernelspec"].is_object() && meta["kernelspec"].contains("language") &&
        meta["kernelspec"]["language"].is_string())
      language = meta["kernelspec"]["language"].get<std::string>();
    else if (meta.contains("language_info") && meta["language_info"].is_object() && meta["language_info"].contains("name") &&
             meta["language_info"]["name"].is_string())
      language = meta["language_info"]["name"].get<std::string>();
  }
  std::string lower = language;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!lower.empty() && lower != "python") {
    nb.skipped = "the notebook's kernel language is " + language + ", not Python; not checked";
    return nb;
  }
  std::vector<SourceScanner::Cell> spans;
  if (!SourceScanner(text).scan(spans) || spans.size() != doc["cells"].size()) {
    nb.error = "not a valid notebook: its cells could not be located in the JSON text";
    return nb;
  }
  std::vector<size_t> lineStarts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') lineStarts.push_back(i + 1);
  auto jsonLineOf = [&](size_t offset) {
    return static_cast<uint32_t>(std::upper_bound(lineStarts.begin(), lineStarts.end(), offset) - lineStarts.begin());
  };
  for (size_t i = 0; i < spans.size(); ++i) {
    const json& cell = doc["cells"][i];
    if (!cell.is_object() || cell.value("cell_type", "") != "code") continue;
    const SourceScanner::Cell& span = spans[i];
    NotebookCell c;
    c.number = static_cast<uint32_t>(i + 1);
    c.sourceBegin = span.begin;
    c.sourceEnd = span.end;
    c.sourceIsArray = span.array;
    c.items = span.items;
    // The text, and where each item starts in it (a line belongs to the item it starts in).
    std::string source;
    std::vector<size_t> itemStarts;
    const json& src = cell.value("source", json::array());
    if (src.is_string()) {
      itemStarts.push_back(0);
      source = src.get<std::string>();
    } else if (src.is_array()) {
      for (const json& item : src) {
        if (!item.is_string()) {
          nb.error = "not a valid notebook: cell " + std::to_string(c.number) + "'s source is not text";
          return nb;
        }
        itemStarts.push_back(source.size());
        source += item.get<std::string>();
      }
    } else {
      nb.error = "not a valid notebook: cell " + std::to_string(c.number) + "'s source is not text";
      return nb;
    }
    if (!span.hasSource || itemStarts.size() != span.items.size()) {
      nb.error = "not a valid notebook: cell " + std::to_string(c.number) + "'s source could not be located";
      return nb;
    }
    appendCell(nb, c, source);
    size_t offset = 0;
    for (const std::string& l : c.lines) {
      size_t item = static_cast<size_t>(std::upper_bound(itemStarts.begin(), itemStarts.end(), offset) - itemStarts.begin()) - 1;
      c.jsonLines.push_back(jsonLineOf(span.items[item].first));
      offset += l.size();
    }
    nb.cells.push_back(std::move(c));
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
