// OOM702 fp16-without-grad-scaler
#include "rules/amp_common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM702", "fp16-without-grad-scaler", Severity::Warning, true, false, FixKind::DisplayOnly, false, true,
    "float16 autocast training without a GradScaler",
    R"doc(## What it does
Flags an `autocast` that runs in float16 (explicit `dtype=torch.float16` / `torch.half`, or the
CUDA default of `torch.cuda.amp.autocast()` / `torch.autocast("cuda")` without a dtype) in a file
that calls `backward()` when no module of its program creates a `GradScaler`: an AMP optimizer
wrapper of another module that owns the scaler (`optimizer.backward(loss)` scaling inside) counts.

## Why is this bad?
float16 has a narrow exponent range: small gradients underflow to zero, so parts of the model stop
learning without any error. `GradScaler` multiplies the loss before backward and unscales the
gradients before the optimizer step, keeping them representable. (bfloat16 has float32's range and
needs no scaler.)

## Example
```python
with torch.autocast("cuda", dtype=torch.float16):
    loss = criterion(model(x), y)
loss.backward()
optimizer.step()
```

## Use instead
```python
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.float16):
    loss = criterion(model(x), y)
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
```
or `dtype=torch.bfloat16` on hardware that supports it.

## Fix safety
Display only. oomlint stays silent when the file uses Accelerate, Lightning or DeepSpeed, which
scale the loss themselves.

## References
- Automatic mixed precision, gradient scaling: https://pytorch.org/docs/stable/amp.html#gradient-scaling
)doc",
};

bool isHalf(const Module& m, NodeId e) {
  if (e == kNone) return false;
  const std::string& c = m.canonical(e);
  return c == "torch.float16" || c == "torch.half";
}

class Oom702 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const std::string& c = m.canonical(call);
    if (!isAutocast(c)) return;
    if (keywordArg(m, call, "**") != kNone) return;  // dtype may come from the kwargs: unknown
    NodeId dtype = keywordArg(m, call, "dtype");
    bool fp16 = isHalf(m, dtype);
    if (dtype == kNone) {
      // Without a dtype, CUDA autocast runs in float16.
      if (c == "torch.cuda.amp.autocast") fp16 = true;
      NodeId dev = positionalArg(m, call, 0);
      if (dev == kNone) dev = keywordArg(m, call, "device_type");
      if ((c == "torch.autocast" || c == "torch.amp.autocast") && dev != kNone && m.expr(dev).kind == ExprKind::String &&
          m.expr(dev).text.find("cuda") != std::string_view::npos)
        fp16 = true;
    }
    if (!fp16 || !usesBackwardWithoutScaler(ctx)) return;
    // The autocast region must be training: its function reaches a backward, with grad enabled.
    const Facts& facts = ctx.facts();
    NodeId s = m.expr(call).stmt;
    uint32_t fn = m.stmt(s).function;
    if (!facts.functionReachesUpdate(fn) || facts.gradMode(s) == GradMode::Disabled || facts.inEvalContext(s)) return;
    Finding& f = ctx.report(kInfo, m.expr(call).span,
                            "float16 autocast training without a `GradScaler`: small gradients underflow to zero");
    f.hasFix = true;
    f.fix = Fix{Applicability::DisplayOnly, "Scale the loss with `torch.amp.GradScaler(\"cuda\")`, or use `dtype=torch.bfloat16`", {}};
  }

 private:
  static bool usesBackwardWithoutScaler(Context& ctx) {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    // A scaler here, or in another module of the program (an AMP optimizer wrapper owning one).
    if (f.usesGradScaler() || f.programUsesGradScaler()) return false;
    for (const auto& [local, full] : m.imports) {
      std::string_view root = std::string_view(full).substr(0, full.find('.'));
      if (root == "accelerate" || root == "lightning" || root == "pytorch_lightning" || root == "deepspeed") return false;
    }
    bool backward = false;
    for (NodeId e = 0; e < m.exprs.size(); ++e) {
      const Expr& x = m.expr(e);
      if (x.kind != ExprKind::Call) continue;
      if (methodName(m, e) == "scale") return false;  // a scaler made elsewhere
      if (f.isBackwardCall(e)) backward = true;
    }
    return backward;
  }
};

}  // namespace

const Rule& oom702() {
  static const Oom702 rule;
  return rule;
}

}  // namespace oomlint::rules
