// The CI formats: GitHub Actions workflow commands, GitLab Code Quality, JUnit XML.
#include <cstdio>
#include <map>

#include "report/format.h"

namespace oomlint::report::detail {
namespace {

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

/// Four hex digits of a fixed hash (FNV-1a) of the reported path: GitLab matches issues across
/// pipelines by fingerprint, so it must not change with the standard library oomlint was built
/// with (std::hash does) or with where the checkout lies.
std::string pathTag(const std::string& path) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : path) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", static_cast<unsigned>(h & 0xffff));
  return buf;
}

}  // namespace

void writeGithub(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  for (const FileResult& r : results) {
    auto starts = lineStartsOf(r.source);
    std::string path = displayPath(r.path, opts);
    for (const Finding& f : r.findings) {
      Location l = locate(r, starts, f.span);
      std::string level = f.severity == Severity::Error ? "error" : f.severity == Severity::Warning ? "warning" : "notice";
      os << "::" << level << " title=" << escapeGithubProperty("oomlint (" + std::string(f.code) + ")")
         << ",file=" << escapeGithubProperty(path) << ",line=" << fileLine(l);
      // In a notebook the columns of a cell are not the JSON file's: annotate whole lines.
      if (!l.cell) os << ",col=" << l.col << ",endLine=" << l.endLine << ",endColumn=" << l.endCol;
      else os << ",endLine=" << fileEndLine(l);
      os << "::" << escapeGithubData(where(path, l) + ": " + std::string(f.code) + " " + f.message) << "\n";
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
      Location l = locate(r, starts, f.span);
      std::string key = std::string(f.code) + "\n" + lineOf(r.source, starts, l.line);
      uint32_t occurrence = seen[key]++;
      std::string severity = f.severity == Severity::Error ? "major" : f.severity == Severity::Warning ? "minor" : "info";
      arr.push_back({{"description", utf8Safe(std::string(f.code) + " " + f.message)},
                     {"check_name", std::string(f.code)},
                     {"fingerprint", stableFingerprint(r, starts, f, occurrence) + pathTag(displayPath(r.path, opts))},
                     {"severity", severity},
                     {"location", {{"path", utf8Safe(displayPath(r.path, opts))}, {"lines", {{"begin", fileLine(l)}, {"end", fileEndLine(l)}}}}}});
    }
  }
  os << arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
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
      Location l = locate(r, starts, f.span);
      std::string at = where(path, l);
      os << "    <testcase name=\"" << xmlEscape(std::string(f.code) + " " + at) << "\" classname=\"" << xmlEscape(path)
         << "\" file=\"" << xmlEscape(path) << "\" line=\"" << fileLine(l) << "\">\n";
      os << "      <failure message=\"" << xmlEscape(f.message) << "\" type=\"" << f.code << "\">" << xmlEscape(at + ": " + f.message)
         << "</failure>\n    </testcase>\n";
    }
  }
  os << "  </testsuite>\n</testsuites>\n";
}

}  // namespace oomlint::report::detail
