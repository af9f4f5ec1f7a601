// OOM401 materialized-attention
#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM401",
    "materialized-attention",
    Severity::Warning,
    true,
    true,
    FixKind::DisplayOnly,
    true,
    true,
    "Hand-written attention materialises the B·H·L·S score and probability tensors",
    R"doc(## What it does
Flags hand-written attention: `softmax(q @ k.transpose(-2, -1) * scale)` followed by `@ v`
(also with `torch.matmul`, `bmm`, `einsum`, a bias or mask added to the scores, dropout in
between). The softmax may be a function, a method, an `nn.Softmax` module, a `partial(F.softmax)`
or a function of the file that returns a softmax. The finding is on the `softmax`.

Only scores that contract the per-head feature axis of q and k into an L×S map count: channel
attention (`q.transpose(-2, -1) @ k` with q laid out feature-last, or q and k permuted so the
sequence axis is last) builds a small C×C map and is not flagged, nor are shapes oomlint cannot
read. A hand-written path kept as the fallback of a fused kernel the same function calls
(`if self.fused_attn: F.scaled_dot_product_attention(...) else: ...`), and a branch the class never
takes (`if self.einsum:` with `self.einsum = False`), are not flagged.

## Why is this bad?
The score matrix and the softmax probabilities are `B·H·L·S` tensors, and both (plus the dropout
mask) are saved for backward: memory quadratic in sequence length. Fused attention kernels
(FlashAttention, memory-efficient attention) behind `scaled_dot_product_attention` compute the same
result in tiles and save only `O(B·H·L)` statistics.

## Example
```python
scores = q @ k.transpose(-2, -1) / math.sqrt(d)
attn = scores.softmax(dim=-1)
out = attn @ v
```

## Use instead
```python
out = F.scaled_dot_product_attention(q, k, v)
```
(C++: `torch::scaled_dot_product_attention(q, k, v)`). Pass `attn_mask=`, `dropout_p=` and
`is_causal=` for masks and dropout.

## Fix safety
Display only: the rewrite depends on how the mask, scale and dropout are expressed. oomlint stays
silent when the attention probabilities are returned or stored (`need_weights`), since the fused
kernel cannot give them back.

## Estimated cost
When q's and k's shapes are stated (B, H, L, head dim; S from k), the scores reach the softmax
through scaling by plain numbers only and the probabilities reach the matmul with the values
unchanged, the message ends with what each call keeps for backward that the fused kernel does
not: `B·H·L·S·bytes`, the probabilities the softmax saves (the matmul with the values saves the
same tensor; the scores themselves are not saved). A dropout on the probabilities, a mask applied
with `masked_fill`, or any other op between gives no estimate. It is per call: a model keeps it
once per layer until its backward. At the softmax's backward up to four such tensors are live
(the probabilities, their gradient, the softmax backward's temporary and the scores' gradient),
which is what the probe's peak shows. Validated with bench/estimates/measure_attention.py on the
H200 (runtime_check/results/h200-attention.json), and a test holds the estimate of
bench/estimates/oom401.py within 10% of the measurement.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `block with softmax(q @ k^T) @ v` peaks at 34.8 GiB vs 13.0 GiB
for `block with scaled_dot_product_attention`. Reproduce with `oomlint-probe OOM401`.

## Target PyTorch
`scaled_dot_product_attention` needs PyTorch 2.0: with an older `target-torch` the advice is to
checkpoint the attention block or chunk the queries instead.

## References
- `torch.nn.functional.scaled_dot_product_attention`: https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
)doc",
};

class Oom401 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    NodeId scores = f.softmaxInput(call);
    if (scores == kNone) return;
    NodeId s = m.expr(call).stmt;
    if (f.unreachable(s)) return;
    // A hand-written path kept as the fallback of a fused kernel is there on purpose.
    if (f.callsFusedAttention(m.stmt(s).function)) return;
    NodeId product = f.attentionScores(scores);
    if (product == kNone) return;
    NodeId consumer = f.probabilitiesConsumer(call);
    if (consumer == kNone) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "hand-written attention materialises the score and probability matrices (quadratic in sequence "
                                  "length) and saves them for backward");
    finding.note(m.expr(product).span, "the scores contract q and k over the head dimension here: an L×S map per head");
    finding.note(m.expr(consumer).span, "the probabilities multiply the values here");
    finding.withEstimate(attentionProbabilitiesOf(f, call, product, consumer));
    if (!ctx.torchAtLeast(2, 0)) {  // no fused attention in the project's oldest PyTorch
      finding.withFix(Applicability::DisplayOnly, "Checkpoint the attention block, or chunk the queries so one block of scores is live at a time");
      return;
    }
    finding.withFix(Applicability::DisplayOnly, m.lang == Lang::Python ? "Use `F.scaled_dot_product_attention(q, k, v, ...)`"
                                                                        : "Use `torch::scaled_dot_product_attention(q, k, v, ...)`");
  }
};

}  // namespace

const Rule& oom401() {
  static const Oom401 rule;
  return rule;
}

}  // namespace oomlint::rules
