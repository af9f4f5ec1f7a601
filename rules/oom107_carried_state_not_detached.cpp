// OOM107 carried-state-not-detached
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM107", "carried-state-not-detached", Severity::Error, true, true, FixKind::Unsafe, true, true,
    "State computed from a model output is carried into the next iteration without .detach()",
    R"doc(## What it does
Flags an assignment in a training loop that carries a history-carrying value into the next
iteration: a recurrent hidden state fed back into the model (`out, h = model(x, h)`), a running
target or memory computed from outputs (`ema = 0.99 * ema + 0.01 * out`), with no `.detach()` of
that state anywhere in the loop.

## Why is this bad?
The new state's graph links back to the previous iteration's graph, which links to the one before:
the graph (and every saved activation in it) spans the whole history. Memory grows every step,
each backward walks further back (or fails with "Trying to backward through the graph a second
time").

## Example
```python
h = torch.zeros(layers, batch, hidden)
for x, y in loader:
    out, h = model(x, h)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    h = h.detach()            # truncated back-propagation through time
    out, h = model(x, h)
```
(for an LSTM's `(h, c)` tuple: `h = tuple(s.detach() for s in h)`).

## Fix safety
Unsafe: gradients stop flowing into earlier iterations, which is what truncated BPTT wants and what
an accidental chain did not. Offered only when the state is a single name; for tuple unpacking the
fix is shown, not applied.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `h = cell(x, h) (no detach)` peaks at 199.5 MiB vs 769.0 KiB for
`h = h.detach(); h = cell(x, h)`; growth 768.0 KiB/step vs 0.0 B/step; retained after the run 70.5
MiB vs 0.0 B. Reproduce with `oomlint-probe OOM107`.

## References
- PyTorch word-language-model example, `repackage_hidden`: https://github.com/pytorch/examples/blob/main/word_language_model/main.py
)doc",
};

bool isDetachOf(const Module& m, const Stmt& st, std::string_view name) {
  if (st.kind == StmtKind::Expr && st.value != kNone) {
    std::string_view t = m.textOf(st.value);
    return mentions(m, st.value, name) && (t.find("detach") != std::string_view::npos || t.find("repackage") != std::string_view::npos);
  }
  if (st.kind != StmtKind::Assign || st.value == kNone) return false;
  bool assigns = false;
  for (NodeId t : items(m, st.targets))
    if (mentions(m, t, name)) assigns = true;
  std::string_view v = m.textOf(st.value);
  return assigns && (v.find("detach") != std::string_view::npos || v.find("repackage") != std::string_view::npos ||
                     v.find("init_hidden") != std::string_view::npos || v.find(".data") != std::string_view::npos);
}

class Oom107 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onStatement(Context& ctx, NodeId s) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    const Stmt& st = m.stmt(s);
    if (st.kind != StmtKind::Assign || st.value == kNone || st.targets.count != 1) return;
    NodeId loop = f.enclosingLoop(s);
    if (loop == kNone || !(f.loopRole(loop) & loop_role::kTraining)) return;
    if (f.gradMode(s) != GradMode::Enabled || f.value(st.value).history != Tri::Yes) return;
    std::vector<NodeId> names;
    const Expr& t = m.expr(st.target);
    if (t.kind == ExprKind::Name) names.push_back(st.target);
    else if (t.kind == ExprKind::Container)
      for (const Arg& a : argsOf(m, t))
        if (m.expr(a.value).kind == ExprKind::Name) names.push_back(a.value);
    for (NodeId n : names) {
      std::string_view name = m.expr(n).text;
      NodeId bound = f.bindingLoop(n);
      if (bound == kBoundAmbiguous || (bound != kBoundOutsideLoops && f.within(bound, loop))) continue;
      if (!fedBack(f, s, loop, name)) continue;
      // `x = x + loss` is an accumulation: OOM101's finding.
      const Expr& v = m.expr(st.value);
      if (v.kind == ExprKind::BinOp && (f.pathKey(v.lhs) == name || f.pathKey(v.rhs) == name)) continue;
      bool detached = false;
      for (NodeId o : f.statementsOf(st.function))
        if (f.within(o, loop) && o != s && isDetachOf(m, m.stmt(o), name)) detached = true;
      if (detached) continue;
      Finding& fd = ctx.report(kInfo, st.span,
                               ticked(name) + " is computed from this iteration's graph and fed into the next one "
                               "without `.detach()`: the graph grows across all iterations");
      fd.hasFix = true;
      fd.fix.applicability = Applicability::DisplayOnly;
      fd.fix.message = "Detach at the top of the iteration: `" + std::string(name) + " = " + std::string(name) + ".detach()`";
      const Stmt& l = m.stmt(loop);
      if (t.kind == ExprKind::Name && l.body.count > 0) {
        Edit edit;
        if (insertStatementBefore(m, m.lists[l.body.first], statementText(m, std::string(name) + " = " + std::string(name) + ".detach()"), edit)) {
          fd.fix.applicability = Applicability::Unsafe;
          fd.fix.edits.push_back(edit);
        }
      }
      return;
    }
  }

 private:
  /// The state is read back in the loop: an argument of a forward, or part of its own update.
  static bool fedBack(const Facts& f, NodeId s, NodeId loop, std::string_view name) {
    const Module& m = f.module();
    if (mentions(m, m.stmt(s).value, name)) return true;
    for (NodeId o : f.statementsOf(m.stmt(s).function)) {
      if (!f.within(o, loop)) continue;
      for (NodeId c : f.callsOf(o)) {
        if (!f.isForwardCall(c)) continue;
        for (const Arg& a : argsOf(m, m.expr(c)))
          if (mentions(m, a.value, name)) return true;
      }
    }
    return false;
  }
};

}  // namespace

const Rule& oom107() {
  static const Oom107 rule;
  return rule;
}

}  // namespace oomlint::rules
