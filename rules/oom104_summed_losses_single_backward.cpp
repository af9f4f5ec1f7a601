// OOM104 summed-losses-single-backward
#include <unordered_set>

#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM104",
    "summed-losses-single-backward",
    Severity::Error,
    true,
    true,
    FixKind::DisplayOnly,
    true,
    true,
    "Micro-batch losses are summed and back-propagated once after the loop, keeping every graph alive",
    R"doc(## What it does
Flags gradient accumulation written as "sum the micro-batch losses in a loop, call `backward()` once
after it". The finding is on the single `backward()`. A loop that carries state with history from
one iteration into the next (`h = cell(x[t], h)`: the time steps of one sequence, an unrolled
decoder) is not flagged: its graphs are chained, and one backward over the summed losses is
back-propagation through time.

## Why is this bad?
Until that backward runs, every micro-batch's graph and saved activations stay alive: the peak is
`k` forwards' activations instead of one (`(k−1)·A_fwd` extra), which defeats the purpose of
accumulating gradients to save memory.

## Example
```python
total = 0
for mb in micro_batches:
    total = total + criterion(model(mb.x), mb.y)
total.backward()
optimizer.step()
```

## Use instead
```python
for mb in micro_batches:
    loss = criterion(model(mb.x), mb.y) / len(micro_batches)
    loss.backward()          # frees this micro-batch's graph now
optimizer.step()
```

## Fix safety
Display only: moving the backward into the loop changes where gradients are produced; oomlint shows
the change and leaves it to you.

## Estimated cost
When the file states the model's layers, the micro-batch's shape and the number of micro-batches
`k` (`range(k)`, or a DataLoader over a TensorDataset of stated rows and batch size), the message
ends with what the summation adds to the backward's peak: `(k−1)·(A_fwd + loss) − P`, the graphs
of all micro-batches but one (A_fwd and loss as for OOM101), less the parameters' bytes P of the
gradient buffers that a backward per micro-batch already holds from its second micro-batch on
(the single backward starts before they exist). Only when the graphs are at least twice P: below,
the backward's own transients set the peak, and no estimate is given.
Validated on the H200: bench/estimates/oom104.py states the probe's workload at 8192 rows per
micro-batch (runtime_check/results/h200-estimates.json), and a test holds the estimate within 10%
of the measurement; at the suite's 32 rows the parameters dominate and it gives none.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `total += loss_i; total.backward()` peaks at 198.0 MiB vs 162.3
MiB for `(loss_i / k).backward() per micro-batch`. Reproduce with `oomlint-probe OOM104`.

## References
- PyTorch docs, autograd mechanics: https://pytorch.org/docs/stable/notes/autograd.html
)doc",
};


/// Names bound by a loop target and, transitively, by assignments in its body that read them or
/// call next(): the values that change with each micro-batch.
std::unordered_set<std::string_view> perIterationNames(const Facts& f, NodeId loop) {
  const Module& m = f.module();
  std::unordered_set<std::string_view> names;
  const Stmt& l = m.stmt(loop);
  auto addNames = [&](NodeId e) {
    f.forSubtree(e, [&](NodeId x) {
      if (m.expr(x).kind == ExprKind::Name) names.insert(m.expr(x).text);
    });
  };
  if (l.kind == StmtKind::For) addNames(l.target);
  for (NodeId s : f.statementsWithin(loop)) {
    if (s == loop) continue;
    const Stmt& st = m.stmt(s);
    if (st.kind != StmtKind::Assign || st.value == kNone) continue;
    bool depends = false;
    f.forSubtree(st.value, [&](NodeId x) {
      if (m.expr(x).kind == ExprKind::Call && calleeName(m, x) == "next") depends = true;
    });
    for (std::string_view n : names)
      if (f.mentionsPath(st.value, n)) depends = true;
    if (depends)
      for (NodeId t : items(m, st.targets)) addNames(t);
  }
  return names;
}

class Oom104 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onCall(Context& ctx, NodeId call) const override {
    const Facts& f = ctx.facts();
    const Module& m = ctx.module();
    if (!f.isBackwardCall(call)) return;
    NodeId s = m.expr(call).stmt;
    if (f.gradMode(s) == GradMode::Disabled) return;
    // The whole call names the loss: `total.backward()`, `(total / k).backward()`,
    // `accelerator.backward(total)`.
    NodeId subject = call;
    // Find an earlier sibling loop that accumulates into a name this backward reads.
    const Stmt& st = m.stmt(s);
    List siblings = st.parent == kNone ? m.functions[st.function].body : List{};
    if (st.parent != kNone) {
      const Stmt& p = m.stmt(st.parent);
      for (List l : {p.body, p.orelse, p.finalbody})
        for (NodeId x : items(m, l))
          if (x == s) siblings = l;
    }
    for (NodeId sib : items(m, siblings)) {
      if (sib == s) break;
      const Stmt& loop = m.stmt(sib);
      if (loop.kind != StmtKind::For && loop.kind != StmtKind::While) continue;
      if (f.reachesBackward(sib)) continue;  // backward per micro-batch: fine
      NodeId accumulatedAt = kNone, summand = kNone;
      if (accumulatesInto(f, sib, subject, accumulatedAt, summand)) {
        Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                      "losses of every micro-batch are summed in the loop above and back-propagated once here, "
                                      "so all their graphs stay alive until this backward");
        finding.note(m.stmt(accumulatedAt).span, "each micro-batch's loss, with its graph, is added here");
        noteLoop(finding, f, sib);
        finding.withEstimate(summedGraphsOf(f, summand, sib));
        finding.withFix(Applicability::DisplayOnly, "Call `(loss / k).backward()` inside the loop, once per micro-batch");
        return;
      }
    }
  }

 private:
  /// The loop feeds state with history from one iteration into the next (`h = cell(x[t], h)`):
  /// time steps of one sequence, not micro-batches. Their graphs are chained, so the one backward
  /// over the summed losses is back-propagation through time, not a choice.
  static bool carriesGraph(const Facts& f, NodeId loop) {
    const Module& m = f.module();
    for (NodeId s : f.statementsWithin(loop)) {
      const Stmt& st = m.stmt(s);
      if (st.kind != StmtKind::Assign || st.value == kNone || st.targets.count != 1) continue;
      if (f.value(st.value).history != Tri::Yes) continue;
      // `h = cell(x, h)`, `out, state = decoder(y, state)`.
      std::vector<NodeId> names{st.target};
      if (m.expr(st.target).kind == ExprKind::Container)
        for (const Arg& a : argsOf(m, m.expr(st.target))) names.push_back(a.value);
      for (NodeId t : names) {
        std::string_view key = f.pathKey(t);
        if (key.empty() || !f.readBeforeWritten(loop, key)) continue;
        NodeId added = kNone;
        if (runningUpdateRead(f, st.value, key, added) != kNone) continue;  // the sum itself
        if (f.readWithHistory(st.value, key, loop) != kNone) return true;
      }
    }
    return false;
  }

  static bool accumulatesInto(const Facts& f, NodeId loop, NodeId subject, NodeId& accumulatedAt, NodeId& summand) {
    const Module& m = f.module();
    std::unordered_set<std::string_view> perIter = perIterationNames(f, loop);
    // The loop must run a forward on per-iteration data (micro-batches), not loop over heads.
    bool forwardOnData = false;
    for (NodeId s : f.statementsWithin(loop)) {
      for (NodeId c : f.callsOf(s)) {
        if (!f.isForwardCall(c)) continue;
        for (const Arg& a : argsOf(m, m.expr(c)))
          for (std::string_view n : perIter)
            if (f.mentionsPath(a.value, n)) forwardOnData = true;
      }
    }
    if (!forwardOnData || carriesGraph(f, loop)) return false;
    for (NodeId s : f.statementsWithin(loop)) {
      if (s == loop) continue;
      const Stmt& st = m.stmt(s);
      NodeId target = kNone, value = kNone;
      if (st.kind == StmtKind::AugAssign && st.op == "+=") {
        target = st.target;
        value = st.value;
      } else if (st.kind == StmtKind::Assign && st.value != kNone && m.expr(st.value).kind == ExprKind::BinOp &&
                 m.expr(st.value).text == "+" && f.pathKey(m.expr(st.value).lhs) == f.pathKey(st.target) &&
                 !f.pathKey(st.target).empty()) {
        target = st.target;
        value = m.expr(st.value).rhs;
      } else if (st.kind == StmtKind::Expr && methodName(m, st.value) == "append") {
        target = receiverOf(m, st.value);
        value = positionalArg(m, st.value, 0);
      }
      if (target == kNone || value == kNone) continue;
      std::string_view key = f.pathKey(target);
      if (key.empty() || f.value(value).history != Tri::Yes) continue;
      if (!f.outlivesIteration(st.kind == StmtKind::Assign ? m.expr(st.value).lhs : target, loop)) continue;
      if (f.mentionsPath(subject, key)) {
        accumulatedAt = s;
        summand = value;
        return true;
      }
    }
    return false;
  }
};

}  // namespace

const Rule& oom104() {
  static const Oom104 rule;
  return rule;
}

}  // namespace oomlint::rules
