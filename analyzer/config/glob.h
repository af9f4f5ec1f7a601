#pragma once
/// Glob matching shared by config excludes, per-file-ignores and .gitignore rules:
/// `*` and `?` stop at `/`, `**` crosses directories, `[a-z]` / `[!a-z]` classes.

#include <string_view>

namespace oomlint {

bool globMatch(std::string_view pattern, std::string_view path);

/// Matches a pattern the way ruff and git do for paths relative to a base directory:
/// patterns without a slash match any single path component (or the basename); patterns with a
/// slash are anchored at the base.
bool pathPatternMatch(std::string_view pattern, std::string_view relativePath);

}  // namespace oomlint
