// OOM801 per-parameter-sync-in-loop
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM801", "per-parameter-sync-in-loop", Severity::Info, true, true, FixKind::DisplayOnly, false, true,
    "A device sync per parameter inside the training loop",
    R"doc(## What it does
Flags `.item()`, `.cpu()`, `.tolist()`, `.numpy()` or `float(...)` on a parameter or its gradient
inside a loop over `model.parameters()` / `named_parameters()` that runs every training step: inside
a training loop, or in a step function (one that backpropagates or steps and holds no training
loop of its own). A parameter loop after a function's own training loop runs once, and one that
returns or breaks on its first parameter is not a loop.

## Why is this bad?
Each call waits for the GPU to finish and copies one number back: with hundreds of parameter
tensors that is hundreds of synchronisations per step, serialising the CPU and GPU. Step time
suffers, not memory.

## Example
```python
for name, p in model.named_parameters():
    writer.add_scalar(f"grad/{name}", p.grad.norm().item(), step)
```

## Use instead
Reduce on the device and sync once (`torch.stack([p.grad.norm() for p in params]).cpu()`), use
`torch.nn.utils.clip_grad_norm_`'s return value, or log every N steps.

## Fix safety
Display only.

## References
- Performance tuning guide, avoid unnecessary CPU-GPU synchronisation: https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
)doc",
};

bool guardedByModulo(const Facts& f, NodeId s, NodeId outer) {
  const Module& m = f.module();
  for (NodeId p = m.stmt(s).parent; p != kNone && p != outer; p = m.stmt(p).parent) {
    if (m.stmt(p).kind != StmtKind::If || m.stmt(p).value == kNone) continue;
    bool modulo = false;
    f.forSubtree(m.stmt(p).value, [&](NodeId x) {
      if (m.expr(x).kind == ExprKind::BinOp && m.expr(x).text == "%") modulo = true;
    });
    if (modulo) return true;
  }
  return false;
}

/// The function is one training step: it reaches an update and holds no training loop of its own
/// (a parameter loop after a function's own training loop runs once, not per step).
bool isStepFunction(const Facts& f, uint32_t fn) {
  return f.functionReachesUpdate(fn) && !f.holdsTrainingLoop(fn);
}

class Oom801 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    std::string_view meth = methodName(m, call);
    NodeId subject = kNone;
    if ((meth == "item" || meth == "cpu" || meth == "tolist" || meth == "numpy") && m.canonical(call).empty())
      subject = receiverOf(m, call);
    else if (calleeName(m, call) == "float" && m.expr(m.expr(call).lhs).kind == ExprKind::Name)
      subject = positionalArg(m, call, 0);
    if (subject == kNone) return;
    NodeId s = m.expr(call).stmt;
    // The innermost loop over parameters that the subject depends on.
    for (NodeId l = f.enclosingLoop(s); l != kNone; l = f.enclosingLoop(l)) {
      const Stmt& loop = m.stmt(l);
      if (loop.kind != StmtKind::For || loop.value == kNone) continue;
      NodeId iter = loop.value;
      if (m.expr(iter).kind == ExprKind::Call && calleeName(m, iter) == "enumerate") iter = positionalArg(m, iter, 0);
      std::string_view it = methodName(m, iter);
      if (it != "parameters" && it != "named_parameters") continue;
      bool uses = false;
      f.forSubtree(loop.target, [&](NodeId x) {
        if (m.expr(x).kind == ExprKind::Name && f.mentionsPath(subject, m.expr(x).text)) uses = true;
      });
      if (!uses || f.runsOnce(l)) return;
      // Runs every training step: inside a training loop, or in a step function.
      NodeId outer = f.enclosingLoop(l);
      bool perStep = (outer != kNone && (f.loopRole(outer) & loop_role::kTraining)) ||
                     (outer == kNone && isStepFunction(f, loop.function));
      if (!perStep || guardedByModulo(f, s, outer)) return;
      Finding& fd = ctx.report(kInfo, m.expr(call).span,
                               ticked(meth.empty() ? "float" : meth) + " on every parameter each step: one device synchronisation per parameter tensor");
      fd.note(f.headerSpan(l), "this loop walks the parameters");
      if (outer != kNone) noteLoop(fd, f, outer);
      fd.withFix(Applicability::DisplayOnly, "Reduce on the device and sync once, or log every N steps");
      return;
    }
  }
};

}  // namespace

const Rule& oom801() {
  static const Oom801 rule;
  return rule;
}

}  // namespace oomlint::rules
