#include "cli/project_check.h"

#include <sys/stat.h>

#include <iostream>
#include <map>
#include <set>
#include <unordered_map>

#include "files/project_root.h"
#include "notebook/notebook.h"
#include "project/analyze.h"
#include "project/order.h"
#include "util/path.h"

namespace oomlint {

namespace {

bool isDirectory(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool under(const std::string& path, const std::string& dir) {
  return dir == "/" || path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

struct NamedProject {
  std::string root;
  std::vector<std::string> modules;  // absolute; the named ones first
  std::vector<size_t> fileIndex;     // per module: its index into the checked files, or SIZE_MAX
  size_t named = 0;
};

/// The projects the Python files among `files` belong to: per project its root, its modules (the
/// named ones first) and, per module, its index into `files` (SIZE_MAX for a module only read).
std::vector<NamedProject> projectsOf(const std::vector<std::string>& files, const ProjectCheckArgs& args, ConfigResolver& resolver) {
  // Each named path's project: the nearest folder with pyproject.toml, setup.cfg, setup.py or
  // .git; without one, the named folder (or a named file's folder).
  std::vector<std::pair<std::string, std::string>> argRoots;  // (absolute argument, its root)
  std::set<std::string> shallow;  // roots that are a named file's folder: only its own modules are read
  std::set<std::string> walked;   // roots a named folder lies in: every module of it is checked anyway
  std::set<std::string> walkedWhole;  // roots named themselves: the walk of `files` found all their modules
  for (const std::string& p : args.pathArgs) {
    std::string abs = absolutePath(p);
    std::string root = args.projectRoot.empty() ? findProjectRoot(abs) : absolutePath(args.projectRoot);
    if (root.empty()) {
      root = isDirectory(abs) ? abs : parentDirectory(abs);
      if (!isDirectory(abs)) shallow.insert(root);
    }
    if (isDirectory(abs)) walked.insert(root);
    if (isDirectory(abs) && abs == root) walkedWhole.insert(root);
    argRoots.emplace_back(abs, root);
  }
  std::map<std::string, std::vector<size_t>> byRoot;  // root -> indices into files
  for (size_t i = 0; i < files.size(); ++i) {
    if (!isPythonPath(files[i]) && !isNotebookPath(files[i])) continue;
    std::string abs = absolutePath(files[i]);
    std::string root;
    for (const auto& [arg, r] : argRoots)
      if (under(abs, arg) && under(abs, r)) {
        root = r;
        break;
      }
    if (root.empty()) root = args.projectRoot.empty() ? findProjectRoot(abs) : absolutePath(args.projectRoot);
    if (root.empty() || !under(abs, root)) {
      root = parentDirectory(abs);
      shallow.insert(root);
    }
    byRoot[root].push_back(i);
  }
  std::vector<NamedProject> out;
  for (const auto& [root, named] : byRoot) {
    NamedProject np;
    np.root = root;
    np.named = named.size();
    std::unordered_map<std::string, size_t> index;
    for (size_t i : named) {
      std::string abs = absolutePath(files[i]);
      if (index.try_emplace(abs, np.modules.size()).second) {
        np.modules.push_back(abs);
        np.fileIndex.push_back(i);
      }
    }
    // Named files (pre-commit passes the changed ones): the programs that hold them, which is all
    // that can change what they are told; a folder without a project marker above a named file
    // offers only the modules beside it (`oomlint check /tmp/x.py` must not read all of /tmp).
    std::vector<std::string> others;
    if (walkedWhole.count(root) && !shallow.count(root)) {
      // nothing more to read: its modules are all among the named ones
    } else if (walked.count(root) && !shallow.count(root)) {
      others = collectFiles({root}, resolver, args.walk).files;
    } else {
      std::vector<std::string> candidates;
      for (const std::string& f : shallow.count(root) ? project::modulesBeside(root) : collectFiles({root}, resolver, args.walk).files)
        if (isPythonPath(f)) candidates.push_back(absolutePath(f));
      others = project::programsHolding(root, np.modules, candidates, args.threads, args.cache);
    }
    for (const std::string& f : others) {
      if (!isPythonPath(f)) continue;
      std::string abs = absolutePath(f);
      if (index.try_emplace(abs, np.modules.size()).second) {
        np.modules.push_back(abs);
        np.fileIndex.push_back(SIZE_MAX);
      }
    }
    out.push_back(std::move(np));
  }
  return out;
}

/// The modules of one project split into parts no import joins (project/order.h), each with
/// its modules' indices into the checked files; one part, the project itself, holds `whole`.
struct ProjectPart {
  std::unique_ptr<project::Project> project;
  std::vector<size_t> fileIndex;
};
std::vector<ProjectPart> partsOf(NamedProject& np, unsigned threads) {
  auto whole = std::make_unique<project::Project>(np.root, np.modules);
  std::vector<std::vector<size_t>> parts = project::independentParts(*whole, threads);
  std::vector<ProjectPart> out;
  if (parts.size() == 1) {
    out.push_back({std::move(whole), std::move(np.fileIndex)});
    return out;
  }
  for (const std::vector<size_t>& part : parts) {
    std::vector<std::string> modules;
    ProjectPart pp;
    for (size_t k : part) {
      modules.push_back(np.modules[k]);
      pp.fileIndex.push_back(np.fileIndex[k]);
    }
    pp.project = std::make_unique<project::Project>(np.root, std::move(modules));
    out.push_back(std::move(pp));
  }
  return out;
}

}  // namespace

void checkPythonAsProjects(const std::vector<std::string>& files, const ProjectCheckArgs& args, ConfigResolver& resolver,
                           const std::function<const CheckOptions&(size_t)>& options, std::vector<FileResult>& out,
                           std::vector<bool>& handled) {
  CheckOptions readOnly;  // the options of modules read only for their summaries
  for (NamedProject& np : projectsOf(files, args, resolver)) {
    // One part at a time: what a part holds goes before the next is read.
    std::vector<ProjectPart> parts = partsOf(np, args.threads);
    for (size_t part = 0; part < parts.size(); ++part) {
      project::Project& proj = *parts[part].project;
      const std::vector<size_t>& walkedIndex = parts[part].fileIndex;
      size_t n = proj.size(), named = 0;
      project::ProjectCheck check;
      check.threads = args.threads;
      check.report.resize(n);
      check.displayPath.resize(n);
      for (size_t k = 0; k < n; ++k) {
        check.report[k] = walkedIndex[k] != SIZE_MAX;
        if (check.report[k]) check.displayPath[k] = files[walkedIndex[k]];
        named += check.report[k];
      }
      check.cache = args.cache;
      check.usedAfter = false;  // findings only: fixes read their own project (ProjectsForFixes)
      static const std::string kNoKey;
      check.selectionKey = [&](size_t k) -> const std::string& { return walkedIndex[k] != SIZE_MAX ? args.selectionKey(walkedIndex[k]) : kNoKey; };
      check.options = [&](size_t k) -> const CheckOptions& { return walkedIndex[k] != SIZE_MAX ? options(walkedIndex[k]) : readOnly; };
      check.onResult = [&](size_t k, FileResult&& r) {
        size_t i = walkedIndex[k];
        handled[i] = true;
        if (r.findings.empty() && r.skippedReason.empty()) return;
        if (!args.keepSource) keepOnlyReportedLines(r);
        out[i] = std::move(r);
      };
      if (args.verbose > 1)
        check.explain = [&](size_t k, int round, const std::string& why) {
          std::cerr << "oomlint: round " << round + 1 << ": " << proj.file(k) << ":" << why << "\n";
        };
      int rounds = project::checkProject(proj, check);
      if (args.verbose) {
        std::cerr << "oomlint: project " << np.root;
        if (parts.size() > 1) std::cerr << " (part " << part + 1 << " of " << parts.size() << ", independent of the others)";
        std::cerr << ": " << n << " modules (" << check.fromCache << " from the cache), " << named << " checked, " << rounds << " rounds (";
        for (size_t r = 0; r < check.analysedPerRound.size(); ++r) std::cerr << (r ? ", " : "") << check.analysedPerRound[r];
        std::cerr << " modules analysed)\n";
      }
      parts[part].project.reset();
    }
  }
}

ProjectsForFixes::ProjectsForFixes(const std::vector<std::string>& files, const ProjectCheckArgs& args, ConfigResolver& resolver)
    : where_(files.size(), {SIZE_MAX, SIZE_MAX}) {
  CheckOptions readOnly;
  for (NamedProject& np : projectsOf(files, args, resolver)) {
    auto proj = std::make_unique<project::Project>(np.root, np.modules);
    project::ProjectCheck check;  // every module read for its summaries; nothing reported
    check.threads = args.threads;
    check.report.assign(np.modules.size(), false);
    check.displayPath = np.modules;
    static const std::string kNoKey;
    check.selectionKey = [](size_t) -> const std::string& { return kNoKey; };
    check.options = [&](size_t) -> const CheckOptions& { return readOnly; };
    check.onResult = [](size_t, FileResult&&) {};
    project::checkProject(*proj, check);
    for (size_t k = 0; k < np.fileIndex.size(); ++k)
      if (np.fileIndex[k] != SIZE_MAX) where_[np.fileIndex[k]] = {projects_.size(), k};
    projects_.push_back(std::move(proj));
  }
}

std::unique_ptr<project::FileView> ProjectsForFixes::viewFor(size_t i) const {
  if (i >= where_.size() || where_[i].first == SIZE_MAX) return nullptr;
  return projects_[where_[i].first]->viewFor(where_[i].second);
}

}  // namespace oomlint
