#include "project/project.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace oomlint::project {

namespace {

std::string parentOf(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : p.substr(0, slash);
}

std::string baseOf(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string stripPy(const std::string& p) {
  for (std::string_view ext : {".pyi", ".py"})
    if (p.size() > ext.size() && p.compare(p.size() - ext.size(), ext.size(), ext) == 0) return p.substr(0, p.size() - ext.size());
  return {};
}

std::string dotsToSlashes(std::string_view dotted) {
  std::string s(dotted);
  std::replace(s.begin(), s.end(), '.', '/');
  return s;
}

std::string slashesToDots(std::string s) {
  std::replace(s.begin(), s.end(), '/', '.');
  return s;
}

void splitDotted(std::string_view dotted, std::string& dots, std::vector<std::string_view>& parts) {
  size_t i = 0;
  while (i < dotted.size() && dotted[i] == '.') ++i;
  dots.assign(dotted.substr(0, i));
  parts.clear();
  std::string_view rest = dotted.substr(i);
  while (!rest.empty()) {
    size_t dot = rest.find('.');
    parts.push_back(rest.substr(0, dot));
    if (dot == std::string_view::npos) break;
    rest = rest.substr(dot + 1);
  }
}

}  // namespace

std::vector<std::string> modulesBeside(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || stripPy(name).empty()) continue;
    std::string path = dir + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(path);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Project::Project(std::string root, std::vector<std::string> files) : root_(std::move(root)), files_(std::move(files)) {
  size_t n = files_.size();
  for (size_t i = 0; i < n; ++i) byPath_.emplace(files_[i], i);
  exports_.assign(n, {});
  hasExports_.assign(n, 0);
  programs_.assign(n, {});
}

void Project::buildNames() const {
  size_t n = files_.size();
  moduleName_.assign(n, {});
  relDir_.assign(n, {});
  std::unordered_set<std::string> folders;  // every folder holding a module, root-relative, once
  // A folder's dotted name through the packages above it (null: it holds no __init__.py), once
  // per folder: modules share folders, and climbing from each module was most of the work here.
  std::unordered_map<std::string, std::optional<std::string>> packages;
  auto packageName = [&](const std::string& folder) -> const std::string* {
    std::vector<std::string> climb;  // folders not decided yet, innermost first
    std::string dir = folder;
    const std::optional<std::string>* known = nullptr;
    for (;; dir = parentOf(dir)) {
      auto it = packages.find(dir);
      if (it != packages.end()) {
        known = &it->second;
        break;
      }
      if (dir.empty() || !byPath_.count(dir + "/__init__.py")) break;
      climb.push_back(dir);
    }
    std::optional<std::string> outer = known ? *known : std::nullopt;
    if (!known) packages.emplace(dir, std::nullopt);  // the first folder that is no package
    for (auto d = climb.rbegin(); d != climb.rend(); ++d) {
      outer = outer ? *outer + "." + baseOf(*d) : baseOf(*d);
      packages.emplace(*d, outer);
    }
    const std::optional<std::string>& mine = packages.at(folder);
    return mine ? &*mine : nullptr;
  };
  auto addEntry = [&](const std::string& rel) {
    std::vector<std::string>& in = entryDirs_[baseOf(rel)];
    std::string dir = parentOf(rel);
    if (std::find(in.begin(), in.end(), dir) == in.end()) in.push_back(std::move(dir));
  };
  auto addModule = [&](std::string name, size_t i) {
    if (name.empty()) return;
    topNames_.push_back(name.substr(0, name.find('.')));
    byModule_.try_emplace(std::move(name), i);
  };
  for (size_t i = 0; i < n; ++i) {
    const std::string& abs = files_[i];
    std::string noExt = stripPy(abs);
    if (noExt.empty()) continue;  // a notebook: it imports, nothing imports it
    bool init = baseOf(noExt) == "__init__";
    std::string rel = abs.size() > root_.size() + 1 && abs.compare(0, root_.size() + 1, root_ + "/") == 0
                          ? noExt.substr(root_.size() + 1)
                          : baseOf(noExt);
    relDir_[i] = parentOf(rel);
    byRelPath_.try_emplace(init ? relDir_[i] : rel, i);
    if (!init) addEntry(rel);
    for (std::string d = relDir_[i]; !d.empty() && folders.insert(d).second;) {
      addEntry(d);
      d = parentOf(d);
    }
    // Named by the packages above it.
    if (const std::string* package = packageName(parentOf(abs))) {
      moduleName_[i] = init ? *package : *package + "." + baseOf(noExt);
      addModule(moduleName_[i], i);
    }
    // Relative to the root and to src/ (namespace packages, src layouts).
    std::string relName = init ? relDir_[i] : rel;
    addModule(slashesToDots(relName), i);
    if (relName.compare(0, 4, "src/") == 0) addModule(slashesToDots(relName.substr(4)), i);
  }
  std::sort(topNames_.begin(), topNames_.end());
  topNames_.erase(std::unique(topNames_.begin(), topNames_.end()), topNames_.end());
}

size_t Project::indexOf(const std::string& absPath) const {
  auto it = byPath_.find(absPath);
  return it == byPath_.end() ? SIZE_MAX : it->second;
}

bool Project::isPackage(size_t i) const { return baseOf(stripPy(files_[i])) == "__init__"; }

std::string Project::packageOf(size_t i) const {
  names();
  const std::string& name = moduleName_[i];
  if (name.empty()) return {};
  if (baseOf(stripPy(files_[i])) == "__init__") return name;
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? std::string() : name.substr(0, dot);
}

size_t Project::resolveModule(size_t from, std::string_view dotted) const {
  if (dotted.empty()) return SIZE_MAX;
  names();
  if (dotted[0] == '.') {
    size_t level = 0;
    while (level < dotted.size() && dotted[level] == '.') ++level;
    std::string_view rest = dotted.substr(level);
    std::string pkg = packageOf(from);
    if (!pkg.empty()) {
      for (size_t up = 1; up < level; ++up) {
        size_t dot = pkg.rfind('.');
        if (dot == std::string::npos) return SIZE_MAX;
        pkg.resize(dot);
      }
      std::string target = rest.empty() ? pkg : pkg + "." + std::string(rest);
      auto it = byModule_.find(target);
      return it == byModule_.end() ? SIZE_MAX : it->second;
    }
    std::string dir = relDir_[from];
    for (size_t up = 1; up < level; ++up) dir = parentOf(dir);
    std::string path = rest.empty() ? dir : (dir.empty() ? "" : dir + "/") + dotsToSlashes(rest);
    auto it = byRelPath_.find(path);
    return it == byRelPath_.end() ? SIZE_MAX : it->second;
  }
  // A script sees the modules beside it and (through the sys.path tweaks scripts make) above it.
  std::string path = dotsToSlashes(dotted);
  for (std::string dir = relDir_[from];; dir = parentOf(dir)) {
    auto it = byRelPath_.find(dir.empty() ? path : dir + "/" + path);
    if (it != byRelPath_.end()) return it->second;
    if (dir.empty()) break;
  }
  auto it = byModule_.find(dotted);
  return it == byModule_.end() ? SIZE_MAX : it->second;
}

bool Project::mayBeProject(size_t from, std::string_view dotted) const {
  if (dotted.empty()) return false;
  if (dotted[0] == '.') return true;
  names();
  std::string_view first = dotted.substr(0, dotted.find('.'));
  if (std::binary_search(topNames_.begin(), topNames_.end(), first)) return true;
  for (std::string dir = relDir_[from];; dir = parentOf(dir)) {
    if (byRelPath_.count(dir.empty() ? std::string(first) : dir + "/" + std::string(first))) return true;
    if (dir.empty()) return false;
  }
}

Symbol Project::resolve(size_t from, std::string_view dotted) const { return resolveIn(from, dotted, 0); }

size_t Project::importedModule(size_t from, std::string_view dotted) const {
  std::string dots;
  std::vector<std::string_view> parts;
  splitDotted(dotted, dots, parts);
  size_t k = 0;
  return longestModule(from, dots, parts, k);
}

size_t Project::longestModule(size_t from, const std::string& dots, const std::vector<std::string_view>& parts, size_t& k) const {
  names();
  if (!dots.empty()) {  // relative: against the package
    for (k = parts.size() + 1; k-- > 0;) {
      std::string mod = dots;
      for (size_t p = 0; p < k; ++p) {
        if (p) mod += '.';
        mod += parts[p];
      }
      size_t j = resolveModule(from, mod);
      if (j != SIZE_MAX) return j;
    }
    return SIZE_MAX;
  }
  if (parts.empty()) return SIZE_MAX;
  // The first folder of the script's search path that holds the first component decides (as
  // Python's sys.path does): the deepest folder at or above the file's holding an entry so named.
  // Names of packages are looked up only when no folder holds it.
  const std::string& fromDir = relDir_[from];
  const std::string* holder = nullptr;
  if (auto e = entryDirs_.find(parts[0]); e != entryDirs_.end())
    for (const std::string& dir : e->second) {
      bool above = dir.empty() || fromDir == dir || (fromDir.size() > dir.size() && fromDir.compare(0, dir.size(), dir) == 0 && fromDir[dir.size()] == '/');
      if (above && (!holder || dir.size() > holder->size())) holder = &dir;
    }
  // The longest prefix of the name (joined by `sep` after `lead`) that `names` holds.
  auto longest = [&](const NameMap& names, const std::string& lead, char sep) {
    std::string path = lead;
    std::vector<size_t> ends;  // where each prefix ends in `path`
    for (size_t p = 0; p < parts.size(); ++p) {
      if (p) path += sep;
      path += parts[p];
      ends.push_back(path.size());
    }
    for (k = ends.size(); k > 0; --k)
      if (auto it = names.find(std::string_view(path).substr(0, ends[k - 1])); it != names.end()) return it->second;
    return SIZE_MAX;
  };
  if (holder)
    if (size_t j = longest(byRelPath_, holder->empty() ? std::string() : *holder + "/", '/'); j != SIZE_MAX) return j;
  return longest(byModule_, std::string(), '.');
}

Symbol Project::resolveIn(size_t from, std::string_view dotted, int depth) const {
  std::string dots;
  std::vector<std::string_view> parts;
  splitDotted(dotted, dots, parts);
  {
    size_t k = 0;
    size_t j = longestModule(from, dots, parts, k);
    if (j == SIZE_MAX) return {};
    std::string rest;
    for (size_t p = k; p < parts.size(); ++p) {
      if (p > k) rest += '.';
      rest += parts[p];
    }
    if (rest.empty()) return {j, {}};
    // A name the module imports from elsewhere (`__init__.py` re-exports): follow it.
    std::string_view head = parts[k];
    const auto& imports = exports_[j].imports;
    auto it = std::lower_bound(imports.begin(), imports.end(), head,
                               [](const std::pair<std::string, std::string>& e, std::string_view h) { return e.first < h; });
    if (it != imports.end() && it->first == head && depth < 8) {
      std::string target = it->second;
      for (size_t p = k + 1; p < parts.size(); ++p) target += "." + std::string(parts[p]);
      return resolveThrough(j, target, depth + 1);
    }
    return {j, rest};
  }
}

bool Project::unanalysedMayDefine(size_t i, std::string_view name) const {
  if (hasExports_[i]) return false;
  if (!definitions_ || (*definitions_)[i].empty()) return true;
  const std::vector<std::string>& defs = (*definitions_)[i];
  return std::binary_search(defs.begin(), defs.end(), name.substr(0, name.find('.')));
}

Symbol Project::resolveThrough(size_t j, const std::string& target, int depth) const {
  // Every module importing through `torch/__init__.py` follows the same re-exports: each hop is
  // worked out once. An answer that stopped at a module not analysed then is worked out again
  // once it is (its imports were unknown); any other stays until exports are replaced.
  std::string key = std::to_string(j) + ":" + std::to_string(depth) + ":" + target;
  {
    std::lock_guard guard(memoLock_);
    auto it = throughMemo_.find(key);
    if (it != throughMemo_.end() && !(it->second.found() && !it->second.settled && hasExports_[it->second.symbol.file]))
      return it->second.symbol;
  }
  Symbol s = resolveIn(j, target, depth);
  std::lock_guard guard(memoLock_);
  throughMemo_.insert_or_assign(std::move(key), Hop{s, !s.found() || hasExports_[s.file] != 0});
  return s;
}

void Project::setExports(size_t i, FileExports e) {
  {
    std::lock_guard guard(memoLock_);
    throughMemo_.clear();
  }
  exports_[i] = std::move(e);
  hasExports_[i] = 1;
}

std::unique_ptr<FileView> Project::viewFor(size_t i) const { return std::make_unique<FileView>(*this, i); }

}  // namespace oomlint::project
