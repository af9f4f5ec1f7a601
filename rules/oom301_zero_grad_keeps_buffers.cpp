// OOM301 zero-grad-keeps-buffers
#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM301",
    "zero-grad-keeps-buffers",
    Severity::Warning,
    true,
    true,
    FixKind::Unsafe,
    true,
    true,
    "zero_grad(set_to_none=False) keeps every .grad buffer allocated",
    R"doc(## What it does
Flags `optimizer.zero_grad(set_to_none=False)` / `model.zero_grad(False)` (C++ `zero_grad(false)`).

## Why is this bad?
Filling gradients with zeros keeps every `.grad` tensor allocated through the next forward pass,
where memory peaks: one extra parameter-sized buffer set (`+P·bytes`). With `set_to_none=True` (the
default since PyTorch 2.0) the buffers are released and re-created by the next backward.

## Example
```python
optimizer.zero_grad(set_to_none=False)
```

## Use instead
```python
optimizer.zero_grad()
```

## Fix safety
Unsafe: code that reads `p.grad` between `zero_grad()` and the next backward sees `None` instead of
zeros (and optimizers skip parameters whose gradient is `None`).

## Estimated cost
When the module `zero_grad` runs on (or the module whose `parameters()` the optimizer was built
over) has layers the file states, and a forward of it on a stated input peaks at 2·P or more of
activations, the message ends with `P · bytes per element`: the gradient buffers kept through
the forward. Below that the backward's or the optimizer's transients are the step's peak and the
buffers add less (measured: 22% of P where activations were 0.4x P), so no estimate is given.
Validated against the H200 probe: bench/estimates/ states the probe's workload, and a test holds the
estimate within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `zero_grad(set_to_none=false)` peaks at 8.6 GiB vs 8.5 GiB for
`zero_grad()`. Reproduce with `oomlint-probe OOM301`.

## Target PyTorch
`set_to_none=True` became the default in PyTorch 2.0: with an older `target-torch` the fix passes
`set_to_none=True` (C++ `zero_grad(true)`) instead of dropping the argument.

## References
- `torch.optim.Optimizer.zero_grad`: https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
)doc",
};

class Oom301 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    if (methodName(m, call) != "zero_grad") return;
    NodeId kw = keywordArg(m, call, "set_to_none");
    NodeId pos = positionalArg(m, call, 0);
    bool keeps = isFalseLiteral(m, kw) || (kw == kNone && isFalseLiteral(m, pos));
    if (!keeps) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "`zero_grad` with `set_to_none=False` keeps every `.grad` buffer allocated through the "
                                  "next forward peak");
    finding.withEstimate(gradientBuffersOf(ctx.facts(), call));
    Edit edit;
    finding.hasFix = true;
    finding.fix.applicability = Applicability::Unsafe;
    if (!ctx.torchAtLeast(2, 0)) {
      // Before PyTorch 2.0 the default was False: say True.
      edit = replaceExpr(m, kw != kNone ? kw : pos, m.lang == Lang::Python ? "True" : "true");
      finding.fix.message = m.lang == Lang::Python ? "Pass `set_to_none=True`" : "Pass `true`: `zero_grad(true)` sets gradients to none";
      finding.fix.edits.push_back(edit);
      return;
    }
    bool ok = kw != kNone ? removeKeywordArg(m, call, "set_to_none", edit) : removePositionalArg(m, call, 0, edit);
    if (!ok) {
      finding.hasFix = false;
      return;
    }
    finding.fix.message = m.lang == Lang::Python ? "Use the default `set_to_none=True`" : "Drop the `false`: `zero_grad()` sets gradients to none";
    finding.fix.edits.push_back(edit);
  }
};

}  // namespace

const Rule& oom301() {
  static const Oom301 rule;
  return rule;
}

}  // namespace oomlint::rules
