#!/usr/bin/env python3
"""Cross-checks oomlint-probe against PyTorch itself (run on the GPU machine, by hand).

Re-runs the OOM101, OOM201 and OOM401 probes written in Python, with the workload recorded in the
probe's JSON and the same measuring protocol (baseline before a warm-up step, peak reset after it,
torch.cuda.max_memory_allocated), and prints both numbers side by side with their difference.

    python3 bench/crosscheck.py --probe-json results.json
"""
import argparse
import json
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def measure(step, steps, reset=None):
    if reset:
        reset()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    step(-1)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for i in range(steps):
        step(i)
        torch.cuda.synchronize()
    return {"peak_bytes": torch.cuda.max_memory_allocated() - base, "retained_bytes": torch.cuda.memory_allocated() - base}


def mlp(w):
    layers = []
    for _ in range(w["depth"]):
        layers += [nn.Linear(w["width"], w["width"]), nn.GELU()]
    return nn.Sequential(*layers).to("cuda", DTYPES[w["dtype"]])


DTYPES = {"BFloat16": torch.bfloat16, "Float": torch.float32, "Half": torch.float16}


def loss_of(out):
    return out.float().pow(2).mean()


def oom101(w):
    model = mlp(w)
    x = torch.randn(w["batch"], w["width"], device="cuda", dtype=DTYPES[w["dtype"]])
    state = {"total": torch.zeros((), device="cuda")}

    def anti(i):
        state["total"] = state["total"] + loss_of(model(x))

    a = measure(anti, w["steps"])
    del state["total"]
    fl = [0.0]

    def fix(i):
        fl[0] += loss_of(model(x)).item()

    return a, measure(fix, w["steps"])


def oom201(w):
    model = mlp(w).eval()
    x = torch.randn(w["batch"] * w["seq"], w["width"], device="cuda", dtype=DTYPES[w["dtype"]])

    def anti(i):
        model(x)

    def fix(i):
        with torch.no_grad():
            model(x)

    return measure(anti, w["steps"]), measure(fix, w["steps"])


class Block(nn.Module):
    """The probe's pre-norm transformer block, attention kernel passed in."""

    def __init__(self, w):
        super().__init__()
        d = w["width"]
        self.heads = w["heads"]
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, attention):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        a = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        h = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


def manual_attention(q, k, v):
    # A function, as in the probe: `scores` dies when it returns (softmax saves its output).
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    return torch.matmul(torch.softmax(scores, -1), v)


def oom401(w):
    block = Block(w).to("cuda", DTYPES[w["dtype"]])
    x = torch.randn(w["batch"], w["seq"], w["width"], device="cuda", dtype=DTYPES[w["dtype"]])

    def reset():
        for p in block.parameters():
            p.grad = None

    def anti(i):
        reset()
        loss_of(block(x, manual_attention)).backward()

    def fix(i):
        reset()
        loss_of(block(x, F.scaled_dot_product_attention)).backward()

    return measure(anti, w["steps"], reset), measure(fix, w["steps"], reset)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--probe-json", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    with open(args.probe_json) as f:
        probe = json.load(f)
    w = probe["workload"]
    torch.manual_seed(0)
    # Warm up cuBLAS as the probe does.
    a = torch.randn(256, 256, device="cuda", dtype=DTYPES[w["dtype"]], requires_grad=True)
    (a @ a).float().sum().backward()
    del a
    by_code = {p["code"]: p for p in probe["probes"]}
    rows, worst = [], 0.0
    for code, fn in (("OOM101", oom101), ("OOM201", oom201), ("OOM401", oom401)):
        py_anti, py_fix = fn(w)
        for variant, py in (("anti", py_anti), ("fix", py_fix)):
            cpp = by_code[code].get(variant)
            if cpp is None:
                continue
            for metric in ("peak_bytes", "retained_bytes"):
                c, p = cpp[metric], py[metric]
                diff = 0.0 if max(c, p) == 0 else abs(c - p) / max(c, p)
                if metric == "peak_bytes":
                    worst = max(worst, diff)
                rows.append({"probe": code, "variant": variant, "metric": metric, "libtorch": c, "pytorch": p, "diff": diff})
    print(f"{'probe':8} {'variant':7} {'metric':15} {'oomlint-probe':>16} {'PyTorch':>16} {'diff':>7}")
    for r in rows:
        print(f"{r['probe']:8} {r['variant']:7} {r['metric']:15} {r['libtorch']:16,d} {r['pytorch']:16,d} {100 * r['diff']:6.2f}%")
    print(f"largest peak difference: {100 * worst:.2f}% (target: within 5%)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "rows": rows, "worst_peak_diff": worst}, f, indent=2)
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
