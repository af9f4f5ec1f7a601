// OOM506 oom-retry-in-except
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM506", "oom-retry-in-except", Severity::Warning, true, false, FixKind::DisplayOnly, true, true,
    "A retry after an out-of-memory error runs inside the except block",
    R"doc(## What it does
Flags a retry or fallback inside `except torch.cuda.OutOfMemoryError:` (or an
`except RuntimeError` that checks for "out of memory"): a forward, backward or optimizer step, or a
second call of what the `try` block ran when that call does work: a function of the file that runs
a forward, loss or update, or an unknown one called on arguments. Housekeeping (synchronising,
`barrier()`, logging, `empty_cache()`) before leaving the loop is not a retry.

## Why is this bad?
While the `except` block runs, the exception and its traceback are alive, and the traceback's
frames hold every tensor of the failed step (activations, the partial graph). The retry starts with
that memory still allocated, so it runs out of memory too, usually at a smaller batch size than it
should have.

## Example
```python
try:
    loss = step(batch)
except torch.cuda.OutOfMemoryError:
    torch.cuda.empty_cache()
    loss = step(batch[: len(batch) // 2])
```

## Use instead
```python
oom = False
try:
    loss = step(batch)
except torch.cuda.OutOfMemoryError:
    oom = True
if oom:                      # the traceback is gone here
    torch.cuda.empty_cache()
    loss = step(batch[: len(batch) // 2])
```

## Fix safety
Display only.

## Measured cost
not expressible in C++: stack unwinding destroys the failed step's tensors before a catch block
runs, so a retry in `catch` starts clean; the leak is Python's traceback holding frames

## References
- PyTorch FAQ, "My out of memory exception handler can't allocate memory": https://pytorch.org/docs/stable/notes/faq.html
)doc",
};

bool catchesOom(const Facts& f, const Handler& h) {
  const Module& m = f.module();
  if (h.type == kNone) return false;
  bool oomType = false, broad = false;
  f.forSubtree(h.type, [&](NodeId e) {
    const std::string& c = m.canonical(e);
    if (c == "torch.cuda.OutOfMemoryError" || c == "torch.OutOfMemoryError" || c == "torch.cuda.memory.OutOfMemoryError")
      oomType = true;
    const Expr& x = m.expr(e);
    if (x.kind == ExprKind::Name && (x.text == "RuntimeError" || x.text == "Exception")) broad = true;
  });
  if (oomType) return true;
  if (!broad) return false;
  // `except RuntimeError as e: if "out of memory" in str(e):`: the handler tests for it.
  for (NodeId body : items(m, h.body))
    for (NodeId e = m.stmt(body).firstExpr; e < m.stmt(body).endExpr && e < m.exprs.size(); ++e)
      if (m.expr(e).kind == ExprKind::String && m.expr(e).text.find("out of memory") != std::string_view::npos) return true;
  return false;
}

bool isHousekeeping(std::string_view callee) {
  for (std::string_view k : {"print", "str", "repr", "len", "isinstance", "empty_cache", "collect", "warn", "warning", "info",
                             "debug", "error", "log", "exception", "format", "synchronize", "reset_peak_memory_stats", "zero_grad",
                             "barrier", "sleep", "exit", "append", "update", "save", "flush", "close", "sync", "item"})
    if (callee == k) return true;
  return false;
}

/// The call retries the failed work: a forward, a backward or an optimizer step, or a second call
/// of something the `try` block ran that (as far as this file shows) does one of those. A
/// function of this file that only synchronises or logs is housekeeping, not a retry.
bool isRetry(const Facts& f, NodeId call, const std::vector<NodeId>& tried) {
  const Module& m = f.module();
  if (f.isForwardCall(call) || f.isOptimizerStep(call) || f.isBackwardCall(call)) return true;
  if (isHousekeeping(calleeName(m, call)) || m.expr(m.expr(call).lhs).kind == ExprKind::Lambda) return false;
  std::string_view callee = f.pathKey(m.expr(call).lhs);
  if (callee.empty()) return false;
  bool again = false;
  for (NodeId t : tried)
    if (f.pathKey(m.expr(t).lhs) == callee) again = true;
  if (!again) return false;
  std::span<const uint32_t> targets = f.callTargets(call);
  // The same unknown step run again on its inputs; without arguments it redoes no work (a
  // `sync_all()` or `barrier()` before leaving the loop).
  if (targets.empty()) {
    if (const ImportedFunction* imp = f.importedCallee(call))
      return (imp->summary->events & (event::kForward | event::kLoss | event::kUpdate)) != 0;
    return m.expr(call).argCount > 0;
  }
  for (uint32_t t : targets)
    if (f.summary(t).events & (event::kForward | event::kLoss | event::kUpdate)) return true;
  return false;
}

class Oom506 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onStatement(Context& ctx, NodeId s) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    const Stmt& st = m.stmt(s);
    if (st.kind != StmtKind::Try) return;
    for (uint32_t i = 0; i < st.handlerCount; ++i) {
      const Handler& h = m.handlers[st.firstHandler + i];
      if (!catchesOom(f, h)) continue;
      // What the try block ran.
      std::vector<NodeId> tried;
      for (NodeId body : items(m, st.body))
        for (NodeId t : f.statementsWithin(body))
          for (NodeId c : f.callsOf(t)) tried.push_back(c);
      for (NodeId top : items(m, h.body))
        for (NodeId t : f.statementsWithin(top))
          for (NodeId c : f.callsOf(t)) {
            if (!isRetry(f, c, tried)) continue;
            Finding& fd = ctx.report(kInfo, m.expr(c).span,
                                     ticked(brief(m, m.expr(c).lhs, 30) + "(...)") +
                                         " retries inside the out-of-memory handler, where the traceback still holds "
                                         "the failed step's tensors");
            fd.note(f.firstLine(h.span), "the out-of-memory error is caught here; its traceback lives until the handler ends");
            fd.withFix(Applicability::DisplayOnly, "Set a flag in the except block and retry after it");
            return;
          }
    }
  }
};

}  // namespace

const Rule& oom506() {
  static const Oom506 rule;
  return rule;
}

}  // namespace oomlint::rules
