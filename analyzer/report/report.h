#pragma once
/// Output formats. Each takes the results of one run; files are in path order, findings in
/// position order. Columns are 1-based Unicode code points, as ruff and SARIF readers expect.

#include <ostream>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace oomlint::report {

enum class Format { Full, Concise, Json, JsonLines, Sarif, Github, Gitlab, Junit, Rdjson, Azure, Pylint };

/// The names --output-format takes, as one line for help and error messages.
inline constexpr const char* kFormatNames = "full, concise, json, json-lines, sarif, github, gitlab, junit, rdjson, azure, pylint";

/// Parses one of kFormatNames; false for anything else.
bool parseFormat(const std::string& name, Format& out);

struct Options {
  bool showFixes = true;
  bool color = false;  // ANSI colour in the human formats (the CLI decides: --color, NO_COLOR, a terminal)
  std::string version;
  std::string cwd;  // absolute; paths are reported relative to it when below it
};

void write(std::ostream& os, Format format, const std::vector<FileResult>& results, const Options& opts);

/// `--statistics`: one line per code with its count, most frequent first; with `json`, an array
/// of {code, name, count, fixable} in the same order (what ruff's `--statistics` JSON gives).
void writeStatistics(std::ostream& os, const std::vector<FileResult>& results, bool json = false);

/// 1-based code-point column of byte column `byteCol` on `line` of `source`.
uint32_t charColumn(const std::string& source, const std::vector<uint32_t>& lineStarts, uint32_t line, uint32_t byteCol);

/// Documentation URL of a rule.
std::string ruleUrl(std::string_view code);

/// Fingerprint that survives unrelated edits: code, path and the trimmed text of the reported
/// line, disambiguated by occurrence. Not derived from the line number.
std::string stableFingerprint(const FileResult& r, const std::vector<uint32_t>& lineStarts, const Finding& f, uint32_t occurrence);

}  // namespace oomlint::report
