#pragma once
/// Internal to report/: what every output format shares (paths, positions, JSON pieces), and
/// the writers of each format, one file per format family.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/report.h"

namespace oomlint::report::detail {

using nlohmann::json;

/// The text of a 1-based line, without its line break.
std::string lineOf(const std::string& source, const std::vector<uint32_t>& starts, uint32_t line);
/// Line/column (1-based, code points) of a byte offset.
std::pair<uint32_t, uint32_t> position(const std::string& source, const std::vector<uint32_t>& starts, uint32_t offset);
/// The path as reported: relative to the working directory when below it.
std::string displayPath(const std::string& path, const Options& opts);
/// JSON strings must be valid UTF-8: replace invalid bytes (messages may quote user code).
std::string utf8Safe(const std::string& s);

struct Location {
  uint32_t line, col, endLine, endCol;
};
/// 1-based lines and code-point columns of a span.
Location locate(const FileResult& r, const std::vector<uint32_t>& starts, const Span& s);

json locationJson(uint32_t line, uint32_t col);
json measuredJson(const MeasuredCost& m);

void writeFull(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeConcise(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeJson(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeSarif(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeGithub(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeGitlab(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeJunit(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);

}  // namespace oomlint::report::detail
