#pragma once
/// What git ignores beyond the `.gitignore` files: `.git/info/exclude` and the global ignore file
/// (`core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`). The walk reads them as it reads
/// `.gitignore` files, ranked below every `.gitignore` as git ranks them, and the tests hold its
/// answers to `git ls-files --exclude-standard`'s. Not libgit2: its ignore matching departs from
/// git's (a `.gitignore` negation does not re-include what info/exclude or the global file
/// ignores; libgit2 issues #7283, #7284), and it would tie the binary to twenty shared libraries.

#include <string>
#include <vector>

namespace oomlint {

class GitIgnore {
 public:
  /// The repository whose work tree holds `dir` (found as git finds it); none outside one.
  explicit GitIgnore(const std::string& dir);

  /// The ignore files git reads besides the `.gitignore` files, lowest rank first (the global
  /// file, then info/exclude), those with patterns only; their patterns are relative to workTree().
  const std::vector<std::string>& excludeFiles() const { return excludeFiles_; }
  /// The work tree's top folder (absolute, no trailing slash); empty outside a repository.
  const std::string& workTree() const { return workdir_; }

 private:
  std::string workdir_;
  std::vector<std::string> excludeFiles_;
};

}  // namespace oomlint
