#pragma once
/// Finds the files to check: explicit files as given, directories walked without recursion on the
/// call stack, skipping hidden and build/virtualenv folders, .gitignore'd paths and configured
/// excludes. Symlinked directories are not followed (no loops); symlinked files are.

#include <string>
#include <vector>

#include "config/config.h"
#include "util/path.h"

namespace oomlint {

struct WalkOptions {
  bool forceExclude = false;  // apply excludes to explicitly named files too
};

struct WalkIssue {
  std::string path;
  std::string message;
};

struct WalkResult {
  std::vector<std::string> files;  // as the user would write them (relative when given relative)
  std::vector<WalkIssue> issues;   // unreadable directories, missing paths
};

WalkResult collectFiles(const std::vector<std::string>& paths, ConfigResolver& resolver, const WalkOptions& opts);

/// True for the extensions oomlint analyses when walking directories.
bool isCheckedExtension(const std::string& name);

}  // namespace oomlint
