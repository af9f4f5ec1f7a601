#include "lsp/projects.h"

#include <sys/stat.h>

#include "files/project_root.h"
#include "files/walk.h"
#include "config/config.h"
#include "project/analyze.h"
#include "project/order.h"
#include "util/path.h"

namespace oomlint::lsp {

Projects::Entry& Projects::projectOf(const std::string& path, size_t& index) {
  std::string abs = absolutePath(path);
  for (auto& [root, e] : byRoot_) {
    index = e.project->indexOf(abs);
    if (index != SIZE_MAX) return e;
  }
  std::string root = findProjectRoot(abs);
  std::vector<std::string> files{abs};
  if (root.empty()) {  // no project marker above it: the programs beside it that hold it
    root = parentDirectory(abs);
    files = project::programsHolding(root, files, project::modulesBeside(root), 1);
  } else {
    try {
      ConfigResolver resolver{CliOverrides{}};
      for (const std::string& f : collectFiles({root}, resolver, WalkOptions{}).files)
        if (isPythonPath(f) && absolutePath(f) != abs) files.push_back(absolutePath(f));
    } catch (const ConfigError&) {
      // A broken configuration is reported by the document's own analysis; the project is the file.
    }
  }
  Entry& e = byRoot_[root + "\n" + abs];
  e.project = std::make_unique<project::Project>(root, files);
  // Every module read once for what it exports (the document itself is analysed by the caller).
  project::ProjectCheck check;
  check.report.assign(files.size(), false);
  check.displayPath = files;
  static const CheckOptions readOnly;
  static const std::string noKey;
  check.options = [](size_t) -> const CheckOptions& { return readOnly; };
  check.selectionKey = [](size_t) -> const std::string& { return noKey; };
  check.onResult = [](size_t, FileResult&&) {};
  project::checkProject(*e.project, check);
  index = 0;
  return e;
}

std::vector<std::string> Projects::update(Entry& e, size_t index, project::FileExports exports, const std::string& except) {
  std::vector<std::string> again;
  if (exports.hash() == e.project->exports(index).hash()) return again;
  e.project->setExports(index, std::move(exports));
  e.project->link();
  for (auto& [i, open] : e.open)
    if (e.project->file(i) != except && open.view && open.view->fingerprint() != open.answered) again.push_back(e.project->file(i));
  return again;
}

std::vector<std::string> Projects::analyse(const std::string& path, CheckOptions opts,
                                           const std::function<std::vector<Finding>(const CheckOptions&)>& check,
                                           std::vector<Finding>& findings) {
  size_t index = 0;
  Entry& e = projectOf(path, index);
  Open& open = e.open[index];
  open.view = e.project->viewFor(index);
  project::FileExports exports;
  opts.project = open.view.get();
  project::Project& p = *e.project;
  opts.onFacts = [&](const Module& m, const Facts* facts) {
    exports = project::exportsOf(m, facts, [&](std::string_view dotted) { return p.mayBeProject(index, dotted); });
  };
  findings = check(opts);
  open.answered = open.view->answered();
  return update(e, index, std::move(exports), p.file(index));
}

std::unique_ptr<project::FileView> Projects::viewFor(const std::string& path) const {
  std::string abs = absolutePath(path);
  for (const auto& [root, e] : byRoot_) {
    size_t index = e.project->indexOf(abs);
    if (index != SIZE_MAX && e.open.count(index)) return e.project->viewFor(index);
  }
  return nullptr;
}

std::vector<std::string> Projects::fileChanged(const std::string& path) {
  std::string abs = absolutePath(path);
  for (auto& [root, e] : byRoot_) {
    size_t index = e.project->indexOf(abs);
    if (index == SIZE_MAX) continue;
    e.open.erase(index);
    project::FileExports exports;
    struct stat st {};
    if (::stat(abs.c_str(), &st) == 0) {
      auto view = e.project->viewFor(index);
      CheckOptions opts;
      opts.project = view.get();
      opts.reportFindings = false;
      project::Project& p = *e.project;
      opts.onFacts = [&](const Module& m, const Facts* facts) {
        exports = project::exportsOf(m, facts, [&](std::string_view dotted) { return p.mayBeProject(index, dotted); });
      };
      checkFile(abs, opts);
    }
    return update(e, index, std::move(exports), {});
  }
  return {};
}

}  // namespace oomlint::lsp
