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
  // In a notebook: the cell's number, the lines within it, and the lines of the notebook's JSON
  // file (what SARIF, GitHub, GitLab and JUnit readers open). 0 outside notebooks.
  uint32_t cell = 0, cellLine = 0, cellEndLine = 0, fileLine = 0, fileEndLine = 0;
};
/// 1-based lines and code-point columns of a span.
Location locate(const FileResult& r, const std::vector<uint32_t>& starts, const Span& s);
/// `path:line:col`, or `path:cell N:line:col` in a notebook (as ruff prints them).
std::string where(const std::string& path, const Location& l);
/// The line to show beside a snippet: the cell's line in a notebook.
inline uint32_t shownLine(const Location& l) { return l.cell ? l.cellLine : l.line; }
/// The lines a file-based reader opens: the notebook's JSON lines, else the source lines.
inline uint32_t fileLine(const Location& l) { return l.cell ? l.fileLine : l.line; }
inline uint32_t fileEndLine(const Location& l) { return l.cell ? l.fileEndLine : l.endLine; }

json locationJson(uint32_t line, uint32_t col);
json measuredJson(const MeasuredCost& m);
/// A static estimate (EstimatedCost): bytes, what they measure, the formula and where the sizes came from.
json estimatedJson(const EstimatedCost& e);

void writeFull(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeConcise(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeJson(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeSarif(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeGithub(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeGitlab(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeJunit(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeJsonLines(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeRdjson(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writeAzure(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);
void writePylint(std::ostream& os, const std::vector<FileResult>& results, const Options& opts);

}  // namespace oomlint::report::detail
