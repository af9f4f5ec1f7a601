#include "config/config.h"

#include <sys/stat.h>

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "config/glob.h"
#include "util/path.h"

namespace oomlint {
namespace {

bool fileExists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> stringList(const toml::node& n, const std::string& key, const std::string& file) {
  const toml::array* arr = n.as_array();
  if (!arr) throw ConfigError(file + ": `" + key + "` must be a list of strings");
  std::vector<std::string> out;
  for (const toml::node& e : *arr) {
    auto s = e.value<std::string>();
    if (!s) throw ConfigError(file + ": `" + key + "` must be a list of strings");
    out.push_back(*s);
  }
  return out;
}

std::vector<std::string> selectors(const toml::node& n, const std::string& key, const std::string& file, bool syntaxToo = false) {
  std::vector<std::string> out = stringList(n, key, file);
  for (std::string& s : out) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!isValidSelector(s, syntaxToo)) throw ConfigError(file + ": `" + key + "` has unknown rule selector `" + s + "`");
  }
  return out;
}

constexpr std::array<std::string_view, 14> kKeys = {
    "select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude", "respect-gitignore",
    "per-file-ignores", "severity", "extend", "output-format", "fix", "unsafe-fixes", "target-torch"};

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// `file:LINE` of a node, for messages that point at the mistake.
std::string where(const std::string& file, const toml::source_region& src) {
  return src.begin.line > 0 ? file + ":" + std::to_string(src.begin.line) : file;
}

bool boolValue(const toml::node& v, const std::string& key, const std::string& file) {
  auto b = v.value<bool>();
  if (!b) throw ConfigError(where(file, v.source()) + ": `" + key + "` must be true or false");
  return *b;
}

std::optional<Config> loadWithBase(const std::string& path, bool pyproject, std::vector<std::string>& chain);

/// Applies the keys of `t` (a file's table) onto `c`, which holds its base's settings or nothing.
void parseTable(Config& c, const toml::table& t, const std::string& file, std::vector<std::string>& chain) {
  if (const toml::node* ext = t.get("extend")) {
    auto base = ext->value<std::string>();
    if (!base) throw ConfigError(where(file, ext->source()) + ": `extend` must be the path of a configuration file");
    std::string path = base->empty() || (*base)[0] == '/' ? *base : parentDirectory(file) + "/" + *base;
    if (base->rfind("~/", 0) == 0)
      if (const char* home = std::getenv("HOME")) path = std::string(home) + base->substr(1);
    path = absolutePath(path);
    if (std::find(chain.begin(), chain.end(), path) != chain.end())
      throw ConfigError(where(file, ext->source()) + ": `extend` makes a cycle through " + path);
    if (!fileExists(path)) throw ConfigError(where(file, ext->source()) + ": `extend`: " + path + " not found");
    bool py = path.size() >= 14 && path.compare(path.size() - 14, 14, "pyproject.toml") == 0;
    std::optional<Config> b = loadWithBase(path, py, chain);
    if (!b) throw ConfigError(where(file, ext->source()) + ": `extend`: " + path + " has no [tool.oomlint] table");
    c = std::move(*b);
  }
  c.file = file;
  c.dir = parentDirectory(file);
  // `ignore` replaces the base's list and `extend-ignore` adds to it, whichever comes first.
  std::optional<std::vector<std::string>> ignoreHere;
  std::vector<std::string> extendIgnoreHere;
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (key == "extend") continue;
    if (key == "select") {
      c.selectors.select = selectors(v, key, file);
      c.selectors.selectGiven = true;
    } else if (key == "extend-select") {
      auto list = selectors(v, key, file);
      c.selectors.extendSelect.insert(c.selectors.extendSelect.end(), list.begin(), list.end());
    } else if (key == "ignore") {
      ignoreHere = selectors(v, key, file);
    } else if (key == "extend-ignore") {
      auto list = selectors(v, key, file);
      extendIgnoreHere.insert(extendIgnoreHere.end(), list.begin(), list.end());
    } else if (key == "exclude") {
      c.exclude = stringList(v, key, file);
    } else if (key == "extend-exclude") {
      auto list = stringList(v, key, file);
      c.extendExclude.insert(c.extendExclude.end(), list.begin(), list.end());
    } else if (key == "respect-gitignore") {
      c.respectGitignore = boolValue(v, key, file);
    } else if (key == "fix") {
      c.fix = boolValue(v, key, file);
    } else if (key == "unsafe-fixes") {
      c.unsafeFixes = boolValue(v, key, file);
    } else if (key == "output-format") {
      auto f = v.value<std::string>();
      if (!f) throw ConfigError(where(file, v.source()) + ": `output-format` must be a string");
      c.outputFormat = *f;
    } else if (key == "target-torch") {
      auto f = v.value<std::string>();
      std::optional<TorchVersion> version = f ? TorchVersion::parse(*f) : std::nullopt;
      if (!version) throw ConfigError(where(file, v.source()) + ": `target-torch` must be a version string such as \"2.1\"");
      c.targetTorch = *version;
    } else if (key == "per-file-ignores") {
      const toml::table* pt = v.as_table();
      if (!pt) throw ConfigError(file + ": `per-file-ignores` must be a table of pattern = [codes]");
      for (const auto& [pat, codes] : *pt)
        c.perFileIgnores.emplace_back(std::string(pat.str()), selectors(codes, "per-file-ignores." + std::string(pat.str()), file, /*syntaxToo=*/true));
    } else if (key == "severity") {
      const toml::table* st = v.as_table();
      if (!st) throw ConfigError(file + ": `severity` must be a table of CODE = \"error\" | \"warning\" | \"info\"");
      for (const auto& [code, level] : *st) {
        std::string cs(code.str());
        for (char& ch : cs) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        auto lv = level.value<std::string>();
        Severity sev;
        if (!lv || !parseSeverity(*lv, sev))
          throw ConfigError(file + ": severity for `" + cs + "` must be \"error\", \"warning\" or \"info\"");
        if (!isValidSelector(cs) || cs == "ALL") throw ConfigError(file + ": `severity` names unknown rule `" + cs + "`");
        c.selectors.severity[cs] = sev;
      }
    } else {
      std::string message = where(file, k.source()) + ": unknown option `" + key + "`";
      std::string_view best;
      size_t bestDistance = 3;
      for (std::string_view known : kKeys)
        if (size_t d = editDistance(key, known); d < bestDistance) {
          best = known;
          bestDistance = d;
        }
      if (!best.empty()) message += " (did you mean `" + std::string(best) + "`?)";
      throw ConfigError(message);
    }
  }
  if (ignoreHere) c.selectors.ignore = std::move(*ignoreHere);
  c.selectors.ignore.insert(c.selectors.ignore.end(), extendIgnoreHere.begin(), extendIgnoreHere.end());
}

std::optional<Config> loadWithBase(const std::string& path, bool pyproject, std::vector<std::string>& chain) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw ConfigError(path + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) +
                      ": invalid TOML: " + std::string(e.description()));
  }
  const toml::table* table = &doc;
  const toml::node* tool = doc.get("tool");
  const toml::node* ours = tool && tool->as_table() ? tool->as_table()->get("oomlint") : nullptr;
  // pyproject.toml: the [tool.oomlint] table; oomlint.toml: top-level keys, or that table.
  if (pyproject && !ours) return std::nullopt;
  if (ours) {
    if (!ours->as_table()) throw ConfigError(path + ": `[tool.oomlint]` must be a table");
    table = ours->as_table();
  }
  chain.push_back(absolutePath(path));
  Config c;
  parseTable(c, *table, path, chain);
  chain.pop_back();
  return c;
}

}  // namespace

bool parseSeverity(const std::string& s, Severity& out) {
  if (s == "error") out = Severity::Error;
  else if (s == "warning") out = Severity::Warning;
  else if (s == "info") out = Severity::Info;
  else return false;
  return true;
}

std::optional<Config> loadConfigFile(const std::string& path, bool pyproject) {
  std::vector<std::string> chain;
  return loadWithBase(path, pyproject, chain);
}

std::string userConfigPath() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/oomlint/oomlint.toml";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/oomlint/oomlint.toml";
  return {};
}

ConfigResolver::ConfigResolver(CliOverrides cli) : cli_(std::move(cli)) {
  if (!cli_.configFile.empty()) {
    bool py = cli_.configFile.size() >= 14 && cli_.configFile.compare(cli_.configFile.size() - 14, 14, "pyproject.toml") == 0;
    if (!fileExists(cli_.configFile)) throw ConfigError(cli_.configFile + ": config file not found");
    auto c = loadConfigFile(cli_.configFile, py);
    if (!c) throw ConfigError(cli_.configFile + ": no [tool.oomlint] table");
    fixed_ = applyCli(*c);
  } else if (cli_.isolated) {
    fixed_ = applyCli(Config{});
  }
}

std::shared_ptr<const Config> ConfigResolver::applyCli(Config c) const {
  if (cli_.select) {
    // As in ruff, a command-line --select starts the selection afresh: it overrides the file's
    // select, extend-select and ignore alike; --ignore on the command line still applies.
    c.selectors.select = *cli_.select;
    c.selectors.selectGiven = true;
    c.selectors.extendSelect.clear();
    c.selectors.ignore.clear();
  }
  if (cli_.extendSelect) c.selectors.extendSelect.insert(c.selectors.extendSelect.end(), cli_.extendSelect->begin(), cli_.extendSelect->end());
  if (cli_.ignore) c.selectors.ignore.insert(c.selectors.ignore.end(), cli_.ignore->begin(), cli_.ignore->end());
  if (cli_.extendIgnore) c.selectors.ignore.insert(c.selectors.ignore.end(), cli_.extendIgnore->begin(), cli_.extendIgnore->end());
  c.extendExclude.insert(c.extendExclude.end(), cli_.extendExclude.begin(), cli_.extendExclude.end());
  std::vector<std::string> patterns = c.exclude;
  patterns.insert(patterns.end(), c.extendExclude.begin(), c.extendExclude.end());
  c.excludePatterns = std::make_shared<const PathPatterns>(patterns);
  return std::make_shared<const Config>(std::move(c));
}

std::shared_ptr<const Config> ConfigResolver::forDirectory(const std::string& dir) {
  if (fixed_) return fixed_;
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> visited;
  std::string d = dir;
  std::shared_ptr<const Config> found;
  for (int guard = 0; guard < 256; ++guard) {
    auto it = cache_.find(d);
    if (it != cache_.end()) {
      found = it->second;
      break;
    }
    visited.push_back(d);
    std::optional<Config> c;
    if (fileExists(d + "/oomlint.toml")) c = loadConfigFile(d + "/oomlint.toml", false);
    else if (fileExists(d + "/.oomlint.toml")) c = loadConfigFile(d + "/.oomlint.toml", false);
    else if (fileExists(d + "/pyproject.toml")) c = loadConfigFile(d + "/pyproject.toml", true);
    if (c) {
      found = applyCli(*c);
      break;
    }
    if (d == "/" || d.empty()) break;
    d = parentDirectory(d);
  }
  if (!found) {
    // No project file: the user's own, as ruff falls back to ~/.config/ruff/ruff.toml.
    std::string user = userConfigPath();
    std::optional<Config> c;
    if (!user.empty() && fileExists(user)) c = loadConfigFile(user, false);
    found = applyCli(c ? std::move(*c) : Config{});
  }
  for (const std::string& v : visited) cache_[v] = found;
  return found;
}

bool ConfigResolver::isConfigFileName(std::string_view name) {
  return name == "oomlint.toml" || name == ".oomlint.toml" || name == "pyproject.toml";
}

std::shared_ptr<const Config> ConfigResolver::forListedDirectory(const std::string& dir, bool listingHasConfigFile) {
  if (fixed_) return fixed_;
  if (!listingHasConfigFile && dir != "/" && !dir.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto parent = cache_.find(parentDirectory(dir));
    if (parent != cache_.end()) return cache_[dir] = parent->second;
  }
  return forDirectory(dir);
}

TorchVersion torchFloorOf(std::string_view req) {
  auto isName = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.'; };
  size_t i = 0;
  while (i < req.size() && (req[i] == ' ' || req[i] == '\t' || req[i] == '"' || req[i] == '\'')) ++i;
  size_t nameEnd = i;
  while (nameEnd < req.size() && isName(req[nameEnd])) ++nameEnd;
  std::string name(req.substr(i, nameEnd - i));
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (name != "torch") return {};
  std::string_view rest = req.substr(nameEnd);
  if (size_t extras = rest.find(']'); !rest.empty() && rest.find('[') < rest.find_first_of("<>=~!") && extras != std::string_view::npos)
    rest = rest.substr(extras + 1);
  rest = rest.substr(0, rest.find(';'));  // environment markers
  TorchVersion floor;
  size_t pos = 0;
  while (pos < rest.size()) {
    size_t end = rest.find(',', pos);
    std::string_view clause = rest.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? rest.size() : end + 1;
    size_t b = clause.find_first_not_of(" \t\"'");
    if (b == std::string_view::npos) continue;
    clause = clause.substr(b);
    std::string_view op;
    for (std::string_view o : {">=", "==", "~=", "==="})
      if (clause.substr(0, o.size()) == o) op = o;
    if (op.empty() && clause.substr(0, 1) == ">") op = ">";
    if (op.empty()) continue;  // `<`, `<=`, `!=`: no lower bound
    std::string_view ver = clause.substr(op.size());
    ver = ver.substr(std::min(ver.size(), ver.find_first_not_of(" \t")));
    ver = ver.substr(0, ver.find_first_of(" \t\"'"));
    std::optional<TorchVersion> v = TorchVersion::parse(ver);
    if (v && (v->major > floor.major || (v->major == floor.major && v->minor > floor.minor))) floor = *v;
  }
  return floor;
}

namespace {

/// What one folder says of torch's floor: `decided` when its pyproject.toml has a `[project]`
/// table (or is broken) or its requirements.txt bounds torch; `last` when the search ends there
/// (the top of a repository, or "/").
struct FolderFloor {
  bool decided = false;
  TorchVersion floor;
  bool last = false;
};

FolderFloor floorDeclaredIn(const std::string& d) {
  std::string pyproject = d + "/pyproject.toml";
  if (fileExists(pyproject)) {
    try {
      toml::table doc = toml::parse_file(pyproject);
      if (const toml::table* project = doc["project"].as_table()) {
        if (const toml::array* deps = (*project)["dependencies"].as_array())
          for (const toml::node& dep : *deps)
            if (auto text = dep.value<std::string>())
              if (TorchVersion v = torchFloorOf(*text); v.known()) return {true, v, true};
        return {true, {}, true};  // the project says what it needs, and torch's floor is not among it
      }
    } catch (const toml::parse_error&) {
      return {true, {}, true};  // a broken pyproject.toml is reported where it is a configuration
    }
  }
  std::string requirements = d + "/requirements.txt";
  if (fileExists(requirements)) {
    std::ifstream in(requirements);
    std::string line;
    while (std::getline(in, line))
      if (TorchVersion v = torchFloorOf(line.substr(0, line.find('#'))); v.known()) return {true, v, true};
  }
  FolderFloor none;
  none.last = d == "/" || parentDirectory(d) == d || ::access((d + "/.git").c_str(), F_OK) == 0;
  return none;
}

}  // namespace

TorchVersion declaredTorchFloor(const std::string& start) {
  for (std::string d = start; !d.empty(); d = parentDirectory(d)) {
    FolderFloor here = floorDeclaredIn(d);
    if (here.decided || here.last) return here.floor;
  }
  return {};
}

TorchVersion ConfigResolver::declaredFloorOf(const std::string& dir) const {
  if (auto it = declared_.find(dir); it != declared_.end()) return it->second;
  FolderFloor here = floorDeclaredIn(dir);
  TorchVersion floor = here.decided || here.last || dir.empty() ? here.floor : declaredFloorOf(parentDirectory(dir));
  declared_.emplace(dir, floor);
  return floor;
}

RuleSelection ConfigResolver::selectionFor(const Config& c, const std::string& absPath) const {
  RuleSelection sel(c.selectors);
  if (cli_.targetTorch) {
    sel.setTargetTorch(*cli_.targetTorch);
  } else if (c.targetTorch) {
    sel.setTargetTorch(*c.targetTorch);
  } else {
    std::string dir = parentDirectory(absPath);
    std::lock_guard<std::mutex> lock(declaredMutex_);
    sel.setTargetTorch(declaredFloorOf(dir));
  }
  if (c.perFileIgnores.empty()) return sel;
  std::string rel = absPath;
  if (!c.dir.empty() && absPath.rfind(c.dir + "/", 0) == 0) rel = absPath.substr(c.dir.size() + 1);
  std::vector<std::string> codes;
  for (const auto& [pattern, list] : c.perFileIgnores)
    if (pathPatternMatch(pattern, rel)) codes.insert(codes.end(), list.begin(), list.end());
  return codes.empty() ? sel : sel.without(codes);
}

bool ConfigResolver::excluded(const Config& c, const std::string& absPath, bool folderAdmitted) const {
  std::string_view rel = absPath;
  if (!c.dir.empty() && rel.size() > c.dir.size() && rel.starts_with(c.dir) && rel[c.dir.size()] == '/') rel.remove_prefix(c.dir.size() + 1);
  if (c.excludePatterns) return folderAdmitted ? c.excludePatterns->matchesAnyBelowAdmitted(rel) : c.excludePatterns->matchesAny(rel);
  for (const auto* list : {&c.exclude, &c.extendExclude})  // a Config built by hand
    for (const std::string& p : *list)
      if (pathPatternMatch(p, rel)) return true;
  return false;
}

}  // namespace oomlint
