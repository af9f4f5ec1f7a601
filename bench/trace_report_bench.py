#!/usr/bin/env python3
"""Times `oomlint trace --report` on a synthetic trace of STEPS steps and EVENTS allocator events
(issue target: 10,000 steps, 1M events, under 2 s on a 2-core machine), and gives its peak RSS.

    bench/trace_report_bench.py OOMLINT [--steps 10000] [--events 1000000] [--runs 5] [--vs OTHER]

The trace has the shape of a real one: a forward that allocates activations under a few stacks,
a frameless backward, an optimizer step, and one line that leaks a block every step.
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import tempfile
import time


def synthesize(steps, events, path):
    rnd = random.Random(0)
    files = [["train.py", True], ["/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", False],
             ["/venv/lib/python3.12/site-packages/torch/optim/adam.py", False]]
    frames = [[0, 10 + i, "forward"] for i in range(20)] + [[1, 1790, "_call_impl"], [2, 791, "_multi_tensor_adam"],
                                                            [0, 99, "<module>"]]
    stacks = [[i, 20, 22] for i in range(20)] + [[]] + [[21, 22]]
    frameless, optim = 20, 21
    per_step = max(4, events // steps)
    out_events, marks, addr, live = [], [], 1 << 32, []
    step_rows = []
    allocated = 0
    for s in range(1, steps + 1):
        batch = []
        for i in range(per_step // 2 - 1):
            st = rnd.randrange(20) if i % 3 else frameless
            if i == per_step // 2 - 2:
                st = optim
            addr += 512
            size = rnd.choice([512, 4096, 1 << 20])
            out_events.append(["a", addr, size, st])
            batch.append((addr, size))
            allocated += size
        addr += 512
        out_events.append(["a", addr, 1 << 20, 5])  # the leak: never freed
        allocated += 1 << 20
        for a, size in batch:
            out_events.append(["f", a, size, frameless])
            allocated -= size
        marks.append(len(out_events))
        step_rows.append([s, allocated, allocated + (64 << 20), allocated + (8 << 20), len(out_events), s * 0.01])
    trace = {"format": "oomlint-trace", "version": 1,
             "run": {"argv": ["train.py"], "cwd": "/nonexistent", "device_name": "synthetic", "torch": "2.11.0",
                     "ended": "exit", "history_dropped": False},
             "files": files, "frames": frames, "stacks": stacks, "steps": step_rows, "events": out_events, "oom": None}
    with open(path, "w") as fh:
        json.dump(trace, fh, separators=(",", ":"))
    return len(out_events)


def run_once(binary, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([binary, "trace", "--report", path, "--no-check", "--output-format", "json", "-o", os.devnull], check=True)
    wall = time.perf_counter() - t0
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("oomlint")
    ap.add_argument("--vs")
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        n = synthesize(args.steps, args.events, path)
        print(f"trace: {args.steps} steps, {n} events, {os.path.getsize(path) / 1e6:.1f} MB")
        binaries = [args.oomlint] + ([args.vs] if args.vs else [])
        times = {b: [] for b in binaries}
        rss = {b: 0 for b in binaries}
        for _ in range(args.runs):
            for b in binaries:  # turns interleaved
                wall, maxrss = run_once(b, path)
                times[b].append(wall)
                rss[b] = max(rss[b], maxrss)
        for b in binaries:
            print(f"{b}: median {statistics.median(times[b]):.3f} s over {args.runs} runs "
                  f"(min {min(times[b]):.3f}), peak RSS of the runs so far {rss[b] / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
