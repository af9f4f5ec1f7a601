#include "engine/noqa.h"

#include "engine/engine.h"

#include <algorithm>
#include <cctype>

namespace oomlint {
namespace {

bool iequalsAt(std::string_view s, size_t pos, std::string_view word) {
  if (pos + word.size() > s.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[pos + i])) != word[i]) return false;
  return true;
}

void skipSpaces(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

/// Reads codes like `OOM101, oom102 E501` after a colon.
std::vector<std::string> readCodes(std::string_view s, size_t& i) {
  std::vector<std::string> codes;
  for (;;) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
    size_t start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    size_t letters = i - start;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (letters == 0 || i - start == letters) {
      i = start;
      break;
    }
    std::string code(s.substr(start, i - start));
    for (char& c : code) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    codes.push_back(code);
  }
  return codes;
}

}  // namespace

bool parseNoqaComment(std::string_view c, NoqaDirective& out) {
  // Look at every '#' in the comment: `# type: ignore  # noqa: OOM101` has two.
  for (size_t hash = c.find('#'); hash != std::string_view::npos; hash = c.find('#', hash + 1)) {
    size_t i = hash + 1;
    skipSpaces(c, i);
    if (iequalsAt(c, i, "oomlint:")) {
      size_t j = i + 8;
      skipSpaces(c, j);
      if (!iequalsAt(c, j, "noqa")) continue;
      j += 4;
      out.fileLevel = true;
      out.begin = static_cast<uint32_t>(hash);
      skipSpaces(c, j);
      if (j < c.size() && c[j] == ':') {
        ++j;
        out.codes = readCodes(c, j);
      }
      out.all = out.codes.empty();
      while (j > i && (c[j - 1] == ' ' || c[j - 1] == '\t' || c[j - 1] == ',')) --j;
      out.end = static_cast<uint32_t>(j);
      return true;
    }
    if (!iequalsAt(c, i, "noqa")) continue;
    size_t j = i + 4;
    // `# noqa123` is not a directive; `# noqa` followed by space, colon or end is.
    if (j < c.size() && std::isalnum(static_cast<unsigned char>(c[j]))) continue;
    out.begin = static_cast<uint32_t>(hash);
    size_t k = j;
    skipSpaces(c, k);
    if (k < c.size() && c[k] == ':') {
      ++k;
      out.codes = readCodes(c, k);
      j = k;
    }
    out.all = out.codes.empty();
    while (j > i && (c[j - 1] == ' ' || c[j - 1] == '\t' || c[j - 1] == ',')) --j;  // the directive ends at its last code
    out.end = static_cast<uint32_t>(j);
    return true;
  }
  return false;
}

bool parseCppDirective(std::string_view c, NoqaDirective& out) {
  size_t at = c.find("NOLINT");
  if (at != std::string_view::npos) {
    size_t i = at + 6;
    out.nolint = true;
    out.scope = NoqaDirective::Scope::Line;
    if (c.substr(i, 8) == "NEXTLINE") {
      out.scope = NoqaDirective::Scope::NextLine;
      i += 8;
    } else if (c.substr(i, 5) == "BEGIN") {
      out.scope = NoqaDirective::Scope::Begin;
      i += 5;
    } else if (c.substr(i, 3) == "END") {
      out.scope = NoqaDirective::Scope::End;
      i += 3;
    } else if (i < c.size() && (std::isalnum(static_cast<unsigned char>(c[i])) || c[i] == '_')) {
      return false;  // NOLINTFOO is not a directive
    }
    out.begin = static_cast<uint32_t>(at);
    out.end = static_cast<uint32_t>(i);
    if (i < c.size() && c[i] == '(') {
      size_t close = c.find(')', i);
      if (close == std::string_view::npos) return false;
      std::string_view list = c.substr(i + 1, close - i - 1);
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        std::string_view item = list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (!item.empty()) {
          std::string code(item);
          for (char& ch : code) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
          out.codes.push_back(code);
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      out.end = static_cast<uint32_t>(close + 1);
    }
    out.all = out.codes.empty();
    return true;
  }
  // `// noqa: OOM101`: the Python form after a C++ comment marker.
  for (size_t slash = c.find("//"); slash != std::string_view::npos; slash = c.find("//", slash + 2)) {
    std::string hashed(1, '#');
    hashed += c.substr(slash + 2);
    NoqaDirective d;
    if (!parseNoqaComment(hashed, d) || d.fileLevel) continue;
    d.begin = static_cast<uint32_t>(slash);
    d.end = static_cast<uint32_t>(d.end + slash + 1);
    out = d;
    return true;
  }
  return false;
}

std::vector<NoqaDirective> collectNoqa(const Module& m) {
  std::vector<NoqaDirective> out;
  for (const Comment& c : m.comments) {
    NoqaDirective d;
    std::string_view text = std::string_view(m.source).substr(c.begin, c.end - c.begin);
    bool found = m.lang == Lang::Cpp ? parseCppDirective(text, d) : parseNoqaComment(text, d);
    if (!found) continue;
    d.line = c.line;
    d.begin += c.begin;
    d.end += c.begin;
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

/// A NOLINT check pattern against a code: `OOM101`, `OOM1*`, `*`.
bool codeMatches(const std::string& pattern, std::string_view code) {
  if (!pattern.empty() && pattern.back() == '*') return code.substr(0, pattern.size() - 1) == std::string_view(pattern).substr(0, pattern.size() - 1);
  return pattern == code;
}

bool listMatches(const std::vector<std::string>& codes, std::string_view code) {
  if (codes.empty()) return true;
  for (const std::string& p : codes)
    if (codeMatches(p, code)) return true;
  return false;
}

}  // namespace

Suppressions::Suppressions(const Module& m) : m_(m), directives_(collectNoqa(m)) {
  // Pair each NOLINTBEGIN with the next NOLINTEND of the same list (clang-tidy's rule); an
  // unclosed BEGIN runs to the end of the file.
  for (size_t i = 0; i < directives_.size(); ++i) {
    const NoqaDirective& b = directives_[i];
    if (b.scope != NoqaDirective::Scope::Begin) continue;
    uint32_t last = UINT32_MAX;
    for (size_t j = i + 1; j < directives_.size(); ++j) {
      const NoqaDirective& e = directives_[j];
      if (e.scope == NoqaDirective::Scope::End && e.codes == b.codes) {
        last = e.line;
        break;
      }
    }
    ranges_.push_back(Range{b.line, last, b.codes});
  }
}

bool Suppressions::suppressed(std::string_view code, uint32_t line) const {
  for (const NoqaDirective& d : directives_) {
    switch (d.scope) {
      case NoqaDirective::Scope::Line:
        if (!d.fileLevel && d.line != line) continue;
        break;
      case NoqaDirective::Scope::NextLine:
        if (d.line + 1 != line) continue;
        break;
      default: continue;
    }
    if (d.all) return true;
    if (d.nolint ? listMatches(d.codes, code) : std::find(d.codes.begin(), d.codes.end(), code) != d.codes.end()) return true;
  }
  for (const Range& r : ranges_)
    if (line >= r.first && line <= r.last && listMatches(r.codes, code)) return true;
  return false;
}

namespace {
bool isOomCode(std::string_view c) { return c.size() > 3 && c.substr(0, 3) == "OOM"; }
}  // namespace

std::vector<Finding> Suppressions::unused(const std::vector<Finding>& raw, const RuleSelection& selection) const {
  std::vector<Finding> out;
  const Rule* self = findRule(kUnusedNoqaCode);
  if (!self) return out;
  for (const NoqaDirective& d : directives_) {
    if (d.all || d.nolint) continue;  // clang-tidy's NOLINT lists are shared with other checks
    std::vector<std::string> unused, kept;
    for (const std::string& code : d.codes) {
      if (!isOomCode(code)) {
        kept.push_back(code);
        continue;
      }
      const Rule* r = findRule(code);
      if (r && !selection.enabled(code)) {
        kept.push_back(code);
        continue;
      }
      bool used = (r || code == kParseErrorCode) && std::any_of(raw.begin(), raw.end(), [&](const Finding& f) {
                    return f.code == code && (d.fileLevel || f.span.line == d.line);
                  });
      (used ? kept : unused).push_back(code);
    }
    if (unused.empty()) continue;
    Finding f;
    f.code = self->info().code;
    f.severity = selection.severityOf(self->info().code, self->info().severity);
    std::string list;
    for (const std::string& c : unused) list += (list.empty() ? "`" : ", `") + c + "`";
    f.message = "unused `noqa` directive (suppresses nothing: " + list + ")";
    f.span.begin = d.begin;
    f.span.end = d.end;
    f.span.line = d.line;
    f.span.col = d.begin - m_.lineStarts[d.line - 1];
    f.span.endLine = d.line;
    f.span.endCol = d.end - m_.lineStarts[d.line - 1];
    f.hasFix = true;
    f.fix.applicability = Applicability::Safe;
    Edit e;
    if (kept.empty()) {
      // Drop the directive and the spaces before it.
      uint32_t b = d.begin;
      while (b > m_.lineStarts[d.line - 1] && (m_.source[b - 1] == ' ' || m_.source[b - 1] == '\t')) --b;
      e.begin = b;
      e.end = d.end;
      f.fix.message = "Remove the unused `noqa` directive";
    } else {
      std::string codes;
      for (const std::string& c : kept) codes += (codes.empty() ? "" : ", ") + c;
      e.begin = d.begin;
      e.end = d.end;
      e.content = d.fileLevel ? "# oomlint: noqa: " + codes : "# noqa: " + codes;
      f.fix.message = "Remove the unused codes";
    }
    f.fix.edits.push_back(e);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace oomlint
