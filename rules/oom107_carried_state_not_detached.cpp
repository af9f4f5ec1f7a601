// OOM107 carried-state-not-detached
#include "rules/common.h"
#include "rules/estimates.h"
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
that state anywhere in the loop. The state must really be carried: read at the start of the next
iteration before anything overwrites it (`fake = G(torch.randn(...))` rebuilt every iteration
carries nothing), and not rebound to a value without history (`h = repackage(h)`). The state may
sit in a nested tuple (`out, (h, c) = lstm(x, (h, c))`) or in an attribute of an object that
outlives the loop (`out, self.hidden = self.model(x, self.hidden)` in a `fit` loop), and may be
set lazily on the first iteration (`if h is None: h = model.init_hidden(n)`), which is no reset.

A module that keeps such state on `self` between calls of its `forward` (a stateful LSTM:
`out, self.hidden = self.lstm(x, self.hidden)`, a running memory `self.memory = 0.9 * self.memory +
0.1 * h`) is flagged in its `forward`: whatever trains the module calls `forward` once per step.
Only when no statement of the file outside `__init__` rebinds, resets, detaches or deletes an
attribute of that name (a `reset_state()` method, `self.hidden = tuple(h.detach() for h in hidden)`,
`self.state.detach_()`); a first state made under `if self.hidden is None:` does not count.

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

## Estimated cost
When the state's first binding before the loop states its shape (`torch.zeros(B, H)`) and its
update uses only layers and ops of stated sizes (a Linear or `nn.Sequential` of sized layers,
`torch.cat`, elementwise activations, dtype conversions), the message ends with the growth per
iteration: the bytes the update saves for backward, of the tensors it makes (a Linear its input,
Tanh/Sigmoid/ReLU their output, GELU/SiLU their input), all of which the next iteration's graph
links to. The update must give the state back in its own shape; anything else gives no estimate.
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `h = cell(x, h) (no detach)` peaks at 199.5 MiB vs 769.0 KiB for
`h = h.detach(); h = cell(x, h)`; growth 768.0 KiB/step vs 0.0 B/step; retained after the run 70.5
MiB vs 0.0 B. Reproduce with `oomlint-probe OOM107`.

## References
- PyTorch word-language-model example, `repackage_hidden`: https://github.com/pytorch/examples/blob/main/word_language_model/main.py
)doc",
};

class Oom107 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onStatement(Context& ctx, NodeId s) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    const Stmt& st = m.stmt(s);
    if (st.kind != StmtKind::Assign || st.value == kNone || st.targets.count != 1) return;
    if (reportCarriedAcrossForwards(ctx, s)) return;
    // The training loop the state is carried across: the innermost around the statement, or one
    // around a loop of its own that has no backward (time steps unrolled within a batch).
    NodeId loop = f.enclosingLoop(s);
    while (loop != kNone && !(f.loopRole(loop) & loop_role::kTraining)) loop = f.enclosingLoop(loop);
    if (loop == kNone) return;
    if (f.gradMode(s) != GradMode::Enabled || f.value(st.value).history != Tri::Yes) return;
    std::vector<NodeId> names;
    const Expr& t = m.expr(st.target);
    stateTargets(f, st.target, loop, names);
    for (NodeId n : names) {
      std::string_view name = f.pathKey(n);
      // Carried: bound before the loop (an attribute of an object that outlives it), and what
      // this iteration leaves in it is read at the start of the next one (a name overwritten
      // before any read carries nothing).
      if (m.expr(n).kind == ExprKind::Name) {
        NodeId bound = f.bindingLoop(n);
        if (bound == kBoundAmbiguous && !onlyLazyInitsBesides(f, s, loop, name)) continue;
        if (bound != kBoundAmbiguous && bound != kBoundOutsideLoops && f.within(bound, loop)) continue;
      }
      if (!f.readBeforeWritten(loop, name)) continue;
      NodeId feed = fedBack(f, s, loop, name);
      if (feed == kNone) continue;
      // `x = x + loss`, `avg = 0.9 * avg + 0.1 * loss` are accumulations: OOM101's finding.
      NodeId added = kNone;
      bool average = false;
      if (runningUpdateRead(f, st.value, name, added, &average) != kNone && (!average || !readWithHistoryElsewhere(f, loop, s, name)))
        continue;
      if (detachedInLoop(f, s, loop, name)) continue;
      Finding& fd = ctx.report(kInfo, st.span,
                               ticked(name) + " is computed from this iteration's graph and fed into the next one "
                               "without `.detach()`: the graph grows across all iterations");
      noteHistory(fd, f, st.value);
      if (feed != st.value) fd.note(m.expr(feed).span, "the next iteration feeds it back into the graph here");
      noteLoop(fd, f, loop);
      fd.withEstimate(carriedStepOf(f, s, loop, name));
      std::string detach = statementText(m, std::string(name) + " = " + std::string(name) + ".detach()");
      const Stmt& l = m.stmt(loop);
      Edit edit;
      if (t.kind == ExprKind::Name && l.body.count > 0 && insertStatementBefore(m, m.lists[l.body.first], detach, edit))
        fd.withFix(Applicability::Unsafe, "Detach at the top of the iteration: `" + std::string(name) + " = " + std::string(name) + ".detach()`",
                   {edit});
      else
        fd.withFix(Applicability::DisplayOnly, "Detach at the top of the iteration: `" + std::string(name) + " = " + std::string(name) + ".detach()`");
      return;
    }
  }

 private:
  /// `stmt` runs only while the state is unset: the body of `if h is None:` (a lazy
  /// initialisation on the first iteration, not a reset every iteration).
  static bool lazyInit(const Facts& f, NodeId stmt, std::string_view name) {
    const Module& m = f.module();
    NodeId parent = m.stmt(stmt).parent;
    if (parent == kNone || m.stmt(parent).kind != StmtKind::If || m.stmt(parent).value == kNone) return false;
    bool inBody = false;  // not the `else:` of the test
    for (NodeId b : items(m, m.stmt(parent).body)) inBody = inBody || b == stmt;
    if (!inBody) return false;
    const Expr& test = m.expr(m.stmt(parent).value);
    if (test.kind != ExprKind::Compare || test.argCount != 2 || m.textOf(m.stmt(parent).value).find(" is not ") != std::string_view::npos)
      return false;
    return f.pathKey(m.args[test.firstArg].value) == name && m.expr(m.args[test.firstArg + 1].value).kind == ExprKind::NoneLit;
  }

  /// Every other assignment of `name` in the loop is a lazy initialisation (lazyInit).
  static bool onlyLazyInitsBesides(const Facts& f, NodeId s, NodeId loop, std::string_view name) {
    const Module& m = f.module();
    for (NodeId a : f.assignmentsOf(m.stmt(s).function, name))
      if (a != s && f.within(a, loop) && !lazyInit(f, a, name)) return false;
    return true;
  }

  /// The names and attributes an assignment binds, through nested tuples (`out, (h, c) = ...`):
  /// `self.hidden` and other attributes of objects that outlive the loop count.
  static void stateTargets(const Facts& f, NodeId target, NodeId loop, std::vector<NodeId>& out, int depth = 0) {
    const Module& m = f.module();
    const Expr& t = m.expr(target);
    if (depth > 4) return;
    if (t.kind == ExprKind::Name) out.push_back(target);
    else if (t.kind == ExprKind::Attribute && !f.pathKey(target).empty() && f.outlivesIteration(target, loop)) out.push_back(target);
    else if (t.kind == ExprKind::Container)
      for (const Arg& a : argsOf(m, t)) stateTargets(f, a.value, loop, out, depth + 1);
  }

  /// A module's `forward` that keeps recurrent state on `self` from one call to the next (a
  /// stateful LSTM, Facts::carriedAcrossForwards): whatever trains the module calls `forward` once
  /// per step, so the state links each step's graph to the one before.
  static bool reportCarriedAcrossForwards(Context& ctx, NodeId s) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    const Stmt& st = m.stmt(s);
    if (f.gradMode(s) != GradMode::Enabled || f.value(st.value).history != Tri::Yes) return false;
    std::vector<NodeId> targets{st.target};
    if (m.expr(st.target).kind == ExprKind::Container)
      for (const Arg& a : argsOf(m, m.expr(st.target))) targets.push_back(a.value);
    for (NodeId t : targets) {
      if (!f.carriedAcrossForwards(s, t)) continue;
      const Function& fn = m.functions[st.function];
      std::string path(f.pathKey(t));
      Finding& fd = ctx.report(kInfo, st.span,
                               ticked(path) + " is computed from this call's graph and kept for the next call of `forward` "
                               "without `.detach()`: the graph grows across all steps");
      noteHistory(fd, f, st.value);
      fd.note(fn.nameSpan, "whatever trains `" + std::string(m.classes[static_cast<size_t>(fn.cls)].name) +
                               "` calls `forward` once per step, and nothing in this file detaches or resets `" + path + "`");
      fd.withFix(Applicability::DisplayOnly, "Keep a detached copy for the next call: `" + path + " = " + path +
                                                 ".detach()` (for an LSTM's `(h, c)`, a tuple of detached tensors)");
      return true;
    }
    return false;
  }

  /// Where the state is read back into the graph: its own update, or an argument of a forward in
  /// the loop. kNone when it is not.
  static NodeId fedBack(const Facts& f, NodeId s, NodeId loop, std::string_view name) {
    const Module& m = f.module();
    if (f.readWithHistory(m.stmt(s).value, name, loop) != kNone) return m.stmt(s).value;
    return forwardReading(f, loop, name, true);
  }

  /// Another statement of the loop rebinds the state to something without history
  /// (`h = h.detach()`, `h = repackage_hidden(h)`, `h = model.init_hidden()`), or detaches it in place.
  static bool detachedInLoop(const Facts& f, NodeId s, NodeId loop, std::string_view name) {
    const Module& m = f.module();
    for (NodeId o : f.statementsWithin(loop)) {
      if (o == s) continue;
      const Stmt& os = m.stmt(o);
      if (os.kind == StmtKind::Expr && os.value != kNone) {
        std::string_view meth = methodName(m, os.value);
        // `h.detach_()`, `hidden[0].detach_()`: in place, on the state or a part of it.
        NodeId r = receiverOf(m, os.value);
        while (r != kNone && m.expr(r).kind == ExprKind::Subscript) r = m.expr(r).lhs;
        if ((meth == "detach_" || meth == "requires_grad_") && f.pathKey(r) == name) return true;
        continue;
      }
      if (os.kind != StmtKind::Assign || os.value == kNone) continue;
      bool rebinds = false;
      for (NodeId t : items(m, os.targets))
        f.forSubtree(t, [&](NodeId x) {
          ExprKind k = m.expr(x).kind;
          if ((k == ExprKind::Name || k == ExprKind::Attribute) && f.pathKey(x) == name) rebinds = true;
        });
      if (rebinds && f.value(os.value).history != Tri::Yes && !lazyInit(f, o, name)) return true;
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
