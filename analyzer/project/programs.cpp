// Each module's program facts (ProgramFacts): what the modules of the programs holding it do.
#include <algorithm>

#include "project/project.h"

namespace oomlint::project {

namespace {

/// Two distinct modules at most, of those that import torch in a program: enough to tell whether
/// one other than a given module is among them.
struct TwoModules {
  size_t a = SIZE_MAX, b = SIZE_MAX;
  bool add(size_t x) {
    if (x == SIZE_MAX || x == a || x == b) return false;
    if (a == SIZE_MAX) a = x;
    else if (b == SIZE_MAX) b = x;
    else return false;
    return true;
  }
  bool holdsOtherThan(size_t i) const { return (a != SIZE_MAX && a != i) || (b != SIZE_MAX && b != i); }
};

/// Ors each module's facts into those of the modules `graph` leads from, to a fixed point.
std::vector<ProgramFacts> propagate(const std::vector<std::vector<size_t>>& graph, std::vector<ProgramFacts> out) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < out.size(); ++i)
      for (size_t j : graph[i]) {
        ProgramFacts& a = out[i];
        const ProgramFacts& b = out[j];
        if ((b.bindsDevice && !a.bindsDevice) || (b.usesGradScaler && !a.usesGradScaler) || (b.mentionsCuda && !a.mentionsCuda)) {
          a.bindsDevice |= b.bindsDevice;
          a.usesGradScaler |= b.usesGradScaler;
          a.mentionsCuda |= b.mentionsCuda;
          changed = true;
        }
      }
  }
  return out;
}

}  // namespace

ProgramFacts Project::ownProgramFacts(size_t i) const {
  const FileExports& e = exports_[i];
  return {e.bindsDevice, e.usesGradScaler, e.mentionsCuda, false};
}

void Project::computePrograms(const std::vector<std::vector<size_t>>& edges, std::vector<ProgramFacts> own, const std::vector<char>& importsTorch) {
  // A program is a module that imports this one (or this one) and everything it imports: main.py's
  // set_device binds the device for trainer.py's loaders; another script beside it does not.
  size_t n = edges.size();
  std::vector<std::vector<size_t>> reverse(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j : edges[i]) reverse[j].push_back(i);
  // What each module runs (itself and what it imports), then what every program holding it runs:
  // the union over the modules that import it, directly or not, of what they run.
  programs_ = propagate(reverse, propagate(edges, std::move(own)));
  // A module of a program that another module imports torch in is PyTorch code without an import
  // of its own (engine.cpp). Its own import does not count: in the editor, the exports an open
  // document had before its `import torch` line was deleted would still say so.
  std::vector<TwoModules> torch(n);
  for (size_t i = 0; i < n; ++i)
    if (importsTorch[i]) torch[i].add(i);
  auto spread = [&](const std::vector<std::vector<size_t>>& graph) {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < n; ++i)
        for (size_t j : graph[i]) {
          TwoModules from = torch[j];
          changed |= torch[i].add(from.a);
          changed |= torch[i].add(from.b);
        }
    }
  };
  spread(edges);
  spread(reverse);
  for (size_t i = 0; i < n; ++i) programs_[i].usesTorch = torch[i].holdsOtherThan(i);
}

void Project::guessPrograms(const std::vector<ProgramGuess>& guesses) {
  size_t n = exports_.size();
  std::vector<std::vector<size_t>> edges(n);
  std::vector<ProgramFacts> own(n);
  std::vector<char> torch(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < guesses.size() && guesses[i].scanned) {
      const ProgramGuess& g = guesses[i];
      own[i] = g.own;
      torch[i] = g.importsTorch;
      for (size_t j : g.imports)
        if (j < n && j != i) edges[i].push_back(j);
      continue;
    }
    // Analysed already (its exports came from the cache): what they say.
    own[i] = ownProgramFacts(i);
    torch[i] = exports_[i].importsTorch;
    for (const auto& [local, dotted] : exports_[i].imports) {
      size_t j = importedModule(i, dotted);
      if (j != SIZE_MAX && j != i) edges[i].push_back(j);
    }
  }
  computePrograms(edges, std::move(own), torch);
}

}  // namespace oomlint::project
