// OOM506 oom-retry-in-except
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM506", "oom-retry-in-except", Severity::Warning, true, false, FixKind::DisplayOnly, true, true,
    "A retry after an out-of-memory error runs inside the except block",
    R"doc(## What it does
Flags a retry or fallback forward inside `except torch.cuda.OutOfMemoryError:` (or an
`except RuntimeError` that checks for "out of memory"): a forward call, or a second call of what the
`try` block ran.

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

bool catchesOom(const Module& m, const Handler& h) {
  if (h.type == kNone) return false;
  const Span& sp = m.expr(h.type).span;
  for (NodeId e = h.type + 1; e-- > 0;) {
    const Expr& x = m.expr(e);
    if (x.span.begin < sp.begin || x.span.end > sp.end) break;
    const std::string& c = m.canonical(e);
    if (c == "torch.cuda.OutOfMemoryError" || c == "torch.OutOfMemoryError" || c == "torch.cuda.memory.OutOfMemoryError")
      return true;
  }
  std::string_view t = m.textOf(h.type);
  bool broad = t.find("RuntimeError") != std::string_view::npos || t == "Exception";
  return broad && m.textOf(h.span).find("out of memory") != std::string_view::npos;
}

bool isHousekeeping(std::string_view callee) {
  for (std::string_view k : {"print", "str", "repr", "len", "isinstance", "empty_cache", "collect", "warn", "warning", "info",
                             "debug", "error", "log", "exception", "format", "synchronize", "reset_peak_memory_stats", "zero_grad"})
    if (callee == k) return true;
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
      if (!catchesOom(m, h)) continue;
      // What the try block ran.
      std::vector<std::string_view> tried;
      for (NodeId body : items(m, st.body))
        for (NodeId t : f.statementsOf(st.function))
          if (f.within(t, body))
            for (NodeId c : f.callsOf(t)) tried.push_back(m.textOf(m.expr(c).lhs));
      for (NodeId body : items(m, h.body)) {
        for (NodeId t : f.statementsOf(st.function)) {
          if (!f.within(t, body)) continue;
          for (NodeId c : f.callsOf(t)) {
            std::string_view callee = m.textOf(m.expr(c).lhs);
            if (isHousekeeping(calleeName(m, c)) || m.expr(m.expr(c).lhs).kind == ExprKind::Lambda) continue;
            bool retry = f.isForwardCall(c);
            for (std::string_view t2 : tried)
              if (t2 == callee && !isHousekeeping(calleeName(m, c))) retry = true;
            if (!retry) continue;
            Finding& fd = ctx.report(kInfo, m.expr(c).span,
                                     ticked(brief(m, m.expr(c).lhs, 30) + "(...)") +
                                         " retries inside the out-of-memory handler, where the traceback still holds "
                                         "the failed step's tensors");
            fd.hasFix = true;
            fd.fix = Fix{Applicability::DisplayOnly, "Set a flag in the except block and retry after it", {}};
            return;
          }
        }
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
