// OOM401 materialized-attention
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
(also with `torch.matmul`, `bmm`, `einsum`, masks and dropout in between). The finding is on the
`softmax`.

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

/// Ids of the subtree of `e` (stored children first, so a contiguous run ending at `e`).
template <typename Fn>
void forSubtree(const Module& m, NodeId e, Fn&& fn) {
  if (e == kNone) return;
  const Span& sp = m.expr(e).span;
  for (NodeId x = e + 1; x-- > 0;) {
    const Expr& ex = m.expr(x);
    if (ex.span.begin < sp.begin || ex.span.end > sp.end) break;
    fn(x);
  }
}

bool isMatmul(const Module& m, NodeId e) {
  const Expr& x = m.expr(e);
  if (x.kind == ExprKind::BinOp) return x.text == "@";
  if (x.kind != ExprKind::Call) return false;
  const std::string& c = m.canonical(e);
  if (c == "torch.matmul" || c == "torch.bmm" || c == "torch.einsum") return true;
  std::string_view meth = methodName(m, e);
  return c.empty() && (meth == "matmul" || meth == "bmm");
}

bool hasTransposedMatmul(const Module& m, NodeId e) {
  bool found = false;
  forSubtree(m, e, [&](NodeId x) {
    if (found || !isMatmul(m, x)) return;
    std::string_view t = m.textOf(x);
    if (t.find("transpose(") != std::string_view::npos || t.find(".mT") != std::string_view::npos ||
        t.find(".T") != std::string_view::npos || t.find("permute(") != std::string_view::npos ||
        t.find("einsum") != std::string_view::npos)
      found = true;
  });
  return found;
}

/// The value most recently assigned to Name `name` before `before` in function `fn`.
NodeId reachingValue(const Facts& f, uint32_t fn, std::string_view name, uint32_t before) {
  const Module& m = f.module();
  NodeId best = kNone;
  for (NodeId s : f.statementsOf(fn)) {
    const Stmt& st = m.stmt(s);
    if (st.span.begin >= before) break;
    if (st.kind != StmtKind::Assign || st.value == kNone) continue;
    for (NodeId t : items(m, st.targets))
      if (m.expr(t).kind == ExprKind::Name && m.expr(t).text == name) best = st.value;
  }
  return best;
}

class Oom401 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }

  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    const std::string& canon = m.canonical(call);
    NodeId scores = kNone;
    if (canon == "torch.softmax" || canon == "torch.nn.functional.softmax" || canon == "torch.special.softmax")
      scores = positionalArg(m, call, 0);
    else if (canon.empty() && methodName(m, call) == "softmax")
      scores = receiverOf(m, call);
    if (scores == kNone) return;
    NodeId s = m.expr(call).stmt;
    uint32_t fn = m.stmt(s).function;
    if (!scoresFromTransposedMatmul(f, fn, scores, m.stmt(s).span.begin)) return;
    if (!probabilitiesMultiplyValues(f, fn, s, call)) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
               "hand-written attention materialises the score and probability matrices (quadratic in sequence "
               "length) and saves them for backward");
        finding.hasFix = true;
        finding.fix = Fix{Applicability::DisplayOnly,
                   m.lang == Lang::Python ? "Use `F.scaled_dot_product_attention(q, k, v, ...)`"
                                          : "Use `torch::scaled_dot_product_attention(q, k, v, ...)`",
                   {}};
  }

 private:
  static bool scoresFromTransposedMatmul(const Facts& f, uint32_t fn, NodeId e, uint32_t before) {
    const Module& m = f.module();
    for (int depth = 0; depth < 6 && e != kNone; ++depth) {
      if (hasTransposedMatmul(m, e)) return true;
      // Follow a name to its assignment: `scores = scores / scale` chains back to the matmul.
      NodeId name = kNone;
      forSubtree(m, e, [&](NodeId x) {
        if (name == kNone && m.expr(x).kind == ExprKind::Name && m.expr(x).canonical == 0) {
          NodeId v = reachingValue(f, fn, m.expr(x).text, before);
          if (v != kNone) name = x;
        }
      });
      if (name == kNone) return false;
      NodeId v = reachingValue(f, fn, m.expr(name).text, before);
      before = m.stmt(m.expr(v).stmt).span.begin;
      e = v;
    }
    return false;
  }

  /// The softmax output reaches a matmul (directly or through dropout / renaming), and is not
  /// returned or stored (then the probabilities are wanted and a fused kernel cannot replace this).
  static bool probabilitiesMultiplyValues(const Facts& f, uint32_t fn, NodeId s, NodeId softmax) {
    const Module& m = f.module();
    const Stmt& st = m.stmt(s);
    // `softmax(...) @ v` in one expression.
    if (st.value != kNone) {
      bool direct = false;
      forSubtree(m, st.value, [&](NodeId x) {
        const Span& xs = m.expr(x).span;
        const Span& ss = m.expr(softmax).span;
        if (isMatmul(m, x) && xs.begin <= ss.begin && xs.end >= ss.end && x != softmax && !hasTransposedMatmulOnly(m, x, softmax))
          direct = true;
      });
      if (direct) return true;
    }
    if (st.kind != StmtKind::Assign || st.target == kNone || m.expr(st.target).kind != ExprKind::Name) return false;
    std::vector<std::string_view> aliases{m.expr(st.target).text};
    bool multiplied = false;
    for (NodeId t : f.statementsOf(fn)) {
      const Stmt& ts = m.stmt(t);
      if (ts.span.begin <= st.span.begin) continue;
      bool uses = false;
      for (std::string_view a : aliases)
        if ((ts.value != kNone && mentions(m, ts.value, a)) || (ts.kind == StmtKind::Return && mentions(m, ts.value, a)))
          uses = true;
      if (!uses) continue;
      if (ts.kind == StmtKind::Return && returnsItself(m, ts.value, aliases)) return false;  // probabilities are wanted
      if (ts.kind == StmtKind::Assign && ts.target != kNone && m.expr(ts.target).kind == ExprKind::Attribute) return false;
      if (ts.kind == StmtKind::Expr && (methodName(m, ts.value) == "append" || methodName(m, ts.value) == "extend")) return false;
      bool mm = false;
      forSubtree(m, ts.value, [&](NodeId x) {
        if (!isMatmul(m, x)) return;
        for (std::string_view a : aliases)
          if (mentions(m, x, a)) mm = true;
      });
      if (mm) multiplied = true;
      else if (ts.kind == StmtKind::Assign && ts.target != kNone && m.expr(ts.target).kind == ExprKind::Name)
        aliases.push_back(m.expr(ts.target).text);  // `attn = dropout(attn)`
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

  /// True when matmul `x` is the scores product inside the softmax rather than a consumer of it.
  static bool hasTransposedMatmulOnly(const Module& m, NodeId x, NodeId softmax) {
    const Span& xs = m.expr(x).span;
    const Span& ss = m.expr(softmax).span;
    return xs.begin >= ss.begin && xs.end <= ss.end;
  }
};

}  // namespace

const Rule& oom401() {
  static const Oom401 rule;
  return rule;
}

}  // namespace oomlint::rules
