// OOM504 host-tensor-then-device-copy
#include <array>

#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM504", "host-tensor-then-device-copy", Severity::Info, true, true, FixKind::Safe, true, true,
    "A tensor is created on the host and immediately copied to the GPU",
    R"doc(## What it does
Flags a tensor factory called without `device=` whose result is immediately moved to the GPU:
`torch.zeros(n).cuda()`, `torch.randn(b, d).to(device)`, `torch.arange(n).to("cuda")`.
A device named by a variable (`device`, `self.device`, `x.device`) is the GPU when the file is
written for one (a `"cuda"` string, a `torch.cuda` call, a `.cuda()`). A device variable (`device`,
`self.device`, not a tensor's `x.device`) is also the GPU when a file it imports or a file that
imports it names CUDA, so `make_mask(n, device)` in a helper module counts when main.py builds
`device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`.
A factory given a `generator=` is flagged only when the generator is known to be created on the
GPU (`torch.Generator(device="cuda")`): a CPU generator cannot draw a GPU tensor, so
`torch.randn(shape, generator=g).to(device)` (the reproducible-sampling idiom) is left alone.

## Why is this bad?
The tensor is first allocated and filled in host memory, then copied over PCIe into a second,
device allocation: an extra host allocation, a copy and (for pageable memory) a synchronisation,
for a tensor that could have been created on the GPU directly.

## Example
```python
mask = torch.ones(seq, seq).cuda()
noise = torch.randn(batch, dim).to(device)
```

## Use instead
```python
mask = torch.ones(seq, seq, device="cuda")
noise = torch.randn(batch, dim, device=device)
```

## Fix safety
Safe for deterministic factories (`zeros`, `ones`, `empty`, `full`, `arange`, `linspace`, `eye`,
`tensor`). Unsafe for random ones (`rand`, `randn`, `randint`, `randperm`, `normal`): the numbers
then come from the GPU's generator instead of the CPU's, so a seeded run draws different values.

## Measured cost
Measured (H200, LibTorch 2.11, bf16, width 4096, depth 4, batch 32, seq 2048
(runtime_check/results/h200.json)): `torch::zeros(n).to(device)` peaks at 32.0 MiB vs 32.0 MiB for
`torch::zeros(n, device)`; 7.54 vs 0.03 ms per step (host allocation and copy). Reproduce with
`oomlint-probe OOM504`.

## References
- CUDA semantics, best practices: https://pytorch.org/docs/stable/notes/cuda.html#best-practices
)doc",
};

bool deterministicFactory(std::string_view n) {
  static constexpr std::array<std::string_view, 9> k = {"zeros", "ones", "empty", "full", "arange", "linspace", "eye", "tensor", "logspace"};
  for (std::string_view x : k)
    if (n == x) return true;
  return false;
}
bool randomFactory(std::string_view n) {
  static constexpr std::array<std::string_view, 6> k = {"rand", "randn", "randint", "randperm", "normal", "bernoulli"};
  for (std::string_view x : k)
    if (n == x) return true;
  return false;
}

/// `gen` is known to be a GPU generator: `torch.Generator(device="cuda")` (seeded or not), or a
/// name every assignment of which binds one.
bool gpuGenerator(const Facts& f, const Module& m, NodeId gen, int depth = 0) {
  if (gen == kNone || depth > 3) return false;
  const Expr& e = m.expr(gen);
  if (e.kind == ExprKind::Name) {
    std::vector<NodeId> defs;
    f.definitionsOf(gen, defs);
    if (defs.empty()) return false;
    for (NodeId d : defs)
      if (m.stmt(d).kind != StmtKind::Assign || !gpuGenerator(f, m, m.stmt(d).value, depth + 1)) return false;
    return true;
  }
  if (e.kind != ExprKind::Call) return false;
  if (methodName(m, gen) == "manual_seed") return gpuGenerator(f, m, receiverOf(m, gen), depth + 1);
  if (m.canonical(gen) != "torch.Generator") return false;
  NodeId dev = keywordArg(m, gen, "device");
  if (dev == kNone) dev = positionalArg(m, gen, 0);
  return dev != kNone && f.isGpuDeviceExpr(dev);
}

class Oom504 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    const Facts& f = ctx.facts();
    std::string_view meth = methodName(m, call);
    if (meth != "cuda" && meth != "to") return;
    if (!m.canonical(call).empty()) return;
    NodeId factory = receiverOf(m, call);
    if (factory == kNone || m.expr(factory).kind != ExprKind::Call) return;
    const std::string& fc = m.canonical(factory);
    if (fc.rfind("torch.", 0) != 0 || fc.find('.', 6) != std::string::npos) return;  // torch.<factory> only
    std::string_view name = names::lastComponent(fc);
    bool det = deterministicFactory(name), rnd = randomFactory(name);
    if (!det && !rnd) return;
    if (keywordArg(m, factory, "device") != kNone || keywordArg(m, factory, "**") != kNone) return;
    // A CPU generator (`torch.Generator()`, the reproducible-sampling idiom) cannot draw on the
    // GPU: `device=` would raise. Only a generator known to live on the GPU keeps the finding.
    NodeId generator = keywordArg(m, factory, "generator");
    if (generator != kNone && m.expr(generator).kind != ExprKind::NoneLit && !gpuGenerator(f, m, generator)) return;
    // C++ factories take the device inside their TensorOptions argument: with options already
    // written (a dtype, say) the merge is the user's call; stay silent.
    bool cpp = m.lang == Lang::Cpp;
    if (cpp && keywordArg(m, factory, "options") != kNone) return;
    std::string deviceText;
    if (meth == "cuda") {
      if (m.expr(call).argCount > 0) return;  // `.cuda(i)`: keep it simple and silent
      deviceText = cpp ? "torch::kCUDA" : "\"cuda\"";
    } else {
      if (m.expr(call).argCount != 1) return;
      NodeId dev = positionalArg(m, call, 0);
      if (dev == kNone) dev = keywordArg(m, call, "device");
      if (dev == kNone || !f.isGpuDeviceExpr(dev)) return;
      deviceText = std::string(m.textOf(dev));
    }
    Finding& finding = ctx.report(kInfo, m.expr(call).span,
                                  cpp ? "`torch::" + std::string(name) + "` allocates on the host and is then copied to the GPU; "
                                        "create it there by passing the device in its options"
                                      : ticked(fc) + " allocates on the host and is then copied to the GPU; create it there with `device=`");
    Edit toFactory;
    if (!insertArgument(m, factory, (cpp ? "" : "device=") + deviceText, false, toFactory)) return;
    // Replace the whole `factory(...).to(dev)` with `factory(..., device=dev)`.
    std::string factoryText(m.textOf(factory));
    uint32_t rel = toFactory.begin - m.expr(factory).span.begin;
    factoryText.insert(rel, toFactory.content);
    finding.hasFix = true;
    finding.fix.applicability = det ? Applicability::Safe : Applicability::Unsafe;
    finding.fix.message = cpp ? "Pass `" + deviceText + "` as the options of `torch::" + std::string(name) + "`"
                              : "Pass `device=" + deviceText + "` to `" + std::string(name) + "`";
    finding.fix.edits.push_back(replaceExpr(m, call, factoryText));
  }
};

}  // namespace

const Rule& oom504() {
  static const Oom504 rule;
  return rule;
}

}  // namespace oomlint::rules
