// OOM302 zero-grad-after-forward
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM302",
    "zero-grad-after-forward",
    Severity::Warning,
    true,
    true,
    FixKind::DisplayOnly,
    true,
    true,
    "zero_grad() runs after the forward, so last step's gradients are alive at the forward peak",
    R"doc(## What it does
Flags `zero_grad()` sequenced after the forward pass and before `backward()` in the same training
step.

## Why is this bad?
Memory peaks during the forward (activations saved for backward). If the previous step's gradients
are only released after the forward, every `.grad` buffer is alive at that peak too: `+P·bytes`
for nothing, since the gradients are about to be discarded anyway.

## Example
```python
out = model(x)
loss = criterion(out, y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
```

## Use instead
```python
optimizer.zero_grad()
out = model(x)
loss = criterion(out, y)
loss.backward()
optimizer.step()
```

## Fix safety
Display only: moving a statement across the forward is left to you (a forward hook or a custom
module may read gradients).

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `forward; zero_grad(); backward` peaks at 8.5 GiB vs 8.5 GiB for
`zero_grad(); forward; backward`; the same peak: on this workload the step peaks at the start of
backward, after zero_grad has run, so the cost appears only when the forward peak is the higher one.
Reproduce with `oomlint-probe OOM302`.

## References
- PyTorch performance tuning guide: https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
)doc",
};

class Oom302 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (methodName(m, call) != "zero_grad") return;
    NodeId s = m.expr(call).stmt;
    NodeId loop = f.enclosingLoop(s);
    uint32_t fn = m.stmt(s).function;
    uint32_t at = m.expr(call).span.begin;
    bool forwardBefore = false, zeroBeforeForward = false, backwardAfter = false;
    uint32_t firstForward = UINT32_MAX;
    uint32_t lastBackwardBefore = 0;
    auto inStep = [&](NodeId t) { return loop != kNone ? f.within(t, loop) && t != loop : f.enclosingLoop(t) == kNone; };
    // One training step: the loop body holding the call, or the function if not in a loop.
    // The forward that matters is one whose graph is back-propagated after this zero_grad: a
    // forward already followed by its own backward before the zero_grad is a finished step.
    for (NodeId t : f.statementsOf(fn)) {
      if (!inStep(t)) continue;
      for (NodeId c : f.callsOf(t)) {
        uint32_t pos = m.expr(c).span.begin;
        if (pos < at && (f.isBackwardCall(c) || f.isAutogradGradCall(c))) lastBackwardBefore = std::max(lastBackwardBefore, pos);
        if (pos > at && (f.isBackwardCall(c) || f.isAutogradGradCall(c))) backwardAfter = true;
      }
      if (f.reachesBackward(t) && m.stmt(t).span.begin > at) backwardAfter = true;
    }
    for (NodeId t : f.statementsOf(fn)) {
      if (!inStep(t)) continue;
      for (NodeId c : f.callsOf(t)) {
        uint32_t pos = m.expr(c).span.begin;
        if (pos < at && pos > lastBackwardBefore && f.isForwardCall(c) && f.gradMode(t) == GradMode::Enabled) {
          forwardBefore = true;
          firstForward = std::min(firstForward, pos);
        }
      }
    }
    if (!forwardBefore || !backwardAfter) return;
    // An earlier zero_grad (or `p.grad = None`) before the forward already freed the buffers.
    for (NodeId t : f.statementsOf(fn)) {
      if (!inStep(t)) continue;
      for (NodeId c : f.callsOf(t)) {
        uint32_t pos = m.expr(c).span.begin;
        if (c != call && methodName(m, c) == "zero_grad" && pos < firstForward && pos > lastBackwardBefore) zeroBeforeForward = true;
      }
    }
    if (zeroBeforeForward) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
               "`zero_grad()` runs after the forward, so the previous step's gradients stay allocated through the "
               "forward's memory peak");
        finding.hasFix = true;
        finding.fix = Fix{Applicability::DisplayOnly, "Move `zero_grad()` before the forward pass", {}};
  }
};

}  // namespace

const Rule& oom302() {
  static const Oom302 rule;
  return rule;
}

}  // namespace oomlint::rules
