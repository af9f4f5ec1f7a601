// `sarif`: SARIF 2.1.0, with rules, regions, fixes, relatedLocations and partialFingerprints.
#include <sys/stat.h>

#include <map>

#include "report/format.h"
#include "util/path.h"

namespace oomlint::report::detail {
namespace {

/// A SARIF region: lines and columns, or for a notebook the lines of its JSON file (columns there
/// would count the JSON's quoting, so the region is whole lines).
json regionOf(const Location& l) {
  if (l.cell) return {{"startLine", l.fileLine}, {"endLine", l.fileEndLine}};
  return {{"startLine", l.line}, {"startColumn", l.col}, {"endLine", l.endLine}, {"endColumn", std::max(l.endCol, l.col)}};
}

/// The nearest folder at or above `dir` holding `.git`, or "".
std::string repositoryAbove(std::string dir) {
  struct stat st {};
  for (;;) {
    if (::stat((dir + "/.git").c_str(), &st) == 0) return dir;
    size_t slash = dir.rfind('/');
    if (slash == std::string::npos || slash == 0) return {};
    dir.resize(slash);
  }
}

/// What URIs are relative to (`%SRCROOT%`): the repository every reported file lies in, as
/// GitHub code scanning maps a result's path from the repository's root, whichever folder
/// oomlint ran in; else the working directory.
std::string sourceRoot(const std::vector<FileResult>& results, const Options& opts) {
  std::string root;
  for (const FileResult& r : results) {
    if (r.findings.empty()) continue;
    std::string abs = absolutePath(r.path);
    std::string repo = repositoryAbove(abs.substr(0, abs.rfind('/')));
    if (repo.empty() || (!root.empty() && repo != root)) return opts.cwd;
    root = repo;
  }
  return root.empty() ? opts.cwd : root;
}

std::string relativeTo(const std::string& root, const std::string& path) {
  std::string abs = absolutePath(path);
  if (!root.empty() && abs.size() > root.size() && abs.compare(0, root.size(), root) == 0 && abs[root.size()] == '/')
    return abs.substr(root.size() + 1);
  return abs;
}

}  // namespace

namespace {

std::string sarifLevel(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "warning";
}

std::string percentEncodePath(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

void writeSarif(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  json rules = json::array();
  std::map<std::string, size_t> ruleIndex;
  for (const Rule* r : allRules()) {
    const RuleInfo& i = r->info();
    ruleIndex[std::string(i.code)] = rules.size();
    rules.push_back({{"id", std::string(i.code)},
                     {"name", std::string(i.name)},
                     {"shortDescription", {{"text", std::string(i.summary) + "."}}},
                     {"fullDescription", {{"text", std::string(i.summary) + "."}}},
                     {"help", {{"text", std::string(i.doc)}, {"markdown", std::string(i.doc)}}},
                     {"helpUri", ruleUrl(i.code)},
                     {"defaultConfiguration", {{"level", sarifLevel(i.severity)}, {"enabled", i.enabledByDefault}}},
                     {"properties", {{"tags", json::array({"memory", "pytorch"})}}}});
  }
  for (auto [code, text] : {std::pair<std::string_view, std::string_view>{kParseErrorCode, "The file could not be parsed."},
                            {kIoErrorCode, "The file could not be read."}}) {
    ruleIndex[std::string(code)] = rules.size();
    rules.push_back({{"id", std::string(code)},
                     {"name", code == kParseErrorCode ? "syntax-error" : "io-error"},
                     {"shortDescription", {{"text", std::string(text)}}},
                     {"fullDescription", {{"text", std::string(text)}}},
                     {"helpUri", ruleUrl(code)},
                     {"defaultConfiguration", {{"level", "error"}}}});
  }
  json out = json::array();
  std::string root = sourceRoot(results, opts);
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::string uri = percentEncodePath(relativeTo(root, r.path));
    std::map<std::string, uint32_t> seen;
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f.span);
      json region = regionOf(l);
      json artifact = {{"uri", uri}};
      if (uri.empty() || uri[0] != '/') artifact["uriBaseId"] = "%SRCROOT%";
      json result = {{"ruleId", std::string(f.code)},
                     {"ruleIndex", ruleIndex[std::string(f.code)]},
                     {"level", sarifLevel(f.severity)},
                     {"message", {{"text", utf8Safe(f.message) + "."}}},
                     {"locations", json::array({{{"physicalLocation", {{"artifactLocation", artifact}, {"region", region}}}}})}};
      std::string fpKey = std::string(f.code) + "\n" + lineOf(r.source, starts, l.line);
      uint32_t occurrence = seen[fpKey]++;
      result["partialFingerprints"] = {{"oomlint/v1", stableFingerprint(r, starts, f, occurrence)}};
      if (f.measured.present) result["properties"]["measured"] = measuredJson(f.measured);
      if (f.estimated.present) result["properties"]["estimated"] = estimatedJson(f.estimated);
      if (l.cell) result["properties"]["notebookCell"] = {{"cell", l.cell}, {"line", l.cellLine}, {"column", l.col}};
      if (!f.related.empty()) {
        json related = json::array();
        for (size_t i = 0; i < f.related.size(); ++i) {
          Location rl = locate(r, starts, f.related[i].span);
          json rr = regionOf(rl);
          related.push_back({{"id", i + 1},
                             {"message", {{"text", utf8Safe(f.related[i].message) + "."}}},
                             {"physicalLocation", {{"artifactLocation", artifact}, {"region", rr}}}});
        }
        result["relatedLocations"] = std::move(related);
      }
      // A notebook's edits are in the module its cells make, not in the JSON file: no SARIF fix.
      if (f.hasFix && !f.fix.edits.empty() && !r.notebook) {
        json replacements = json::array();
        for (const Edit& e : f.fix.edits) {
          auto [bl, bc] = position(r.source, starts, e.begin);
          auto [el, ec] = position(r.source, starts, e.end);
          replacements.push_back({{"deletedRegion", {{"startLine", bl}, {"startColumn", bc}, {"endLine", el}, {"endColumn", ec}}},
                                  {"insertedContent", {{"text", utf8Safe(e.content)}}}});
        }
        result["fixes"] = json::array({{{"description", {{"text", utf8Safe(f.fix.message) + "."}}},
                                        {"artifactChanges", json::array({{{"artifactLocation", artifact}, {"replacements", replacements}}})}}});
      }
      out.push_back(result);
    }
  }
  json run = {{"tool",
               {{"driver",
                 {{"name", "oomlint"},
                  {"version", opts.version},
                  {"semanticVersion", opts.version},
                  {"informationUri", "https://github.com/oomlint/oomlint"},
                  {"rules", rules}}}}},
              {"columnKind", "unicodeCodePoints"},
              {"results", out}};
  if (!root.empty()) run["originalUriBaseIds"] = {{"%SRCROOT%", {{"uri", "file://" + percentEncodePath(root) + "/"}}}};
  json doc = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", json::array({run})}};
  os << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace oomlint::report::detail
