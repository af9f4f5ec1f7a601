#pragma once
/// The commands that explain a run instead of making one: which files a check would read, the
/// settings a file gets, a rule by name, and removing the cache (ruff's `--show-files`,
/// `--show-settings`, `rule NAME`, `clean`).

#include <ostream>
#include <string>
#include <vector>

#include "config/config.h"
#include "engine/rule.h"

namespace oomlint {

/// `check --show-files`: every file the walk of `paths` would check, one per line, sorted.
/// Returns the exit code.
int showFiles(std::ostream& os, const std::vector<std::string>& paths, ConfigResolver& resolver, bool forceExclude);

/// `check --show-settings FILE`: the configuration file that applies, whether the file is
/// excluded and why, and the rules enabled for it with their severities.
int showSettings(std::ostream& os, const std::string& file, ConfigResolver& resolver);

/// A rule by code (`OOM101`, any case) or by name (`accumulated-tensor-with-graph`); null when none.
const Rule* ruleByCodeOrName(const std::string& codeOrName);

/// `oomlint clean`: removes the results cache folder (`dir`) and says what it removed.
int cleanCache(std::ostream& os, const std::string& dir);

}  // namespace oomlint
