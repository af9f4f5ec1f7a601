#pragma once
/// What git ignores, answered by git's own rules through libgit2: the `.gitignore` files,
/// `.git/info/exclude` and `core.excludesFile` (the user's global ignore file), with git's exact
/// semantics (negations, a folder's exclusion covering what is under it, `**`). Only for paths in
/// a repository's work tree, and only where `.git/info/exclude` or a global excludes file has
/// patterns (asking it costs a few microseconds a path); otherwise the walk reads the `.gitignore`
/// files itself.

#include <string>

struct git_repository;

namespace oomlint {

class GitIgnore {
 public:
  /// The repository whose work tree holds `dir`; none when `dir` is in no repository.
  explicit GitIgnore(const std::string& dir);
  ~GitIgnore();
  GitIgnore(const GitIgnore&) = delete;
  GitIgnore& operator=(const GitIgnore&) = delete;

  /// `dir` is in a repository's work tree whose ignore rules reach beyond `.gitignore` files:
  /// ignored() answers for it.
  bool managed() const { return repo_ != nullptr; }
  /// True when git ignores `abs` (a folder when `isDir`), or a folder above it.
  bool ignored(const std::string& abs, bool isDir) const;

 private:
  git_repository* repo_ = nullptr;
  std::string workdir_;  // absolute, without a trailing slash
};

}  // namespace oomlint
