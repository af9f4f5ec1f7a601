// OOM401 materialized-attention
#include <algorithm>
#include <vector>

#include "rules/common.h"
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

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `block with softmax(q @ k^T) @ v` peaks at 34.8 GiB vs 13.0 GiB
for `block with scaled_dot_product_attention`. Reproduce with `oomlint-probe OOM401`.

## References
- `torch.nn.functional.scaled_dot_product_attention`: https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
)doc",
};

bool isMatmul(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::BinOp) return x.text == "@";
  if (x.kind != ExprKind::Call) return false;
  const std::string& c = m.canonical(e);
  if (c == "torch.matmul" || c == "torch.bmm" || c == "torch.einsum") return true;
  std::string_view meth = methodName(m, e);
  return c.empty() && (meth == "matmul" || meth == "bmm");
}

/// A fused attention kernel this function can also run (`if self.fused_attn: sdpa(...) else: ...`):
/// the hand-written path is its fallback, kept on purpose.
bool offersFusedAttention(const Facts& f, uint32_t fn) {
  const Module& m = f.module();
  for (NodeId s : f.statementsOf(fn))
    for (NodeId c : f.callsOf(s)) {
      std::string_view name = calleeName(m, c);
      if (name == "scaled_dot_product_attention" || name == "flash_attn_func" || name == "flash_attn_varlen_func" ||
          name == "flash_attn_qkvpacked_func" || name == "memory_efficient_attention" || name == "flex_attention")
        return true;
    }
  return false;
}

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
    uint32_t fn = m.stmt(s).function;
    if (offersFusedAttention(f, fn)) return;
    NodeId product = scoresProduct(f, scores);
    if (product == kNone) return;
    NodeId consumer = probabilitiesMultiplyValues(f, fn, s, call);
    if (consumer == kNone) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "hand-written attention materialises the score and probability matrices (quadratic in sequence "
                                  "length) and saves them for backward");
    finding.note(m.expr(product).span, "the scores contract q and k over the head dimension here: an L×S map per head");
    finding.note(m.expr(consumer).span, "the probabilities multiply the values here");
    finding.withFix(Applicability::DisplayOnly, m.lang == Lang::Python ? "Use `F.scaled_dot_product_attention(q, k, v, ...)`"
                                                                        : "Use `torch::scaled_dot_product_attention(q, k, v, ...)`");
  }

 private:
  /// The matmul that made the scores: in the expression itself or, through the names it reads,
  /// in the values they were assigned (`scores = q @ k.mT; scores = scores + bias`). kNone unless
  /// it contracts the feature axis into an L×S map.
  static NodeId scoresProduct(const Facts& f, NodeId e) {
    const Module& m = f.module();
    std::vector<NodeId> work{e};
    std::vector<NodeId> seen;
    for (size_t i = 0; i < work.size() && i < 24; ++i) {
      NodeId cur = work[i];
      NodeId found = kNone;
      bool channel = false;
      f.forSubtree(cur, [&](NodeId x) {
        if (found != kNone || !isMatmul(m, x)) return;
        Tri c = f.contractsFeatureAxis(x);
        if (c == Tri::Yes) found = x;
        if (c == Tri::No) channel = true;
      });
      if (found != kNone) return found;
      if (channel) return kNone;
      std::vector<NodeId> defs;
      f.forSubtree(cur, [&](NodeId x) {
        if (m.expr(x).kind != ExprKind::Name || m.expr(x).canonical != 0) return;
        f.definitionsOf(x, defs);
        for (NodeId site : defs) {
          NodeId v = m.stmt(site).value;
          if (v == kNone || std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
          seen.push_back(v);
          work.push_back(v);
        }
      });
    }
    return kNone;
  }

  /// The softmax output reaches a matmul (directly or through dropout / renaming), and is not
  /// returned or stored (then the probabilities are wanted and a fused kernel cannot replace
  /// this). Returns that matmul, or kNone.
  static NodeId probabilitiesMultiplyValues(const Facts& f, uint32_t fn, NodeId s, NodeId softmax) {
    const Module& m = f.module();
    const Stmt& st = m.stmt(s);
    // `softmax(...) @ v` in one expression.
    if (st.value != kNone) {
      NodeId direct = kNone;
      const Span& ss = m.expr(softmax).span;
      f.forSubtree(st.value, [&](NodeId x) {
        const Span& xs = m.expr(x).span;
        bool inside = xs.begin >= ss.begin && xs.end <= ss.end;
        if (direct == kNone && isMatmul(m, x) && xs.begin <= ss.begin && xs.end >= ss.end && x != softmax && !inside) direct = x;
      });
      if (direct != kNone) return direct;
    }
    if (st.kind != StmtKind::Assign || st.target == kNone || m.expr(st.target).kind != ExprKind::Name) return kNone;
    std::vector<std::string_view> aliases{m.expr(st.target).text};
    NodeId multiplied = kNone;
    for (NodeId t : f.statementsOf(fn)) {
      const Stmt& ts = m.stmt(t);
      if (ts.span.begin <= st.span.begin) continue;
      bool uses = false;
      for (std::string_view a : aliases)
        if (ts.value != kNone && f.mentionsPath(ts.value, a)) uses = true;
      if (!uses) continue;
      if (ts.kind == StmtKind::Return && returnsItself(m, ts.value, aliases)) return kNone;  // probabilities are wanted
      if (ts.kind == StmtKind::Assign && ts.target != kNone && m.expr(ts.target).kind == ExprKind::Attribute) return kNone;
      if (ts.kind == StmtKind::Expr && (methodName(m, ts.value) == "append" || methodName(m, ts.value) == "extend")) return kNone;
      NodeId mm = kNone;
      f.forSubtree(ts.value, [&](NodeId x) {
        if (mm != kNone || !isMatmul(m, x)) return;
        for (std::string_view a : aliases)
          if (f.mentionsPath(x, a)) mm = x;
      });
      if (mm != kNone) {
        if (multiplied == kNone) multiplied = mm;
      } else if (ts.kind == StmtKind::Assign && ts.target != kNone && m.expr(ts.target).kind == ExprKind::Name) {
        aliases.push_back(m.expr(ts.target).text);  // `attn = dropout(attn)`
      }
    }
    return multiplied;
  }

  /// `return attn` / `return out, attn`: the probabilities themselves leave the function.
  static bool returnsItself(const Module& m, NodeId value, const std::vector<std::string_view>& aliases) {
    if (value == kNone) return false;
    auto isAlias = [&](NodeId e) {
      const Expr& x = m.expr(e);
      if (x.kind != ExprKind::Name) return false;
      for (std::string_view a : aliases)
        if (x.text == a) return true;
      return false;
    };
    if (isAlias(value)) return true;
    const Expr& v = m.expr(value);
    if (v.kind == ExprKind::Container)
      for (const Arg& a : argsOf(m, v))
        if (isAlias(a.value)) return true;
    return false;
  }
};

}  // namespace

const Rule& oom401() {
  static const Oom401 rule;
  return rule;
}

}  // namespace oomlint::rules
