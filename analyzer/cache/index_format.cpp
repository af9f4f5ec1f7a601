#include "cache/index_format.h"

namespace oomlint::cache_format {

namespace {

using nlohmann::json;

/// Codes are stored as text; findings point at the rule's static code string.
std::string_view internCode(const std::string& code) {
  if (code == kParseErrorCode) return kParseErrorCode;
  if (code == kIoErrorCode) return kIoErrorCode;
  const Rule* r = findRule(code);
  return r ? r->info().code : std::string_view{};
}

json spanJson(const Span& s) { return json::array({s.begin, s.end, s.line, s.col, s.endLine, s.endCol}); }
Span spanFrom(const json& j) {
  Span s;
  s.begin = j.at(0);
  s.end = j.at(1);
  s.line = j.at(2);
  s.col = j.at(3);
  s.endLine = j.at(4);
  s.endCol = j.at(5);
  return s;
}

}  // namespace

nlohmann::json findingsJson(const std::vector<Finding>& findings) {
  json fs = json::array();
  for (const Finding& f : findings) {
    json j = {{"code", std::string(f.code)}, {"message", f.message}, {"span", spanJson(f.span)}, {"severity", static_cast<int>(f.severity)}};
    if (f.hasFix) {
      json edits = json::array();
      for (const Edit& ed : f.fix.edits) edits.push_back(json::array({ed.begin, ed.end, ed.content}));
      j["fix"] = {{"applicability", static_cast<int>(f.fix.applicability)}, {"message", f.fix.message}, {"edits", edits}};
    }
    if (!f.related.empty()) {
      json rel = json::array();
      for (const Related& r : f.related) rel.push_back(json::array({spanJson(r.span), r.message}));
      j["related"] = std::move(rel);
    }
    if (f.estimated.present) {
      const EstimatedCost& c = f.estimated;
      j["estimated"] = json::array({c.bytes, c.measure, c.formula, c.basis});
    }
    if (!f.probe.empty()) j["probe"] = f.probe;
    fs.push_back(std::move(j));
  }
  return fs;
}

std::vector<Finding> findingsFrom(const nlohmann::json& array) {
  std::vector<Finding> out;
  for (const json& f : array) {
    Finding fd;
    fd.code = internCode(f.at("code"));
    if (fd.code.empty()) throw std::runtime_error("unknown code");
    fd.message = f.at("message");
    fd.span = spanFrom(f.at("span"));
    fd.severity = static_cast<Severity>(f.at("severity").get<int>());
    if (f.contains("fix")) {
      const json& x = f["fix"];
      fd.hasFix = true;
      fd.fix.applicability = static_cast<Applicability>(x.at("applicability").get<int>());
      fd.fix.message = x.at("message");
      for (const json& ed : x.at("edits")) fd.fix.edits.push_back(Edit{ed.at(0), ed.at(1), ed.at(2)});
    }
    if (f.contains("related"))
      for (const json& rel : f["related"]) fd.related.push_back({spanFrom(rel.at(0)), rel.at(1)});
    if (f.contains("estimated")) {
      const json& c = f["estimated"];
      fd.estimated = EstimatedCost{true, c.at(0), c.at(1), c.at(2), c.at(3)};
    }
    if (f.contains("probe")) fd.probe = f["probe"];
    out.push_back(std::move(fd));
  }
  return out;
}

void appendString(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

}  // namespace oomlint::cache_format
