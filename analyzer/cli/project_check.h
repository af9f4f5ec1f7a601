#pragma once
/// `oomlint check` for Python: the named modules and notebooks are checked as parts of their
/// projects (project/analyze.h), the rest of each project read for its summaries.

#include <memory>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "files/walk.h"
#include "engine/engine.h"
#include "project/project.h"

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

/// The projects of the Python files among `files`, read for their summaries only, so `--fix`
/// fixes a file with the facts its check reports (a fix that is safe for the file alone may not
/// be for a helper another module calls on a training path).
class ProjectsForFixes {
 public:
  ProjectsForFixes(const std::vector<std::string>& files, const ProjectCheckArgs& args, ConfigResolver& resolver);
  /// The view for files[i] (null when it is not Python). Alive while the file is fixed.
  std::unique_ptr<project::FileView> viewFor(size_t i) const;

 private:
  std::vector<std::unique_ptr<project::Project>> projects_;
  std::vector<std::pair<size_t, size_t>> where_;  // per file: (project, module), SIZE_MAX when none
};

}  // namespace oomlint
