// Formats for review tools and other CI systems: reviewdog's `rdjson`, Azure Pipelines logging
// commands (`azure`) and pylint's parseable lines (`pylint`), as ruff writes them. Lines are the
// file's own (a notebook's JSON lines), which is what these readers open.
#include "report/format.h"

namespace oomlint::report::detail {
namespace {

std::string rdSeverity(Severity s) { return s == Severity::Error ? "ERROR" : s == Severity::Warning ? "WARNING" : "INFO"; }

json rdRange(const Location& l) {
  return {{"start", {{"line", fileLine(l)}, {"column", l.col}}}, {"end", {{"line", fileEndLine(l)}, {"column", l.endCol}}}};
}

/// Azure's logging commands end a property at `;` and the message at a line break.
std::string azureEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ';') out += "%3B";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else if (c == ']') out += "%5D";
    else out += c;
  }
  return out;
}

}  // namespace

void writeRdjson(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  json diagnostics = json::array();
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::string path = utf8Safe(displayPath(r.path, opts));
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f.span);
      json d = {{"message", utf8Safe(f.message)},
                {"location", {{"path", path}, {"range", rdRange(l)}}},
                {"severity", rdSeverity(f.severity)},
                {"code", {{"value", std::string(f.code)}}}};
      if (findRule(f.code)) d["code"]["url"] = ruleUrl(f.code);
      // A fix reviewdog can suggest: its edits (a notebook's edits are in its cells' text, which
      // the JSON file does not hold as written: none there).
      if (f.hasFix && !r.notebook) {
        json suggestions = json::array();
        for (const Edit& e : f.fix.edits) {
          auto [bl, bc] = position(r.source, starts, e.begin);
          auto [el, ec] = position(r.source, starts, e.end);
          suggestions.push_back({{"range", {{"start", {{"line", bl}, {"column", bc}}}, {"end", {{"line", el}, {"column", ec}}}}},
                                 {"text", utf8Safe(e.content)}});
        }
        d["suggestions"] = std::move(suggestions);
      }
      diagnostics.push_back(std::move(d));
    }
  }
  json doc = {{"source", {{"name", "oomlint"}, {"url", "https://github.com/oomlint/oomlint"}}},
              {"severity", "WARNING"},
              {"diagnostics", diagnostics}};
  os << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void writeAzure(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::string path = displayPath(r.path, opts);
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f.span);
      os << "##vso[task.logissue type=" << (f.severity == Severity::Error ? "error" : "warning") << ";sourcepath=" << azureEscape(path)
         << ";linenumber=" << fileLine(l) << ";columnnumber=" << (l.cell ? 1 : l.col) << ";code=" << f.code << ";]"
         << azureEscape(f.message) << "\n";
    }
  }
}

void writePylint(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::string path = displayPath(r.path, opts);
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f.span);
      os << path << ":" << fileLine(l) << ": [" << f.code << "] " << f.message << "\n";
    }
  }
}

}  // namespace oomlint::report::detail
