// OOM802 per-step-host-sync (off by default)
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM802", "per-step-host-sync", Severity::Info, true, true, FixKind::DisplayOnly, false, false,
    "print / logging of a device tensor on every training step",
    R"doc(## What it does
Off by default (enable with `--extend-select OOM802`). Flags `print(...)` and logger calls
(`logger.info`, `writer.add_scalar`, `wandb.log`, ...) that receive a device tensor, or its
`.item()`, on every step of a training loop with no `step % N` guard around them.

## Why is this bad?
Printing or logging a CUDA tensor's value forces the host to wait for the GPU: one
synchronisation per step, which stalls the input pipeline and the kernel queue. The popular claim
that frequent logging "accumulates GPU memory" **measured false**: `SummaryWriter.add_scalar`
converts to a Python number, and memory stays flat. The cost is time, not memory (the real memory
leaks are OOM101 and OOM102).

## Example
```python
for step, (x, y) in enumerate(loader):
    ...
    writer.add_scalar("loss", loss.item(), step)
```

## Use instead
```python
    if step % 100 == 0:
        writer.add_scalar("loss", loss.item(), step)
```

## Fix safety
Display only.

## References
- Performance tuning guide: https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
)doc",
};

bool isLogCall(const Module& m, NodeId call) {
  const Expr& callee = m.expr(m.expr(call).lhs);
  if (callee.kind == ExprKind::Name) return callee.text == "print" && callee.canonical == 0;
  if (callee.kind != ExprKind::Attribute) return false;
  std::string_view meth = callee.text;
  if (m.canonical(call) == "wandb.log") return true;
  bool logMethod = meth == "info" || meth == "debug" || meth == "warning" || meth == "log" || meth == "add_scalar" ||
                   meth == "add_scalars" || meth == "log_metrics" || meth == "log_metric";
  if (!logMethod) return false;
  std::string recv;  // the receiver's identifiers: `logger`, `self.writer`, `tb_writer`
  for (NodeId p = callee.lhs; p != kNone && (m.expr(p).kind == ExprKind::Attribute || m.expr(p).kind == ExprKind::Name); p = m.expr(p).lhs)
    recv += names::lower(m.expr(p).text) + ".";
  return recv.find("log") != std::string::npos || recv.find("writer") != std::string::npos ||
         recv.find("wandb") != std::string::npos || recv.find("tb") != std::string::npos || recv.find("mlflow") != std::string::npos;
}

class Oom802 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    if (!isLogCall(m, call)) return;
    NodeId s = m.expr(call).stmt;
    NodeId loop = f.enclosingLoop(s);
    if (loop == kNone || !(f.loopRole(loop) & loop_role::kTraining)) return;
    for (NodeId p = m.stmt(s).parent; p != kNone && p != loop; p = m.stmt(p).parent)
      if (m.stmt(p).kind == StmtKind::If && m.stmt(p).value != kNone && hasModulo(f, m.stmt(p).value)) return;
    // A device tensor among the arguments, directly or through `.item()`.
    bool tensor = false;
    const Span& cs = m.expr(call).span;
    for (NodeId e = call; e-- > 0 && !tensor;) {
      const Expr& x = m.expr(e);
      if (x.span.begin < cs.begin || x.span.end > cs.end) break;
      if (x.kind == ExprKind::Call && methodName(m, e) == "item") {
        const ValueFact& v = f.value(receiverOf(m, e));
        tensor = v.history == Tri::Yes || v.device == Tri::Yes;
      } else if (x.kind == ExprKind::Name) {
        const ValueFact& v = f.value(e);
        tensor = v.history == Tri::Yes || v.device == Tri::Yes;
      }
    }
    if (!tensor) return;
    Finding& fd = ctx.report(kInfo, m.expr(call).span,
                             "logging a device tensor every step synchronises the host with the GPU each iteration");
    fd.hasFix = true;
    fd.fix = Fix{Applicability::DisplayOnly, "Log every N steps (`if step % N == 0:`)", {}};
  }
};

}  // namespace

const Rule& oom802() {
  static const Oom802 rule;
  return rule;
}

}  // namespace oomlint::rules
