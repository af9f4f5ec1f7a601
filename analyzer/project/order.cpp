// The order modules are analysed in, and what a file outside any project reads.
#include "project/order.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "cache/cache.h"
#include "engine/engine.h"
#include "notebook/notebook.h"
#include "project/scan.h"

namespace oomlint::project {

void parallelFor(const std::vector<size_t>& items, unsigned threads, const std::function<void(size_t)>& fn) {
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

namespace {
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

/// The modules each file imports, from a quick look at its import statements; `bytes` gets each
/// file's size (what its analysis will roughly cost).
std::vector<std::vector<size_t>> scannedImports(const Project& p, unsigned threads, const std::vector<char>& skip,
                                                std::vector<std::vector<std::string>>* definitions, std::vector<ProgramGuess>* guesses,
                                                std::vector<size_t>& bytes) {
  std::vector<std::vector<size_t>> deps(p.size());
  bytes.assign(p.size(), 0);
  if (definitions) definitions->assign(p.size(), {});
  if (guesses) guesses->assign(p.size(), {});
  std::vector<size_t> all;
  for (size_t i = 0; i < p.size(); ++i)
    if (!skip[i]) all.push_back(i);
  parallelFor(all, threads, [&](size_t i) {
    std::string source;
    if (!readSourceFile(p.file(i), source).empty()) return;
    bytes[i] = source.size();
    if (definitions) (*definitions)[i] = scanDefinitions(source);
    ProgramGuess* guess = guesses ? &(*guesses)[i] : nullptr;
    if (guess) {
      guess->scanned = true;
      guess->own = guessOwnFacts(source);
    }
    for (const ScannedImport& imp : scanImports(source)) {
      if (guess && (imp.name == "torch" || imp.name.rfind("torch.", 0) == 0)) guess->importsTorch = true;
      size_t j = p.resolveModule(i, imp.name);
      if (j == SIZE_MAX && !imp.fallback.empty()) j = p.resolveModule(i, imp.fallback);
      if (guess && j != SIZE_MAX && j != i) guess->imports.push_back(j);  // a program holds nested and package imports too
      if (imp.nested) continue;
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

}  // namespace

/// Runs `fn` on every file once every module it imports that comes earlier in import order is
/// done. The order lists each component after those it imports, and a cycle's modules in the
/// order Tarjan's walk closes them (the most deeply imported first): an edge back into the cycle
/// is the only wait left out, so most modules of a cycle see what they import too.
void inImportOrder(const Project& p, unsigned threads, const std::vector<char>& skip, const std::function<void(size_t)>& fn,
                   std::vector<std::vector<std::string>>* definitions,
                   const std::function<void(const std::vector<ProgramGuess>&)>& beforeRun) {
  std::vector<ProgramGuess> guesses;
  std::vector<size_t> bytes;
  std::vector<std::vector<size_t>> deps = scannedImports(p, threads, skip, definitions, beforeRun ? &guesses : nullptr, bytes);
  if (beforeRun) beforeRun(guesses);
  size_t n = p.size();
  std::vector<size_t> order(n, SIZE_MAX);
  size_t next = 0, todo = 0;
  for (const std::vector<size_t>& comp : components(deps))
    for (size_t f : comp)
      if (!skip[f]) {
        order[f] = next++;
        ++todo;
      }
  std::vector<size_t> waiting(n, 0);
  std::vector<std::vector<size_t>> dependents(n);
  for (size_t f = 0; f < n; ++f) {
    if (order[f] == SIZE_MAX) continue;
    for (size_t d : deps[f])
      if (order[d] != SIZE_MAX && order[d] < order[f]) {
        ++waiting[f];
        dependents[d].push_back(f);
      }
  }
  std::vector<size_t> byOrder(next);
  for (size_t f = 0; f < n; ++f)
    if (order[f] != SIZE_MAX) byOrder[order[f]] = f;
  // Of the modules ready, the one with the most work still waiting on it goes first: its own size
  // and the longest chain of modules that wait on it. A big module that nothing waits for then
  // starts early, not last, with one thread left to finish it while the others idle.
  std::vector<size_t> critical(n, 0);
  for (auto it = byOrder.rbegin(); it != byOrder.rend(); ++it) {
    size_t longest = 0;
    for (size_t d : dependents[*it]) longest = std::max(longest, critical[d]);
    critical[*it] = bytes[*it] + longest;
  }
  auto later = [&](size_t a, size_t b) { return critical[a] != critical[b] ? critical[a] < critical[b] : order[a] > order[b]; };
  std::mutex mu;
  std::condition_variable cv;
  std::vector<size_t> ready;  // a heap: the next module to run on top
  for (size_t f : byOrder)
    if (!waiting[f]) ready.push_back(f);
  std::make_heap(ready.begin(), ready.end(), later);
  size_t finished = 0;
  auto worker = [&] {
    for (;;) {
      size_t f;
      {
        std::unique_lock guard(mu);
        cv.wait(guard, [&] { return !ready.empty() || finished == todo; });
        if (ready.empty()) return;
        std::pop_heap(ready.begin(), ready.end(), later);
        f = ready.back();
        ready.pop_back();
      }
      fn(f);
      std::unique_lock guard(mu);
      ++finished;
      for (size_t d : dependents[f])
        if (--waiting[d] == 0) {
          ready.push_back(d);
          std::push_heap(ready.begin(), ready.end(), later);
        }
      cv.notify_all();
    }
  };
  unsigned t = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, todo))));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < t; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

namespace {

/// What a module's import statements may load: each name and the packages above it.
std::vector<size_t> importedBy(const Project& p, size_t i, const std::vector<ScannedImport>& imports) {
  std::vector<size_t> out;
  auto add = [&](std::string_view dotted) {
    size_t j = p.resolveModule(i, dotted);
    if (j != SIZE_MAX && j != i) out.push_back(j);
  };
  for (const ScannedImport& imp : imports) {
    std::string_view name = imp.name;
    for (size_t dot = name.find('.', name.find_first_not_of('.')); dot != std::string_view::npos; dot = name.find('.', dot + 1))
      add(name.substr(0, dot));
    add(name);
    if (!imp.fallback.empty()) add(imp.fallback);
  }
  return out;
}

/// The imports of the file at `path` (a notebook: its cells' code), from `cache` while the file
/// is unchanged, else read and scanned (and kept there); none when it cannot be read.
std::vector<ScannedImport> importsOf(const std::string& path, ResultCache* cache) {
  std::vector<ScannedImport> imports;
  std::string kept;
  if (cache && cache->lookupScan(path, kept) && decodeImports(kept, imports)) return imports;
  std::string source;
  if (!readSourceFile(path, source).empty()) return {};
  imports = scanImports(isNotebookPath(path) ? readNotebook(source).module : source);
  if (cache && encodeImports(imports, kept)) cache->storeScan(path, source, std::move(kept));
  return imports;
}

/// importedBy for file `i` as it is on disk (a notebook: its cells' code); none when unreadable.
std::vector<size_t> importedByFile(const Project& p, size_t i) { return importedBy(p, i, importsOf(p.file(i), nullptr)); }

size_t findRoot(std::vector<size_t>& parent, size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

std::vector<std::vector<size_t>> independentParts(const Project& p, unsigned threads) {
  size_t n = p.size();
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  if (n < 2 || p.indexOf(p.root() + "/__init__.py") != SIZE_MAX) return {all};
  std::vector<std::vector<size_t>> imports(n);
  parallelFor(all, threads, [&](size_t i) { imports[i] = importedByFile(p, i); });
  std::vector<size_t> parent(all);
  auto join = [&](size_t a, size_t b) {
    a = findRoot(parent, a);
    b = findRoot(parent, b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  std::unordered_map<std::string, size_t> byTopFolder;
  for (size_t i = 0; i < n; ++i) {
    const std::string& f = p.file(i);
    std::string_view rel = f.size() > p.root().size() + 1 ? std::string_view(f).substr(p.root().size() + 1) : std::string_view(f);
    size_t slash = rel.find('/');
    if (slash != std::string_view::npos) join(i, byTopFolder.try_emplace(std::string(rel.substr(0, slash)), i).first->second);
    for (size_t j : imports[i]) join(i, j);
  }
  std::vector<std::vector<size_t>> parts;
  std::vector<size_t> partOf(n, SIZE_MAX);
  for (size_t i = 0; i < n; ++i) {
    size_t r = findRoot(parent, i);
    if (partOf[r] == SIZE_MAX) {
      partOf[r] = parts.size();
      parts.emplace_back();
    }
    parts[partOf[r]].push_back(i);
  }
  return parts;
}

namespace {

/// The name an import spells to load the module at `path`: its file's stem, or its folder's
/// for a package's `__init__`.
std::string_view stemOf(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  base = base.substr(0, base.rfind('.'));
  if (base != "__init__" || slash == std::string_view::npos || slash == 0) return base;
  std::string_view dir = path.substr(0, slash);
  return dir.substr(dir.rfind('/') + 1);
}

/// An import names `stem` as one of its dotted parts: every module importedBy resolves it to is
/// named so (a relative import aside).
bool spells(const std::vector<ScannedImport>& imports, std::string_view stem) {
  auto partOf = [&](std::string_view dotted) {
    for (size_t start = 0; start <= dotted.size();) {
      size_t dot = dotted.find('.', start);
      if (dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start) == stem) return true;
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    return false;
  };
  return std::any_of(imports.begin(), imports.end(),
                     [&](const ScannedImport& imp) { return partOf(imp.name) || partOf(imp.fallback); });
}

/// A relative import (`from . import x`, `from ..pkg import y`): it may load a package by no name
/// it spells.
bool importsRelatively(const std::vector<ScannedImport>& imports) {
  return std::any_of(imports.begin(), imports.end(), [](const ScannedImport& imp) { return imp.name.starts_with('.'); });
}

}  // namespace

std::vector<std::string> programsHolding(const std::string& root, const std::vector<std::string>& start,
                                         const std::vector<std::string>& candidates, unsigned threads, ResultCache* cache) {
  std::vector<std::string> all = start;
  std::unordered_set<std::string> seen(start.begin(), start.end());
  for (const std::string& c : candidates)
    if (seen.insert(c).second) all.push_back(c);
  if (all.size() == start.size()) return all;  // nothing beside them: no file to read for imports
  Project names(root, all);  // module names only: nothing is read to build it
  size_t n = all.size();
  std::vector<size_t> every(n);
  for (size_t i = 0; i < n; ++i) every[i] = i;
  std::vector<std::vector<ScannedImport>> scans(n);
  parallelFor(every, threads, [&](size_t i) { scans[i] = importsOf(all[i], cache); });
  std::vector<std::vector<size_t>> imports(n);
  std::vector<char> scanned(n, 0), taken(n, 0);
  auto scan = [&](const std::vector<size_t>& which) {
    parallelFor(which, threads, [&](size_t i) { imports[i] = importedBy(names, i, scans[i]); });
    for (size_t i : which) scanned[i] = 1;
  };
  // Every program that holds a start file: the modules importing one, directly or not. Only a
  // module with an import that spells a taken module's stem, or a relative one, can import it:
  // the others' imports are never resolved.
  std::vector<std::string_view> stems;
  auto take = [&](size_t i) {
    taken[i] = 1;
    std::string_view stem = stemOf(all[i]);
    if (std::find(stems.begin(), stems.end(), stem) == stems.end()) stems.push_back(stem);
  };
  for (size_t i = 0; i < start.size(); ++i) take(i);
  std::vector<char> relative(n);
  for (size_t i = 0; i < n; ++i) relative[i] = importsRelatively(scans[i]);
  for (bool grew = true; grew;) {
    grew = false;
    std::vector<size_t> maybe;
    for (size_t i = 0; i < n; ++i) {
      if (taken[i]) continue;
      bool mayImport = relative[i];
      for (size_t s = 0; s < stems.size() && !mayImport; ++s) mayImport = spells(scans[i], stems[s]);
      if (mayImport) maybe.push_back(i);
    }
    std::vector<size_t> fresh;
    for (size_t i : maybe)
      if (!scanned[i]) fresh.push_back(i);
    scan(fresh);
    for (size_t i : maybe)
      for (size_t j : imports[i])
        if (taken[j]) {
          take(i);
          grew = true;
          break;
        }
  }
  // ... and everything those import.
  std::vector<size_t> pending;
  for (size_t i = 0; i < n; ++i)
    if (taken[i]) pending.push_back(i);
  while (!pending.empty()) {
    std::vector<size_t> fresh;
    for (size_t i : pending)
      if (!scanned[i]) fresh.push_back(i);
    scan(fresh);
    std::vector<size_t> next;
    for (size_t i : pending)
      for (size_t j : imports[i])
        if (!taken[j]) {
          taken[j] = 1;
          next.push_back(j);
        }
    pending = std::move(next);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i)
    if (taken[i]) out.push_back(all[i]);
  return out;
}

}  // namespace oomlint::project
