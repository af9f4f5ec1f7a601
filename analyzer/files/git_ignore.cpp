#include "files/git_ignore.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "util/path.h"

namespace oomlint {

namespace {

/// The file holds at least one ignore pattern (not only blank lines and comments).
bool hasPatterns(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#') return true;
  }
  return false;
}

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string joinPath(const std::string& base, const std::string& p) { return p.empty() || p[0] == '/' ? absolutePath(p) : absolutePath(base + "/" + p); }

struct Repository {
  std::string workTree, gitDir, commonDir;
};

/// Finds the repository as `git` does from `dir`: the nearest folder above with a `.git` folder,
/// or a `.git` file naming one (worktrees, submodules), not crossing into another file system
/// unless GIT_DISCOVERY_ACROSS_FILESYSTEM is set.
std::optional<Repository> findRepository(const std::string& dir) {
  std::string d = absolutePath(dir);
  struct stat start {};
  if (::stat(d.c_str(), &start) != 0) return std::nullopt;
  const char* across = std::getenv("GIT_DISCOVERY_ACROSS_FILESYSTEM");
  bool crossFs = across && (std::string(across) == "1" || std::string(across) == "true");
  while (true) {
    std::string dotGit = (d == "/" ? "" : d) + "/.git";
    struct stat st {};
    if (::stat(dotGit.c_str(), &st) == 0) {
      Repository repo{d, "", ""};
      if (S_ISDIR(st.st_mode) && ::stat((dotGit + "/HEAD").c_str(), &st) == 0) {
        repo.gitDir = dotGit;
      } else if (S_ISREG(st.st_mode)) {
        std::string line = firstLine(dotGit);
        if (line.rfind("gitdir:", 0) == 0) {
          size_t at = line.find_first_not_of(' ', 7);
          if (at != std::string::npos) repo.gitDir = joinPath(d, line.substr(at));
        }
      }
      if (!repo.gitDir.empty()) {
        std::string common = firstLine(repo.gitDir + "/commondir");
        repo.commonDir = common.empty() ? repo.gitDir : joinPath(repo.gitDir, common);
        return repo;
      }
    }
    if (d == "/") return std::nullopt;
    size_t slash = d.rfind('/');
    std::string parent = slash == 0 ? "/" : d.substr(0, slash);
    struct stat up {};
    if (::stat(parent.c_str(), &up) != 0) return std::nullopt;
    if (!crossFs && up.st_dev != start.st_dev) return std::nullopt;
    d = parent;
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string expandHome(const std::string& p) {
  const char* home = std::getenv("HOME");
  if (p.rfind("~/", 0) == 0 && home && *home) return std::string(home) + p.substr(1);
  return p;
}

/// core.excludesFile as set in one git configuration file (`[core] excludesFile = path`), if it is.
/// `[include]` files are not followed.
std::optional<std::string> excludesFileIn(const std::string& configFile) {
  std::ifstream in(configFile);
  std::optional<std::string> value;
  std::string line;
  bool inCore = false;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[first] == ';') continue;
    if (line[first] == '[') {
      size_t close = line.find(']', first);
      std::string section = lower(line.substr(first + 1, close == std::string::npos ? std::string::npos : close - first - 1));
      inCore = section == "core";
      size_t rest = close == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", close + 1);
      if (rest == std::string::npos) continue;
      line = line.substr(rest);  // `[core] excludesFile = x` on one line
      first = 0;
    }
    if (!inCore) continue;
    size_t eq = line.find('=', first);
    if (eq == std::string::npos) continue;
    std::string key = line.substr(first, eq - first);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    if (lower(key) != "excludesfile") continue;
    std::string v = line.substr(eq + 1);
    size_t start = v.find_first_not_of(" \t");
    v = start == std::string::npos ? "" : v.substr(start);
    if (!v.empty() && v[0] == '"') {
      size_t end = v.find('"', 1);
      v = v.substr(1, end == std::string::npos ? std::string::npos : end - 1);
    } else {
      size_t comment = v.find_first_of("#;");
      if (comment != std::string::npos) v.erase(comment);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.pop_back();
    }
    value = v;
  }
  return value;
}

/// The global ignore file git reads: core.excludesFile from the system, user and repository
/// configuration (the last one set wins), else `$XDG_CONFIG_HOME/git/ignore` or
/// `~/.config/git/ignore`. Empty when there is none.
std::string globalExcludesFile(const Repository& repo) {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::string xdgBase = xdg && *xdg ? xdg : home && *home ? std::string(home) + "/.config" : "";
  std::vector<std::string> configs;
  const char* noSystem = std::getenv("GIT_CONFIG_NOSYSTEM");
  if (!noSystem || !*noSystem) configs.push_back("/etc/gitconfig");
  if (const char* global = std::getenv("GIT_CONFIG_GLOBAL")) {
    configs.push_back(global);
  } else {
    if (!xdgBase.empty()) configs.push_back(xdgBase + "/git/config");
    if (home && *home) configs.push_back(std::string(home) + "/.gitconfig");
  }
  configs.push_back(repo.commonDir + "/config");
  std::optional<std::string> set;
  for (const std::string& c : configs)
    if (auto v = excludesFileIn(c)) set = v;
  if (set) return set->empty() ? "" : joinPath(repo.workTree, expandHome(*set));
  return xdgBase.empty() ? "" : xdgBase + "/git/ignore";
}

}  // namespace

GitIgnore::GitIgnore(const std::string& dir) {
  std::optional<Repository> repo = findRepository(dir);
  if (!repo) return;
  workdir_ = repo->workTree;
  std::string global = globalExcludesFile(*repo);
  std::string exclude = repo->commonDir + "/info/exclude";
  if (!global.empty() && hasPatterns(global)) excludeFiles_.push_back(global);
  if (hasPatterns(exclude)) excludeFiles_.push_back(exclude);
}

}  // namespace oomlint
