// OOM106 backward-create-graph
#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM106", "backward-create-graph", Severity::Error, true, true, FixKind::DisplayOnly, true, true,
    "backward(create_graph=True) creates a parameter <-> .grad <-> grad_fn reference cycle",
    R"doc(## What it does
Flags `.backward(create_graph=True)` (and `torch.autograd.backward(..., create_graph=True)`,
C++ `backward(gradient, keep_graph, create_graph)`). A flag that is not a literal
(`create_graph=self.hess or flag`) is reported too: the cycle forms whenever it is true. A
helper that only passes on a parameter defaulting to False leaves the choice to its callers and is
not flagged.

Silent when every iteration that runs it calls `zero_grad()` on an optimizer or a module (with
either `set_to_none`) or sets `p.grad = None`: `zero_grad` detaches the gradients it zeroes, or
drops them, so the cycle is broken each step and no more than one step's graph is kept. A loop that zeroes `.grad` by hand
(`p.grad.zero_()`) or never clears it is reported.

## Why is this bad?
With `create_graph=True` the gradients written into each parameter's `.grad` carry a `grad_fn`
that refers back to the parameters: parameter -> `.grad` -> `grad_fn` -> parameter. Reference
counting cannot free that cycle, so every iteration's higher-order graph leaks until the cyclic
garbage collector runs, and PyTorch warns about it. Memory grows step after step.

## Example
```python
loss.backward(create_graph=True)
penalty = sum(p.grad.pow(2).sum() for p in model.parameters())
```

## Use instead
```python
grads = torch.autograd.grad(loss, params, create_graph=True)  # returned, not stored in .grad
penalty = sum(g.pow(2).sum() for g in grads)
```

## Fix safety
Display only: switching to `torch.autograd.grad` changes where the gradients live.

## Estimated cost
When the file states the model's layers and the input's shape, the message ends with
`2·(A_fwd + loss)`: the forward's graph (as for OOM101) and the gradient graph the backward builds
over it, which saves about one gradient per saved activation. It is growth per iteration when the
loop zeroes gradients by hand in place (`p.grad.zero_()`) or never clears them. When a helper
clears them, no estimate is given.
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `backward(create_graph=true); zero_grad(false)` peaks at 232.5
MiB vs 260.8 MiB for `grad(create_graph=true); .grad = g.detach()`; growth 4.5 MiB/step vs 0.0
B/step; retained after the run 168.5 MiB vs 128.0 MiB. Reproduce with `oomlint-probe OOM106`.

## References
- `torch.Tensor.backward` (the create_graph warning): https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
)doc",
};

/// `backward(create_graph=create_graph)` in a helper whose parameter defaults to False: the flag
/// is its callers' choice, not this line's.
bool forwardsCallersChoice(const Module& m, NodeId call) {
  NodeId flag = keywordArg(m, call, "create_graph");
  if (flag == kNone || m.expr(flag).kind != ExprKind::Name) return false;
  const Function& fn = m.functions[m.stmt(m.expr(call).stmt).function];
  for (uint32_t i = 0; i < fn.paramCount; ++i) {
    const Param& p = m.params[fn.firstParam + i];
    if (p.name != m.expr(flag).text) continue;
    return p.defaultValue == kNone || isFalseLiteral(m, p.defaultValue) || m.expr(p.defaultValue).kind == ExprKind::NoneLit;
  }
  return false;
}

/// Each iteration that runs the backward calls an optimizer's or a module's `zero_grad()`, which
/// detaches the gradients it zeroes or sets them to None, with either flag, or sets `.grad` to
/// None itself: the cycle through `.grad` is broken every step, so what it keeps is one step's
/// graph, not a leak.
bool clearedEveryIteration(const Facts& f, NodeId call) {
  NodeId s = f.module().expr(call).stmt;
  NodeId iteration = f.enclosingLoop(s);
  if (iteration == kNone) iteration = f.stepIterationOf(s);
  if (iteration == kNone) return false;
  // zero_grad() itself, or `p.grad = None` (an event without a call); not a helper's.
  for (const StepEvent& ev : f.eventsWithin(iteration))
    if ((ev.kind & event::kZeroGrad) && (ev.call == kNone || f.isZeroGradCall(ev.call))) return true;
  return false;
}

class Oom106 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (!f.isBackwardCall(call)) return;
    Tri flag = f.flagArg(call, "create_graph");
    if (flag == Tri::No) return;
    if (flag == Tri::Unknown && forwardsCallersChoice(m, call)) return;
    if (clearedEveryIteration(f, call)) return;
    // `create_graph=self.hess or flag`: the cycle forms whenever the flag is on.
    std::string when = flag == Tri::Yes ? "" : " (when " + ticked(brief(m, keywordArg(m, call, "create_graph"), 30)) + " is true)";
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "`backward(create_graph=True)` stores gradients with their own graph in `.grad`" + when +
                                      ", a reference cycle with the parameters that leaks every iteration");
    noteLoop(finding, f, f.enclosingLoop(m.expr(call).stmt));
    finding.withEstimate(createGraphOf(f, call));
    finding.withFix(Applicability::DisplayOnly,
                    "Use `torch.autograd.grad(loss, params, create_graph=True)` and keep the gradients out of `.grad`");
  }
};

}  // namespace

const Rule& oom106() {
  static const Oom106 rule;
  return rule;
}

}  // namespace oomlint::rules
