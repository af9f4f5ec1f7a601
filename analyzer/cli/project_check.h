#pragma once
/// `oomlint check` for Python: the named modules and notebooks are checked as parts of their
/// projects (project/analyze.h), the rest of each project read for its summaries.

#include <string>
#include <vector>

#include "cache/cache.h"
#include "cli/walk.h"
#include "engine/engine.h"

namespace oomlint {

struct ProjectCheckArgs {
  std::vector<std::string> pathArgs;  // the paths the user named (a project root is found from each)
  std::string projectRoot;            // --project-root: one root for everything
  WalkOptions walk;
  unsigned threads = 1;
  int verbose = 0;  // 1: a line per project; 2: also why files are analysed again
  bool keepSource = false;  // --verify reads sizes from the whole file
  ResultCache* cache = nullptr;
  std::function<const std::string&(size_t)> selectionKey;  // per file of `files`
};

/// For each of `files` that is Python or a notebook: its result in `out[i]` (an empty path when
/// it has no findings) and `handled[i]` set. `options(i)` are the settings of `files[i]`.
void checkPythonAsProjects(const std::vector<std::string>& files, const ProjectCheckArgs& args, ConfigResolver& resolver,
                           const std::function<const CheckOptions&(size_t)>& options, std::vector<FileResult>& out,
                           std::vector<bool>& handled);

}  // namespace oomlint
