"""Measures, on a GPU with PyTorch, the three costs oomlint estimates for examples/sized_mlp.py.

Each cost is measured as its rule's estimate states it, with the anti-pattern and the fix on the
same model and batch: OOM102 growth per iteration (stored with the graph vs detached, eval mode),
OOM201 extra peak of the eval forward (autograd on vs no_grad), OOM301 extra peak of a training
step (zero_grad(set_to_none=False) vs zero_grad()). Writes JSON to the path given (or stdout).
The example's batch is 4096; a second batch size (say 256, where activations are smaller than the
parameters) shows where OOM301's estimate does not hold and is not given.

    python3 bench/estimates/measure_sized_mlp.py out.json 4096 256
"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN = 512, 2048
BATCH = 4096
dev = torch.device("cuda")


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1),
    ).to(dev)


def allocated():
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated()


def growth(model, x, detach, steps=8):
    kept, sizes = [], []
    with torch.no_grad():
        model(x)  # warm-up: kernels and workspaces exist before measuring
    base = allocated()
    for _ in range(steps):
        out = model(x)
        kept.append(out.detach() if detach else out)
        del out
        sizes.append(allocated() - base)
    return (sizes[-1] - sizes[0]) / (steps - 1)


def forward_peak(model, x, grad):
    base = allocated()
    torch.cuda.reset_peak_memory_stats()
    with torch.set_grad_enabled(grad):
        out = model(x)
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return peak


def step_peak(set_to_none, steps=4):
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    x = torch.randn(BATCH, FEATURES, device=dev)
    y = torch.randn(BATCH, 1, device=dev)
    model.train()
    for _ in range(2):  # gradients and AdamW state exist before measuring
        opt.zero_grad(set_to_none=set_to_none)
        F.mse_loss(model(x), y).backward()
        opt.step()
    base = allocated()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        opt.zero_grad(set_to_none=set_to_none)
        F.mse_loss(model(x), y).backward()
        opt.step()
    peak = torch.cuda.max_memory_allocated() - base
    del model, opt
    torch.cuda.empty_cache()
    return peak


def measure():
    model = make_model().eval()
    x = torch.randn(BATCH, FEATURES, device=dev)
    results = {
        "OOM102": {"measure": "growth", "anti": growth(model, x, False), "fix": growth(model, x, True)},
        "OOM201": {"measure": "peak", "anti": forward_peak(model, x, True), "fix": forward_peak(model, x, False)},
        "OOM301": {"measure": "peak", "anti": step_peak(False), "fix": step_peak(True)},
    }
    for r in results.values():
        r["delta"] = r["anti"] - r["fix"]
    return results


def main():
    global BATCH
    runs = {}
    for batch in [int(b) for b in sys.argv[2:]] or [BATCH]:
        BATCH = batch
        runs[str(batch)] = measure()
    doc = {"provenance": {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                          "script": "bench/estimates/measure_sized_mlp.py", "example": "examples/sized_mlp.py",
                          "command": "python3 " + " ".join(sys.argv)},
           "costs_by_batch": runs}
    text = json.dumps(doc, indent=2) + "\n"
    if len(sys.argv) > 1:
        open(sys.argv[1], "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
