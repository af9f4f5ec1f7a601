// OOM503 load-without-map-location
#include "rules/common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM503", "load-without-map-location", Severity::Warning, true, true, FixKind::Unsafe, false, true,
    "torch.load() without map_location restores tensors onto the device they were saved from",
    R"doc(## What it does
Flags `torch.load(f)` without `map_location` (C++: `torch::load` without a device).

## Why is this bad?
A checkpoint saved from GPU tensors is restored onto the same device index it was saved from:
typically `cuda:0`. In a multi-GPU job every rank then loads a full copy onto GPU 0, which runs out
of memory (or crowds the rank that lives there) before anything is moved where it belongs.

## Example
```python
state = torch.load("checkpoint.pt")
```

## Use instead
```python
state = torch.load("checkpoint.pt", map_location="cpu")   # then model.load_state_dict(state)
```
or `map_location=f"cuda:{local_rank}"` to load straight onto this rank's device.

## Fix safety
Unsafe: tensors that were loaded onto a GPU are now on the CPU; code that used them without
moving them (rather than through `load_state_dict`) needs a `.to(device)`.

## Measured cost
Measured on one GPU (H200, PyTorch 2.11, `runtime_check/multi_gpu.py --single-gpu`
(runtime_check/results/h200-multi-gpu.json)): a process that never used the GPU loads a 512 MiB
checkpoint saved from `cuda:0`. Without `map_location` the driver accounts 1030.0 MiB on GPU 0 to it
(the 512 MiB of tensors and the CUDA context their restore created); with `map_location="cpu"`,
0 B. What every rank of a multi-GPU job puts on GPU 0 needs two GPUs in one host: the same script
loads from two ranks there, and refuses clearly on fewer.

## References
- `torch.load`: https://pytorch.org/docs/stable/generated/torch.load.html
)doc",
};

class Oom503 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    if (m.canonical(call) != "torch.load") return;
    if (m.lang == Lang::Cpp) {
      checkCpp(ctx, call);
      return;
    }
    if (keywordArg(m, call, "map_location") != kNone || keywordArg(m, call, "**") != kNone) return;
    if (positionalArg(m, call, 1) != kNone || positionalArg(m, call, 0) == kNone) return;  // map_location given positionally
    // `torch.load(io.BytesIO(data))` round-trips bytes this process serialised: restoring the
    // original device is the point.
    NodeId src = positionalArg(m, call, 0);
    if (m.canonical(src) == "io.BytesIO") return;
    Finding& f = ctx.report(kInfo, m.expr(call).span,
                            "`torch.load` without `map_location` puts GPU-saved tensors back on the device they were saved "
                            "from (usually cuda:0, for every rank)");
    Edit edit;
    if (!insertArgument(m, call, "map_location=\"cpu\"", false, edit)) return;
    f.hasFix = true;
    f.fix.applicability = Applicability::Unsafe;
    f.fix.message = "Pass `map_location=\"cpu\"`";
    f.fix.edits.push_back(edit);
  }

 private:
  /// C++ `torch::load(value, path)`: the device is the third argument.
  static void checkCpp(Context& ctx, NodeId call) {
    const Module& m = ctx.module();
    if (m.expr(call).argCount != 2) return;
    Finding& f = ctx.report(kInfo, m.expr(call).span,
                            "`torch::load` without a device puts GPU-saved tensors back on the device they were saved "
                            "from (usually cuda:0, for every rank)");
    Edit edit;
    if (!insertArgument(m, call, "torch::kCPU", false, edit)) return;
    f.hasFix = true;
    f.fix.applicability = Applicability::Unsafe;
    f.fix.message = "Pass the device: `torch::kCPU`";
    f.fix.edits.push_back(edit);
  }
};

}  // namespace

const Rule& oom503() {
  static const Oom503 rule;
  return rule;
}

}  // namespace oomlint::rules
