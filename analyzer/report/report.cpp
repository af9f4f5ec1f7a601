#include "report/report.h"

#include "cli/verify.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace oomlint::report {
namespace {

using nlohmann::json;

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

struct Location {
  uint32_t line, col, endLine, endCol;
};

Location locate(const FileResult& r, const std::vector<uint32_t>& starts, const Finding& f) {
  Location l{};
  l.line = std::max<uint32_t>(1, f.span.line);
  l.col = charColumn(r.source, starts, l.line, f.span.col);
  l.endLine = std::max(l.line, f.span.endLine);
  l.endCol = f.span.endLine ? charColumn(r.source, starts, l.endLine, f.span.endCol) : l.col;
  if (l.endLine == l.line && l.endCol < l.col) l.endCol = l.col;
  return l;
}

std::string fixSuffix(const Finding& f) {
  if (!f.hasFix) return "";
  return f.fix.applicability == Applicability::Safe ? " [*]" : "";
}

void writeFull(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  size_t total = 0, safe = 0, unsafe = 0;
  bool color = isatty(STDOUT_FILENO) && &os == &std::cout;
  auto bold = [&](const std::string& s) { return color ? "\x1b[1m" + s + "\x1b[0m" : s; };
  auto red = [&](const std::string& s) { return color ? "\x1b[1;31m" + s + "\x1b[0m" : s; };
  auto cyan = [&](const std::string& s) { return color ? "\x1b[36m" + s + "\x1b[0m" : s; };
  for (const FileResult& r : results) {
    if (r.findings.empty()) continue;
    auto starts = lineStartsOf(r.source);
    std::string path = displayPath(r.path, opts);
    for (const Finding& f : r.findings) {
      ++total;
      if (f.hasFix && f.fix.applicability == Applicability::Safe) ++safe;
      if (f.hasFix && f.fix.applicability == Applicability::Unsafe) ++unsafe;
      Location l = locate(r, starts, f);
      os << bold(path) << cyan(":") << l.line << cyan(":") << l.col << cyan(":") << " " << red(std::string(f.code))
         << fixSuffix(f) << " " << f.message << "\n";
      std::string text = lineOf(r.source, starts, l.line);
      if (text.empty() && f.code == kIoErrorCode) {
        os << "\n";
        continue;
      }
      std::string num = std::to_string(l.line);
      std::string pad(num.size(), ' ');
      // Tabs and invalid bytes would misplace the caret: show them as single spaces / U+FFFD.
      std::string shown;
      for (char c : text) shown += c == '\t' ? ' ' : c;
      shown = utf8Safe(shown);
      uint32_t caretEnd = l.endLine == l.line ? l.endCol : charColumn(r.source, starts, l.line, static_cast<uint32_t>(text.size()));
      uint32_t width = caretEnd > l.col ? caretEnd - l.col : 1;
      os << pad << " |\n" << num << " | " << shown << "\n" << pad << " | " << std::string(l.col - 1, ' ')
         << red(std::string(width, '^')) << "\n" << pad << " |\n";
      if (opts.showFixes && f.hasFix && !f.fix.message.empty()) {
        std::string kind = f.fix.applicability == Applicability::Safe     ? ""
                           : f.fix.applicability == Applicability::Unsafe ? " (unsafe fix)"
                                                                          : "";
        os << pad << " = help: " << f.fix.message << kind << "\n";
      }
      if (f.measured.present) os << pad << " = " << describeMeasured(f.measured) << " [" << f.measured.workload << "]\n";
      else if (!f.measured.note.empty()) os << pad << " = not measured: " << f.measured.note << "\n";
      os << "\n";
    }
  }
  if (total == 0) {
    os << "All checks passed!\n";
    return;
  }
  os << "Found " << total << (total == 1 ? " finding" : " findings") << ".\n";
  if (safe) os << "[*] " << safe << " fixable with the `--fix` option";
  if (safe && unsafe) os << " (" << unsafe << " hidden fixes can be enabled with the `--unsafe-fixes` option)";
  else if (unsafe) os << "No fixes available (" << unsafe << " hidden fixes can be enabled with the `--unsafe-fixes` option)";
  if (safe || unsafe) os << ".\n";
}

void writeConcise(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  for (const FileResult& r : results) {
    if (r.findings.empty()) continue;
    auto starts = lineStartsOf(r.source);
    std::string path = displayPath(r.path, opts);
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f);
      os << path << ":" << l.line << ":" << l.col << ": " << f.code << fixSuffix(f) << " " << f.message;
      if (f.measured.present) os << " [" << describeMeasured(f.measured) << "]";
      os << "\n";
    }
  }
}

json locationJson(uint32_t line, uint32_t col) { return json{{"row", line}, {"column", col}}; }

json measuredJson(const MeasuredCost& m) {
  return {{"device", m.device},
          {"workload", m.workload},
          {"peak_bytes", {{"anti", m.peakAnti}, {"fix", m.peakFix}, {"delta", m.peakAnti - m.peakFix}}},
          {"retained_bytes", {{"anti", m.retainedAnti}, {"fix", m.retainedFix}}},
          {"growth_bytes_per_step", {{"anti", m.growthAnti}, {"fix", m.growthFix}}},
          {"ms_per_step", {{"anti", m.msAnti}, {"fix", m.msFix}}},
          {"summary", describeMeasured(m)}};
}

void writeJson(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  json arr = json::array();
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f);
      json fix = nullptr;
      if (f.hasFix) {
        json edits = json::array();
        for (const Edit& e : f.fix.edits) {
          auto [bl, bc] = position(r.source, starts, e.begin);
          auto [el, ec] = position(r.source, starts, e.end);
          edits.push_back({{"content", utf8Safe(e.content)}, {"location", locationJson(bl, bc)}, {"end_location", locationJson(el, ec)}});
        }
        fix = {{"applicability", std::string(applicabilityName(f.fix.applicability))},
               {"message", utf8Safe(f.fix.message)},
               {"edits", edits}};
      }
      const Rule* rule = findRule(f.code);
      json measured = nullptr;
      if (f.measured.present) measured = measuredJson(f.measured);
      arr.push_back({{"measured", measured},
                     {"cell", nullptr},
                     {"code", std::string(f.code)},
                     {"name", rule ? std::string(rule->info().name) : std::string(f.code == kParseErrorCode ? "syntax-error" : "io-error")},
                     {"severity", std::string(severityName(f.severity))},
                     {"message", utf8Safe(f.message)},
                     {"filename", utf8Safe(r.path)},
                     {"location", locationJson(l.line, l.col)},
                     {"end_location", locationJson(l.endLine, l.endCol)},
                     {"noqa_row", l.line},
                     {"fix", fix},
                     {"url", rule ? json(ruleUrl(f.code)) : json(nullptr)}});
    }
  }
  os << arr.dump(2) << "\n";
  (void)opts;
}

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
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::string uri = percentEncodePath(displayPath(r.path, opts));
    std::map<std::string, uint32_t> seen;
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f);
      json region = {{"startLine", l.line}, {"startColumn", l.col}, {"endLine", l.endLine}, {"endColumn", std::max(l.endCol, l.col)}};
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
      if (f.measured.present) result["properties"] = {{"measured", measuredJson(f.measured)}};
      if (f.hasFix && !f.fix.edits.empty()) {
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
  if (!opts.cwd.empty()) run["originalUriBaseIds"] = {{"%SRCROOT%", {{"uri", "file://" + percentEncodePath(opts.cwd) + "/"}}}};
  json doc = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", json::array({run})}};
  os << doc.dump(2) << "\n";
}

std::string escapeGithubData(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}
std::string escapeGithubProperty(const std::string& s) {
  std::string out;
  for (char c : escapeGithubData(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

void writeGithub(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::string path = displayPath(r.path, opts);
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f);
      std::string level = f.severity == Severity::Error ? "error" : f.severity == Severity::Warning ? "warning" : "notice";
      os << "::" << level << " title=" << escapeGithubProperty("oomlint (" + std::string(f.code) + ")")
         << ",file=" << escapeGithubProperty(path) << ",line=" << l.line << ",col=" << l.col << ",endLine=" << l.endLine
         << ",endColumn=" << l.endCol << "::" << escapeGithubData(path + ":" + std::to_string(l.line) + ":" +
                                                                   std::to_string(l.col) + ": " + std::string(f.code) + " " + f.message)
         << "\n";
    }
  }
}

/// GitLab Code Quality report (a JSON array of issues).
void writeGitlab(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  json arr = json::array();
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::map<std::string, uint32_t> seen;
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f);
      std::string key = std::string(f.code) + "\n" + lineOf(r.source, starts, l.line);
      uint32_t occurrence = seen[key]++;
      std::string severity = f.severity == Severity::Error ? "major" : f.severity == Severity::Warning ? "minor" : "info";
      arr.push_back({{"description", utf8Safe(std::string(f.code) + " " + f.message)},
                     {"check_name", std::string(f.code)},
                     {"fingerprint", stableFingerprint(r, starts, f, occurrence) + std::to_string(std::hash<std::string>{}(r.path) & 0xffff)},
                     {"severity", severity},
                     {"location", {{"path", utf8Safe(displayPath(r.path, opts))}, {"lines", {{"begin", l.line}, {"end", l.endLine}}}}}});
    }
  }
  os << arr.dump(2) << "\n";
}

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (char c : utf8Safe(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
        else out += c;
    }
  }
  return out;
}

/// JUnit XML: one test suite with one failed test case per finding (CI dashboards list each).
void writeJunit(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  size_t total = 0;
  for (const FileResult& r : results) total += r.findings.size();
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<testsuites name=\"oomlint\" tests=\"" << total << "\" failures=\"" << total << "\">\n";
  os << "  <testsuite name=\"oomlint\" tests=\"" << total << "\" failures=\"" << total << "\" errors=\"0\">\n";
  for (const FileResult& r : results) {
    if (r.findings.empty()) continue;
    auto starts = lineStartsOf(r.source);
    std::string path = displayPath(r.path, opts);
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f);
      std::string where = path + ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
      os << "    <testcase name=\"" << xmlEscape(std::string(f.code) + " " + where) << "\" classname=\"" << xmlEscape(path)
         << "\" file=\"" << xmlEscape(path) << "\" line=\"" << l.line << "\">\n";
      os << "      <failure message=\"" << xmlEscape(f.message) << "\" type=\"" << f.code << "\">" << xmlEscape(where + ": " + f.message)
         << "</failure>\n    </testcase>\n";
    }
  }
  os << "  </testsuite>\n</testsuites>\n";
}

}  // namespace

bool parseFormat(const std::string& name, Format& out) {
  if (name == "full") out = Format::Full;
  else if (name == "concise") out = Format::Concise;
  else if (name == "json") out = Format::Json;
  else if (name == "sarif") out = Format::Sarif;
  else if (name == "github") out = Format::Github;
  else if (name == "gitlab") out = Format::Gitlab;
  else if (name == "junit") out = Format::Junit;
  else return false;
  return true;
}

uint32_t charColumn(const std::string& source, const std::vector<uint32_t>& lineStarts, uint32_t line, uint32_t byteCol) {
  if (line == 0 || line > lineStarts.size()) return byteCol + 1;
  uint32_t b = lineStarts[line - 1];
  uint32_t col = 1;
  for (uint32_t i = 0; i < byteCol && b + i < source.size(); ++i)
    if ((static_cast<unsigned char>(source[b + i]) & 0xC0) != 0x80) ++col;
  return col;
}

std::string ruleUrl(std::string_view code) {
  return "https://github.com/oomlint/oomlint/blob/main/docs/rules.md#" + std::string(code);
}

std::string stableFingerprint(const FileResult& r, const std::vector<uint32_t>& starts, const Finding& f, uint32_t occurrence) {
  std::string text = lineOf(r.source, starts, f.span.line);
  size_t a = text.find_first_not_of(" \t");
  size_t b = text.find_last_not_of(" \t");
  text = a == std::string::npos ? std::string() : text.substr(a, b - a + 1);
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0xff;
    h *= 1099511628211ULL;
  };
  mix(f.code);
  mix(text);
  mix(std::to_string(occurrence));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void write(std::ostream& os, Format format, const std::vector<FileResult>& results, const Options& opts) {
  switch (format) {
    case Format::Full: writeFull(os, results, opts); break;
    case Format::Concise: writeConcise(os, results, opts); break;
    case Format::Json: writeJson(os, results, opts); break;
    case Format::Sarif: writeSarif(os, results, opts); break;
    case Format::Github: writeGithub(os, results, opts); break;
    case Format::Gitlab: writeGitlab(os, results, opts); break;
    case Format::Junit: writeJunit(os, results, opts); break;
  }
}

void writeStatistics(std::ostream& os, const std::vector<FileResult>& results) {
  std::map<std::string, std::pair<size_t, bool>> counts;
  for (const FileResult& r : results)
    for (const Finding& f : r.findings) {
      auto& c = counts[std::string(f.code)];
      ++c.first;
      c.second = c.second || (f.hasFix && f.fix.applicability == Applicability::Safe);
    }
  std::vector<std::pair<std::string, std::pair<size_t, bool>>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  for (const auto& [code, c] : rows) {
    const Rule* rule = findRule(code);
    std::string name = rule ? std::string(rule->info().name) : (code == kParseErrorCode ? "syntax-error" : "io-error");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%5zu", c.first);
    os << buf << "\t" << code << "\t" << (c.second ? "[*] " : "[ ] ") << name << "\n";
  }
}

}  // namespace oomlint::report
