// oomlint command line: `oomlint check`, `oomlint rule`.
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <unordered_map>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include "cpp/loader.h"
#include "cache/cache.h"
#include "cli/inspect.h"
#include "cli/project_check.h"
#include "cli/verify.h"
#include "cli/trace.h"
#include "files/walk.h"
#include "config/config.h"
#include "engine/engine.h"
#include "fix/fix.h"
#include "lsp/server.h"
#include "report/clang_fixes.h"
#include "report/report.h"
#include "util/executable.h"
#include "version.h"

namespace oomlint {
namespace {

std::vector<std::string> splitSelectors(const std::vector<std::string>& raw, bool& ok, std::string& bad) {
  std::vector<std::string> out;
  for (const std::string& item : raw) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ',')) {
      part.erase(0, part.find_first_not_of(" \t"));
      part.erase(part.find_last_not_of(" \t") + 1);
      if (part.empty()) continue;
      for (char& c : part) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (!isValidSelector(part)) {
        ok = false;
        bad = part;
      }
      out.push_back(part);
    }
  }
  return out;
}

struct CheckArgs {
  std::vector<std::string> paths;
  std::vector<std::string> select, ignore, extendSelect, extendIgnore, extendExclude;
  bool selectGiven = false, ignoreGiven = false, extendSelectGiven = false;
  std::string format = "full";
  std::string targetTorch;  // --target-torch
  std::vector<std::string> extraArgsBefore, extraArgs;  // C++: --extra-arg-before, --extra-arg
  std::vector<std::string> fixedFlags;                  // C++: the flags after `--`
  bool useFixedFlags = false;
  std::string exportFixes;                              // --export-fixes FILE
  bool formatGiven = false, fixGiven = false, unsafeFixesGiven = false;
  bool noFix = false, noUnsafeFixes = false;
  std::string outputFile;
  std::string stdinFilename;
  std::string configFile;
  std::string color = "auto";
  std::string showSettingsFor;  // --show-settings FILE
  bool showFiles = false;
  bool isolated = false;
  bool statistics = false;
  bool exitZero = false;
  bool forceExclude = false;
  bool quiet = false;
  bool fix = false;
  bool unsafeFixes = false;
  bool diff = false;
  bool fixOnly = false;
  bool addNoqa = false;
  bool verify = false;
  bool noCache = false;
  bool noProject = false;
  int verbose = 0;
  std::string projectRoot;
  std::string cacheDir;
  std::string buildPath;  // -p: compile_commands.json folder for C++ files
  std::string probePath, workloadFile, verifyDevice = "auto";
  unsigned threads = 0;
};

std::string currentDir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}

/// Whether the human formats are coloured. `--color always|never` decides; with `auto`, a set
/// FORCE_COLOR or CLICOLOR_FORCE (other than "0") turns colour on, then a set NO_COLOR turns it
/// off, and otherwise a terminal on standard output does. (What ruff does, through the same
/// variables; FORCE_COLOR beats NO_COLOR there too.)
bool useColor(const std::string& mode, bool toStdout) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
  };
  auto forced = [&](const char* name) { return set(name) && std::string(std::getenv(name)) != "0"; };
  if (forced("FORCE_COLOR") || forced("CLICOLOR_FORCE")) return true;
  if (set("NO_COLOR")) return false;
  return toStdout && ::isatty(STDOUT_FILENO);
}

/// `output-format`, `fix` and `unsafe-fixes` from the configuration of the folder oomlint runs
/// in (or `--config`), where the command line does not say. False with a message on a bad file.
bool applyConfigDefaults(CheckArgs& a, const CliOverrides& cli) {
  try {
    ConfigResolver resolver(cli);
    std::shared_ptr<const Config> here = resolver.forDirectory(currentDir());
    if (!a.formatGiven && here->outputFormat) a.format = *here->outputFormat;
    if (!a.fixGiven && here->fix) a.fix = *here->fix;
    if (!a.unsafeFixesGiven && here->unsafeFixes) a.unsafeFixes = *here->unsafeFixes;
  } catch (const ConfigError& e) {
    std::cerr << "oomlint: error: " << e.what() << "\n";
    return false;
  }
  if (a.noFix) a.fix = false;
  if (a.noUnsafeFixes) a.unsafeFixes = false;
  return true;
}

/// `.oomlint_cache` at the root of the project oomlint runs in (as ruff keeps `.ruff_cache`): the
/// nearest folder above the working directory with a configuration file, pyproject.toml,
/// setup.cfg, setup.py or .git; else the working directory.
std::string defaultCacheDir() {
  std::string cwd = currentDir();
  for (std::string d = cwd; !d.empty(); d = parentDirectory(d)) {
    for (const char* marker : {"/oomlint.toml", "/.oomlint.toml", "/pyproject.toml", "/setup.cfg", "/setup.py", "/.git"})
      if (::access((d + marker).c_str(), F_OK) == 0) return d + "/.oomlint_cache";
    if (d == "/") break;
  }
  return cwd + "/.oomlint_cache";
}

int runCheck(const CheckArgs& given) {
  CheckArgs a = given;
  cpp::Settings cppSettings;
  cppSettings.buildDir = a.buildPath;
  cppSettings.projectRoot = a.projectRoot;
  cppSettings.alone = a.noProject;
  cppSettings.verbose = a.verbose > 0;
  cppSettings.extraArgsBefore = a.extraArgsBefore;
  cppSettings.extraArgs = a.extraArgs;
  cppSettings.fixedFlags = a.fixedFlags;
  cppSettings.useFixedFlags = a.useFixedFlags;
  cpp::configure(cppSettings);
  {
    CliOverrides where;
    where.configFile = a.configFile;
    where.isolated = a.isolated;
    if (!applyConfigDefaults(a, where)) return 2;
  }
  report::Format format;
  if (!report::parseFormat(a.format, format)) {
    std::cerr << "oomlint: error: unknown output format `" << a.format << "` (" << report::kFormatNames << ")\n";
    return 2;
  }
  CliOverrides cli;
  bool ok = true;
  std::string bad;
  if (a.selectGiven) cli.select = splitSelectors(a.select, ok, bad);
  if (a.ignoreGiven) cli.ignore = splitSelectors(a.ignore, ok, bad);
  if (a.extendSelectGiven) cli.extendSelect = splitSelectors(a.extendSelect, ok, bad);
  if (!a.extendIgnore.empty()) cli.extendIgnore = splitSelectors(a.extendIgnore, ok, bad);
  if (!ok) {
    std::cerr << "oomlint: error: unknown rule selector `" << bad << "`\n";
    return 2;
  }
  cli.extendExclude = a.extendExclude;
  cli.configFile = a.configFile;
  cli.isolated = a.isolated;
  if (!a.targetTorch.empty()) {
    cli.targetTorch = TorchVersion::parse(a.targetTorch);
    if (!cli.targetTorch) {
      std::cerr << "oomlint: error: --target-torch wants a version such as 2.1, not `" << a.targetTorch << "`\n";
      return 2;
    }
  }

  std::vector<FileResult> results;
  bool fixing = a.fix || a.diff || a.fixOnly;
  size_t fixedCount = 0;
  std::string diffs;
  try {
    ConfigResolver resolver(cli);
    if (!a.showSettingsFor.empty()) return showSettings(std::cout, a.showSettingsFor, resolver);
    if (a.showFiles) return showFiles(std::cout, a.paths, resolver, a.forceExclude);
    // `--stdin-filename F` alone reads standard input too, as ruff does: editor plugins pipe the
    // buffer that way.
    bool fromStdin = (a.paths.size() == 1 && a.paths[0] == "-") || (a.paths.empty() && !a.stdinFilename.empty());
    if (fromStdin) {
      std::string name = a.stdinFilename.empty() ? std::string("-") : a.stdinFilename;
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      std::string abs = absolutePath(name == "-" ? "stdin.py" : name);
      auto cfg = resolver.forDirectory(abs.substr(0, abs.rfind('/')));
      if (a.forceExclude && !a.stdinFilename.empty() && resolver.excluded(*cfg, abs)) {
        results.clear();
      } else {
        CheckOptions opts;
        opts.selection = resolver.selectionFor(*cfg, abs);
        if (fixing) {
          FixOptions fo;
          fo.unsafe = a.unsafeFixes;
          FixOutcome out = applyFixes(name, ss.str(), opts, fo);
          fixedCount += out.applied;
          if (a.diff) {
            std::string d = fileDiff(name, ss.str(), out.source);
            diffs += d;
          } else {
            std::cout << out.source;  // fixed source to stdout, as ruff does
            std::cout.flush();
            if (a.fixOnly) return 0;
            FileResult rest = checkSource(name, out.source, opts);
            for (const Finding& f : rest.findings) std::cerr << name << ":" << f.span.line << ":" << f.span.col + 1 << ": " << f.code << " " << f.message << "\n";
            return rest.findings.empty() || a.exitZero ? 0 : 1;
          }
        } else {
          results.push_back(checkSource(name, ss.str(), opts));
        }
      }
    } else {
      std::vector<std::string> paths = a.paths.empty() ? std::vector<std::string>{"."} : a.paths;
      WalkOptions wopts;
      wopts.forceExclude = a.forceExclude;
      WalkResult walked = collectFiles(paths, resolver, wopts);
      for (const WalkIssue& issue : walked.issues) {
        FileResult r;
        r.path = issue.path;
        r.ioError = true;
        Finding f;
        f.code = kIoErrorCode;
        f.message = issue.message;
        f.span.line = 1;
        f.severity = Severity::Error;
        r.findings.push_back(f);
        results.push_back(std::move(r));
      }
      // Resolve each file's settings up front (config errors surface before any work). Files
      // share identical settings: memory stays flat however many files a run holds.
      std::unordered_map<std::string, CheckOptions> optionsByKey;  // nodes stay put: pointers into it are stable
      std::string cppKey = "|p=" + a.buildPath + "|root=" + a.projectRoot + (a.noProject ? "|alone" : "");
      for (const std::string& f : a.extraArgsBefore) cppKey += "|xb=" + f;
      for (const std::string& f : a.extraArgs) cppKey += "|x=" + f;
      if (a.useFixedFlags) cppKey += "|--";
      for (const std::string& f : a.fixedFlags) cppKey += " " + f;
      std::vector<const CheckOptions*> perFileOptions(walked.files.size());
      std::vector<const std::string*> selectionKeys(walked.files.size());
      // The files of one folder share its configuration and its declared PyTorch, so, without
      // per-file-ignores, their selection too: it is worked out once per folder and language.
      std::map<std::tuple<std::string, const Config*, bool>, size_t> folderDone;  // -> a file whose settings are those
      for (size_t i = 0; i < walked.files.size(); ++i) {
        std::string abs = absolutePath(walked.files[i]);
        std::string folder = abs.substr(0, abs.rfind('/'));
        auto cfg = resolver.forDirectory(folder);
        bool cpp = isCppPath(walked.files[i]);
        if (cfg->perFileIgnores.empty()) {
          auto [done, fresh] = folderDone.try_emplace({std::move(folder), cfg.get(), cpp}, i);
          if (!fresh) {
            perFileOptions[i] = perFileOptions[done->second];
            selectionKeys[i] = selectionKeys[done->second];
            continue;
          }
        }
        CheckOptions o;
        o.selection = resolver.selectionFor(*cfg, abs);
        // C++ findings also depend on which compile_commands.json was asked for.
        // A C++ file's findings also depend on its flags and on which headers are its project's.
        std::string key = o.selection.fingerprint() + (cpp ? cppKey : std::string());
        auto it = optionsByKey.try_emplace(std::move(key), std::move(o)).first;
        perFileOptions[i] = &it->second;
        selectionKeys[i] = &it->first;
      }
      auto perFile = [&](size_t i) -> const CheckOptions& { return *perFileOptions[i]; };
      std::vector<FileResult> fileResults(walked.files.size());
      unsigned n = a.threads ? a.threads : std::max(1u, std::thread::hardware_concurrency());
      n = std::min<unsigned>(n, static_cast<unsigned>(std::max<size_t>(1, walked.files.size())));
      std::atomic<size_t> next{0};
      std::vector<std::string> fileDiffs(walked.files.size());
      // The cache serves plain checks only: fixing, diffing and adding noqa always read the file.
      std::unique_ptr<ResultCache> cache;
      if (!a.noCache && !fixing && !a.addNoqa) {
        std::string warning;
        cache = std::make_unique<ResultCache>(a.cacheDir.empty() ? defaultCacheDir() : a.cacheDir, warning);
        if (!warning.empty()) std::cerr << "oomlint: warning: " << warning << "\n";
      }
      // Python modules and notebooks are checked as parts of their projects (what other modules
      // say of the names they import); fixing and adding noqa stay per file.
      std::vector<bool> handled(walked.files.size(), false);
      if (!fixing && !a.addNoqa && !a.noProject) {
        ProjectCheckArgs pargs;
        pargs.pathArgs = paths;
        pargs.projectRoot = a.projectRoot;
        pargs.walk = wopts;
        pargs.threads = n;
        pargs.verbose = a.verbose;
        pargs.keepSource = a.verify;
        pargs.cache = cache.get();
        pargs.selectionKey = [&](size_t i) -> const std::string& { return *selectionKeys[i]; };
        checkPythonAsProjects(walked.files, pargs, resolver, perFile, fileResults, handled);
      }
      // Fixes are made with what the files' projects say, as their check reports them.
      std::unique_ptr<ProjectsForFixes> fixProjects;
      if ((fixing || a.addNoqa) && !a.noProject) {
        ProjectCheckArgs pargs;
        pargs.pathArgs = paths;
        pargs.projectRoot = a.projectRoot;
        pargs.walk = wopts;
        pargs.threads = n;
        fixProjects = std::make_unique<ProjectsForFixes>(walked.files, pargs, resolver);
      }
      auto optionsWithProject = [&](size_t i, std::unique_ptr<project::FileView>& view) {
        CheckOptions o = perFile(i);
        if (fixProjects && (view = fixProjects->viewFor(i))) o.project = view.get();
        return o;
      };
      std::atomic<size_t> fixedAtomic{0};
      auto worker = [&] {
        for (size_t i = next++; i < walked.files.size(); i = next++) {
          if (handled[i]) continue;
          const std::string& path = walked.files[i];
          FileResult r;
          if (a.addNoqa) {
            std::string source;
            std::string err = readSourceFile(path, source);
            if (!err.empty()) {
              fileResults[i] = ioErrorResult(path, err);
              continue;
            }
            std::unique_ptr<project::FileView> view;
            AddNoqaOutcome out = addNoqaDirectives(path, source, optionsWithProject(i, view));
            std::string writeError = out.added ? writeFileAtomically(path, out.source) : std::string();
            if (!writeError.empty()) {
              fileResults[i] = ioErrorResult(path, writeError);
              continue;
            }
            fixedAtomic += out.added;
            fileResults[i].path = path;
            continue;
          }
          if (!fixing) {
            std::string abs = cache ? absolutePath(path) : std::string();
            std::vector<Finding> cached;
            bool notebook = isNotebookPath(path);
            if (cache && cache->lookup(abs, *selectionKeys[i], cached)) {
              r.path = path;
              r.findings = std::move(cached);
              if (!r.findings.empty()) {
                readSourceFile(path, r.source);  // output shows source lines
                if (notebook) {  // findings are positioned in the module its cells make
                  auto nb = std::make_shared<Notebook>(readNotebook(r.source));
                  r.source = nb->module;
                  r.notebook = std::move(nb);
                }
              }
            } else if (notebook) {
              // The cache describes the file as read: the notebook's JSON, not its cells' module.
              std::string raw;
              std::string err = readSourceFile(path, raw);
              r = err.empty() ? checkSource(path, raw, perFile(i)) : ioErrorResult(path, err);
              if (cache && !r.ioError && r.skippedReason.empty()) cache->store(abs, *selectionKeys[i], raw, r.findings);
            } else {
              r = checkFile(path, perFile(i));
              if (cache && !r.ioError && r.skippedReason.empty()) cache->store(abs, *selectionKeys[i], r.source, r.findings, r.dependencies);
            }
          } else {
            std::string source;
            std::string err = readSourceFile(path, source);
            if (!err.empty()) {
              fileResults[i] = ioErrorResult(path, err);
              continue;
            }
            FixOptions fo;
            fo.unsafe = a.unsafeFixes;
            std::unique_ptr<project::FileView> view;
            const CheckOptions withProject = optionsWithProject(i, view);
            FixOutcome out = applyFixes(path, source, withProject, fo);
            std::string writeError;
            if (out.applied > 0) {
              if (a.diff) fileDiffs[i] = fileDiff(path, source, out.source);
              else writeError = writeFileAtomically(path, out.source);
            }
            if (!writeError.empty()) {
              r = checkSource(path, source, withProject);
              Finding f;
              f.code = kIoErrorCode;
              f.message = writeError;
              f.span.line = 1;
              f.severity = Severity::Error;
              r.findings.insert(r.findings.begin(), f);
            } else {
              fixedAtomic += out.applied;
              r = checkSource(path, a.diff ? source : out.source, withProject);
            }
          }
          // A clean file needs nothing kept for the output: storing even its path would leave a
          // small long-lived allocation above each file's transient ones and fragment the heap
          // (peak RSS then grew with the number of files).
          if (r.findings.empty() && r.skippedReason.empty()) continue;
          if (!a.verify) keepOnlyReportedLines(r);  // --verify reads sizes from the whole file
          fileResults[i] = std::move(r);
        }
      };
      std::vector<std::thread> pool;
      for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
      worker();
      for (auto& t : pool) t.join();
      if (cache) {
        std::string warning = cache->save();
        if (!warning.empty()) std::cerr << "oomlint: warning: " << warning << "\n";
      }
      for (auto& r : fileResults)
        if (!r.path.empty()) results.push_back(std::move(r));
      for (const std::string& d : fileDiffs) diffs += d;
      fixedCount += fixedAtomic;
      std::stable_sort(results.begin(), results.end(), [](const FileResult& x, const FileResult& y) { return x.path < y.path; });
    }
  } catch (const ConfigError& e) {
    std::cerr << "oomlint: error: " << e.what() << "\n";
    return 2;
  }

  if (!a.exportFixes.empty()) {
    std::string tmp = a.exportFixes + ".tmp." + std::to_string(::getpid());
    bool written = static_cast<bool>(std::ofstream(tmp, std::ios::binary) << report::clangFixesYaml(results, a.unsafeFixes, currentDir()));
    if (!written || std::rename(tmp.c_str(), a.exportFixes.c_str()) != 0) {
      std::remove(tmp.c_str());
      std::cerr << "oomlint: error: --export-fixes: cannot write " << a.exportFixes << "\n";
      return 2;
    }
  }

  std::ofstream file;
  std::ostream* os = &std::cout;
  if (!a.outputFile.empty()) {
    file.open(a.outputFile, std::ios::binary);
    if (!file) {
      std::cerr << "oomlint: error: cannot write " << a.outputFile << "\n";
      return 2;
    }
    os = &file;
  }
  if (a.addNoqa) {
    std::cerr << "Added " << fixedCount << " noqa " << (fixedCount == 1 ? "directive" : "directives") << ".\n";
    bool ioErrors = std::any_of(results.begin(), results.end(), [](const FileResult& r) { return r.ioError; });
    if (ioErrors) report::write(*os, report::Format::Concise, results, report::Options{});
    return ioErrors ? 1 : 0;
  }
  if (a.diff) {
    *os << diffs;
    if (fixedCount) std::cerr << "Would fix " << fixedCount << (fixedCount == 1 ? " finding" : " findings") << ".\n";
    else std::cerr << "No fixes to apply.\n";
    return fixedCount && !a.exitZero ? 1 : 0;
  }
  if (a.fixOnly) {
    if (fixedCount) std::cerr << "Fixed " << fixedCount << (fixedCount == 1 ? " finding" : " findings") << ".\n";
    bool ioErrors = std::any_of(results.begin(), results.end(), [](const FileResult& r) { return r.ioError; });
    return ioErrors ? 1 : 0;
  }
  if (a.verify) {
    VerifyOptions vo;
    vo.probePath = a.probePath;
    vo.workloadFile = a.workloadFile;
    vo.device = a.verifyDevice;
    std::string warn = verifyFindings(results, vo);
    if (!warn.empty()) std::cerr << "oomlint: " << warn << (warn.back() == '\n' ? "" : "\n");
  }
  report::Options ropts;
  ropts.version = OOMLINT_VERSION;
  ropts.cwd = currentDir();
  ropts.color = useColor(a.color, a.outputFile.empty());
  size_t total = 0;
  for (const FileResult& r : results) {
    total += r.findings.size();
    if (!r.skippedReason.empty()) std::cerr << "oomlint: warning: " << r.skippedReason << "\n";
  }
  if (a.statistics) {
    report::writeStatistics(*os, results, format == report::Format::Json);
  } else if (!(a.quiet && format == report::Format::Full && total == 0)) {
    report::write(*os, format, results, ropts);
  }
  if (fixing && fixedCount && format == report::Format::Full)
    std::cerr << "Fixed " << fixedCount << (fixedCount == 1 ? " finding" : " findings") << ".\n";
  os->flush();
  if (total == 0 || a.exitZero) return 0;
  return 1;
}

void printRule(std::ostream& os, const RuleInfo& i) {
  os << "# " << i.name << " (" << i.code << ")\n\n";
  os << "Severity: " << severityName(i.severity) << (i.enabledByDefault ? "" : " (off by default; enable with --extend-select " + std::string(i.code) + ")")
     << "\nLanguages: " << (i.python ? "Python" : "") << (i.python && i.cpp ? ", " : "") << (i.cpp ? "C++ (LibTorch)" : "")
     << "\nFix: "
     << (i.fix == FixKind::Safe ? "safe" : i.fix == FixKind::Unsafe ? "unsafe (--unsafe-fixes)" : i.fix == FixKind::DisplayOnly ? "display only" : "none")
     << "\nRuntime probe: " << (i.probe ? "yes (oomlint-probe " + std::string(i.code) + ")" : "no") << "\n\n";
  os << i.doc;
  if (!i.doc.empty() && i.doc.back() != '\n') os << "\n";
}

int runRule(const std::string& code, bool all, const std::string& format) {
  std::vector<const Rule*> rules;
  if (all) {
    rules = allRules();
  } else {
    const Rule* r = ruleByCodeOrName(code);
    if (!r) {
      std::cerr << "oomlint: error: unknown rule `" << code << "` (see `oomlint rule --all`)\n";
      return 2;
    }
    rules.push_back(r);
  }
  if (format == "json") {
    std::cout << "[";
    bool first = true;
    for (const Rule* r : rules) {
      const RuleInfo& i = r->info();
      std::ostringstream doc;
      printRule(doc, i);
      auto esc = [](std::string_view s) {
        std::string o;
        for (char c : s) {
          if (c == '"' || c == '\\') o += '\\', o += c;
          else if (c == '\n') o += "\\n";
          else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
          else o += c;
        }
        return o;
      };
      std::cout << (first ? "" : ",") << "\n  {\"code\": \"" << i.code << "\", \"name\": \"" << i.name << "\", \"severity\": \""
                << severityName(i.severity) << "\", \"enabled_by_default\": " << (i.enabledByDefault ? "true" : "false")
                << ", \"summary\": \"" << esc(i.summary) << "\", \"explanation\": \"" << esc(doc.str()) << "\"}";
      first = false;
    }
    std::cout << "\n]\n";
    return 0;
  }
  bool first = true;
  for (const Rule* r : rules) {
    if (!first) std::cout << "\n";
    printRule(std::cout, r->info());
    first = false;
  }
  return 0;
}

}  // namespace
}  // namespace oomlint

int main(int argc, char** argv) {
  using namespace oomlint;
  // A large file's tree and model (megabytes) get their own mappings, returned when the file is
  // done. With glibc's adaptive threshold they would come from the heap after the first one, and
  // the small allocations that outlive a file (findings, paths) would pin the heap at its
  // largest: peak RSS then grew with the number of files instead of with the largest file.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Setting the mmap threshold also pins the trim threshold at 128 KiB, so free() gave the top of
  // the heap back after every file and the next file paid page faults to get it again (~1.5% of
  // a cold run's CPU). Keeping up to 64 MiB of free heap does not raise the peak.
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  CLI::App app{"oomlint: finds GPU-memory anti-patterns in PyTorch training code"};
  app.set_version_flag("-V,--version", std::string("oomlint ") + OOMLINT_VERSION);
  app.require_subcommand(1);

  CheckArgs ca;
  auto* check = app.add_subcommand("check", "Check files or directories (default: .)");
  check->add_option("paths", ca.paths, "Files or directories; `-` reads standard input");
  check->add_option("--select", ca.select, "Rule codes or prefixes to enable (replaces the default set)")->delimiter(',')->allow_extra_args(false);
  check->add_option("--ignore", ca.ignore, "Rule codes or prefixes to disable")->delimiter(',')->allow_extra_args(false);
  check->add_option("--extend-select", ca.extendSelect, "Rule codes or prefixes to enable in addition")->delimiter(',')->allow_extra_args(false);
  check->add_option("--extend-ignore", ca.extendIgnore, "Alias of --ignore, kept for ruff compatibility")->delimiter(',')->allow_extra_args(false);
  check->add_option("--extend-exclude", ca.extendExclude, "Glob patterns of paths to skip")->delimiter(',')->allow_extra_args(false);
  check->add_option("--output-format", ca.format, std::string("One of: ") + report::kFormatNames + " (default: full)");
  check->add_option("-o,--output-file", ca.outputFile, "Write the report to this file");
  check->add_option("--stdin-filename", ca.stdinFilename, "Read standard input, reported under this name (with or without `-`)");
  check->add_option("--color", ca.color, "Colour the output: auto (default: a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  check->add_option("--config", ca.configFile, "Use this oomlint.toml / pyproject.toml for every file");
  check->add_flag("--isolated", ca.isolated, "Ignore every configuration file");
  check->add_flag("--statistics", ca.statistics, "Count findings per rule instead of listing them");
  check->add_flag("--show-files", ca.showFiles, "List the files a check would read, and stop");
  check->add_option("--show-settings", ca.showSettingsFor, "Print the settings FILE gets (config file, excludes, rules), and stop");
  check->add_flag("--exit-zero", ca.exitZero, "Exit 0 even when there are findings");
  check->add_flag("--force-exclude", ca.forceExclude, "Apply excludes to files named on the command line too");
  check->add_flag("-q,--quiet", ca.quiet, "Print nothing when there are no findings");
  check->add_option("--threads", ca.threads, "Worker threads (default: all cores)");
  check->add_flag("--fix", ca.fix, "Apply safe fixes (and unsafe ones with --unsafe-fixes)");
  check->add_flag("--unsafe-fixes", ca.unsafeFixes, "Also apply fixes that may change behaviour");
  check->add_flag("--no-fix", ca.noFix, "Do not fix, whatever the configuration's `fix` says");
  check->add_flag("--no-unsafe-fixes", ca.noUnsafeFixes, "Do not apply unsafe fixes, whatever the configuration says");
  check->add_flag("--diff", ca.diff, "Print the fixes as a unified diff; change nothing");
  check->add_flag("--fix-only", ca.fixOnly, "Apply fixes and report nothing else");
  check->add_flag("--add-noqa", ca.addNoqa, "Add `# noqa: CODE` to every line with a finding");
  check->add_flag("--no-cache", ca.noCache, "Do not read or write the results cache (.oomlint_cache/)");
  check->add_option("-p,--build-path", ca.buildPath,
                    "C++: folder holding compile_commands.json (default: searched in the file's parent folders)");
  check->add_option("--extra-arg", ca.extraArgs, "C++: a Clang flag to append to every compile command (repeatable)")->allow_extra_args(false);
  check->add_option("--extra-arg-before", ca.extraArgsBefore, "C++: a Clang flag to prepend to every compile command (repeatable)")->allow_extra_args(false);
  check->add_option("--export-fixes", ca.exportFixes,
                    "Write the fixes (safe ones, and unsafe with --unsafe-fixes) as YAML for clang-apply-replacements");
  check->add_option("--target-torch", ca.targetTorch,
                    "Oldest PyTorch the code must run on (2.1): no fix or advice needs a newer one (default: target-torch, "
                    "else the project's declared torch requirement)");
  check->add_flag("--no-project", ca.noProject, "Check each file alone, without reading the rest of its project");
  check->add_option("--project-root", ca.projectRoot,
                    "The project's root (default: the nearest folder with pyproject.toml, setup.cfg, setup.py or .git)");
  check->add_flag("-v,--verbose", ca.verbose, "Say which projects were read and how (twice: why files were analysed again)");
  check->add_option("--cache-dir", ca.cacheDir, "Where the results cache lives (default: .oomlint_cache at the project root)");
  check->add_flag("--verify", ca.verify, "Measure each finding's pattern with oomlint-probe (LibTorch) and print the cost");
  check->add_option("--probe", ca.probePath, "Path of oomlint-probe for --verify");
  check->add_option("--workload", ca.workloadFile, "JSON sizes for --verify (width, depth, batch, seq, vocab, steps, dtype)");
  check->add_option("--verify-device", ca.verifyDevice, "Device for --verify: auto (CUDA when available), cuda, cpu");

  std::string ruleCode, ruleFormat = "text";
  bool ruleAll = false;
  auto* rule = app.add_subcommand("rule", "Explain a rule: `oomlint rule OOM101`, `oomlint rule --all`");
  rule->add_option("code", ruleCode, "Rule code or name (OOM101, accumulated-tensor-with-graph)");
  rule->add_flag("--all", ruleAll, "Every rule");
  rule->add_option("--output-format", ruleFormat, "text (default) or json");

  auto* server = app.add_subcommand("server", "Run the Language Server (LSP) over stdio");
  // Language clients (vscode-languageclient's TransportKind.stdio, others by habit) append
  // `--stdio`; standard input and output are the only transport, so it changes nothing.
  server->add_flag("--stdio")->description("Use standard input and output (the default and only transport)");
  auto* version = app.add_subcommand("version", "The version, the license, and what this build of oomlint can read");

  TraceArgs ta;
  auto* traceCmd = app.add_subcommand("trace", "Run a Python training program and measure its GPU memory per step, "
                                                "or report on a saved trace: `oomlint trace -- python train.py`");
  traceCmd->add_option("--report", ta.report, "Report on this saved trace instead of running a program");
  traceCmd->add_option("--trace-file", ta.traceFile, "Where the run's trace is written (default: oomlint-trace.json; "
                                                     "PyTorch's snapshot goes beside it as .pickle)");
  traceCmd->add_option("--steps", ta.steps, "Stop the program cleanly after this many steps");
  traceCmd->add_option("--device", ta.device, "The CUDA device to record (an index; default 0)");
  traceCmd->add_flag("--cpp-frames", ta.cppFrames, "Record C++ frames too (slower)");
  traceCmd->add_option("--max-events", ta.maxEvents, "How many allocator events the history keeps (default 1000000)");
  traceCmd->add_option("--output-format", ta.format, "text (default), json or svg")->check(CLI::IsMember({"text", "json", "svg"}));
  traceCmd->add_option("-o,--output-file", ta.outputFile, "Write the report to this file");
  traceCmd->add_option("--fail-on-growth", ta.failOnGrowth, "Exit 1 when allocated memory grows faster than this per step (1MiB)");
  traceCmd->add_flag("--no-check", ta.noCheck, "Do not run `check` on the program's files");
  traceCmd->add_option("--root", ta.root, "The folder the trace's relative paths are read from (default: the run's folder)");
  traceCmd->add_option("--config", ta.config, "The oomlint.toml / pyproject.toml the check uses");

  std::string cleanDir;
  auto* clean = app.add_subcommand("clean", "Remove the results cache (.oomlint_cache at the project root, or --cache-dir)");
  clean->add_option("--cache-dir", cleanDir, "The cache folder to remove");

  try {
    // `oomlint check FILES -- FLAGS`: as in clang-tidy, what follows `--` is the C++ compile
    // command for every file (no compile_commands.json is read).
    // `oomlint trace [OPTIONS] -- python train.py`: what follows `--` is the program to run.
    int parsed = argc;
    bool tracing = argc > 1 && std::string_view(argv[1]) == "trace";
    for (int i = 1; i < argc; ++i)
      if (std::string_view(argv[i]) == "--") {
        parsed = i;
        if (tracing) {
          ta.command.assign(argv + i + 1, argv + argc);
        } else {
          ca.useFixedFlags = true;
          ca.fixedFlags.assign(argv + i + 1, argv + argc);
        }
        break;
      }
    app.parse(parsed, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    if (*check) {
      ca.selectGiven = check->count("--select") > 0;
      ca.ignoreGiven = check->count("--ignore") > 0;
      ca.extendSelectGiven = check->count("--extend-select") > 0;
      ca.formatGiven = check->count("--output-format") > 0;
      ca.fixGiven = check->count("--fix") > 0 || check->count("--no-fix") > 0;
      ca.unsafeFixesGiven = check->count("--unsafe-fixes") > 0 || check->count("--no-unsafe-fixes") > 0;
      return runCheck(ca);
    }
    if (*server) return lsp::runServer(0, 1);
    if (*traceCmd) return runTrace(ta);
    if (*version) {
      std::string why;
      bool cppFrontEnd = cpp::available(&why);
      std::string probe = locateProbe("");
      if (probe.empty() && !shippedPythonFile("oomlint/probe.py").empty())
        probe = "no oomlint-probe found; its PyTorch twins (oomlint/probe.py) run where python3 has torch";
      std::cout << "oomlint " << OOMLINT_VERSION << "\n"
                << "License: MIT (the LICENSE file; /usr/share/doc/oomlint/copyright when installed)\n"
                << "Python and notebooks: yes\n"
                << "LibTorch C++: " << (cppFrontEnd ? std::string("yes (liboomlint-cpp.so)") : "no: " + why) << "\n"
                << "Runtime check (--verify): " << (probe.empty() ? std::string("no oomlint-probe found") : probe) << "\n";
      return 0;
    }
    if (*clean) return cleanCache(std::cout, cleanDir.empty() ? defaultCacheDir() : cleanDir);
    if (*rule) {
      if (!ruleAll && ruleCode.empty()) {
        std::cerr << "oomlint: error: give a rule code or --all\n";
        return 2;
      }
      return runRule(ruleCode, ruleAll, ruleFormat);
    }
  } catch (const std::exception& e) {
    std::cerr << "oomlint: internal error: " << e.what() << "\n";
    return 2;
  }
  return 2;
}
