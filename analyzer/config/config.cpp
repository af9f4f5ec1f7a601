#include "config/config.h"

#include <sys/stat.h>

#include <toml++/toml.h>

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

Config parseTable(const toml::table& t, const std::string& file) {
  Config c;
  c.file = file;
  c.dir = parentDirectory(file);
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (key == "select") {
      c.selectors.select = selectors(v, key, file);
      c.selectors.selectGiven = true;
    } else if (key == "extend-select") {
      c.selectors.extendSelect = selectors(v, key, file);
    } else if (key == "ignore" || key == "extend-ignore") {
      auto list = selectors(v, key, file);
      c.selectors.ignore.insert(c.selectors.ignore.end(), list.begin(), list.end());
    } else if (key == "exclude") {
      c.exclude = stringList(v, key, file);
    } else if (key == "extend-exclude") {
      c.extendExclude = stringList(v, key, file);
    } else if (key == "respect-gitignore") {
      auto b = v.value<bool>();
      if (!b) throw ConfigError(file + ": `respect-gitignore` must be true or false");
      c.respectGitignore = *b;
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
      throw ConfigError(file + ": unknown option `" + key + "`");
    }
  }
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
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw ConfigError(path + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) +
                      ": invalid TOML: " + std::string(e.description()));
  }
  if (pyproject) {
    const toml::node* tool = doc.get("tool");
    if (!tool || !tool->as_table()) return std::nullopt;
    const toml::node* ours = tool->as_table()->get("oomlint");
    if (!ours) return std::nullopt;
    if (!ours->as_table()) throw ConfigError(path + ": `[tool.oomlint]` must be a table");
    return parseTable(*ours->as_table(), path);
  }
  // oomlint.toml: top-level keys (a `[tool.oomlint]` table is accepted too).
  if (const toml::node* tool = doc.get("tool"); tool && tool->as_table() && tool->as_table()->get("oomlint")) {
    const toml::node* ours = tool->as_table()->get("oomlint");
    if (!ours->as_table()) throw ConfigError(path + ": `[tool.oomlint]` must be a table");
    return parseTable(*ours->as_table(), path);
  }
  return parseTable(doc, path);
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
  if (!found) found = applyCli(Config{});
  for (const std::string& v : visited) cache_[v] = found;
  return found;
}

RuleSelection ConfigResolver::selectionFor(const Config& c, const std::string& absPath) const {
  RuleSelection sel(c.selectors);
  if (c.perFileIgnores.empty()) return sel;
  std::string rel = absPath;
  if (!c.dir.empty() && absPath.rfind(c.dir + "/", 0) == 0) rel = absPath.substr(c.dir.size() + 1);
  std::vector<std::string> codes;
  for (const auto& [pattern, list] : c.perFileIgnores)
    if (pathPatternMatch(pattern, rel)) codes.insert(codes.end(), list.begin(), list.end());
  return codes.empty() ? sel : sel.without(codes);
}

bool ConfigResolver::excluded(const Config& c, const std::string& absPath) const {
  std::string rel = absPath;
  if (!c.dir.empty() && absPath.rfind(c.dir + "/", 0) == 0) rel = absPath.substr(c.dir.size() + 1);
  for (const auto* list : {&c.exclude, &c.extendExclude})
    for (const std::string& p : *list)
      if (pathPatternMatch(p, rel)) return true;
  return false;
}

}  // namespace oomlint
