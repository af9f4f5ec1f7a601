#pragma once
/// Glob matching shared by config excludes, per-file-ignores and .gitignore rules:
/// `*` and `?` stop at `/`, `**` crosses directories, `[a-z]` / `[!a-z]` classes.

#include <string>
#include <string_view>
#include <vector>

namespace oomlint {

bool globMatch(std::string_view pattern, std::string_view path);

/// Matches a pattern the way ruff and git do for paths relative to a base directory:
/// patterns without a slash match any single path component (or the basename); patterns with a
/// slash are anchored at the base.
bool pathPatternMatch(std::string_view pattern, std::string_view relativePath);

/// A list of path patterns read once, then asked like pathPatternMatch with each of them, with the
/// same answers: an exclude list is asked about every file and folder a walk meets, and most of
/// its patterns are plain names (`build`) or `*.ext`, decided per component without the matcher.
class PathPatterns {
 public:
  explicit PathPatterns(const std::vector<std::string>& patterns);
  /// True when any pattern matches `relativePath`.
  bool matchesAny(std::string_view relativePath) const;
  /// The same for a path whose folder was found to match no pattern (by matchesAny with the same
  /// patterns): only its last component can match a per-component pattern. A walk asks this for
  /// each entry, so deep trees do not test every folder's name again for each file in it.
  bool matchesAnyBelowAdmitted(std::string_view relativePath) const;
  bool empty() const { return names_.empty() && suffixes_.empty() && componentGlobs_.empty() && anchored_.empty(); }

 private:
  bool componentMatches(std::string_view component) const;
  bool anchoredMatches(std::string_view relativePath) const;
  std::vector<std::string> names_;           // no slash, no glob character: equal to a component
  std::vector<std::string> suffixes_;        // `*` + such a name: the end of a component
  std::vector<std::string> componentGlobs_;  // any other pattern without a slash
  std::vector<std::string> anchored_;        // with a slash: from the base, or a folder above the path
};

}  // namespace oomlint
