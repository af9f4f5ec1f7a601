// OOM404 fp32-logits-under-autocast
#include "rules/amp_common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM404", "fp32-logits-under-autocast", Severity::Info, true, true, FixKind::DisplayOnly, true, true,
    "fp32 copies of large-vocabulary logits inside autocast",
    R"doc(## What it does
Inside an `autocast` region that trains, flags an explicit `.float()` (or `.to(torch.float32)`) on
logits, and a language-model loss (`cross_entropy`, `log_softmax`) over logits.

## Why is this bad?
Logits are `B·T·V` (batch × tokens × vocabulary): for a 50k–250k vocabulary they are the largest
activation in the model. Under autocast the matmul produces them in half precision, but
`cross_entropy`/`log_softmax` run in float32, so an fp32 copy of the whole tensor is written (and
saved for backward); an explicit `.float()` adds another. Measured at the forward peak: 3.3–5.3×
the bytes of the fp16 logits.

## Example
```python
with torch.autocast("cuda", dtype=torch.bfloat16):
    logits = model(tokens)
    loss = F.cross_entropy(logits.float().view(-1, vocab), targets.view(-1))
```

## Use instead
A chunked or fused cross-entropy that never materialises full fp32 logits (compute the loss over
slices of the sequence, or a fused linear + cross-entropy kernel).

## Fix safety
Display only.

## Estimated cost
When the logits' shape is stated and they are 16-bit, the message ends with what the float32 loss
adds to the peak over the logits: `3·N·4` bytes for N = B·T·V logits, the fp32 log-probabilities
the loss keeps for backward, their gradient and the logits' fp32 gradient, all live at the
log-softmax's backward (a `.float()` copy kept in a variable adds N·4 more). A chunked loss holds
that divided by its number of chunks. Validated against the H200 probe's anti-pattern, whose peak
is measured over the logits that exist before it: bench/estimates/oom404.py states its workload,
and a test holds the estimate within 10%.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `cross_entropy(logits.float())` peaks at 23.4 GiB vs 12.7 GiB
for `chunked cross_entropy over T`. Reproduce with `oomlint-probe OOM404`.

## References
- Autocast op reference (ops that autocast to float32): https://pytorch.org/docs/stable/amp.html#cuda-ops-that-can-autocast-to-float32
)doc",
};


class Oom404 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    NodeId s = m.expr(call).stmt;
    std::string_view meth = methodName(m, call);
    const std::string& c = m.canonical(call);
    std::string what;
    if ((meth == "float" && m.expr(call).argCount == 0) ||
        (meth == "to" && m.canonical(positionalArg(m, call, 0)) == "torch.float32")) {
      if (!c.empty() || !identifierMentions(f, receiverOf(m, call), "logits")) return;
      what = "`.float()` copies the logits to float32";
    } else if ((c == "torch.nn.functional.cross_entropy" || c == "torch.nn.functional.log_softmax") &&
               identifierMentions(f, positionalArg(m, call, 0), "logits") && fileMentionsIdentifier(m, "vocab")) {
      // A language-model loss: the input spans the vocabulary.
      NodeId in = positionalArg(m, call, 0);
      bool floatCopy = false;  // the `.float()` is reported itself
      f.forSubtree(in, [&](NodeId x) {
        if (m.expr(x).kind == ExprKind::Call && methodName(m, x) == "float") floatCopy = true;
      });
      if (floatCopy) return;
      what = ticked(names::lastComponent(c)) + " runs in float32 under autocast and writes an fp32 copy of the logits";
    } else {
      return;
    }
    if (f.gradMode(s) != GradMode::Enabled || !insideContext(m, s, isAutocast)) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span, what + " (B·T·V bytes at the forward peak)");
    finding.withEstimate(fp32LossOf(f, call));
    finding.withFix(Applicability::DisplayOnly, "Use a chunked or fused cross-entropy over the vocabulary");
  }
};

}  // namespace

const Rule& oom404() {
  static const Oom404 rule;
  return rule;
}

}  // namespace oomlint::rules
