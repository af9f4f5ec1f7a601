// Where a notebook edit's time goes, run by hand: reads a notebook, then toggles one line of its
// middle cell (`+= loss.item()` <-> `+= loss`) as the LSP server does on a one-cell edit, and
// times each phase separately: the cells joined, the model (one cell re-parsed, fragments
// spliced), the facts and rules. Also times `check`'s path once per run: the whole notebook read,
// parsed cell by cell and analysed.
// Usage: notebook_phases NOTEBOOK.ipynb [EDITS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/frontends.h"
#include "notebook/notebook.h"
#include "util/changed_range.h"
#include "python/incremental.h"

using namespace oomlint;

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: notebook_phases NOTEBOOK.ipynb [EDITS]\n");
    return 2;
  }
  int edits = argc > 2 ? std::atoi(argv[2]) : 200;
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Notebook nb = readNotebook(ss.str());
  if (!nb.error.empty() || !nb.skipped.empty()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], (nb.error.empty() ? nb.skipped : nb.error).c_str());
    return 2;
  }
  std::vector<std::string> texts;
  for (const NotebookCell& c : nb.cells) texts.push_back(cellText(c));
  size_t target = texts.size() / 2;
  std::string leaky = texts[target], fixed = texts[target];
  size_t at = fixed.find("+= loss.item()");
  if (at == std::string::npos) {
    std::fprintf(stderr, "the middle cell has no `+= loss.item()` to toggle\n");
    return 2;
  }
  leaky.erase(at + 7, 7);

  CheckOptions opts;
  python::IncrementalDocument doc;
  Notebook cells = notebookFromCells(texts);
  doc.seed(cellStartsOf(cells), static_cast<uint32_t>(cells.module.size()));
  std::unique_ptr<Module> m = doc.model("long.ipynb", cells.module, 1);
  std::vector<double> join, model, analyse, total;
  size_t findings = 0;
  for (int e = 0; e < edits; ++e) {
    texts[target] = e % 2 ? fixed : leaky;
    auto t0 = std::chrono::steady_clock::now();
    Notebook next = notebookFromCells(texts, &cells);  // as the server does
    const std::string &before = cells.module, &after = next.module;
    const auto [p, s] = changedRange(before, after);
    doc.edited(static_cast<uint32_t>(p), static_cast<uint32_t>(before.size() - s), static_cast<uint32_t>(after.size() - p - s));
    cells = std::move(next);
    join.push_back(msSince(t0));
    auto t1 = std::chrono::steady_clock::now();
    m = doc.model("long.ipynb", cells.module, 1, std::move(m));  // as the server does
    model.push_back(msSince(t1));
    auto t2 = std::chrono::steady_clock::now();
    findings = analyzeModule(*m, opts).size();
    analyse.push_back(msSince(t2));
    total.push_back(msSince(t0));
  }
  // check's path, as `oomlint check --no-cache` runs it on the notebook's JSON.
  std::vector<double> read, parse, facts;
  for (int r = 0; r < std::max(5, edits / 10); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto whole = std::make_shared<Notebook>(readNotebook(ss.str()));
    read.push_back(msSince(t0));
    auto t1 = std::chrono::steady_clock::now();
    ParsedDocument parsed = parseCells("long.ipynb", whole->module, cellStartsOf(*whole));
    parse.push_back(msSince(t1));
    auto t2 = std::chrono::steady_clock::now();
    analyzeModule(*parsed.module, opts);
    facts.push_back(msSince(t2));
    if (getenv("PHASES_ALL")) std::printf("run %d: read %.3f parse %.3f analyse %.3f\n", r, read.back(), parse.back(), facts.back());
  }
  std::printf("%zu cells, %zu exprs, %zu stmts, %zu findings\n", texts.size(), m->exprs.size(), m->stmts.size(), findings);
  std::printf("edit medians over %d: join %.3f ms, model %.3f ms, analyse %.3f ms, total %.3f ms\n", edits, median(join),
              median(model), median(analyse), median(total));
  std::printf("check medians: read %.3f ms, parse %.3f ms, analyse %.3f ms\n", median(read), median(parse), median(facts));
  return 0;
}
