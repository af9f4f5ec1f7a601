#include "cli/git_ignore.h"

#include <git2.h>

#include <mutex>

#include "util/path.h"

namespace oomlint {

GitIgnore::GitIgnore(const std::string& dir) {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
  // Stop at the home folder's parent, as git does with GIT_CEILING_DIRECTORIES unset: any folder.
  if (git_repository_open_ext(&repo_, dir.c_str(), 0, nullptr) != 0) {
    repo_ = nullptr;
    return;
  }
  const char* workdir = git_repository_workdir(repo_);
  if (!workdir) {  // a bare repository has no work tree to ignore paths of
    git_repository_free(repo_);
    repo_ = nullptr;
    return;
  }
  workdir_ = absolutePath(workdir);
}

GitIgnore::~GitIgnore() {
  if (repo_) git_repository_free(repo_);
}

bool GitIgnore::ignored(const std::string& abs, bool isDir) const {
  if (!repo_ || abs.size() <= workdir_.size() || abs.compare(0, workdir_.size(), workdir_) != 0 || abs[workdir_.size()] != '/')
    return false;
  std::string rel = abs.substr(workdir_.size() + 1);
  if (rel == ".git" || rel.rfind(".git/", 0) == 0) return true;
  if (isDir) rel += "/";
  int result = 0;
  if (git_ignore_path_is_ignored(&result, repo_, rel.c_str()) != 0) return false;
  return result == 1;
}

}  // namespace oomlint
