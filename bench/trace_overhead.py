#!/usr/bin/env python3
"""Step time under `oomlint trace`, side by side (issue target: at most 1.3x with Python frames).

    bench/trace_overhead.py [--rounds 5] PROGRAM [ARGS...]     (on a machine with CUDA)

Each round runs the program three ways, in turn, through the same bootstrap with the same step
marks: the counters only (no allocation history: the baseline), the history with Python frames
(what `oomlint trace` records by default), and the history with C++ frames too (--cpp-frames).
A step's time is the gap between two marks; the figure is the median over steps 3.. of every
round, and the ratio is each way's median over the baseline's.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOTSTRAP = os.path.join(ROOT, "packaging", "python", "oomlint", "trace.py")
WAYS = [("counters only", {"OOMLINT_TRACE_HISTORY": "0"}), ("python frames", {"OOMLINT_TRACE_FRAMES": "python"}),
        ("c++ frames", {"OOMLINT_TRACE_FRAMES": "all"})]


def step_times(program, extra_env, tmp):
    out = os.path.join(tmp, "t.json")
    env = dict(os.environ, OOMLINT_TRACE_OUTPUT=out, OOMLINT_TRACE_PROGRESS="0", **extra_env)
    subprocess.run([sys.executable, BOOTSTRAP, *program], env=env, check=True, stdout=subprocess.DEVNULL)
    with open(out) as fh:
        steps = json.load(fh)["steps"]
    secs = [s[5] for s in steps]
    return [b - a for a, b in zip(secs[2:], secs[3:])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    times = {name: [] for name, _ in WAYS}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for name, env in WAYS:
                times[name] += step_times(args.program, env, tmp)
    base = statistics.median(times[WAYS[0][0]])
    print(f"{' '.join(args.program)}: {args.rounds} rounds, {len(times[WAYS[0][0]])} steps per way")
    for name, _ in WAYS:
        med = statistics.median(times[name])
        print(f"  {name:14s} median step {med * 1000:8.3f} ms  ratio {med / base:5.2f}x")


if __name__ == "__main__":
    main()
