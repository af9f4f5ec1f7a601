// OOM304 missing-zero-grad
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM304", "missing-zero-grad", Severity::Warning, true, true, FixKind::DisplayOnly, false, true,
    "A training loop steps the optimizer but nothing ever clears the gradients",
    R"doc(## What it does
Flags `optimizer.step()` in a training loop (one that runs `backward()`) in a file where nothing
clears gradients: no `zero_grad()`, no `p.grad = None`, no `p.grad.zero_()`. An LR scheduler's
`step()` (`StepLR(...)`, `get_cosine_schedule_with_warmup(...)`) is not an optimizer step, and
distributed autograd (`dist_autograd.context()` with a `DistributedOptimizer`) keeps gradients
per context: there is nothing to zero.

## Why is this bad?
`backward()` adds into `.grad`. Without clearing, every step's update uses the sum of all previous
gradients: the model diverges or trains with an ever-growing effective learning rate. (It is not a
memory growth: the `.grad` buffers are allocated once.)

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Fix safety
Display only. oomlint looks at the whole file (helpers included) and stays silent if gradients are
cleared or assigned anywhere in it, and in Lightning modules (the framework clears them).

## References
- `torch.optim.Optimizer.zero_grad`: https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
)doc",
};

class Oom304 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (!f.isOptimizerStep(call)) return;
    if (methodName(m, receiverOf(m, call)) == "scale") return;
    NodeId s = m.expr(call).stmt;
    // The outermost loop around the step that runs a backward.
    NodeId trainLoop = kNone;
    for (NodeId l = f.enclosingLoop(s); l != kNone; l = f.enclosingLoop(l))
      if (f.reachesBackward(l)) trainLoop = l;
    if (trainLoop == kNone) return;
    if (f.clearsGradients()) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "the optimizer steps every iteration but nothing clears the gradients, so each step applies "
                                  "the sum of all gradients so far");
    noteLoop(finding, f, trainLoop);
    finding.withFix(Applicability::DisplayOnly, "Call `optimizer.zero_grad()` before each forward");
  }
};

}  // namespace

const Rule& oom304() {
  static const Oom304 rule;
  return rule;
}

}  // namespace oomlint::rules
