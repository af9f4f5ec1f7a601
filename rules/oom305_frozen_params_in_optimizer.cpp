// OOM305 frozen-params-in-optimizer
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM305", "frozen-params-in-optimizer", Severity::Info, true, true, FixKind::Safe, true, true,
    "The optimizer is built over all parameters although some are frozen",
    R"doc(## What it does
Flags an optimizer constructed over `model.parameters()` after some of that model's parameters
were frozen (`p.requires_grad = False`, `module.requires_grad_(False)`) earlier in the same
function.

## Why is this bad?
Mostly it is not, and oomlint says so honestly: Adam and the other built-in optimizers create no
state for parameters whose `.grad` stays `None`, so the **measured memory cost is about 0 bytes**
(see the probe). The common advice to filter frozen parameters saves memory only with optimizers
that allocate state eagerly, and it documents intent. Note the trade-off: a parameter filtered out
here is never trained even if you unfreeze it later.

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

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `Adam(model.parameters())` peaks at 256.0 MiB vs 256.0 MiB for
`Adam(trainable parameters)`; no difference: Adam keeps no state for parameters without gradients.
Reproduce with `oomlint-probe OOM305`.

## References
- Fine-tuning and freezing: https://pytorch.org/tutorials/beginner/finetuning_torchvision_models_tutorial.html
)doc",
};

bool startsWithPath(std::string_view path, std::string_view root) {
  return path == root || (path.size() > root.size() && path.substr(0, root.size()) == root && path[root.size()] == '.');
}

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
    if (!frozenBefore(f, m.stmt(s).function, owner, m.stmt(s).span.begin)) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "some parameters of `" + std::string(owner) +
                                      "` are frozen but the optimizer gets all of them (Adam keeps no state for them: ~0 bytes)");
    finding.hasFix = true;
    finding.fix.applicability = Applicability::Safe;
    finding.fix.message = "Pass only trainable parameters";
    if (m.lang == Lang::Cpp) {
      finding.fix.applicability = Applicability::DisplayOnly;
      finding.fix.message = "Pass only the parameters with requires_grad() to the optimizer";
      return;
    }
    finding.fix.edits.push_back(replaceExpr(m, params, "filter(lambda p: p.requires_grad, " + std::string(m.textOf(params)) + ")"));
  }

 private:
  static bool frozenBefore(const Facts& f, uint32_t fn, std::string_view owner, uint32_t before) {
    const Module& m = f.module();
    for (NodeId s : f.statementsOf(fn)) {
      const Stmt& st = m.stmt(s);
      if (st.span.begin >= before) break;
      // `X.requires_grad = False` with X under owner, or a loop variable over owner's parameters.
      if (st.kind == StmtKind::Assign && isFalseLiteral(m, st.value)) {
        for (NodeId t : items(m, st.targets)) {
          const Expr& te = m.expr(t);
          if (te.kind != ExprKind::Attribute || te.text != "requires_grad") continue;
          std::string_view base = f.pathKey(te.lhs);
          if (startsWithPath(base, owner) || loopVariableOverParams(f, s, base, owner)) return true;
        }
      }
      if (st.kind == StmtKind::Expr && (methodName(m, st.value) == "requires_grad_" || methodName(m, st.value) == "set_requires_grad") &&
          isFalseLiteral(m, positionalArg(m, st.value, 0))) {
        std::string_view base = f.pathKey(receiverOf(m, st.value));
        if (startsWithPath(base, owner) || loopVariableOverParams(f, s, base, owner)) return true;
      }
    }
    return false;
  }

  /// `for p in owner.x.parameters(): p.requires_grad = False` (also named_parameters).
  static bool loopVariableOverParams(const Facts& f, NodeId s, std::string_view var, std::string_view owner) {
    const Module& m = f.module();
    for (NodeId l = f.enclosingLoop(s); l != kNone; l = f.enclosingLoop(l)) {
      const Stmt& loop = m.stmt(l);
      if (loop.kind != StmtKind::For) continue;
      std::string_view over = paramsOwner(f, loop.value);
      if (over.empty() || !startsWithPath(over, owner)) continue;
      if (mentions(m, loop.target, var)) return true;
    }
    return false;
  }
};

}  // namespace

const Rule& oom305() {
  static const Oom305 rule;
  return rule;
}

}  // namespace oomlint::rules
