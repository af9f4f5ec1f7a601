// Writing fixed cells back into a notebook's JSON text: only the "source" values of changed
// cells are replaced, and in them only the changed lines; the file's own indentation, key order,
// outputs, metadata and trailing newline stay as they were.
#include <nlohmann/json.hpp>

#include "notebook/notebook.h"
#include "util/lines.h"

namespace oomlint {

namespace {

/// A JSON string as nbformat writes it (UTF-8 kept, control characters escaped).
std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          static const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

/// Leading blanks of the line holding `offset`.
std::string indentAt(std::string_view text, size_t offset) {
  size_t start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  start = start == std::string_view::npos ? 0 : start + 1;
  size_t e = start;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t')) ++e;
  return std::string(text.substr(start, e - start));
}

/// The new JSON text of one cell's "source" value.
std::string sourceJson(std::string_view text, const NotebookCell& c, const std::vector<std::string>& lines,
                       const std::vector<bool>& keptFromOriginal, const std::vector<size_t>& originalIndex) {
  if (!c.sourceIsArray) {
    std::string joined;
    for (const std::string& l : lines) joined += l;
    return jsonString(joined);
  }
  if (lines.empty()) return "[]";
  // Items one per line (what nbformat writes) keep their own text where the line was kept.
  bool onePerLine = c.items.size() == c.lines.size();
  for (size_t k = 0; onePerLine && k < c.items.size(); ++k) {
    std::string_view raw = text.substr(c.items[k].first, c.items[k].second - c.items[k].first);
    onePerLine = nlohmann::json::parse(raw).get<std::string>() == c.lines[k];
  }
  std::string open, sep, close;
  if (c.items.empty()) {
    std::string key = indentAt(text, c.sourceBegin);
    open = "[\n" + key + " ";
    sep = ",\n" + key + " ";
    close = "\n" + key + "]";
  } else {
    open = std::string(text.substr(c.sourceBegin, c.items.front().first - c.sourceBegin));
    close = std::string(text.substr(c.items.back().second, c.sourceEnd - c.items.back().second));
    if (c.items.size() > 1) sep = std::string(text.substr(c.items[0].second, c.items[1].first - c.items[0].second));
    else sep = open.find('\n') != std::string::npos ? ",\n" + indentAt(text, c.items.front().first) : ", ";
  }
  std::string out = open;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k) out += sep;
    if (onePerLine && keptFromOriginal[k]) {
      const auto& item = c.items[originalIndex[k]];
      out.append(text.substr(item.first, item.second - item.first));
    } else {
      out += jsonString(lines[k]);
    }
  }
  return out + close;
}

}  // namespace

std::string cellText(const NotebookCell& cell) {
  std::string out;
  for (const std::string& l : cell.lines) out += l;
  return out;
}

std::string writeNotebook(std::string_view text, const Notebook& nb, const std::string& fixedModule,
                          const std::vector<uint32_t>& cellStarts, size_t& refusedCells) {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i < nb.cells.size() && i < cellStarts.size(); ++i) {
    const NotebookCell& c = nb.cells[i];
    size_t oldEnd = i + 1 < nb.cells.size() ? nb.cells[i + 1].begin : nb.module.size();
    size_t newEnd = i + 1 < cellStarts.size() ? cellStarts[i + 1] : fixedModule.size();
    std::string before = nb.module.substr(c.begin, oldEnd - c.begin);
    std::string after = fixedModule.substr(cellStarts[i], newEnd - cellStarts[i]);
    if (before == after) continue;
    std::vector<std::string> oldLines = splitKeepingBreaks(before), newLines = splitKeepingBreaks(after);
    size_t prefix = 0, suffix = 0;
    while (prefix < oldLines.size() && prefix < newLines.size() && oldLines[prefix] == newLines[prefix]) ++prefix;
    while (suffix < oldLines.size() - prefix && suffix < newLines.size() - prefix &&
           oldLines[oldLines.size() - 1 - suffix] == newLines[newLines.size() - 1 - suffix])
      ++suffix;
    bool magicTouched = false;
    for (size_t k = prefix; k < oldLines.size() - suffix; ++k)
      if (c.blanked[k]) magicTouched = true;
    if (magicTouched || oldLines.size() != c.lines.size()) {
      ++refusedCells;
      continue;
    }
    std::vector<std::string> lines;
    std::vector<bool> kept;
    std::vector<size_t> index;
    for (size_t k = 0; k < newLines.size(); ++k) {
      bool fromOld = k < prefix || k >= newLines.size() - suffix;
      size_t o = k < prefix ? k : oldLines.size() - (newLines.size() - k);
      lines.push_back(fromOld ? c.lines[o] : newLines[k]);
      kept.push_back(fromOld);
      index.push_back(fromOld ? o : 0);
    }
    // The original last line had no line break; if lines now follow it, it needs one.
    for (size_t k = 0; k + 1 < lines.size(); ++k)
      if (lines[k].empty() || lines[k].back() != '\n') {
        lines[k] += '\n';
        kept[k] = false;
      }
    // The module gave the cell a final line break it did not have.
    if (!c.endsWithNewline && !lines.empty() && !kept.back() && !lines.back().empty() && lines.back().back() == '\n')
      lines.back().pop_back();
    out.append(text.substr(copied, c.sourceBegin - copied));
    out += sourceJson(text, c, lines, kept, index);
    copied = c.sourceEnd;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace oomlint
