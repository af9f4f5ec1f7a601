// `json`: ruff's JSON shape, plus `name`, `severity`, `related` (the evidence), `measured` and `estimated`;
// `json-lines`: the same objects, one per line.
#include "report/format.h"

namespace oomlint::report::detail {

/// One finding as the `json` format writes it.
static json findingJson(const FileResult& r, const std::vector<uint32_t>& starts, const Finding& f) {
  Location l = locate(r, starts, f.span);
  json fix = nullptr;
  if (f.hasFix) {
    json edits = json::array();
    for (const Edit& e : f.fix.edits) {
      auto [bl, bc] = position(r.source, starts, e.begin);
      auto [el, ec] = position(r.source, starts, e.end);
      if (r.notebook) {  // rows within the finding's cell, like its location
        CellPosition pb = cellPosition(*r.notebook, bl), pe = cellPosition(*r.notebook, el);
        bl = pb.line;
        el = pe.cell == pb.cell ? pe.line : pb.line;
      }
      edits.push_back({{"content", utf8Safe(e.content)}, {"location", locationJson(bl, bc)}, {"end_location", locationJson(el, ec)}});
    }
    fix = {{"applicability", std::string(applicabilityName(f.fix.applicability))},
           {"message", utf8Safe(f.fix.message)},
           {"edits", edits}};
  }
  const Rule* rule = findRule(f.code);
  json measured = nullptr;
  if (f.measured.present) measured = measuredJson(f.measured);
  json related = json::array();
  for (const Related& rel : f.related) {
    Location rl = locate(r, starts, rel.span);
    related.push_back({{"message", utf8Safe(rel.message)},
                       {"filename", utf8Safe(r.path)},
                       {"cell", rl.cell ? json(rl.cell) : json(nullptr)},
                       {"location", locationJson(rl.cell ? rl.cellLine : rl.line, rl.col)},
                       {"end_location", locationJson(rl.cell ? rl.cellEndLine : rl.endLine, rl.endCol)}});
  }
  return {{"measured", measured},
          {"estimated", f.estimated.present ? estimatedJson(f.estimated) : json(nullptr)},
                 {"related", related},
                 {"cell", l.cell ? json(l.cell) : json(nullptr)},
                 {"code", std::string(f.code)},
                 {"name", rule ? std::string(rule->info().name) : std::string(f.code == kParseErrorCode ? "syntax-error" : "io-error")},
                 {"severity", std::string(severityName(f.severity))},
                 {"message", utf8Safe(f.message)},
                 {"filename", utf8Safe(r.path)},
                 {"location", locationJson(l.cell ? l.cellLine : l.line, l.col)},
                 {"end_location", locationJson(l.cell ? l.cellEndLine : l.endLine, l.endCol)},
                 {"noqa_row", l.cell ? l.cellLine : l.line},
                 {"fix", fix},
                 {"url", rule ? json(ruleUrl(f.code)) : json(nullptr)}};
}

void writeJson(std::ostream& os, const std::vector<FileResult>& results, const Options&) {
  json arr = json::array();
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    for (const Finding& f : r.findings) arr.push_back(findingJson(r, starts, f));
  }
  os << arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void writeJsonLines(std::ostream& os, const std::vector<FileResult>& results, const Options&) {
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    for (const Finding& f : r.findings) os << findingJson(r, starts, f).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

}  // namespace oomlint::report::detail
