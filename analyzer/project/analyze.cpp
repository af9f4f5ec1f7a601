#include "project/analyze.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "project/order.h"

namespace oomlint::project {

namespace {

/// A file's result from its cache entry: the output shows source lines, so a file with findings is
/// read; a notebook's findings are positioned in the module its cells make.
FileResult cachedResult(const std::string& file, const std::string& displayPath, std::vector<Finding> findings) {
  FileResult r;
  r.path = displayPath;
  r.findings = std::move(findings);
  if (r.findings.empty()) return r;
  readSourceFile(file, r.source);
  if (isNotebookPath(file)) {
    auto nb = std::make_shared<Notebook>(readNotebook(r.source));
    r.source = nb->module;
    r.notebook = std::move(nb);
  }
  return r;
}

}  // namespace

int checkProject(Project& p, const ProjectCheck& check) {
  size_t n = p.size();
  std::vector<std::unique_ptr<FileView>> views(n);
  std::vector<uint64_t> used(n, 0);  // fingerprint of the answers each file's last analysis had
  std::vector<uint64_t> contentHash(n, 0);
  std::vector<FileResult> results(n);
  std::vector<char> analysed(n, 0), cached(n, 0);
  std::vector<ResultCache::Stored> stored(n);
  // Parsed modules kept for the next round: those likely to be analysed again (an answer given
  // before the module it is about was analysed; after the first round, every module analysed
  // again, as changes cascade). The others are parsed once and let go at once.
  std::vector<std::unique_ptr<Module>> parsed(n);
  std::vector<double> cost(n, 0);  // seconds each file's last analysis took
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  bool firstRound = true;
  auto analyse = [&](size_t i) {
    views[i] = p.viewFor(i);
    CheckOptions opts = check.options(i);
    opts.project = views[i].get();
    opts.reportFindings = check.report[i];
    FileExports exports;
    opts.onFacts = [&](const Module& m, const Facts* facts) {
      exports = exportsOf(m, facts, [&](std::string_view dotted) { return p.mayBeProject(i, dotted); });
    };
    auto started = std::chrono::steady_clock::now();
    FileResult r = parsed[i] ? recheckModule(p.file(i), *parsed[i], opts) : checkFileKeeping(p.file(i), opts, parsed[i]);
    cost[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (firstRound && !views[i]->askedTooEarly()) parsed[i].reset();
    used[i] = views[i]->answered();
    contentHash[i] = !check.cache || r.ioError || !r.skippedReason.empty() ? 0 : ResultCache::hashContent(r.source);
    if (check.cache && r.notebook) {  // the cache describes the file as read: the notebook's JSON, not its cells' module
      std::string raw;
      contentHash[i] = readSourceFile(p.file(i), raw).empty() ? ResultCache::hashContent(raw) : 0;
    }
    analysed[i] = 1;
    cached[i] = 0;
    if (check.report[i]) {
      r.path = check.displayPath[i];
      // The output shows the lines of findings only: a file without any needs no text kept.
      if (r.findings.empty() && r.skippedReason.empty()) {
        r.source = std::string();
        r.notebook.reset();
      }
      results[i] = std::move(r);
    }
    return exports;
  };

  // The project as the last check left it, every module unchanged and every answer settled:
  // the named files' findings are their entries' (nothing is decoded, linked or parsed).
  uint64_t listHash = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) listHash = ResultCache::hashContent(std::to_string(listHash) + p.file(i));
  // Keyed by the module list too: a full check and a check of a few named files read different
  // modules, and each keeps its own state.
  std::string stateKey = p.root() + "\n" + std::to_string(listHash);
  if (check.cache && check.cache->projectState(stateKey) == "settled") {
    bool unchanged = true;
    for (size_t i = 0; i < n && unchanged; ++i)
      unchanged = check.cache->lookupStored(p.file(i), stored[i], /*withSummaries=*/false) && stored[i].summarised &&
                  (!check.report[i] || stored[i].selection == check.selectionKey(i));
    if (unchanged) {
      check.fromCache = n;
      check.analysedPerRound.push_back(0);
      for (size_t i = 0; i < n; ++i) {
        if (!check.report[i]) continue;
        check.onResult(i, cachedResult(p.file(i), check.displayPath[i], std::move(stored[i].findings)));
      }
      return 1;
    }
  }
  // Unchanged modules: their summaries and questions from the cache, without parsing them.
  if (check.cache) {
    std::vector<CachedModule> modules(n);
    parallelFor(all, check.threads, [&](size_t i) {
      if (check.cache->lookupStored(p.file(i), stored[i]) && !stored[i].project.empty() && decode(stored[i].project, modules[i]))
        cached[i] = 1;
    });
    for (size_t i = 0; i < n; ++i) {
      if (!cached[i]) continue;
      p.setExports(i, std::move(modules[i].exports));
      views[i] = p.viewFor(i);
      views[i]->restore(modules[i].questions);
      used[i] = modules[i].answered;
      ++check.fromCache;
    }
    p.link(check.threads);  // what the cached modules say, before the others are analysed
  }
  // The first round in import order: most files see the final summaries of what they import.
  check.analysedPerRound.push_back(n - check.fromCache);
  std::vector<std::vector<std::string>> definitions;
  p.useDefinitions(&definitions);
  inImportOrder(p, check.threads, cached, [&](size_t i) { p.publish(i, analyse(i)); }, &definitions,
                [&](const std::vector<ProgramGuess>& guesses) { p.guessPrograms(guesses); });
  p.useDefinitions(nullptr);
  firstRound = false;
  if (check.fromCache < n) p.link(check.threads);  // (everything from the cache: linked already)
  int round = 1;
  bool settled = false;  // every module's answers are those its analysis had
  constexpr int kLastRound = 4;
  // Whether the answers settled after the last round matters only to the cache, to later use and
  // to --verbose.
  bool askAfterLast = check.cache || check.usedAfter || check.explain;
  for (; round <= kLastRound; ++round) {
    if (round == kLastRound && !askAfterLast) break;
    // Files whose questions now get other answers (callers in other modules, cycles of imports,
    // what the quick look at imports missed) are analysed again with them; so are cached files
    // whose findings are wanted and not stored for these settings.
    std::vector<char> changedAnswers(n, 0);
    parallelFor(all, check.threads, [&](size_t i) { changedAnswers[i] = views[i] && views[i]->fingerprint() != used[i]; });
    std::vector<size_t> todo;
    for (size_t i = 0; i < n; ++i) {
      bool changed = changedAnswers[i];
      bool findingsMissing = cached[i] && check.report[i] && stored[i].selection != check.selectionKey(i);
      if (!changed && !findingsMissing) continue;
      todo.push_back(i);
      if (changed && check.explain) check.explain(i, round, views[i]->changedAnswers());
    }
    if (todo.empty()) settled = true;
    if (todo.empty() || round == kLastRound) break;
    check.analysedPerRound.push_back(todo.size());
    // The longest analyses first, so that no thread is left with a big module after the rest are done.
    std::stable_sort(todo.begin(), todo.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
    std::vector<FileExports> fresh(n);
    parallelFor(todo, check.threads, [&](size_t i) { fresh[i] = analyse(i); });
    for (size_t i : todo) p.setExports(i, std::move(fresh[i]));
    if (round + 1 < kLastRound || askAfterLast) p.link(check.threads);
  }
  if (check.cache) check.cache->setProjectState(stateKey, settled ? "settled" : "unsettled");
  for (size_t i = 0; i < n; ++i) {
    if (check.cache && analysed[i] && contentHash[i]) {
      ResultCache::Stored s;
      if (check.report[i]) {
        s.selection = check.selectionKey(i);
        s.findings = results[i].findings;
      }
      s.project = encode(CachedModule{p.exports(i), views[i]->questions(), used[i]});
      check.cache->storeStored(p.file(i), contentHash[i], std::move(s));
    }
    if (!check.report[i]) continue;
    if (cached[i])  // unchanged, and so is everything it relied on
      results[i] = cachedResult(p.file(i), check.displayPath[i], std::move(stored[i].findings));
    check.onResult(i, std::move(results[i]));
  }
  return round;
}

}  // namespace oomlint::project
