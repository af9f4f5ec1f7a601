#include "engine/noqa.h"

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

std::vector<NoqaDirective> collectNoqa(const Module& m) {
  std::vector<NoqaDirective> out;
  for (const Comment& c : m.comments) {
    NoqaDirective d;
    std::string_view text = std::string_view(m.source).substr(c.begin, c.end - c.begin);
    if (!parseNoqaComment(text, d)) continue;
    d.line = c.line;
    d.begin += c.begin;
    d.end += c.begin;
    out.push_back(std::move(d));
  }
  return out;
}

Suppressions::Suppressions(const Module& m) : directives_(collectNoqa(m)) {}

bool Suppressions::suppressed(std::string_view code, uint32_t line) const {
  for (const NoqaDirective& d : directives_) {
    if (!d.fileLevel && d.line != line) continue;
    if (d.all) return true;
    if (std::find(d.codes.begin(), d.codes.end(), code) != d.codes.end()) return true;
  }
  return false;
}

}  // namespace oomlint
