#!/usr/bin/env python3
"""The C++ path, run by hand: one LibTorch training file analysed with its real flags (through
compile_commands.json) and with the bundled declarations, next to `clang++ -fsyntax-only` of the
same file, all in one run. Prints one table of medians (after one warm-up run each).

    python3 bench/cpp_bench.py [--file examples/cpp/mnist_classifier.cpp] [--runs 5]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_API = "/usr/include/torch/csrc/api/include"


def timed(cmd, env=None, cwd=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if proc.returncode not in (0, 1):
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}")
    return time.perf_counter() - start


def median(cmd, runs, env=None, cwd=None):
    timed(cmd, env, cwd)  # warm-up: page cache, and the precompiled preamble where one is used
    return statistics.median(timed(cmd, env, cwd) for _ in range(runs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default=os.path.join(ROOT, "examples/cpp/mnist_classifier.cpp"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--oomlint", default=os.path.join(ROOT, "build/oomlint"))
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="oomlint_cpp_bench_")
    src = os.path.join(work, "src", os.path.basename(args.file))
    os.makedirs(os.path.dirname(src))
    shutil.copy(args.file, src)
    build = os.path.join(work, "build")
    os.makedirs(build)
    with open(os.path.join(build, "compile_commands.json"), "w") as f:
        json.dump([{"directory": build, "file": src,
                    "command": f"/usr/bin/c++ -std=c++17 -I{TORCH_API} -O2 -o x.o -c {src}"}], f)
    pch = os.path.join(work, "pch")
    env = dict(os.environ, OOMLINT_PCH_DIR=pch)
    no_pch = dict(env, OOMLINT_NO_PCH="1")
    stand_in = os.path.join(ROOT, "analyzer/cpp/include")
    py = os.path.join(work, "one.py")
    shutil.copy(os.path.join(ROOT, "examples/clean_train.py"), py)

    rows = []
    real = median(["clang++-14", "-std=c++17", "-fsyntax-only", f"-I{TORCH_API}", src], args.runs)
    rows.append(("clang++ -fsyntax-only, real LibTorch headers", real, 1.0))
    shutil.rmtree(pch, ignore_errors=True)
    cold = timed([args.oomlint, "check", "--no-cache", "-p", build, src], env)
    rows.append(("oomlint -p build, first run (precompiles the preamble)", cold, cold / real))
    warm = median([args.oomlint, "check", "--no-cache", "-p", build, src], args.runs, env)
    rows.append(("oomlint -p build, preamble reused", warm, warm / real))
    stand = median(["clang++-14", "-std=c++17", "-fsyntax-only", f"-I{stand_in}", src], args.runs)
    rows.append(("clang++ -fsyntax-only, bundled declarations", stand, stand / real))
    bundled = median([args.oomlint, "check", "--no-cache", src], args.runs, env)
    rows.append(("oomlint, bundled declarations, prelude reused", bundled, bundled / real))
    bundled_cold = median([args.oomlint, "check", "--no-cache", src], args.runs, no_pch)
    rows.append(("oomlint, bundled declarations, no precompiled prelude", bundled_cold, bundled_cold / real))
    python = median([args.oomlint, "check", "--no-cache", py], max(args.runs, 20), env)
    rows.append(("oomlint check one.py (Clang never loaded)", python, python / real))

    print(f"file: {os.path.relpath(args.file, ROOT)}, {sum(1 for _ in open(args.file))} lines; median of {args.runs} runs")
    print(f"{'command':58} {'wall':>10} {'vs clang++ real':>16}")
    for name, secs, ratio in rows:
        print(f"{name:58} {secs * 1000:8.0f} ms {ratio:15.2f}x")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
