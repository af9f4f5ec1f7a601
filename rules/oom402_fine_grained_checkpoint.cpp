// OOM402 fine-grained-checkpoint
#include <array>

#include "rules/common.h"
#include "rules/estimates.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM402", "fine-grained-checkpoint", Severity::Warning, true, false, FixKind::DisplayOnly, true, true,
    "Activation checkpointing around a single cheap or parameter-free op",
    R"doc(## What it does
Flags `torch.utils.checkpoint.checkpoint(fn, ...)` where `fn` is a single cheap or parameter-free
operation: an activation (`F.relu`, `nn.GELU`), dropout, a normalisation layer, `nn.Identity`, or
a lambda doing one elementwise op.

## Why is this bad?
Checkpointing saves memory by dropping a block's internal activations and recomputing them in
backward. A single op has no internal activations to drop: its input is saved by the checkpoint
anyway and its output is needed by the next layer. You pay the recompute and the checkpoint's
bookkeeping for nothing (measured: per-op checkpointing saved 0 bytes at +21% step time). The seed
claim that "too dense checkpointing hurts" is true.

## Example
```python
x = checkpoint(self.act, self.fc1(x), use_reentrant=False)
```

## Use instead
```python
x = checkpoint(self.block, x, use_reentrant=False)   # a whole block: attention + MLP
```

## Fix safety
Display only: choosing block boundaries is a design decision.

## Estimated cost
Where the file states the sizes (the class's layers, a network of its instances and a training
forward's input; docs of the estimates above), the estimate is what checkpointing each instance
of the module class whole would save, added to the step's peak: A_fwd as written (a per-op
checkpoint keeps the op's input, which the op or the next layer kept anyway) less A_fwd with each
instance keeping only its input. For the probe's Linear-GELU-Linear blocks that is 2·B·T·W
bytes per block. bench/estimates/oom402.py states the probe's workload, and a test holds the
estimate within 10% of the H200 measurement (4.0 GiB estimated and measured).

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `checkpoint(gelu) per op` peaks at 11.0 GiB vs 7.0 GiB for
`checkpoint(block) per block`; retained after the run 0.0 B vs 1.0 MiB; per-op checkpointing saved 0
B against no checkpointing at all (confirmed: per-op checkpointing saves 0 B of a 11811161088 B peak
(0.0%) at -0% time per step). Reproduce with `oomlint-probe OOM402`.

## References
- `torch.utils.checkpoint`: https://pytorch.org/docs/stable/checkpoint.html
)doc",
};

bool cheapModuleClass(std::string_view cls) {
  static constexpr std::array<std::string_view, 24> k = {
      "ReLU", "ReLU6", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
      "LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "Identity", "Softmax", "LeakyReLU",
      "ELU", "Mish", "Hardswish", "Flatten", "RMSNorm", "Softplus"};
  for (std::string_view x : k)
    if (cls == x) return true;
  return false;
}

bool cheapFunction(const std::string& c) {
  static constexpr std::array<std::string_view, 22> k = {
      "relu", "gelu", "silu", "tanh", "sigmoid", "dropout", "layer_norm", "batch_norm", "group_norm", "softmax",
      "leaky_relu", "elu", "mish", "hardswish", "add", "mul", "sub", "div", "rms_norm", "softplus", "relu6", "log_softmax"};
  if (c.rfind("torch.", 0) != 0) return false;
  std::string_view last = names::lastComponent(c);
  for (std::string_view x : k)
    if (last == x) return true;
  return false;
}

class Oom402 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    if (m.canonical(call) != "torch.utils.checkpoint.checkpoint") return;
    NodeId fn = positionalArg(m, call, 0);
    if (fn == kNone) fn = keywordArg(m, call, "function");
    if (fn == kNone) return;
    std::string what = cheapOp(ctx, fn, call);
    if (what.empty()) return;
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  "checkpointing a single cheap op (" + what +
                                      ") saves no memory and recomputes it in backward; checkpoint whole blocks");
    finding.hasFix = true;
    finding.fix = Fix{Applicability::DisplayOnly, "Checkpoint a whole block (attention + MLP), not one op", {}};
    finding.withEstimate(blockCheckpointOf(ctx.facts(), call));
  }

 private:
  /// Describes `fn` when it is a single cheap op, else "".
  static std::string cheapOp(Context& ctx, NodeId fn, NodeId call) {
    const Module& m = ctx.module();
    const Expr& e = m.expr(fn);
    const std::string& c = m.canonical(fn);
    if (!c.empty()) {
      if (cheapFunction(c)) return ticked(m.textOf(fn));
      return {};
    }
    if (e.kind == ExprKind::Lambda) {
      NodeId body = m.functions[e.function].lambdaBody;
      if (body == kNone) return {};
      const Expr& b = m.expr(body);
      if (b.kind == ExprKind::Call && cheapFunction(m.canonical(body))) return "a lambda around `" + m.canonical(body) + "`";
      if (b.kind == ExprKind::BinOp && simpleOperand(m, b.lhs) && simpleOperand(m, b.rhs)) return "a one-op lambda";
      return {};
    }
    // `self.act` / `act` bound to a cheap module class.
    std::string_view key = ctx.facts().pathKey(fn);
    if (key.empty()) return {};
    uint32_t owner = m.stmt(m.expr(call).stmt).function;
    int32_t cls = m.functions[owner].cls;
    for (const Stmt& st : m.stmts) {
      if (st.kind != StmtKind::Assign || st.value == kNone || m.expr(st.value).kind != ExprKind::Call) continue;
      bool selfAttr = key.substr(0, 5) == "self.";
      if (selfAttr && (cls < 0 || m.functions[st.function].cls != cls)) continue;
      if (!selfAttr && st.function != owner) continue;
      for (NodeId t : items(m, st.targets)) {
        if (ctx.facts().pathKey(t) != key) continue;
        const std::string& vc = m.canonical(st.value);
        if (vc.rfind("torch.nn.", 0) == 0 && cheapModuleClass(names::lastComponent(vc)))
          return ticked(key) + " is `nn." + std::string(names::lastComponent(vc)) + "`";
        return {};
      }
    }
    return {};
  }

  static bool simpleOperand(const Module& m, NodeId e) {
    if (e == kNone) return false;
    ExprKind k = m.expr(e).kind;
    return k == ExprKind::Name || k == ExprKind::Number;
  }
};

}  // namespace

const Rule& oom402() {
  static const Oom402 rule;
  return rule;
}

}  // namespace oomlint::rules
