#include "files/walk.h"

#include "files/git_ignore.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "config/glob.h"
#include "engine/engine.h"

namespace oomlint {
namespace {

struct IgnoreRule {
  std::string pattern;
  bool negate = false;
  bool dirOnly = false;
  bool anchored = false;
};

/// The .gitignore rules in force in a directory: its own plus its ancestors' (a linked list).
struct IgnoreScope {
  std::string base;  // absolute directory of the .gitignore
  std::vector<IgnoreRule> rules;
  std::shared_ptr<const IgnoreScope> parent;
};

std::vector<IgnoreRule> readGitignore(const std::string& file) {
  std::vector<IgnoreRule> rules;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    IgnoreRule r;
    if (line[0] == '!') {
      r.negate = true;
      line.erase(0, 1);
    } else if (line[0] == '\\') {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      r.dirOnly = true;
      line.pop_back();
    }
    if (line.empty()) continue;
    r.anchored = line.find('/') != std::string::npos;
    if (line[0] == '/') line.erase(0, 1);
    r.pattern = line;
    rules.push_back(r);
  }
  return rules;
}

/// git's rule: the last matching pattern decides; scopes nearer the path come later.
bool gitIgnored(const IgnoreScope* scope, const std::string& abs, bool isDir) {
  std::vector<const IgnoreScope*> chain;
  for (const IgnoreScope* s = scope; s; s = s->parent.get()) chain.push_back(s);
  bool ignored = false;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const IgnoreScope* s = *it;
    if (abs.size() <= s->base.size() || abs.compare(0, s->base.size(), s->base) != 0) continue;
    std::string rel = abs.substr(s->base.size() + (s->base == "/" ? 0 : 1));
    std::string name = rel.substr(rel.rfind('/') + 1);
    for (const IgnoreRule& r : s->rules) {
      if (r.dirOnly && !isDir) continue;
      bool m = r.anchored ? globMatch(r.pattern, rel) : globMatch(r.pattern, name);
      if (m) ignored = !r.negate;
    }
  }
  return ignored;
}

bool defaultExcludedDir(const std::string& name) {
  static const std::array<std::string_view, 9> k = {
      "__pycache__", "node_modules", "venv", "build", "dist", "site-packages", "__pypackages__", "_build", "buck-out"};
  if (!name.empty() && name[0] == '.') return name != "." && name != "..";  // hidden: .git, .venv, .tox ...
  return std::find(k.begin(), k.end(), name) != k.end();
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

bool isCheckedExtension(const std::string& name) { return isPythonPath(name) || isNotebookPath(name) || isCppPath(name); }

WalkResult collectFiles(const std::vector<std::string>& paths, ConfigResolver& resolver, const WalkOptions& opts) {
  WalkResult result;
  for (const std::string& given : paths) {
    struct stat st {};
    if (::stat(given.c_str(), &st) != 0) {
      result.issues.push_back({given, std::strerror(errno)});
      continue;
    }
    std::string abs = absolutePath(given);
    if (!S_ISDIR(st.st_mode)) {
      if (opts.forceExclude) {
        auto cfg = resolver.forDirectory(abs.substr(0, abs.rfind('/')));
        if (resolver.excluded(*cfg, abs)) continue;
      }
      result.files.push_back(given);
      continue;
    }
    // Iterative walk: (display path, absolute path, ignore scope).
    struct Item {
      std::string shown, abs;
      std::shared_ptr<const IgnoreScope> scope;
      std::shared_ptr<const Config> admittedBy;  // the config that found the folder not excluded
    };
    std::vector<Item> stack;
    std::shared_ptr<const IgnoreScope> rootScope;
    // In a repository, info/exclude and the global ignore file are read as .gitignore files of
    // the work tree's top folder that every .gitignore outranks, as git ranks them. A folder
    // named on the command line that they ignore is still walked, as asked.
    GitIgnore git(abs);
    for (const std::string& file : git.excludeFiles()) {
      auto scope = std::make_shared<IgnoreScope>();
      scope->base = git.workTree();
      scope->rules = readGitignore(file);
      scope->parent = rootScope;
      rootScope = scope;
    }
    // .gitignore files of the ancestors apply too (running on a subfolder of a repo): in a
    // repository those up to its work tree's top, never above it, as git reads them; elsewhere
    // those of every folder above.
    {
      const std::string& top = git.workTree();
      std::vector<std::string> ancestors;
      for (std::string d = abs; d != top && d != "/";) {
        size_t slash = d.rfind('/');
        d = slash == 0 ? "/" : d.substr(0, slash);
        ancestors.push_back(d);
        if (top.empty() && exists(d + "/.git")) break;  // a repository git does not reach from here
      }
      for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
        std::string gi = (*it == "/" ? "" : *it) + "/.gitignore";
        if (!exists(gi)) continue;
        auto scope = std::make_shared<IgnoreScope>();
        scope->base = *it;
        scope->rules = readGitignore(gi);
        scope->parent = rootScope;
        rootScope = scope;
      }
    }
    std::string shownRoot = given;
    while (shownRoot.size() > 1 && shownRoot.back() == '/') shownRoot.pop_back();
    stack.push_back({shownRoot, abs, rootScope, nullptr});
    while (!stack.empty()) {
      Item dir = std::move(stack.back());
      stack.pop_back();
      DIR* d = ::opendir(dir.abs.c_str());
      if (!d) {
        result.issues.push_back({dir.shown, std::string("cannot read directory: ") + std::strerror(errno)});
        continue;
      }
      // The folder's own files are seen in its listing (no stat for each): a virtualenv's
      // pyvenv.cfg (below a named folder, the virtualenv is left out) and a .gitignore.
      std::vector<std::pair<std::string, bool>> entries;  // name, isDir
      bool hasGitignore = false, isVirtualenv = false, hasConfigFile = false;
      while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        if (name == ".gitignore") hasGitignore = true;
        if (ConfigResolver::isConfigFileName(name)) hasConfigFile = true;
        if (name == "pyvenv.cfg" && dir.abs != abs) isVirtualenv = true;
        std::string childAbs = dir.abs == "/" ? "/" + name : dir.abs + "/" + name;
        bool isDir = false, isFile = false;
        if (e->d_type == DT_DIR) isDir = true;
        else if (e->d_type == DT_REG) isFile = true;
        else {
          struct stat cs {};
          struct stat ls {};
          if (::lstat(childAbs.c_str(), &ls) != 0) continue;
          if (S_ISLNK(ls.st_mode)) {
            // Follow symlinked files, never symlinked directories.
            if (::stat(childAbs.c_str(), &cs) == 0 && S_ISREG(cs.st_mode)) isFile = true;
          } else if (S_ISDIR(ls.st_mode)) {
            isDir = true;
          } else if (S_ISREG(ls.st_mode)) {
            isFile = true;
          }
        }
        if (isDir || isFile) entries.emplace_back(name, isDir);
      }
      ::closedir(d);
      if (isVirtualenv) continue;
      auto cfg = resolver.forListedDirectory(dir.abs, hasConfigFile);
      std::shared_ptr<const IgnoreScope> scope = dir.scope;
      if (cfg->respectGitignore && hasGitignore) {
        auto s = std::make_shared<IgnoreScope>();
        s->base = dir.abs;
        s->rules = readGitignore(dir.abs + "/.gitignore");
        s->parent = scope;
        scope = s;
      }
      std::sort(entries.begin(), entries.end());
      for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
        const std::string& name = it->first;
        bool isDir = it->second;
        std::string childAbs = dir.abs == "/" ? "/" + name : dir.abs + "/" + name;
        std::string childShown = dir.shown == "." ? name : dir.shown + "/" + name;
        if (isDir) {
          if (defaultExcludedDir(name)) continue;
        } else if (!isCheckedExtension(name)) {
          continue;
        }
        if (cfg->respectGitignore && scope && gitIgnored(scope.get(), childAbs, isDir)) continue;
        if (resolver.excluded(*cfg, childAbs, /*folderAdmitted=*/dir.admittedBy == cfg)) continue;
        if (isDir) stack.push_back({childShown, childAbs, scope, cfg});
        else result.files.push_back(childShown);
      }
    }
  }
  // Stable, de-duplicated order.
  std::sort(result.files.begin(), result.files.end());
  result.files.erase(std::unique(result.files.begin(), result.files.end()), result.files.end());
  return result;
}

}  // namespace oomlint
