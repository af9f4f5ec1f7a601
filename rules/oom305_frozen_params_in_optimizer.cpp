// OOM305 frozen-params-in-optimizer
#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM305", "frozen-params-in-optimizer", Severity::Info, true, true, FixKind::Safe, true, true,
    "The optimizer is built over all parameters although some are frozen",
    R"doc(## What it does
Flags an optimizer constructed over `model.parameters()` after some of that model's parameters
were frozen (`p.requires_grad = False`, `module.requires_grad_(False)`) earlier in the same
function. The last write to `requires_grad` wins: a freeze undone by `requires_grad_(True)`
before the optimizer is built is no freeze.

## Why is this bad?
Mostly it is not, and oomlint says so honestly: Adam, AdamW, SGD and the other built-in optimizers
create their state in `step()`, only for parameters whose `.grad` is set, so with them the
**measured memory cost is about 0 bytes** (see the probe). The exception is `Adagrad` (Python and
C++ alike): its constructor allocates a `sum` like every parameter it is given, gradient or not,
so frozen parameters cost their own size for as long as the optimizer lives, and the message says
so. Filtering also documents intent. Note the trade-off: a parameter filtered out here is never
trained even if you unfreeze it later.

## Example
```python
for p in model.backbone.parameters():
    p.requires_grad = False
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
```

## Use instead
```python
optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-4)
```

## Fix safety
Safe as long as the frozen parameters stay frozen: the optimizer updates exactly the same tensors.
When the file sets `requires_grad` back to True after the optimizer is built, the fix is unsafe:
the unfrozen parameters would not be trained. When every parameter the optimizer is given is
frozen, the filter would leave it an empty list (which optimizers refuse): the fix is display-only.

## Estimated cost
With `Adagrad`, when each frozen part is a module frozen whole (`m.requires_grad_(False)`, or
`p.requires_grad = False` directly in a loop over `m.parameters()`) and the file states its
layers, the message ends with `P_frozen · bytes per element` kept after the step: the `sum`
Adagrad keeps for the frozen parameters. A freeze that filters parameters by name, or a part
unfrozen again, leaves which parameters are frozen unknown: no estimate. With the other
optimizers the cost is 0 bytes, which the message says without an estimate.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `Adam(model.parameters())` peaks at 256.0 MiB vs 256.0 MiB for
`Adam(trainable parameters)`; no difference: Adam keeps no state for parameters without gradients.
Reproduce with `oomlint-probe OOM305`. With Adagrad (`oomlint-probe OOM305-adagrad`, which
`--verify` runs for a finding whose optimizer is Adagrad): 192.0 MiB kept after the step vs
128.0 MiB over the trainable half, +64.0 MiB, the frozen half's parameter bytes, as estimated
(bench/estimates/oom305_adagrad.py).

## References
- Fine-tuning and freezing: https://pytorch.org/tutorials/beginner/finetuning_torchvision_models_tutorial.html
)doc",
};

/// Root path of the module whose parameters `e` lists: `model` for `model.backbone.parameters()`.
std::string_view paramsOwner(const Facts& f, NodeId e) {
  const Module& m = f.module();
  if (e == kNone || m.expr(e).kind != ExprKind::Call) return {};
  std::string_view meth = methodName(m, e);
  if (meth != "parameters" && meth != "named_parameters") return {};
  return f.pathKey(receiverOf(m, e));
}

class Oom305 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    const std::string& c = m.canonical(call);
    if (c.rfind("torch.optim.", 0) != 0) return;
    std::string_view cls = names::lastComponent(c);
    if (cls.empty() || !std::isupper(static_cast<unsigned char>(cls[0])) || c.find("lr_scheduler") != std::string::npos) return;
    NodeId params = positionalArg(m, call, 0);
    if (params == kNone) params = keywordArg(m, call, "params");
    std::string_view owner = paramsOwner(f, params);
    if (owner.empty() || methodName(m, params) != "parameters") return;
    NodeId s = m.expr(call).stmt;
    // The last write to requires_grad wins: a freeze undone before the optimizer is no freeze.
    uint32_t fn = m.stmt(s).function;
    NodeId frozenAt = f.frozenPartBefore(fn, owner, m.stmt(s).span.begin);
    if (frozenAt == kNone) return;
    std::string given = "some parameters of `" + std::string(owner) + "` are frozen but the optimizer gets all of them";
    // Adagrad builds its state for every parameter in its constructor; the others only in step(),
    // for parameters that have a gradient.
    bool eager = cls == "Adagrad";
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  given + (eager ? " (Adagrad allocates its state for every parameter it is given, frozen ones too)"
                                                 : " (Adam keeps no state for them: ~0 bytes)"));
    finding.note(f.headerSpan(frozenAt), "parameters of `" + std::string(owner) + "` are frozen here");
    std::vector<NodeId> frozenModules = f.frozenModulesBefore(fn, owner, m.stmt(s).span.begin);
    if (eager) {
      finding.probe = "OOM305-adagrad";
      finding.withEstimate(frozenOptimizerStateOf(f, frozenModules, cls));
    }
    // Every parameter frozen: the filter would leave the optimizer an empty list, which it refuses.
    if (frozenModules.size() == 1 && f.pathKey(frozenModules.front()) == owner) {
      finding.withFix(Applicability::DisplayOnly, "Every parameter of `" + std::string(owner) +
                                                      "` is frozen: pass the optimizer the parameters it should train");
      return;
    }
    if (m.lang == Lang::Cpp) {
      finding.withFix(Applicability::DisplayOnly, "Pass only the parameters with requires_grad() to the optimizer");
      return;
    }
    // Safe only while the frozen parameters stay frozen: a later unfreeze would not be trained.
    bool later = f.unfrozenAfter(owner, m.stmt(s).span.begin);
    finding.withFix(later ? Applicability::Unsafe : Applicability::Safe, "Pass only trainable parameters",
                    {replaceExpr(m, params, "filter(lambda p: p.requires_grad, " + std::string(m.textOf(params)) + ")")});
  }
};

}  // namespace

const Rule& oom305() {
  static const Oom305 rule;
  return rule;
}

}  // namespace oomlint::rules
