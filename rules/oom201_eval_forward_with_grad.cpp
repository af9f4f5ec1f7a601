// OOM201 eval-forward-with-grad
#include <unordered_set>

#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM201",
    "eval-forward-with-grad",
    Severity::Error,
    true,
    true,
    FixKind::Safe,
    true,
    true,
    "A forward pass on an evaluation path runs with autograd enabled",
    R"doc(## What it does
Flags the first forward call on an evaluation or inference path (after `model.eval()`, or in a
function named for validation, test, predict, evaluation or inference) that runs with gradient
tracking enabled: no enclosing `with torch.no_grad():` / `torch.inference_mode()` (context or
decorator; C++ `torch::NoGradGuard`, `c10::InferenceMode`) and no backward on that path.

## Why is this bad?
`model.eval()` switches dropout and batch-norm to inference behaviour; it does **not** turn off
autograd. Every forward still records its graph and saves activations for a backward that never
comes: the evaluation peak is about one whole forward's saved activations instead of a couple of
live layer outputs, and if outputs or losses are kept across batches, memory grows linearly.

## Example
```python
model.eval()
for x, y in val_loader:
    out = model(x)
```

## Use instead
```python
model.eval()
with torch.no_grad():
    for x, y in val_loader:
        out = model(x)
```
or decorate the evaluation function with `@torch.no_grad()` (`@torch.inference_mode()`).

## Fix safety
Safe: the path runs no backward, so disabling gradient tracking does not change any result. The fix
wraps the statement holding the forward (the evaluation loop) in `with torch.no_grad():`, re-indented
with the file's own indentation.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `model.eval(); out = model(x)` peaks at 4.0 GiB vs 1.0 GiB for
`NoGradGuard; out = model(x)`. Reproduce with `oomlint-probe OOM201`.

## References
- `torch.no_grad`: https://pytorch.org/docs/stable/generated/torch.no_grad.html
- Autograd mechanics, "Evaluation mode (nn.Module.eval())": https://pytorch.org/docs/stable/notes/autograd.html
)doc",
};

class Oom201 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onFunction(Context& ctx, uint32_t fn) const override {
    const Facts& f = ctx.facts();
    bool reported = false;
    for (NodeId s : f.statementsOf(fn)) {
      if (reported) return;
      if (!f.inEvalContext(s) || f.gradMode(s) != GradMode::Enabled) continue;
      NodeId loop = f.enclosingLoop(s);
      if (loop != kNone && (f.loopRole(loop) & loop_role::kTraining)) continue;
      for (NodeId c : f.callsOf(s)) {
        if (!f.isForwardCall(c)) continue;
        report(ctx, fn, s, c);
        reported = true;
        break;
      }
    }
  }

 private:
  static void report(Context& ctx, uint32_t fn, NodeId s, NodeId call) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  ticked(brief(m, m.expr(call).lhs, 30) + "(...)") +
                                      " runs on an evaluation path with autograd enabled; `eval()` does not disable "
                                      "gradient tracking, so the forward's activations are kept for a backward that never comes");
    finding.hasFix = true;
    finding.fix.applicability = Applicability::DisplayOnly;
    finding.fix.message = "Wrap the evaluation in `with torch.no_grad():`";
    // Wrap the outermost statement that still belongs to the evaluation path: the evaluation loop.
    NodeId wrap = s;
    for (NodeId p = m.stmt(s).parent; p != kNone; p = m.stmt(p).parent) {
      const Stmt& ps = m.stmt(p);
      if (!f.inEvalContext(p) || ps.kind == StmtKind::ClassDef || ps.kind == StmtKind::FunctionDef) break;
      if (f.gradMode(p) != GradMode::Enabled) break;
      if (ps.kind == StmtKind::With) break;  // keep inside the user's own context managers
      if (ps.kind == StmtKind::Try || ps.kind == StmtKind::If) {
        wrap = p;
        continue;
      }
      if ((ps.kind == StmtKind::For || ps.kind == StmtKind::While) && !(f.loopRole(p) & loop_role::kTraining)) {
        wrap = p;
        continue;
      }
      break;
    }
    if (m.lang == Lang::Cpp) {
      // C++: a RAII guard scoped to the rest of the block that holds the evaluation.
      finding.fix.message = "Insert `torch::NoGradGuard no_grad;` at the start of the evaluation scope";
      Edit edit;
      if (!insertStatementBefore(m, wrap, "torch::NoGradGuard no_grad;", edit)) return;
      finding.fix.applicability = Applicability::Safe;
      finding.fix.edits.push_back(edit);
      return;
    }
    std::string ctxName = localName(m, "torch.no_grad");
    if (ctxName.empty()) return;
    Edit edit;
    if (!wrapInWith(m, wrap, ctxName + "()", edit)) return;
    finding.fix.applicability = Applicability::Safe;
    finding.fix.edits.push_back(edit);
    (void)fn;
  }
};

}  // namespace

const Rule& oom201() {
  static const Oom201 rule;
  return rule;
}

}  // namespace oomlint::rules
