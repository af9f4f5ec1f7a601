// OOM403 checkpoint-reentrant-implicit
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM403", "checkpoint-reentrant-implicit", Severity::Warning, true, false, FixKind::Safe, false, true,
    "checkpoint() without an explicit use_reentrant=",
    R"doc(## What it does
Flags `torch.utils.checkpoint.checkpoint(...)` and `checkpoint_sequential(...)` calls that do not
pass `use_reentrant=` explicitly.

## Why is this bad?
The implicit default has been the reentrant implementation, which silently produces no gradients
for the checkpointed block when none of its tensor inputs requires grad (a frozen embedding in
front of it is enough), does not support `torch.autograd.grad`, and ignores keyword tensors. Recent
PyTorch versions warn and require the argument; the non-reentrant variant is the recommended one.

## Example
```python
h = checkpoint(self.block, h)
```

## Use instead
```python
h = checkpoint(self.block, h, use_reentrant=False)
```

## Fix safety
Safe: `use_reentrant=False` computes the same values and gradients wherever the reentrant variant
worked, and also where it silently did not.

## References
## Target PyTorch
`use_reentrant=` exists from PyTorch 1.11: with an older `target-torch` nothing is flagged.

## References
- `torch.utils.checkpoint`: https://pytorch.org/docs/stable/checkpoint.html
)doc",
};

class Oom403 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const std::string& c = m.canonical(call);
    if (c != "torch.utils.checkpoint.checkpoint" && c != "torch.utils.checkpoint.checkpoint_sequential") return;
    if (keywordArg(m, call, "use_reentrant") != kNone || keywordArg(m, call, "**") != kNone) return;
    if (!ctx.torchAtLeast(1, 11)) return;  // the argument does not exist before 1.11
    Finding& f = ctx.report(kInfo, m.expr(call).span,
                            ticked(names::lastComponent(c)) + " without `use_reentrant=`: the implicit reentrant variant silently drops gradients when no input requires grad");
    Edit edit;
    if (!insertArgument(m, call, "use_reentrant=False", false, edit)) return;
    f.hasFix = true;
    f.fix.applicability = Applicability::Safe;
    f.fix.message = "Pass `use_reentrant=False`";
    f.fix.edits.push_back(edit);
  }
};

}  // namespace

const Rule& oom403() {
  static const Oom403 rule;
  return rule;
}

}  // namespace oomlint::rules
