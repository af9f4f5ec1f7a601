#include <algorithm>

#include "report/format.h"
#include "report/measured.h"

namespace oomlint::report::detail {

std::string lineOf(const std::string& source, const std::vector<uint32_t>& starts, uint32_t line) {
  if (line == 0 || line > starts.size()) return {};
  uint32_t b = starts[line - 1];
  uint32_t e = line < starts.size() ? starts[line] : static_cast<uint32_t>(source.size());
  std::string t = source.substr(b, e - b);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t;
}

/// Line/column (1-based, code points) of a byte offset.
std::pair<uint32_t, uint32_t> position(const std::string& source, const std::vector<uint32_t>& starts, uint32_t offset) {
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts.begin());
  return {line, charColumn(source, starts, line, offset - starts[line - 1])};
}

std::string displayPath(const std::string& path, const Options& opts) {
  if (!opts.cwd.empty() && path.size() > opts.cwd.size() && path.compare(0, opts.cwd.size(), opts.cwd) == 0 &&
      path[opts.cwd.size()] == '/')
    return path.substr(opts.cwd.size() + 1);
  if (path.rfind("./", 0) == 0) return path.substr(2);
  return path;
}

/// JSON strings must be valid UTF-8: replace invalid bytes (messages may quote user code).
std::string utf8Safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) ok = false;
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

Location locate(const FileResult& r, const std::vector<uint32_t>& starts, const Span& s) {
  Location l{};
  l.line = std::max<uint32_t>(1, s.line);
  l.col = charColumn(r.source, starts, l.line, s.col);
  l.endLine = std::max(l.line, s.endLine);
  l.endCol = s.endLine ? charColumn(r.source, starts, l.endLine, s.endCol) : l.col;
  if (l.endLine == l.line && l.endCol < l.col) l.endCol = l.col;
  if (r.notebook) {
    CellPosition a = cellPosition(*r.notebook, l.line), b = cellPosition(*r.notebook, l.endLine);
    if (b.cell != a.cell) b = a;
    l.cell = a.cell;
    l.cellLine = a.line;
    l.cellEndLine = std::max(a.line, b.line);
    l.fileLine = a.jsonLine;
    l.fileEndLine = std::max(a.jsonLine, b.jsonLine);
  }
  return l;
}

std::string where(const std::string& path, const Location& l) {
  if (l.cell) return path + ":cell " + std::to_string(l.cell) + ":" + std::to_string(l.cellLine) + ":" + std::to_string(l.col);
  return path + ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
}

json locationJson(uint32_t line, uint32_t col) { return json{{"row", line}, {"column", col}}; }

json estimatedJson(const EstimatedCost& e) {
  return {{"bytes", static_cast<int64_t>(e.bytes + 0.5)},
          {"measure", e.measure},
          {"formula", e.formula},
          {"basis", e.basis},
          {"summary", e.summary()}};
}

json measuredJson(const MeasuredCost& m) {
  return {{"device", m.device},
          {"workload", m.workload},
          {"peak_bytes", {{"anti", m.peakAnti}, {"fix", m.peakFix}, {"delta", m.peakAnti - m.peakFix}}},
          {"retained_bytes", {{"anti", m.retainedAnti}, {"fix", m.retainedFix}}},
          {"growth_bytes_per_step", {{"anti", m.growthAnti}, {"fix", m.growthFix}}},
          {"ms_per_step", {{"anti", m.msAnti}, {"fix", m.msFix}}},
          {"cost", m.cost},
          {"summary", describeMeasured(m)}};
}

}  // namespace oomlint::report::detail
