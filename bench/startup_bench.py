#!/usr/bin/env python3
"""Start-up and warm runs, run by hand: the figures issue "Fast loops" holds oomlint to, for one
build or two side by side, with ruff's WebAssembly build as the yardstick for a cold run.

    python3 bench/startup_bench.py [--build build] [--vs OTHER_BUILD_DIR_OR_BINARY] [--runs 30]
                                   [--corpus /usr/lib/python3/dist-packages/torch]

Rows: `--version`; one small file inside this repository (examples/train.py, so its project is
found and read), without the cache and with it warm (pre-commit's case), and the same file alone in
a folder; a warm check of the corpus (cache filled);
a cold check (--no-cache); ruff-wasm on the corpus when bench/bench-deps.sh fetched it. The
commands take turns run by run, going through every order of them in turn, so a drift in the
machine's speed moves them alike and each follows each other one equally often; each figure is a
median.

Targets: warm < 30 ms, one file < 8 ms, cold <= 0.3x ruff-wasm.
"""
import argparse
import itertools
import math
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY_ONLY = ["--extend-exclude", "*.c,*.cc,*.cpp,*.cxx,*.h,*.hh,*.hpp,*.cu,*.cuh"]


def binary(path):
    return os.path.join(path, "oomlint") if os.path.isdir(path) else path


def settle(command, tries=8):
    """Runs a cached check until its project is settled: a cold check that stops at the round cap
    leaves answers pending, and the next runs finish them. Without this the first measured runs of
    a warm check still analyse modules."""
    for _ in range(tries):
        proc = subprocess.run(command + ["-v"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if " 1 rounds (0 modules analysed)" in proc.stderr or "rounds" not in proc.stderr:
            return


def interleaved(commands, runs):
    """Median wall seconds per command, the commands taking turns."""
    for c in commands:  # warm-up: page cache, dynamic loader, caches filled (and settled)
        if "--cache-dir" in c:
            settle(c)
        else:
            subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = [[] for _ in commands]
    # The order goes through every permutation in turn (A B ruff, A ruff B, B A ruff, ...): a run
    # right after another large process is faster or slower (right after oomlint 8% faster, right
    # after ruff-wasm's node, which frees half a gigabyte, slower), so in a fixed or merely rotated
    # order the command that always follows the same one is off by that much. Over the
    # permutations each command follows each other one equally often.
    orders = list(itertools.permutations(range(len(commands))))
    for run in range(runs):
        for j in orders[run % len(orders)]:
            start = time.perf_counter()
            proc = subprocess.run(commands[j], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[j].append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"command failed ({proc.returncode}): {' '.join(commands[j])}")
    return [statistics.median(t) for t in times]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--vs", help="a second build (folder or binary), measured in turn with the first")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--corpus", default="/usr/lib/python3/dist-packages/torch")
    args = ap.parse_args()
    builds = [binary(args.build)] + ([binary(args.vs)] if args.vs else [])
    names = ["A", "B"][: len(builds)]
    alone = tempfile.mkdtemp(prefix="oomlint_startup_")
    shutil.copy(os.path.join(ROOT, "examples", "train.py"), alone)
    in_repo = os.path.join(ROOT, "examples", "train.py")
    caches = [tempfile.mkdtemp(prefix="oomlint_startup_cache_") for _ in builds]
    rows = [
        ("--version", lambda b, _: [b, "--version"]),
        ("one file in this repository", lambda b, _: [b, "check", "--no-cache", "--isolated", "--exit-zero", "-q", in_repo]),
        ("one file in this repository, cache warm",
         lambda b, cache: [b, "check", "--cache-dir", cache, "--isolated", "--exit-zero", "-q", in_repo]),
        ("the same file alone in a folder",
         lambda b, _: [b, "check", "--no-cache", "--isolated", "--exit-zero", "-q", os.path.join(alone, "train.py")]),
        ("warm check of the corpus",
         lambda b, cache: [b, "check", "--cache-dir", cache, "--isolated", "--exit-zero", "-q"] + PY_ONLY + [args.corpus]),
    ]
    print(f"median of {args.runs} runs, the builds taking turns; " + ", ".join(f"{n} = {b}" for n, b in zip(names, builds)))
    for title, make in rows:
        medians = interleaved([make(b, c) for b, c in zip(builds, caches)], args.runs)
        line = f"{title:36}" + "".join(f" {n} {m * 1000:7.1f} ms" for n, m in zip(names, medians))
        if len(medians) == 2:
            line += f"   A/B {medians[0] / medians[1]:.2f}"
        print(line)
    cold = [[b, "check", "--no-cache", "--isolated", "--exit-zero", "-q"] + PY_ONLY + [args.corpus] for b in builds]
    ruff_js = os.path.join(ROOT, "bench", "ruff_wasm.js")
    have_ruff = os.path.isdir(os.path.join(ROOT, ".deps", "ruff-wasm-nodejs")) and shutil.which("node")
    commands = cold + ([["node", ruff_js, args.corpus]] if have_ruff else [])
    cold_runs = math.factorial(len(commands)) * max(1, args.runs // 15)  # whole rounds of the permutations
    medians = interleaved(commands, cold_runs)
    line = f"{'cold check of the corpus':36}" + "".join(f" {n} {m * 1000:7.1f} ms" for n, m in zip(names, medians))
    if have_ruff:
        line += f"   ruff-wasm {medians[-1] * 1000:.1f} ms; " + ", ".join(f"{n}/ruff {m / medians[-1]:.2f}x" for n, m in zip(names, medians))
    else:
        line += "   (ruff-wasm not fetched: bash scripts/bench-deps.sh)"
    print(line + f"   ({cold_runs} runs)")
    for d in [alone] + caches:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
