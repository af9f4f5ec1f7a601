// OOM505 pin-memory-without-set-device
#include "rules/data_common.h"
#include "rules/registry.h"

namespace oomlint::rules {
namespace {

constexpr RuleInfo kInfo{
    "OOM505", "pin-memory-without-set-device", Severity::Warning, true, false, FixKind::DisplayOnly, false, true,
    "A distributed program pins memory without torch.cuda.set_device",
    R"doc(## What it does
Flags `DataLoader(..., pin_memory=True)` in a distributed program (it reads `LOCAL_RANK` from the
environment or calls `init_process_group`) that never calls `torch.cuda.set_device` (nor
`torch.cuda.device(...)`, `torch.accelerator.set_device_index`, nor passes `device_id=` to
`init_process_group`, nor sets `os.environ["CUDA_VISIBLE_DEVICES"]` in the process so that it
sees only its own GPU). The program is the whole of it, not the file: a `set_device` in `main.py`
binds the device for the loaders `data.py` builds when `main.py` imports it, directly or not
(docs/projects.md); another script beside it does not.

## Why is this bad?
The DataLoader's pin-memory thread pins host buffers through the current CUDA device. Without
`set_device`, that is device 0 in every rank: each process creates a CUDA context on GPU 0
(about 0.5 GB each), so GPU 0 runs out of memory as the number of ranks grows, while the other
GPUs show a process they never asked for.

## Example
```python
dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
model = model.to(f"cuda:{local_rank}")
loader = DataLoader(ds, batch_size=32, pin_memory=True)
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
```
before creating models, tensors and loaders.

## Fix safety
Display only. oomlint stays silent when the file uses Accelerate, Lightning or DeepSpeed, which
set the device themselves.

## Measured cost
Measured on one GPU (H200, PyTorch 2.11, `runtime_check/multi_gpu.py --single-gpu`
(runtime_check/results/h200-multi-gpu.json)): a process that never calls CUDA itself but iterates a
`pin_memory=True` DataLoader gets a 518.0 MiB CUDA context on GPU 0 from the pinning thread (the
driver's per-process view); without pinning, 0 B. The stray context of a rank that uses GPU 1
without `set_device` needs two GPUs in one host: the same script measures it there, and refuses
clearly on fewer.

## References
- DistributedDataParallel notes: https://pytorch.org/docs/stable/notes/ddp.html
)doc",
};

class Oom505 final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void onCall(Context& ctx, NodeId call) const override {
    const Module& m = ctx.module();
    if (!isDataLoaderCall(m, call) || !isTrueLiteral(m, keywordArg(m, call, "pin_memory"))) return;
    for (const auto& [local, full] : m.imports) {
      std::string_view root = std::string_view(full).substr(0, full.find('.'));
      if (root == "accelerate" || root == "lightning" || root == "pytorch_lightning" || root == "deepspeed") return;
    }
    // Distributed: it starts a process group or reads its rank from the launcher's environment.
    NodeId evidence = ctx.facts().distributedWithoutDevice();
    if (evidence == kNone) return;
    Finding& f = ctx.report(kInfo, m.expr(call).span,
                            "`pin_memory=True` in a distributed program that never calls `torch.cuda.set_device`: every "
                            "rank's pinning thread creates a CUDA context on GPU 0");
    f.note(m.expr(evidence).span, "the program is distributed: it starts a process group or reads its rank here");
    f.withFix(Applicability::DisplayOnly, "Call `torch.cuda.set_device(local_rank)` at start-up");
  }
};

}  // namespace

const Rule& oom505() {
  static const Oom505 rule;
  return rule;
}

}  // namespace oomlint::rules
