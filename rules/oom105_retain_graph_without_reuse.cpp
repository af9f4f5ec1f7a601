// OOM105 retain-graph-without-reuse
#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM105",
    "retain-graph-without-reuse",
    Severity::Error,
    true,
    true,
    FixKind::Unsafe,
    true,
    true,
    "backward(retain_graph=True) on a graph that gets no second backward",
    R"doc(## What it does
Flags `loss.backward(retain_graph=True)` and `torch.autograd.grad(..., retain_graph=True)` inside a
loop when the graph was built in the same iteration and nothing runs a second backward over it
before the iteration ends.

## Why is this bad?
`retain_graph=True` tells autograd to keep the graph's saved tensors after the backward. When no
second backward uses them, they stay alive until the graph is garbage: at least one extra forward's
activations at the peak, and linear growth when graphs chain across iterations (for example through
a running total or a carried hidden state).

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    optimizer.step()
```

## Use instead
```python
    loss.backward()
```
Keep `retain_graph=True` only when a second backward over the same graph follows (several losses
sharing one forward, higher-order gradients).

## Fix safety
Unsafe: if some code oomlint cannot see runs another backward over this graph, it will fail with
"Trying to backward through the graph a second time".

## Estimated cost
When the file states the model's layers and the input's shape, the message ends with what the
retained graph keeps while the loss is referenced: `A_fwd + loss` (as for OOM101).
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `loss.backward(retain_graph=true)` peaks at 164.5 MiB vs 160.0
MiB for `loss.backward()`; retained after the run 130.3 MiB vs 128.0 MiB. Reproduce with
`oomlint-probe OOM105`.

## References
- `torch.Tensor.backward`: https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
)doc",
};

class Oom105 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onCall(Context& ctx, NodeId call) const override {
    const Facts& f = ctx.facts();
    const Module& m = ctx.module();
    bool grad = f.isAutogradGradCall(call);
    if (!f.isBackwardCall(call) && !grad) return;
    // A flag that is not a literal may be False on every call that matters: stay silent.
    if (f.flagArg(call, "retain_graph") != Tri::Yes) return;
    NodeId s = m.expr(call).stmt;
    NodeId loop = f.enclosingLoop(s);
    if (loop == kNone) return;
    // The graph must be built in this iteration: a graph built before the loop is legitimately
    // reused by each iteration's backward.
    NodeId subject = f.backwardSubject(call);
    if (subject == kNone || !builtInIteration(f, subject, loop)) return;
    // A later backward of the same iteration (here or in a function called here) may reuse it.
    uint32_t fn = m.stmt(s).function;
    for (const StepEvent& e : f.events(fn)) {
      if (!(e.kind & (event::kBackward | event::kAutogradGrad)) || !f.within(e.stmt, loop)) continue;
      bool later = e.stmt == s ? (e.call != call && m.expr(e.call).span.begin > m.expr(call).span.begin) : f.mayPrecede(s, e.stmt);
      if (later) return;
    }
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  std::string(m.lang == Lang::Python ? "`retain_graph=True`" : "`retain_graph` = true") +
                                      " keeps this iteration's graph and its saved tensors alive, but no second backward uses them");
    finding.withEstimate(graphOf(f, subject, "retained"));
    noteHistory(finding, f, subject);
    noteLoop(finding, f, loop);
    Edit edit;
    // C++ arguments are positional: only the last written one can go without shifting the others.
    const Expr& ce = m.expr(call);
    bool removable = m.lang == Lang::Python || (ce.argCount > 0 && m.args[ce.firstArg + ce.argCount - 1].keyword == "retain_graph");
    if (removable && removeKeywordArg(m, call, "retain_graph", edit))
      finding.withFix(Applicability::Unsafe, m.lang == Lang::Python ? "Remove `retain_graph=True`" : "Remove the `retain_graph` argument",
                      {edit});
  }

 private:
  /// True when the backpropagated tensor comes from this iteration: a Name bound inside the loop,
  /// or an expression made of such names or of calls evaluated here.
  static bool builtInIteration(const Facts& f, NodeId e, NodeId loop) {
    const Module& m = f.module();
    const Expr& x = m.expr(e);
    switch (x.kind) {
      case ExprKind::Name: {
        NodeId b = f.bindingLoop(e);
        return b != kBoundOutsideLoops && b != kBoundAmbiguous && f.within(b, loop);
      }
      case ExprKind::Call: {
        // A forward or loss evaluated here builds a new graph; other calls (views, scaler.scale)
        // build on their operands.
        if (f.isForwardCall(e) || f.isLossCall(e)) return f.value(e).history == Tri::Yes;
        NodeId recv = receiverOf(m, e);
        if (recv != kNone && builtInIteration(f, recv, loop)) return true;
        for (const Arg& a : argsOf(m, x))
          if (builtInIteration(f, a.value, loop)) return true;
        return false;
      }
      case ExprKind::Subscript:
      case ExprKind::Attribute: return x.lhs != kNone && builtInIteration(f, x.lhs, loop);
      case ExprKind::BinOp: return builtInIteration(f, x.lhs, loop) || builtInIteration(f, x.rhs, loop);
      case ExprKind::Container:
        for (const Arg& a : argsOf(m, x))
          if (builtInIteration(f, a.value, loop)) return true;
        return false;
      default: return false;
    }
  }
};

}  // namespace

const Rule& oom105() {
  static const Oom105 rule;
  return rule;
}

}  // namespace oomlint::rules
