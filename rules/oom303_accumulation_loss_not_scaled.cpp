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
`(i + 1) % k == 0` or similar) where the back-propagated loss, computed in the iteration, is not
divided by `k`. Silent when the loss is scaled in any way (`/ k`, `* weight`, `/= k`), comes from
a helper that may scale it, or when the gradients are rescaled before the step
(`p.grad.div_(k)`, a `scale_grads(...)` helper).

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
  for (NodeId s : f.statementsWithin(loop)) {
    if (m.stmt(s).kind != StmtKind::If) continue;
    const Stmt& st = m.stmt(s);
    if (st.value == kNone) continue;
    bool steps = false;
    for (NodeId body : items(m, st.body))
      if (f.reachesEvent(body, event::kStep)) steps = true;
    if (!steps) continue;
    NodeId k = kNone;
    f.forSubtree(st.value, [&](NodeId x) {
      if (k == kNone && m.expr(x).kind == ExprKind::BinOp && m.expr(x).text == "%" && m.expr(x).rhs != kNone) k = m.expr(x).rhs;
    });
    if (k != kNone) {
      guard = s;
      return k;
    }
  }
  return kNone;
}

/// The loss is scaled on purpose somewhere in its expression (`/ k`, `* weight`, `/ num_tokens`).
bool isScaled(const Facts& f, NodeId e) {
  const Module& m = f.module();
  bool scaled = false;
  f.forSubtree(e, [&](NodeId x) {
    const Expr& ex = m.expr(x);
    if (ex.kind == ExprKind::BinOp && (ex.text == "/" || ex.text == "//" || ex.text == "*")) scaled = true;
  });
  return scaled;
}

/// Gradients are rescaled before the step (`p.grad.div_(k)`, `p.grad /= k`, a `scale_grads(...)`
/// helper): the normalisation happens after backward instead.
bool rescalesGradients(const Facts& f, NodeId guard) {
  const Module& m = f.module();
  for (NodeId s : f.statementsWithin(guard)) {
    const Stmt& st = m.stmt(s);
    if (st.kind == StmtKind::AugAssign && (st.op == "/=" || st.op == "*=") && f.pathKey(st.target).find("grad") != std::string_view::npos)
      return true;
    for (NodeId c : f.callsOf(s)) {
      std::string_view meth = methodName(m, c);
      if ((meth == "div_" || meth == "mul_") && f.pathKey(receiverOf(m, c)).find("grad") != std::string_view::npos) return true;
      if (calleeName(m, c).find("scale_grad") != std::string_view::npos) return true;
    }
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
    NodeId subject = f.backwardSubject(call);
    if (subject == kNone || m.expr(subject).kind != ExprKind::Name) return;  // `(loss / k).backward()`
    std::string_view name = m.expr(subject).text;
    // Its definition in this iteration: a loss computed here (not by a helper that may scale it),
    // with history and no scaling anywhere in it.
    NodeId site = f.reachingAssignment(subject);
    if (site == kNone || !f.within(site, loop) || m.stmt(site).kind != StmtKind::Assign) return;
    NodeId value = m.stmt(site).value;
    const ValueFact& v = f.value(value);
    if (v.history != Tri::Yes || v.origin == kNone || !(f.isForwardCall(v.origin) || f.isLossCall(v.origin))) return;
    if (isScaled(f, value)) return;
    for (NodeId t : f.statementsWithin(loop)) {
      const Stmt& ts = m.stmt(t);
      if (ts.kind != StmtKind::AugAssign || f.pathKey(ts.target) != name) continue;
      if (ts.op == "/=" || ts.op == "//=" || ts.op == "*=") return;
    }
    if (rescalesGradients(f, guard)) return;
    std::string kText(m.textOf(k));
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "gradients are accumulated over `" + kText + "` steps but `" + std::string(name) +
                                      "` is not divided by it: each optimizer step sees the summed, not the mean, gradient");
    finding.note(m.stmt(site).span, "the loss is computed here, unscaled");
    finding.note(f.headerSpan(guard), "the optimizer steps only every `" + kText + "` iterations here");
    Edit edit;
    std::string divisor = m.expr(k).kind == ExprKind::Name || m.expr(k).kind == ExprKind::Attribute || m.expr(k).kind == ExprKind::Number
                              ? kText : "(" + kText + ")";
    std::string fix = std::string(name) + " = " + std::string(name) + " / " + divisor;
    if (!insertStatementBefore(m, s, statementText(m, fix), edit)) {
      finding.withFix(Applicability::DisplayOnly, "Divide the loss: `" + fix + "`");
      return;
    }
    finding.withFix(Applicability::Unsafe, "Divide the loss: `" + fix + "`", {edit});
  }
};

}  // namespace

const Rule& oom303() {
  static const Oom303 rule;
  return rule;
}

}  // namespace oomlint::rules
