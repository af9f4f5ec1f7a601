#include "cli/project_check.h"

#include <sys/stat.h>

#include <iostream>
#include <map>
#include <set>
#include <unordered_map>

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

std::string parentDir(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string("/") : p.substr(0, slash);
}

bool under(const std::string& path, const std::string& dir) {
  return dir == "/" || path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

}  // namespace

void checkPythonAsProjects(const std::vector<std::string>& files, const ProjectCheckArgs& args, ConfigResolver& resolver,
                           const std::function<const CheckOptions&(size_t)>& options, std::vector<FileResult>& out,
                           std::vector<bool>& handled) {
  // Each named path's project: the nearest folder with pyproject.toml, setup.cfg, setup.py or
  // .git; without one, the named folder (or a named file's folder).
  std::vector<std::pair<std::string, std::string>> argRoots;  // (absolute argument, its root)
  std::set<std::string> shallow;  // roots that are a named file's folder: only its own modules are read
  std::set<std::string> walked;   // roots a named folder lies in: every module of it is checked anyway
  for (const std::string& p : args.pathArgs) {
    std::string abs = absolutePath(p);
    std::string root = args.projectRoot.empty() ? project::findRoot(abs) : absolutePath(args.projectRoot);
    if (root.empty()) {
      root = isDirectory(abs) ? abs : parentDir(abs);
      if (!isDirectory(abs)) shallow.insert(root);
    }
    if (isDirectory(abs)) walked.insert(root);
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
    if (root.empty()) root = args.projectRoot.empty() ? project::findRoot(abs) : absolutePath(args.projectRoot);
    if (root.empty() || !under(abs, root)) {
      root = parentDir(abs);
      shallow.insert(root);
    }
    byRoot[root].push_back(i);
  }
  CheckOptions readOnly;  // the options of modules read only for their summaries
  for (const auto& [root, named] : byRoot) {
    // Every module of the project, with the excludes the walk applies; the named ones first.
    std::vector<std::string> absFiles;
    std::unordered_map<std::string, size_t> index;
    std::vector<size_t> walkedIndex;  // per project file: its index into `files`, or SIZE_MAX
    for (size_t i : named) {
      std::string abs = absolutePath(files[i]);
      if (index.try_emplace(abs, absFiles.size()).second) {
        absFiles.push_back(abs);
        walkedIndex.push_back(i);
      }
    }
    // Named files (pre-commit passes the changed ones): the programs that hold them, which is all
    // that can change what they are told; a folder without a project marker above a named file
    // offers only the modules beside it (`oomlint check /tmp/x.py` must not read all of /tmp).
    std::vector<std::string> others;
    if (walked.count(root) && !shallow.count(root)) {
      others = collectFiles({root}, resolver, args.walk).files;
    } else {
      std::vector<std::string> candidates;
      for (const std::string& f : shallow.count(root) ? project::modulesBeside(root) : collectFiles({root}, resolver, args.walk).files)
        if (isPythonPath(f)) candidates.push_back(absolutePath(f));
      others = project::programsHolding(root, absFiles, candidates, args.threads);
    }
    for (const std::string& f : others) {
      if (!isPythonPath(f)) continue;
      std::string abs = absolutePath(f);
      if (index.try_emplace(abs, absFiles.size()).second) {
        absFiles.push_back(abs);
        walkedIndex.push_back(SIZE_MAX);
      }
    }
    project::Project proj(root, absFiles);
    project::ProjectCheck check;
    check.threads = args.threads;
    check.report.resize(absFiles.size());
    check.displayPath.resize(absFiles.size());
    for (size_t k = 0; k < absFiles.size(); ++k) {
      check.report[k] = walkedIndex[k] != SIZE_MAX;
      if (check.report[k]) check.displayPath[k] = files[walkedIndex[k]];
    }
    check.cache = args.cache;
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
        std::cerr << "oomlint: round " << round + 1 << ": " << absFiles[k] << ":" << why << "\n";
      };
    int rounds = project::checkProject(proj, check);
    if (args.verbose)
      std::cerr << "oomlint: project " << root << ": " << absFiles.size() << " modules (" << check.fromCache << " from the cache), "
                << named.size() << " checked, "
                << rounds << " rounds (";
    for (size_t r = 0; args.verbose && r < check.analysedPerRound.size(); ++r) std::cerr << (r ? ", " : "") << check.analysedPerRound[r];
    if (args.verbose) std::cerr << " modules analysed)\n";
  }
}

}  // namespace oomlint
