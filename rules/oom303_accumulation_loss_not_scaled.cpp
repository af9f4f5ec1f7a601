// OOM303 accumulation-loss-not-scaled
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM303", "accumulation-loss-not-scaled", Severity::Warning, true, true, FixKind::Unsafe, true, true,
    "Gradient accumulation without dividing the loss by the number of accumulation steps",
    R"doc(## What it does
Flags gradient accumulation (`backward()` every iteration, `optimizer.step()` only under
`(i + 1) % k == 0` or similar) where the back-propagated loss is not divided by `k`.

## Why is this bad?
Gradients of `k` micro-batches are summed, so each optimizer step sees `k` times the gradient of
one batch: the effective learning rate is `k` times what was tuned, and changing `k` changes the
training dynamics. This is a **correctness** bug, not a memory leak: the popular claim that an
unscaled accumulation loss "grows memory linearly" measured false (both variants peak at the same
bytes; see the probe).

## Example
```python
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead
```python
    loss = criterion(model(x), y) / accum_steps
```

## Fix safety
Unsafe: inserting `loss = loss / k` before the backward also changes what later code logs from
`loss` in the same iteration.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `loss.backward() x k (unscaled)` peaks at 162.0 MiB vs 162.0 MiB
for `(loss / k).backward() x k`; the same peak (the seed claim of linear memory growth is refuted:
refuted: peak 169911296 B vs 169911808 B scaled; growth 0 B/step). Reproduce with `oomlint-probe
OOM303`.

## References
- PyTorch forum, gradient accumulation: https://discuss.pytorch.org/t/why-do-we-need-to-set-the-gradients-manually-to-zero-in-pytorch/4903/20
)doc",
};

/// The `k` of an `if (...) % k == 0:` guard that holds an optimizer step inside `loop`.
NodeId accumulationDivisor(const Facts& f, NodeId loop, NodeId& guard) {
  const Module& m = f.module();
  for (NodeId s : f.statementsOf(m.stmt(loop).function)) {
    if (!f.within(s, loop) || m.stmt(s).kind != StmtKind::If) continue;
    const Stmt& st = m.stmt(s);
    if (st.value == kNone) continue;
    bool steps = false;
    for (NodeId body : items(m, st.body))
      for (NodeId t : f.statementsOf(st.function))
        if (f.within(t, body))
          for (NodeId c : f.callsOf(t))
            if (f.isOptimizerStep(c)) steps = true;
    if (!steps) continue;
    const Span& cs = m.expr(st.value).span;
    for (NodeId e = st.value + 1; e-- > 0;) {
      const Expr& x = m.expr(e);
      if (x.span.begin < cs.begin || x.span.end > cs.end) break;
      if (x.kind == ExprKind::BinOp && x.text == "%" && x.rhs != kNone) {
        guard = s;
        return x.rhs;
      }
    }
  }
  return kNone;
}

bool hasDivision(const Module& m, NodeId e) {
  const Span& sp = m.expr(e).span;
  for (NodeId x = e + 1; x-- > 0;) {
    const Expr& ex = m.expr(x);
    if (ex.span.begin < sp.begin || ex.span.end > sp.end) break;
    if (ex.kind == ExprKind::BinOp && (ex.text == "/" || ex.text == "//")) return true;
  }
  return false;
}

class Oom303 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (!f.isBackwardCall(call)) return;
    NodeId s = m.expr(call).stmt;
    NodeId loop = f.enclosingLoop(s);
    if (loop == kNone) return;
    NodeId guard = kNone;
    NodeId k = accumulationDivisor(f, loop, guard);
    if (k == kNone || f.within(s, guard)) return;  // backward inside the guard: not accumulation
    // The loss: `loss.backward()`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`.
    NodeId subject = receiverOf(m, call);
    if (subject != kNone && m.expr(subject).kind == ExprKind::Call && methodName(m, subject) == "scale")
      subject = positionalArg(m, subject, 0);
    else if (positionalArg(m, call, 0) != kNone && m.canonical(call).empty() && subject != kNone &&
             f.value(subject).history != Tri::Yes)
      subject = positionalArg(m, call, 0);
    if (subject == kNone) return;
    if (m.expr(subject).kind == ExprKind::BinOp) return;  // `(loss / k).backward()`
    if (m.expr(subject).kind != ExprKind::Name) return;
    std::string_view name = m.expr(subject).text;
    // Its definition in this iteration: a loss with history and no division anywhere in it.
    NodeId value = kNone;
    for (NodeId t : f.statementsOf(m.stmt(s).function)) {
      if (!f.within(t, loop) || m.stmt(t).span.begin >= m.stmt(s).span.begin) continue;
      const Stmt& ts = m.stmt(t);
      if (ts.kind == StmtKind::AugAssign && f.pathKey(ts.target) == name && (ts.op == "/=" || ts.op == "//=")) return;
      if (ts.kind == StmtKind::Assign)
        for (NodeId target : items(m, ts.targets))
          if (m.expr(target).kind == ExprKind::Name && m.expr(target).text == name) value = ts.value;
    }
    if (value == kNone || f.value(value).history != Tri::Yes || hasDivision(m, value)) return;
    std::string kText(m.textOf(k));
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "gradients are accumulated over `" + kText + "` steps but `" + std::string(name) +
                                      "` is not divided by it: each optimizer step sees the summed, not the mean, gradient");
    Edit edit;
    std::string divisor = m.expr(k).kind == ExprKind::Name || m.expr(k).kind == ExprKind::Attribute || m.expr(k).kind == ExprKind::Number
                              ? kText : "(" + kText + ")";
    if (!insertStatementBefore(m, s, statementText(m, std::string(name) + " = " + std::string(name) + " / " + divisor), edit)) return;
    finding.hasFix = true;
    finding.fix.applicability = Applicability::Unsafe;
    finding.fix.message = "Divide the loss: `" + std::string(name) + " = " + std::string(name) + " / " + divisor + "`";
    finding.fix.edits.push_back(edit);
  }
};

}  // namespace

const Rule& oom303() {
  static const Oom303 rule;
  return rule;
}

}  // namespace oomlint::rules
