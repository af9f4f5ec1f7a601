#include "config/glob.h"

#include <vector>

namespace oomlint {
namespace {

bool matchClass(std::string_view p, size_t& i, char c) {
  // p[i] == '['
  size_t j = i + 1;
  bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
  if (negate) ++j;
  bool matched = false;
  bool first = true;
  while (j < p.size() && (p[j] != ']' || first)) {
    first = false;
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      if (c >= p[j] && c <= p[j + 2]) matched = true;
      j += 3;
    } else {
      if (c == p[j]) matched = true;
      ++j;
    }
  }
  if (j >= p.size()) return false;  // unterminated: treat as no match
  i = j + 1;
  return matched != negate;
}

}  // namespace

namespace {

/// Recursive on stars only; each level consumes a star of the pattern, so depth is bounded by
/// the pattern (config patterns are short).
bool matchFrom(std::string_view p, size_t pi, std::string_view s, size_t si, int depth) {
  if (depth > 64) return false;
  while (pi < p.size()) {
    char pc = p[pi];
    if (pc == '*') {
      bool dbl = pi + 1 < p.size() && p[pi + 1] == '*';
      if (dbl) {
        size_t rest = pi + 2;
        bool slashAfter = rest < p.size() && p[rest] == '/';
        if (slashAfter) {
          // `**/`: zero or more whole directories.
          if (matchFrom(p, rest + 1, s, si, depth + 1)) return true;
          for (size_t k = si; k < s.size(); ++k)
            if (s[k] == '/' && matchFrom(p, rest + 1, s, k + 1, depth + 1)) return true;
          return false;
        }
        for (size_t k = si; k <= s.size(); ++k)
          if (matchFrom(p, rest, s, k, depth + 1)) return true;
        return false;
      }
      for (size_t k = si; k <= s.size(); ++k) {
        if (matchFrom(p, pi + 1, s, k, depth + 1)) return true;
        if (k < s.size() && s[k] == '/') break;
      }
      return false;
    }
    if (si >= s.size()) return false;
    if (pc == '?') {
      if (s[si] == '/') return false;
    } else if (pc == '[') {
      if (s[si] == '/') return false;
      size_t save = pi;
      if (!matchClass(p, pi, s[si])) return false;
      (void)save;
      ++si;
      continue;
    } else if (pc == '\\' && pi + 1 < p.size()) {
      ++pi;
      if (p[pi] != s[si]) return false;
    } else if (pc != s[si]) {
      return false;
    }
    ++pi;
    ++si;
  }
  return si == s.size();
}

}  // namespace

bool globMatch(std::string_view p, std::string_view s) {
  // `*.ext` and the like, the commonest pattern, without the general matcher's recursion.
  if (p.size() > 1 && p[0] == '*' && p.substr(1).find_first_of("*?[\\") == std::string_view::npos) {
    std::string_view tail = p.substr(1);
    return s.size() >= tail.size() && s.ends_with(tail) && s.substr(0, s.size() - tail.size()).find('/') == std::string_view::npos;
  }
  return matchFrom(p, 0, s, 0, 0);
}

namespace {

/// The pattern as pathPatternMatch reads it: trailing slashes and a leading `./` dropped.
std::string_view normalisedPattern(std::string_view pattern) {
  while (pattern.size() > 1 && pattern.back() == '/') pattern.remove_suffix(1);
  if (pattern.rfind("./", 0) == 0) pattern.remove_prefix(2);
  return pattern;
}

bool hasGlobCharacter(std::string_view s) { return s.find_first_of("*?[\\") != std::string_view::npos; }

/// An anchored pattern (leading slash dropped) against the path or a folder above it.
bool anchoredMatch(std::string_view pattern, std::string_view rel) {
  if (globMatch(pattern, rel)) return true;
  // A directory pattern also covers everything below it.
  for (size_t slash = rel.find('/'); slash != std::string_view::npos; slash = rel.find('/', slash + 1))
    if (globMatch(pattern, rel.substr(0, slash))) return true;
  return false;
}

}  // namespace

PathPatterns::PathPatterns(const std::vector<std::string>& patterns) {
  for (const std::string& given : patterns) {
    std::string_view p = normalisedPattern(given);
    if (p.find('/') != std::string_view::npos) {
      if (p.front() == '/') p.remove_prefix(1);
      anchored_.emplace_back(p);
    } else if (!hasGlobCharacter(p)) {
      names_.emplace_back(p);
    } else if (p.size() > 1 && p[0] == '*' && !hasGlobCharacter(p.substr(1))) {
      suffixes_.emplace_back(p.substr(1));
    } else {
      componentGlobs_.emplace_back(p);
    }
  }
}

bool PathPatterns::componentMatches(std::string_view comp) const {
  for (const std::string& n : names_)
    if (comp == n) return true;
  for (const std::string& tail : suffixes_)
    if (comp.ends_with(tail)) return true;
  for (const std::string& g : componentGlobs_)
    if (globMatch(g, comp)) return true;
  return false;
}

bool PathPatterns::anchoredMatches(std::string_view rel) const {
  for (const std::string& a : anchored_)
    if (anchoredMatch(a, rel)) return true;
  return false;
}

bool PathPatterns::matchesAny(std::string_view rel) const {
  if (!names_.empty() || !suffixes_.empty() || !componentGlobs_.empty()) {
    size_t start = 0;
    while (start <= rel.size()) {
      size_t end = rel.find('/', start);
      if (componentMatches(rel.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start))) return true;
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
  return anchoredMatches(rel);
}

bool PathPatterns::matchesAnyBelowAdmitted(std::string_view rel) const {
  size_t slash = rel.rfind('/');
  return componentMatches(slash == std::string_view::npos ? rel : rel.substr(slash + 1)) || anchoredMatches(rel);
}

bool pathPatternMatch(std::string_view pattern, std::string_view rel) {
  pattern = normalisedPattern(pattern);
  if (pattern.find('/') == std::string_view::npos) {
    // Any component.
    size_t start = 0;
    while (start <= rel.size()) {
      size_t end = rel.find('/', start);
      std::string_view comp = rel.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      if (globMatch(pattern, comp)) return true;
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
    return false;
  }
  if (pattern.front() == '/') pattern.remove_prefix(1);
  return anchoredMatch(pattern, rel);
}

}  // namespace oomlint
