// OOM502 cudnn-benchmark-dynamic-shapes
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM502", "cudnn-benchmark-dynamic-shapes", Severity::Info, true, true, FixKind::DisplayOnly, false, true,
    "cudnn.benchmark = True in a program whose batch shapes vary",
    R"doc(## What it does
Flags `torch.backends.cudnn.benchmark = True` in a file whose batches visibly vary in shape:
padding collate functions (`pad_sequence`, `F.pad` in a `collate_fn`), packed sequences, or a
`DataLoader(..., drop_last=False)` written out.

## Why is this bad?
With `benchmark = True`, cuDNN times every candidate algorithm for each new input shape and keeps
the fastest. Each new shape triggers a fresh round of trials, each of which may allocate a large
workspace: a memory spike (and a slow step) whenever a new sequence length or a smaller last batch
shows up. With shapes that keep changing, the tuning never pays off.

## Example
```python
torch.backends.cudnn.benchmark = True
loader = DataLoader(ds, batch_size=32, collate_fn=pad_collate)
```

## Use instead
Leave `benchmark` off for variable shapes, or bucket/pad inputs to a few fixed shapes (and
`drop_last=True`) so the tuning is done once per shape.

## Fix safety
Display only.

## References
- `torch.backends.cudnn.benchmark`: https://pytorch.org/docs/stable/backends.html#torch.backends.cudnn.benchmark
)doc",
};

bool isPadCall(const std::string& c) {
  return c == "torch.nn.utils.rnn.pad_sequence" || c == "torch.nn.utils.rnn.pack_padded_sequence" ||
         c == "torch.nn.utils.rnn.pack_sequence" || c == "torch.nn.functional.pad";
}

/// Where in the file batches are shown to vary, or "".
std::string variableShapeEvidence(const Facts& f) {
  const Module& m = f.module();
  for (NodeId e = 0; e < m.exprs.size(); ++e) {
    if (m.expr(e).kind != ExprKind::Call) continue;
    const std::string& c = m.canonical(e);
    if (c == "torch.nn.utils.rnn.pad_sequence" || c == "torch.nn.utils.rnn.pack_padded_sequence" ||
        c == "torch.nn.utils.rnn.pack_sequence")
      return ticked(names::lastComponent(c)) + " on line " + std::to_string(m.expr(e).span.line);
    if (c.size() >= 10 && c.substr(c.size() - 10) == "DataLoader") {
      if (isFalseLiteral(m, keywordArg(m, e, "drop_last")))
        return "`drop_last=False` on line " + std::to_string(m.expr(e).span.line);
      NodeId collate = keywordArg(m, e, "collate_fn");
      if (collate != kNone && m.expr(collate).kind == ExprKind::Name) {
        std::string_view name = m.expr(collate).text;
        for (const Function& fn : m.functions) {
          if (fn.name != name) continue;
          uint32_t idx = static_cast<uint32_t>(&fn - m.functions.data());
          for (NodeId s : f.statementsOf(idx))
            for (NodeId call : f.callsOf(s))
              if (isPadCall(m.canonical(call)))
                return "the padding `collate_fn` `" + std::string(name) + "`";
        }
      }
    }
  }
  return {};
}

class Oom502 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onStatement(Context& ctx, NodeId s) const override {
    const Module& m = ctx.module();
    const Stmt& st = m.stmt(s);
    bool bench = false;
    if (st.kind == StmtKind::Assign && isTrueLiteral(m, st.value)) {
      for (NodeId t : items(m, st.targets))
        if (m.canonical(t) == "torch.backends.cudnn.benchmark") bench = true;
    } else if (st.kind == StmtKind::Expr && methodName(m, st.value) == "setBenchmarkCuDNN") {
      // C++: `at::globalContext().setBenchmarkCuDNN(true);`
      bench = isTrueLiteral(m, positionalArg(m, st.value, 0));
    }
    if (!bench) return;
    std::string evidence = variableShapeEvidence(ctx.facts());
    if (evidence.empty()) return;
    Finding& finding = ctx.report(kInfo, st.span,
                                  "`cudnn.benchmark = True` with batches that vary in shape (" + evidence +
                                      "): each new shape re-tunes cuDNN with workspace spikes");
    finding.hasFix = true;
    finding.fix = Fix{Applicability::DisplayOnly, "Leave cudnn.benchmark off, or bucket inputs to a few fixed shapes", {}};
  }
};

}  // namespace

const Rule& oom502() {
  static const Oom502 rule;
  return rule;
}

}  // namespace oomlint::rules
