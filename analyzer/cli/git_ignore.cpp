#include "cli/git_ignore.h"

#include <git2.h>

#include <cstdlib>
#include <fstream>
#include <mutex>

#include "util/path.h"

namespace oomlint {

namespace {

/// The file holds at least one ignore pattern (not only blank lines and comments).
bool hasPatterns(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos && line[line.find_first_not_of(" \t\r")] != '#') return true;
  return false;
}

/// `.git/info/exclude`, `core.excludesFile` or git's default global ignore file has patterns:
/// only then must git be asked, file by file (a few microseconds a path); the walk's own reading
/// of `.gitignore` files answers the rest.
bool needsGit(git_repository* repo) {
  if (hasPatterns(std::string(git_repository_path(repo)) + "info/exclude")) return true;
  git_config* config = nullptr;
  if (git_repository_config_snapshot(&config, repo) == 0) {
    git_buf path = GIT_BUF_INIT;
    bool set = git_config_get_path(&path, config, "core.excludesFile") == 0;
    bool patterns = set && hasPatterns(path.ptr);
    git_buf_dispose(&path);
    git_config_free(config);
    if (set) return patterns;
  }
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::string global = xdg && *xdg ? std::string(xdg) + "/git/ignore" : home && *home ? std::string(home) + "/.config/git/ignore" : "";
  return !global.empty() && hasPatterns(global);
}

}  // namespace

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
  if (!needsGit(repo_)) {
    git_repository_free(repo_);
    repo_ = nullptr;
  }
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
