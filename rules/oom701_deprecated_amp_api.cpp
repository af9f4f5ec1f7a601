// OOM701 deprecated-amp-api
#include "rules/amp_common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM701", "deprecated-amp-api", Severity::Warning, true, false, FixKind::Safe, false, true,
    "Deprecated torch.cuda.amp / torch.cpu.amp API",
    R"doc(## What it does
Flags calls of `torch.cuda.amp.autocast(...)`, `torch.cpu.amp.autocast(...)` and
`torch.cuda.amp.GradScaler(...)`, however they were imported (the import itself is not flagged).
Silent where the call exists for older PyTorch: a branch of a torch-version or API test
(`if _TORCH_GREATER_EQUAL_2_4:`, `if version.parse(torch.__version__) >= ...`,
`hasattr(torch, "autocast")`, including what follows an `if` that returns), an arm of such a
conditional expression, and an `except (AttributeError, ImportError, TypeError)` fallback.

## Why is this bad?
These spellings are deprecated since PyTorch 2.4 and emit a `FutureWarning` on every call; they will
be removed. The device-generic `torch.autocast(device_type, ...)` and `torch.amp.GradScaler(device,
...)` are the supported API.

## Example
```python
scaler = torch.cuda.amp.GradScaler()
with torch.cuda.amp.autocast(dtype=torch.bfloat16):
    loss = model(x)
```

## Use instead
```python
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = model(x)
```

## Fix safety
Safe: the replacement takes the same keyword arguments and behaves the same. oomlint offers it when
`torch` is imported under a name it can use and the old call passes no positional arguments that
would shift (autocast's first positional argument was `enabled`); otherwise it only shows it.

## Target PyTorch
`torch.amp.GradScaler` needs PyTorch 2.3 and `torch.autocast` 1.10: with an older `target-torch`
(or declared torch requirement) the call it would replace is not flagged.

## References
- Automatic mixed precision: https://pytorch.org/docs/stable/amp.html
)doc",
};

class Oom701 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const std::string& c = m.canonical(call);
    if (!isDeprecatedAmp(c)) return;
    // The fallback branch of a version or API test exists to call the old API on old PyTorch.
    if (ctx.facts().versionGatedExpr(call)) return;
    bool scaler = c == "torch.cuda.amp.GradScaler";
    // The replacement must exist on the oldest PyTorch the project supports.
    if (scaler ? !ctx.torchAtLeast(2, 3) : !ctx.torchAtLeast(1, 10)) return;
    std::string device = c.rfind("torch.cpu.", 0) == 0 ? "cpu" : "cuda";
    std::string target = scaler ? "torch.amp.GradScaler" : "torch.autocast";
    std::string local = localName(m, target);
    std::string shown = (local.empty() ? target : local) + "(\"" + device + "\", ...)";
    Finding& f = ctx.report(kInfo, m.expr(call).span, ticked(c) + " is deprecated; use `" + shown + "`");
    f.withFix(Applicability::DisplayOnly, "Use `" + shown + "`");
    if (local.empty()) return;
    if (!scaler && positionalArg(m, call, 0) != kNone) return;  // `autocast(True)` would shift into dtype
    if (keywordArg(m, call, "device_type") != kNone || keywordArg(m, call, "device") != kNone) return;
    Edit callee = replaceExpr(m, m.expr(call).lhs, local);
    Edit arg;
    if (!insertArgument(m, call, "\"" + device + "\"", true, arg)) return;
    f.withFix(Applicability::Safe, "Use `" + shown + "`", {callee, arg});
  }
};

}  // namespace

const Rule& oom701() {
  static const Oom701 rule;
  return rule;
}

}  // namespace oomlint::rules
