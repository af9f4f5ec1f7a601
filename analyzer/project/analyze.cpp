#include "project/analyze.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "project/scan.h"

namespace oomlint::project {

namespace {

template <typename Fn>
void parallelFor(const std::vector<size_t>& items, unsigned threads, Fn&& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < items.size(); k = next++) fn(items[k]);
  };
  unsigned n = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(items.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

/// Strongly connected components of the import graph, each listed after every component it
/// imports (Tarjan's order), iteratively so deep graphs do not exhaust the stack.
std::vector<std::vector<size_t>> components(const std::vector<std::vector<size_t>>& deps) {
  size_t n = deps.size();
  std::vector<size_t> index(n, SIZE_MAX), low(n, 0), stack;
  std::vector<bool> onStack(n, false);
  std::vector<std::vector<size_t>> out;
  size_t counter = 0;
  for (size_t root = 0; root < n; ++root) {
    if (index[root] != SIZE_MAX) continue;
    std::vector<std::pair<size_t, size_t>> work{{root, 0}};
    index[root] = low[root] = counter++;
    stack.push_back(root);
    onStack[root] = true;
    while (!work.empty()) {
      auto& [v, next] = work.back();
      if (next < deps[v].size()) {
        size_t w = deps[v][next++];
        if (index[w] == SIZE_MAX) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = true;
          work.push_back({w, 0});
        } else if (onStack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        std::vector<size_t> comp;
        for (size_t w = SIZE_MAX; w != v;) {
          w = stack.back();
          stack.pop_back();
          onStack[w] = false;
          comp.push_back(w);
        }
        out.push_back(std::move(comp));
      }
      size_t done = v;
      work.pop_back();
      if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
    }
  }
  return out;
}

/// The modules each file imports, from a quick look at its import statements.
std::vector<std::vector<size_t>> scannedImports(const Project& p, unsigned threads, const std::vector<char>& skip) {
  std::vector<std::vector<size_t>> deps(p.size());
  std::vector<size_t> all;
  for (size_t i = 0; i < p.size(); ++i)
    if (!skip[i]) all.push_back(i);
  parallelFor(all, threads, [&](size_t i) {
    std::string source;
    if (!readSourceFile(p.file(i), source).empty()) return;
    for (const ScannedImport& imp : scanImports(source)) {
      size_t j = p.resolveModule(i, imp.name);
      if (j == SIZE_MAX && !imp.fallback.empty()) j = p.resolveModule(i, imp.fallback);
      // `import torch` inside torch: the package's `__init__` imports nearly everything, and what
      // the file uses through it (`torch.nn.functional.relu`) lives in other modules. Ordering on
      // it would make one cycle of the whole package.
      if (imp.plain && j != SIZE_MAX && p.isPackage(j)) continue;
      if (j != SIZE_MAX && j != i && !skip[j]) deps[i].push_back(j);  // a skipped module is published already
    }
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
  });
  return deps;
}

/// Runs `fn` on every file, a file only once every component it imports is done, so what it
/// imports has been published when it is analysed.
template <typename Fn>
void inImportOrder(const Project& p, unsigned threads, const std::vector<char>& skip, Fn&& fn) {
  std::vector<std::vector<size_t>> deps = scannedImports(p, threads, skip);
  std::vector<std::vector<size_t>> comps = components(deps);
  std::erase_if(comps, [&](const std::vector<size_t>& c) { return c.size() == 1 && skip[c[0]]; });
  size_t n = p.size();
  std::vector<size_t> compOf(n, SIZE_MAX);
  for (size_t c = 0; c < comps.size(); ++c)
    for (size_t f : comps[c]) compOf[f] = c;
  std::vector<size_t> waiting(comps.size(), 0), left(comps.size());
  std::vector<std::vector<size_t>> dependents(comps.size());
  for (size_t c = 0; c < comps.size(); ++c) {
    left[c] = comps[c].size();
    std::vector<size_t> on;
    for (size_t f : comps[c])
      for (size_t d : deps[f])
        if (compOf[d] != c && compOf[d] != SIZE_MAX) on.push_back(compOf[d]);
    std::sort(on.begin(), on.end());
    on.erase(std::unique(on.begin(), on.end()), on.end());
    waiting[c] = on.size();
    for (size_t d : on) dependents[d].push_back(c);
  }
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> ready;
  size_t finished = n;
  for (const auto& c : comps) finished -= c.size();
  for (size_t c = 0; c < comps.size(); ++c)
    if (!waiting[c]) ready.insert(ready.end(), comps[c].begin(), comps[c].end());
  auto worker = [&] {
    for (;;) {
      size_t f;
      {
        std::unique_lock guard(mu);
        cv.wait(guard, [&] { return !ready.empty() || finished == n; });
        if (ready.empty()) return;
        f = ready.front();
        ready.pop_front();
      }
      fn(f);
      std::unique_lock guard(mu);
      ++finished;
      size_t c = compOf[f];
      if (--left[c] == 0)
        for (size_t d : dependents[c])
          if (--waiting[d] == 0) ready.insert(ready.end(), comps[d].begin(), comps[d].end());
      cv.notify_all();
    }
  };
  unsigned t = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, n))));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < t; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

}  // namespace

std::vector<std::string> importClosure(const std::string& root, const std::vector<std::string>& start,
                                       const std::vector<std::string>& candidates) {
  std::vector<std::string> all = start;
  for (const std::string& c : candidates)
    if (std::find(start.begin(), start.end(), c) == start.end()) all.push_back(c);
  Project names(root, all);  // module names only: nothing is read to build it
  std::vector<char> taken(all.size(), 0);
  std::vector<size_t> pending;
  for (size_t i = 0; i < start.size(); ++i) {
    taken[i] = 1;
    pending.push_back(i);
  }
  while (!pending.empty()) {
    size_t i = pending.back();
    pending.pop_back();
    std::string source;
    if (!readSourceFile(all[i], source).empty()) continue;
    for (const ScannedImport& imp : scanImports(source)) {
      size_t j = names.resolveModule(i, imp.name);
      if (j == SIZE_MAX && !imp.fallback.empty()) j = names.resolveModule(i, imp.fallback);
      if (j != SIZE_MAX && !taken[j]) {
        taken[j] = 1;
        pending.push_back(j);
      }
    }
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (taken[i]) out.push_back(all[i]);
  return out;
}

int checkProject(Project& p, const ProjectCheck& check) {
  size_t n = p.size();
  std::vector<std::unique_ptr<FileView>> views(n);
  std::vector<uint64_t> used(n, 0);  // fingerprint of the answers each file's last analysis had
  std::vector<uint64_t> contentHash(n, 0);
  std::vector<FileResult> results(n);
  std::vector<char> analysed(n, 0), cached(n, 0);
  std::vector<ResultCache::Stored> stored(n);
  auto analyse = [&](size_t i) {
    views[i] = p.viewFor(i);
    CheckOptions opts = check.options(i);
    opts.project = views[i].get();
    opts.reportFindings = check.report[i];
    FileExports exports;
    opts.onFacts = [&](const Module& m, const Facts* facts) {
      exports = exportsOf(m, facts, [&](std::string_view dotted) { return p.mayBeProject(i, dotted); });
    };
    FileResult r = checkFile(p.file(i), opts);
    used[i] = views[i]->answered();
    contentHash[i] = r.ioError || !r.skippedReason.empty() ? 0 : ResultCache::hashContent(r.source);
    if (r.notebook) {  // the cache describes the file as read: the notebook's JSON, not its cells' module
      std::string raw;
      contentHash[i] = readSourceFile(p.file(i), raw).empty() ? ResultCache::hashContent(raw) : 0;
    }
    analysed[i] = 1;
    cached[i] = 0;
    if (check.report[i]) {
      r.path = check.displayPath[i];
      results[i] = std::move(r);
    }
    return exports;
  };

  // The project as the last check left it, every module unchanged and every answer settled:
  // the named files' findings are their entries' (nothing is decoded, linked or parsed).
  uint64_t listHash = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) listHash = ResultCache::hashContent(std::to_string(listHash) + p.file(i));
  std::string settledState = std::to_string(listHash) + " settled";
  if (check.cache && check.cache->projectState(p.root()) == settledState) {
    bool unchanged = true;
    for (size_t i = 0; i < n && unchanged; ++i)
      unchanged = check.cache->lookupStored(p.file(i), stored[i]) && !stored[i].project.empty() &&
                  (!check.report[i] || stored[i].selection == check.selectionKey(i));
    if (unchanged) {
      check.fromCache = n;
      check.analysedPerRound.push_back(0);
      for (size_t i = 0; i < n; ++i) {
        if (!check.report[i]) continue;
        FileResult r;
        r.path = check.displayPath[i];
        r.findings = std::move(stored[i].findings);
        if (!r.findings.empty()) {
          readSourceFile(p.file(i), r.source);
          if (isNotebookPath(p.file(i))) {
            auto nb = std::make_shared<Notebook>(readNotebook(r.source));
            r.source = nb->module;
            r.notebook = std::move(nb);
          }
        }
        check.onResult(i, std::move(r));
      }
      return 1;
    }
  }
  // Unchanged modules: their summaries and questions from the cache, without parsing them.
  if (check.cache) {
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = i;
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
    p.link();  // what the cached modules say, before the others are analysed
  }
  // The first round in import order: most files see the final summaries of what they import.
  check.analysedPerRound.push_back(n - check.fromCache);
  inImportOrder(p, check.threads, cached, [&](size_t i) { p.publish(i, analyse(i)); });
  if (check.fromCache < n) p.link();  // (everything from the cache: linked already)
  int round = 1;
  bool settled = false;  // every module's answers are those its analysis had
  for (; round < 5; ++round) {
    // Files whose questions now get other answers (callers in other modules, cycles of imports,
    // what the quick look at imports missed) are analysed again with them; so are cached files
    // whose findings are wanted and not stored for these settings.
    std::vector<size_t> todo;
    for (size_t i = 0; i < n; ++i) {
      bool changed = views[i] && views[i]->fingerprint() != used[i];
      bool findingsMissing = cached[i] && check.report[i] && stored[i].selection != check.selectionKey(i);
      if (!changed && !findingsMissing) continue;
      todo.push_back(i);
      if (changed && check.explain) check.explain(i, round, views[i]->changedAnswers());
    }
    if (todo.empty()) settled = true;
    if (todo.empty() || round == 4) break;
    check.analysedPerRound.push_back(todo.size());
    std::vector<FileExports> fresh(n);
    parallelFor(todo, check.threads, [&](size_t i) { fresh[i] = analyse(i); });
    for (size_t i : todo) p.setExports(i, std::move(fresh[i]));
    p.link();
  }
  if (check.cache) check.cache->setProjectState(p.root(), settled ? settledState : std::string("unsettled"));
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
    if (cached[i]) {  // unchanged, and so is everything it relied on
      FileResult r;
      r.path = check.displayPath[i];
      r.findings = std::move(stored[i].findings);
      if (!r.findings.empty()) {
        readSourceFile(p.file(i), r.source);
        if (isNotebookPath(p.file(i))) {  // findings are positioned in the module its cells make
          auto nb = std::make_shared<Notebook>(readNotebook(r.source));
          r.source = nb->module;
          r.notebook = std::move(nb);
        }
      }
      results[i] = std::move(r);
    }
    check.onResult(i, std::move(results[i]));
  }
  return round;
}

}  // namespace oomlint::project
