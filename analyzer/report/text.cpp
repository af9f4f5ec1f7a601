// The human formats: `full` (rustc-style, with the source line, the fix and the evidence notes),
// `concise` (one line per finding) and `--statistics`.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "report/format.h"
#include "report/measured.h"

namespace oomlint::report {
namespace detail {
namespace {

std::string fixSuffix(const Finding& f) {
  if (!f.hasFix) return "";
  return f.fix.applicability == Applicability::Safe ? " [*]" : "";
}

}  // namespace

void writeFull(std::ostream& os, const std::vector<FileResult>& results, const Options& opts) {
  size_t total = 0, safe = 0, unsafe = 0;
  bool color = opts.color;
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
      Location l = locate(r, starts, f.span);
      if (l.cell) os << bold(path) << cyan(":") << "cell " << l.cell << cyan(":") << l.cellLine << cyan(":") << l.col << cyan(":") << " "
                     << red(std::string(f.code));
      else os << bold(path) << cyan(":") << l.line << cyan(":") << l.col << cyan(":") << " " << red(std::string(f.code));
      os
         << fixSuffix(f) << " " << f.message << "\n";
      std::string text = lineOf(r.source, starts, l.line);
      if (text.empty() && f.code == kIoErrorCode) {
        os << "\n";
        continue;
      }
      // The gutter fits the widest line number the finding and its notes show.
      uint32_t widest = shownLine(l);
      for (const Related& rel : f.related) widest = std::max(widest, shownLine(locate(r, starts, rel.span)));
      std::string pad(std::to_string(widest).size(), ' ');
      auto snippet = [&](const Location& at, auto&& paint) {
        std::string num = std::to_string(shownLine(at));
        std::string lineText = lineOf(r.source, starts, at.line);
        // Tabs and invalid bytes would misplace the caret: show them as single spaces / U+FFFD.
        std::string shown;
        for (char c : lineText) shown += c == '\t' ? ' ' : c;
        shown = utf8Safe(shown);
        uint32_t caretEnd =
            at.endLine == at.line ? at.endCol : charColumn(r.source, starts, at.line, static_cast<uint32_t>(lineText.size()));
        uint32_t width = caretEnd > at.col ? caretEnd - at.col : 1;
        os << pad << " |\n"
           << std::string(pad.size() - num.size(), ' ') << num << " | " << shown << "\n"
           << pad << " | " << std::string(at.col - 1, ' ') << paint(std::string(width, '^')) << "\n"
           << pad << " |\n";
      };
      snippet(l, red);
      if (opts.showFixes && f.hasFix && !f.fix.message.empty()) {
        std::string kind = f.fix.applicability == Applicability::Safe     ? ""
                           : f.fix.applicability == Applicability::Unsafe ? " (unsafe fix)"
                                                                          : "";
        os << pad << " = help: " << f.fix.message << kind << "\n";
      }
      // Evidence, rustc style: what the finding rests on, each with its own source line.
      for (const Related& rel : f.related) {
        Location at = locate(r, starts, rel.span);
        os << pad << " = " << bold("note") << ": " << rel.message << "\n"
           << pad << "--> " << where(path, at) << "\n";
        snippet(at, cyan);
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
      Location l = locate(r, starts, f.span);
      os << where(path, l) << ": " << f.code << fixSuffix(f) << " " << f.message;
      if (f.measured.present) os << " [" << describeMeasured(f.measured) << "]";
      os << "\n";
    }
  }
}

}  // namespace detail

void writeStatistics(std::ostream& os, const std::vector<FileResult>& results, bool json) {
  std::map<std::string, std::pair<size_t, bool>> counts;
  for (const FileResult& r : results)
    for (const Finding& f : r.findings) {
      auto& c = counts[std::string(f.code)];
      ++c.first;
      c.second = c.second || (f.hasFix && f.fix.applicability == Applicability::Safe);
    }
  std::vector<std::pair<std::string, std::pair<size_t, bool>>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  nlohmann::json array = nlohmann::json::array();
  for (const auto& [code, c] : rows) {
    const Rule* rule = findRule(code);
    std::string name = rule ? std::string(rule->info().name) : (code == kParseErrorCode ? "syntax-error" : "io-error");
    if (json) {
      array.push_back({{"code", code}, {"name", name}, {"count", c.first}, {"fixable", c.second}});
      continue;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%5zu", c.first);
    os << buf << "\t" << code << "\t" << (c.second ? "[*] " : "[ ] ") << name << "\n";
  }
  if (json) os << array.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace oomlint::report
