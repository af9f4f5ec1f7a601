#pragma once
/// Configuration: `[tool.oomlint]` in pyproject.toml or top-level keys in oomlint.toml.
/// The nearest file above a checked file wins (oomlint.toml before pyproject.toml in one folder);
/// command-line flags override it. Unknown keys and bad values are errors, not silently ignored.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/selection.h"

namespace oomlint {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Config {
  std::string file;  // "" when no config file applies
  std::string dir;   // directory patterns are relative to
  SelectorSet selectors;
  std::vector<std::pair<std::string, std::vector<std::string>>> perFileIgnores;
  std::vector<std::string> exclude;
  std::vector<std::string> extendExclude;
  bool respectGitignore = true;
  /// Command-line defaults (`output-format`, `fix`, `unsafe-fixes`), read from the configuration
  /// of the folder oomlint runs in; a flag on the command line wins.
  std::optional<std::string> outputFormat;
  std::optional<bool> fix, unsafeFixes;
  /// `target-torch = "2.1"`: the oldest PyTorch the code must run on; no fix or advice uses an
  /// API newer than it.
  std::optional<std::string> targetTorch;
};

/// Parses a config file. `pyproject` selects the `[tool.oomlint]` table; returns nullopt for a
/// pyproject.toml without one. Throws ConfigError with the file name (and line) and reason.
/// `extend = "base.toml"` (relative to the file) starts from that file's settings: keys set here
/// replace the base's, `extend-*` keys and `per-file-ignores` / `severity` entries add to them.
std::optional<Config> loadConfigFile(const std::string& path, bool pyproject);

/// Overrides from the command line, applied on top of whichever config a file gets.
struct CliOverrides {
  std::optional<std::vector<std::string>> select, ignore, extendSelect, extendIgnore;
  std::vector<std::string> extendExclude;
  std::string configFile;  // --config: use this one file for everything
  bool isolated = false;   // --isolated: ignore config files
};

/// Finds and caches the config for each directory. Thread-safe.
class ConfigResolver {
 public:
  explicit ConfigResolver(CliOverrides cli);
  /// Config for files in `dir` (absolute). Throws ConfigError for a broken config file.
  std::shared_ptr<const Config> forDirectory(const std::string& dir);
  /// Selection for one file, per-file-ignores applied.
  RuleSelection selectionFor(const Config& c, const std::string& absPath) const;
  /// True when `absPath` is excluded by the config's exclude lists.
  bool excluded(const Config& c, const std::string& absPath) const;

 private:
  std::shared_ptr<const Config> applyCli(Config c) const;
  CliOverrides cli_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Config>> cache_;
  std::shared_ptr<const Config> fixed_;
};

/// The user-level configuration, used where no project file applies:
/// `$XDG_CONFIG_HOME/oomlint/oomlint.toml`, else `~/.config/oomlint/oomlint.toml`; "" when unset.
std::string userConfigPath();

/// Parses a severity name ("error", "warning", "info").
bool parseSeverity(const std::string& s, Severity& out);

}  // namespace oomlint
