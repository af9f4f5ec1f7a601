#!/usr/bin/env python3
"""Cross-checks oomlint-probe against PyTorch itself (run on the GPU machine, by hand).

Re-runs the probes written in Python (the twins `oomlint check --verify` runs where no
oomlint-probe is installed, packaging/python/oomlint/probe_twins*.py, and the seed claims' below), with the workload recorded in the probe's JSON and the same measuring protocol (baseline before a warm-up step, peak reset after it,
torch.cuda.max_memory_allocated), and prints both numbers side by side with their difference.

    python3 bench/crosscheck.py --probe-json results.json
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

# The twins oomlint ships for `check --verify` (packaging/python/oomlint/): the cross-check holds
# what users run to the LibTorch probe.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "packaging", "python"))
from oomlint.probe_network import DTYPES  # noqa: E402
from oomlint.probe_twins import (TWINS as MLP_TWINS, loss_of, measure, oom201, oom303, oom501, sgd_step,  # noqa: E402
                                 trained_mlp, x_of, zero_grad)
from oomlint.probe_twins_blocks import TWINS as BLOCK_TWINS, oom402  # noqa: E402


# --- seed claims (SEED-* in the probe's JSON): folk beliefs the probe tests; the same twins here ---

def seed_steps(w):
    return max(w["steps"], 200)  # a leak per step shows over many steps, as the probe runs them


def seed_lambda_lr(w):
    """The probe sets SGD's rate from a lambda every step; the twin runs PyTorch's own LambdaLR, so
    the claim is checked against the real scheduler. SGD steps one tensor at a time, as LibTorch's."""
    model, params, reset = trained_mlp(w)
    x = x_of(w)
    opt = torch.optim.SGD(params, lr=0.1, foreach=False)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1.0 + 0.001 * step))

    def anti(i):
        opt.zero_grad()
        loss_of(model(x)).backward()
        opt.step()
        sched.step()

    def fix(i):
        opt.zero_grad()
        loss_of(model(x)).backward()
        opt.step()

    a = measure(anti, seed_steps(w), reset)
    return a, measure(fix, seed_steps(w), reset)


def seed_logging(w):
    model, params, reset = trained_mlp(w)
    x = x_of(w)
    logged = []

    def anti(i):
        zero_grad(params, True)
        loss = loss_of(model(x))
        loss.backward()
        sgd_step(params)
        logged.append(loss.item())

    def fix(i):
        zero_grad(params, True)
        loss_of(model(x)).backward()
        sgd_step(params)

    a = measure(anti, seed_steps(w), reset)
    return a, measure(fix, seed_steps(w), reset)


def seed_dense_checkpointing(w):
    anti, _, none = oom402(w, with_none=True)
    return anti, none  # the probe's fix variant for this claim is no checkpointing at all


# Every probe that measures memory, with its twin (OOM506 measures nothing: not expressible in C++).
# Four seed claims run a rule's probe under another name (SEED-unscaled-accumulation is OOM303's,
# SEED-empty-cache OOM501's, SEED-eval-without-no-grad OOM201's), so they share its twin.
TWINS = MLP_TWINS + BLOCK_TWINS + (
    ("SEED-lambda-lr", seed_lambda_lr), ("SEED-logging", seed_logging), ("SEED-unscaled-accumulation", oom303),
    ("SEED-empty-cache", oom501), ("SEED-dense-checkpointing", seed_dense_checkpointing),
    ("SEED-eval-without-no-grad", oom201))


def provenance(args, probe):
    """Where and with what the twins ran, beside the probe run they are compared with."""
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                                text=True, check=True).stdout.split("\n")[0].strip()
    except (OSError, subprocess.CalledProcessError):
        driver = "unknown"
    cuda = torch.version.cuda or "unknown"
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "device": f"cuda:0 ({torch.cuda.get_device_name(0)})", "driver": f"{driver} (CUDA {cuda})",
            "torch": torch.__version__, "libtorch": probe["provenance"].get("libtorch", "unknown"),
            "probe_json": args.probe_json, "command": " ".join(["python3"] + sys.argv)}


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
    for code, fn in TWINS:
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
    width = max(len(r["probe"]) for r in rows)
    print(f"{'probe':{width}} {'variant':7} {'metric':15} {'oomlint-probe':>16} {'PyTorch':>16} {'diff':>7}")
    for r in rows:
        print(f"{r['probe']:{width}} {r['variant']:7} {r['metric']:15} {r['libtorch']:16,d} {r['pytorch']:16,d} {100 * r['diff']:6.2f}%")
    print(f"largest peak difference: {100 * worst:.2f}% (target: within 5%)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"provenance": provenance(args, probe), "rows": rows, "worst_peak_diff": worst}, f, indent=2)
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
