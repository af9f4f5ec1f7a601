// `--diff`: unified diffs of what the fixes change, hunk by hunk, from Myers' shortest edit
// script (so two fixes far apart give two small hunks), deletions before insertions in each
// change as diff(1) and git print them.
#include <algorithm>
#include <cstdint>

#include "fix/fix.h"
#include "notebook/notebook.h"
#include "util/lines.h"

namespace oomlint {
namespace {

struct Op {
  char kind;    // ' ', '-', '+'
  size_t a, b;  // line index in before / after: the line itself, or where the change stands
};

/// The edit script turning A[0..n) into B[0..m) (both past a common prefix `pre`), or empty when
/// it needs more than `maxEdits` edits (a rewrite, not a fix).
std::vector<Op> myers(const std::vector<std::string>& A, const std::vector<std::string>& B, size_t pre, size_t n, size_t m,
                      size_t maxEdits) {
  auto same = [&](size_t x, size_t y) { return A[pre + x] == B[pre + y]; };
  long N = static_cast<long>(n), M = static_cast<long>(m);
  long offset = static_cast<long>(std::min(n + m, maxEdits)) + 1;
  std::vector<long> V(static_cast<size_t>(2 * offset + 1), 0);
  std::vector<std::vector<long>> trace;  // V over [-d, d] after each step d
  long D = -1;
  for (long d = 0; d <= N + M && d <= static_cast<long>(maxEdits); ++d) {
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && V[static_cast<size_t>(offset + k - 1)] < V[static_cast<size_t>(offset + k + 1)]))
                   ? V[static_cast<size_t>(offset + k + 1)]
                   : V[static_cast<size_t>(offset + k - 1)] + 1;
      long y = x - k;
      while (x < N && y < M && same(static_cast<size_t>(x), static_cast<size_t>(y))) ++x, ++y;
      V[static_cast<size_t>(offset + k)] = x;
      if (x >= N && y >= M) D = d;
    }
    trace.emplace_back(V.begin() + (offset - d), V.begin() + (offset + d + 1));
    if (D >= 0) break;
  }
  if (D < 0) return {};
  std::vector<Op> rev;
  long x = N, y = M;
  for (long d = D; d > 0; --d) {
    const std::vector<long>& prev = trace[static_cast<size_t>(d - 1)];  // index k + (d - 1)
    auto at = [&](long k) { return prev[static_cast<size_t>(k + d - 1)]; };
    long k = x - y;
    long prevK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    long prevX = at(prevK), prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      --x, --y;
      rev.push_back({' ', pre + static_cast<size_t>(x), pre + static_cast<size_t>(y)});
    }
    if (x == prevX) rev.push_back({'+', pre + static_cast<size_t>(x), pre + static_cast<size_t>(prevY)});
    else rev.push_back({'-', pre + static_cast<size_t>(prevX), pre + static_cast<size_t>(y)});
    x = prevX, y = prevY;
  }
  while (x > 0 && y > 0) {
    --x, --y;
    rev.push_back({' ', pre + static_cast<size_t>(x), pre + static_cast<size_t>(y)});
  }
  return {rev.rbegin(), rev.rend()};
}

/// In each run of changes, the deletions first, then the insertions (the same change, read the
/// way diff(1) prints it).
void deletionsFirst(std::vector<Op>& ops) {
  for (size_t i = 0; i < ops.size();) {
    if (ops[i].kind == ' ') {
      ++i;
      continue;
    }
    size_t j = i;
    size_t dels = 0, ins = 0;
    for (; j < ops.size() && ops[j].kind != ' '; ++j) (ops[j].kind == '-' ? dels : ins)++;
    size_t a0 = ops[i].a, b0 = ops[i].b;
    for (size_t t = 0; t < dels; ++t) ops[i + t] = {'-', a0 + t, b0};
    for (size_t t = 0; t < ins; ++t) ops[i + dels + t] = {'+', a0 + dels, b0 + t};
    i = j;
  }
}

std::vector<Op> diffLines(const std::vector<std::string>& A, const std::vector<std::string>& B) {
  size_t pre = 0;
  while (pre < A.size() && pre < B.size() && A[pre] == B[pre]) ++pre;
  size_t suf = 0;
  while (suf < A.size() - pre && suf < B.size() - pre && A[A.size() - 1 - suf] == B[B.size() - 1 - suf]) ++suf;
  size_t n = A.size() - pre - suf, m = B.size() - pre - suf;
  std::vector<Op> ops;
  for (size_t i = 0; i < pre; ++i) ops.push_back({' ', i, i});
  // Fixes change a few lines; past a few thousand edits the file was rewritten: one change.
  std::vector<Op> middle = myers(A, B, pre, n, m, 4000);
  if (middle.empty() && n + m > 0) {
    for (size_t i = 0; i < n; ++i) middle.push_back({'-', pre + i, pre});
    for (size_t j = 0; j < m; ++j) middle.push_back({'+', pre + n, pre + j});
  }
  ops.insert(ops.end(), middle.begin(), middle.end());
  for (size_t k = 0; k < suf; ++k) ops.push_back({' ', A.size() - suf + k, B.size() - suf + k});
  deletionsFirst(ops);
  return ops;
}

}  // namespace

std::string unifiedDiff(const std::string& path, const std::string& before, const std::string& after) {
  if (before == after) return {};
  auto A = splitKeepingBreaks(before), B = splitKeepingBreaks(after);
  auto ops = diffLines(A, B);
  std::string out = "--- " + path + "\n+++ " + path + "\n";
  const size_t ctx = 3;
  size_t k = 0;
  while (k < ops.size()) {
    while (k < ops.size() && ops[k].kind == ' ') ++k;
    if (k == ops.size()) break;
    size_t start = k >= ctx ? k - ctx : 0;
    // Extend the hunk while changes are within 2*ctx lines of each other.
    size_t last = k;
    for (size_t j = k; j < ops.size(); ++j) {
      if (ops[j].kind != ' ') last = j;
      else if (j - last > 2 * ctx) break;
    }
    size_t end = std::min(ops.size() - 1, last + ctx);
    size_t aStart = ops[start].a, bStart = ops[start].b, aCount = 0, bCount = 0;
    for (size_t j = start; j <= end; ++j) {
      if (ops[j].kind != '+') ++aCount;
      if (ops[j].kind != '-') ++bCount;
    }
    out += "@@ -" + std::to_string(aCount ? aStart + 1 : aStart) + "," + std::to_string(aCount) + " +" +
           std::to_string(bCount ? bStart + 1 : bStart) + "," + std::to_string(bCount) + " @@\n";
    for (size_t j = start; j <= end; ++j) {
      const std::string& text = ops[j].kind == '+' ? B[ops[j].b] : A[ops[j].a];
      out += ops[j].kind;
      out += text;
      if (text.empty() || text.back() != '\n') out += "\n\\ No newline at end of file\n";
    }
    k = end + 1;
  }
  return out;
}

std::string fileDiff(const std::string& path, const std::string& before, const std::string& after) {
  if (!isNotebookPath(path)) return unifiedDiff(path, before, after);
  Notebook a = readNotebook(before), b = readNotebook(after);
  if (!a.error.empty() || !b.error.empty() || a.cells.size() != b.cells.size()) return unifiedDiff(path, before, after);
  std::string out;
  for (size_t i = 0; i < a.cells.size(); ++i) {
    std::string x = cellText(a.cells[i]), y = cellText(b.cells[i]);
    if (x != y) out += unifiedDiff(path + ":cell " + std::to_string(a.cells[i].number), x, y);
  }
  return out;
}

}  // namespace oomlint
