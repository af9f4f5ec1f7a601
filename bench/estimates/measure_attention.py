#!/usr/bin/env python3
"""What hand-written attention keeps for backward beyond the fused kernel (OOM401's estimate),
measured with PyTorch on a GPU: run by hand on the H200.

    python3 bench/estimates/measure_attention.py --json runtime_check/results/h200-attention.json

For each size, q, k and v (bf16, requires_grad) exist before; a forward of the attention runs and
its output stays referenced; `kept` is the device memory allocated after the forward, less the
output itself and less what existed before: the tensors its graph keeps for backward. Each
variant runs three times and the median is reported; the graph is freed between runs.
"""
import argparse
import datetime
import json
import math
import statistics

import torch
import torch.nn.functional as F

SIZES = [  # batch, heads, sequence, head dim
    (32, 32, 2048, 128),  # the probe's block: width 4096, 32 heads
    (4, 16, 4096, 64),
]


def manual(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return torch.softmax(scores, dim=-1) @ v


def fused(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def kept_by(fn, b, h, l, d):
    opts = dict(device="cuda", dtype=torch.bfloat16, requires_grad=True)
    q, k, v = (torch.randn(b, h, l, d, **opts) for _ in range(3))
    runs = []
    for _ in range(3):
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        out = fn(q, k, v)
        torch.cuda.synchronize()
        runs.append(torch.cuda.memory_allocated() - before - out.numel() * out.element_size())
        del out
    return int(statistics.median(runs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    rows = []
    for b, h, l, d in SIZES:
        m, f = kept_by(manual, b, h, l, d), kept_by(fused, b, h, l, d)
        rows.append({"batch": b, "heads": h, "seq": l, "head_dim": d, "manual_kept_bytes": m, "fused_kept_bytes": f,
                     "difference_bytes": m - f, "probabilities_bytes": b * h * l * l * 2})
        print(f"B={b} H={h} L={l} D={d}: manual keeps {m / 2**30:.3f} GiB, fused {f / 2**20:.1f} MiB, "
              f"difference {(m - f) / 2**30:.3f} GiB; B·H·L·L·2 = {b * h * l * l * 2 / 2**30:.3f} GiB")
        torch.cuda.empty_cache()
    out = {"sizes": rows, "provenance": {
        "torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python3 bench/estimates/measure_attention.py --json " + args.json}}
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
