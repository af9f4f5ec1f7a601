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

#include "config/glob.h"
#include "engine/selection.h"
#include "engine/torch_version.h"

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
  /// exclude and extendExclude read once, for ConfigResolver::excluded (set by the resolver).
  std::shared_ptr<const PathPatterns> excludePatterns;
  bool respectGitignore = true;
  /// Command-line defaults (`output-format`, `fix`, `unsafe-fixes`), read from the configuration
  /// of the folder oomlint runs in; a flag on the command line wins.
  std::optional<std::string> outputFormat;
  std::optional<bool> fix, unsafeFixes;
  /// `target-torch = "2.1"`: the oldest PyTorch the code must run on; no fix or advice uses an
  /// API newer than it.
  std::optional<TorchVersion> targetTorch;
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
  std::optional<TorchVersion> targetTorch;  // --target-torch
};

/// The lowest PyTorch the project around `dir` declares (`torch>=2.1` in pyproject.toml's
/// `[project] dependencies`, or in a requirements.txt), looking up from `dir` to the first
/// pyproject.toml with a `[project]` table. Unknown (0.0) when none says.
TorchVersion declaredTorchFloor(const std::string& dir);

/// The lower bound a requirement line puts on torch (`torch>=2.1,<3`, `torch==2.2.*`,
/// `torch[opt] ~= 2.0`), or unknown for another package or no lower bound.
TorchVersion torchFloorOf(std::string_view requirement);

/// Finds and caches the config for each directory. Thread-safe.
class ConfigResolver {
 public:
  explicit ConfigResolver(CliOverrides cli);
  /// Config for files in `dir` (absolute). Throws ConfigError for a broken config file.
  std::shared_ptr<const Config> forDirectory(const std::string& dir);
  /// forDirectory for a folder whose listing the caller has read: when the listing holds none of
  /// the config file names and the parent folder is resolved, the parent's config without a
  /// stat per name (a walk resolves each folder after its parent, ~3 syscalls saved a folder).
  std::shared_ptr<const Config> forListedDirectory(const std::string& dir, bool listingHasConfigFile);
  /// True for the names forDirectory looks for in a folder.
  static bool isConfigFileName(std::string_view name);
  /// Selection for one file, per-file-ignores applied, with its target PyTorch (`--target-torch`,
  /// else the config's `target-torch`, else the project's declared requirement).
  RuleSelection selectionFor(const Config& c, const std::string& absPath) const;
  /// True when `absPath` is excluded by the config's exclude lists. `folderAdmitted`: its folder
  /// was asked about with the same config and is not excluded (a walk knows), so only the last
  /// component and the anchored patterns are tested.
  bool excluded(const Config& c, const std::string& absPath, bool folderAdmitted = false) const;

 private:
  std::shared_ptr<const Config> applyCli(Config c) const;
  /// declaredTorchFloor(dir), each folder on the way up read once per run (declaredMutex_ held).
  TorchVersion declaredFloorOf(const std::string& dir) const;
  CliOverrides cli_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Config>> cache_;
  std::shared_ptr<const Config> fixed_;
  mutable std::mutex declaredMutex_;
  mutable std::unordered_map<std::string, TorchVersion> declared_;  // folder -> its project's torch floor
};

/// The user-level configuration, used where no project file applies:
/// `$XDG_CONFIG_HOME/oomlint/oomlint.toml`, else `~/.config/oomlint/oomlint.toml`; "" when unset.
std::string userConfigPath();

/// Parses a severity name ("error", "warning", "info").
bool parseSeverity(const std::string& s, Severity& out);

}  // namespace oomlint
