#include "report/report.h"

#include <cstdio>

#include "report/format.h"

namespace oomlint::report {

bool parseFormat(const std::string& name, Format& out) {
  if (name == "full") out = Format::Full;
  else if (name == "concise") out = Format::Concise;
  else if (name == "json") out = Format::Json;
  else if (name == "sarif") out = Format::Sarif;
  else if (name == "github") out = Format::Github;
  else if (name == "gitlab") out = Format::Gitlab;
  else if (name == "junit") out = Format::Junit;
  else if (name == "json-lines") out = Format::JsonLines;
  else if (name == "rdjson") out = Format::Rdjson;
  else if (name == "azure") out = Format::Azure;
  else if (name == "pylint") out = Format::Pylint;
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
  std::string text = detail::lineOf(r.source, starts, f.span.line);
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
    case Format::Full: detail::writeFull(os, results, opts); break;
    case Format::Concise: detail::writeConcise(os, results, opts); break;
    case Format::Json: detail::writeJson(os, results, opts); break;
    case Format::Sarif: detail::writeSarif(os, results, opts); break;
    case Format::Github: detail::writeGithub(os, results, opts); break;
    case Format::Gitlab: detail::writeGitlab(os, results, opts); break;
    case Format::Junit: detail::writeJunit(os, results, opts); break;
    case Format::JsonLines: detail::writeJsonLines(os, results, opts); break;
    case Format::Rdjson: detail::writeRdjson(os, results, opts); break;
    case Format::Azure: detail::writeAzure(os, results, opts); break;
    case Format::Pylint: detail::writePylint(os, results, opts); break;
  }
}

}  // namespace oomlint::report
