#!/usr/bin/env python3
"""oomlint benchmarks, run by hand (not in CI). Prints one table from one run.

Each command runs --runs times (after one warm-up); the table shows the median wall time and the
median CPU time (user + sys of the child), and each ratio is computed from those medians measured
side by side in this run.

    python3 bench/bench.py [--corpus DIR] [--runs N] [--threads N]

Comparisons, when their tools are there (`bash scripts/bench-deps.sh` installs them): ruff through
@astral-sh/ruff-wasm-nodejs (its default rules, one thread, bench/ruff_wasm.js), flake8 and pylint
from Debian on a subset; and the corpus copied 10x, with peak RSS, to show how cost grows.
"""
import argparse
import itertools
import math
import os
import resource
import shutil
import statistics
import tempfile
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(cmd, cwd=None):
    """Wall and CPU seconds (user + system) of one run of cmd; exits when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(cmd, runs, cwd=None):
    run_once(cmd, cwd)  # warm-up: page cache, dynamic loader
    walls, cpus = zip(*(run_once(cmd, cwd) for _ in range(runs)))
    return statistics.median(walls), statistics.median(cpus), max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, 0)


def measure_together(cmds, runs):
    """measure() for several commands taking turns, in every order in turn: on a shared host the
    load drifts, and a command measured after another (or right after a large process) runs faster
    or slower; ratios between these commands are what the figures compare. Whole rounds of the
    permutations, at least `runs` runs each."""
    orders = list(itertools.permutations(range(len(cmds))))
    rounds = len(orders) * math.ceil(runs / len(orders))
    for cmd in cmds:  # warm-up: page cache, dynamic loader
        run_once(cmd)
    walls, cpus = [[] for _ in cmds], [[] for _ in cmds]
    for r in range(rounds):
        for j in orders[r % len(orders)]:
            wall, cpu = run_once(cmds[j])
            walls[j].append(wall)
            cpus[j].append(cpu)
    return [(statistics.median(w), statistics.median(c), 0) for w, c in zip(walls, cpus)]


def peak_rss_mib(cmd):
    """Peak resident memory of one run of cmd (GNU time's %M), in MiB."""
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(out.stderr.strip().splitlines()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/usr/lib/python3/dist-packages/torch")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()

    oomlint = os.path.join(args.build, "oomlint")
    bare = os.path.join(args.build, "oomlint_bare_parse")
    subprocess.run(["cmake", "--build", args.build, "--target", "oomlint", "oomlint_bare_parse"], check=True,
                   stdout=subprocess.DEVNULL)
    # Every file oomlint checks there: its Python sources and type stubs (.pyi; the corpus has 47,
    # two of them large), so that the floor parses exactly what oomlint parses.
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.corpus) for f in fs if f.endswith((".py", ".pyi")))
    lines = 0
    for f in files:
        with open(f, "rb") as fh:
            lines += fh.read().count(b"\n")
    listfile = os.path.join(args.build, "bench_files.txt")
    with open(listfile, "w") as fh:
        fh.write("\n".join(files))

    t = str(args.threads)
    # The same Python files the bare parse reads: C++ files of the corpus (if any) are the C++
    # front end's business, measured by bench/cpp_bench.py.
    py_only = ["--extend-exclude", "*.c,*.cc,*.cpp,*.cxx,*.h,*.hh,*.hpp,*.cu,*.cuh"]
    rows = []
    # The floor, the floor in oomlint's arena (tree-sitter allocating from oomlint's per-file arena,
    # as oomlint does: the ratio to this one is what oomlint's own analysis costs on top of
    # parsing) and the cold check, taking turns: their ratios are the figures.
    parse, parse_arena, check = measure_together(
        [[bare, "--threads", t, "@" + listfile], [bare, "--threads", t, "--arena", "@" + listfile],
         [oomlint, "check", "--no-cache", "--threads", t, "--isolated", "--exit-zero", "-q"] + py_only + [args.corpus]], args.runs)
    rows.append(("tree-sitter parse + walk (floor)", parse))
    rows.append(("same, tree-sitter in oomlint's arena", parse_arena))
    rows.append(("oomlint check (cold, --no-cache)", check))
    cache_dir = os.path.join(args.build, "bench_cache")
    warm_cmd = [oomlint, "check", "--cache-dir", cache_dir, "--threads", t, "--isolated", "--exit-zero", "-q"] + py_only + [args.corpus]
    subprocess.run(warm_cmd, stdout=subprocess.DEVNULL)  # fill the cache
    warm = measure(warm_cmd, args.runs)
    rows.append(("oomlint check (warm cache)", warm))
    all_rules = measure([oomlint, "check", "--no-cache", "--threads", t, "--isolated", "--exit-zero", "-q", "--select", "ALL"] + py_only +
                        [args.corpus], args.runs)
    rows.append(("oomlint check --select ALL", all_rules))

    ruff_js = os.path.join(ROOT, "bench", "ruff_wasm.js")
    ruff = None
    if os.path.isdir(os.path.join(ROOT, ".deps", "ruff-wasm-nodejs")) and shutil.which("node"):
        ruff = measure(["node", ruff_js, args.corpus], max(1, args.runs // 2))
        rows.append(("ruff-wasm 0.17.4 (default rules, 1 thread)", ruff))

    # flake8 and pylint are far slower: a subset, with oomlint on the same files.
    subset = files[:60]
    subset_lines = 0
    for f in subset:
        with open(f, "rb") as fh:
            subset_lines += fh.read().count(b"\n")
    subset_rows = []
    for tool, cmd in (("flake8", ["flake8", "--exit-zero", "-j", "1"]), ("pylint", ["pylint", "--exit-zero", "-j", "1", "--disable=import-error"])):
        if shutil.which(tool):
            subset_rows.append((f"{tool} (Debian), {len(subset)} files", measure(cmd + subset, 1)))
    if subset_rows:
        subset_rows.append((f"oomlint, same {len(subset)} files", measure([oomlint, "check", "--no-cache", "--threads", "1", "--isolated",
                                                                         "--exit-zero", "-q"] + subset, args.runs)))

    # Scale: the corpus copied 10 times. Wall time should grow ~10x; memory should not (files stream).
    scale_dir = tempfile.mkdtemp(prefix="oomlint_bench_10x_")
    for i in range(10):
        for f in files:
            dest = os.path.join(scale_dir, f"copy{i}", os.path.relpath(f, args.corpus))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(f, dest)
    one_x = [oomlint, "check", "--no-cache", "--threads", t, "--isolated", "--exit-zero", "-q", os.path.join(scale_dir, "copy0")]
    ten_x = [oomlint, "check", "--no-cache", "--threads", t, "--isolated", "--exit-zero", "-q", scale_dir]
    scale1 = measure(one_x, max(1, args.runs // 2))
    scale10 = measure(ten_x, max(1, args.runs // 2))
    rss1, rss10 = peak_rss_mib(one_x), peak_rss_mib(ten_x)
    # With N workers the peak also depends on which large files happen to be parsed at the same
    # moment (more copies, more such coincidences); one worker shows what is kept per file.
    single = lambda cmd: [c if c != t or cmd[i - 1] != "--threads" else "1" for i, c in enumerate(cmd)]
    rss1_t1, rss10_t1 = peak_rss_mib(single(one_x)), peak_rss_mib(single(ten_x))
    shutil.rmtree(scale_dir)

    # Scale within one function: 10k and 100k lines of varied training code in a single body.
    # Every pass must stay linear in the length of a function, not only of a corpus.
    long_dir = tempfile.mkdtemp(prefix="oomlint_bench_long_")
    long_times = {}
    for in_loop in (False, True):
        for n in (10_000, 100_000):
            path = os.path.join(long_dir, f"long_{n}_{int(in_loop)}.py")
            with open(path, "w") as fh:
                fh.write(long_function(n, in_loop))
            cmd = [oomlint, "check", "--no-cache", "--isolated", "--exit-zero", "-q", path]
            long_times[(n, in_loop)] = measure(cmd, max(1, args.runs // 2))[0]
    shutil.rmtree(long_dir)

    one = os.path.join(ROOT, "examples", "train.py")
    startup = measure([oomlint, "check", "--no-cache", "--isolated", "--exit-zero", "-q", one], max(args.runs, 20))
    rows.append(("oomlint check examples/train.py", startup))

    print(f"corpus: {args.corpus}: {len(files)} files, {lines} lines; threads={t}; median of {args.runs} runs "
          f"(the first three rows taking turns, whole rounds of their orders: at least {args.runs})")
    print(f"{'command':40} {'wall s':>9} {'cpu s':>9} {'lines/s/core':>13}")
    for name, (wall, cpu, _) in rows:
        per_core = lines / cpu if cpu > 0 and "train.py" not in name else float("nan")
        print(f"{name:40} {wall:9.3f} {cpu:9.3f} {per_core:13,.0f}")
    print()
    print(f"oomlint CPU / bare parse CPU: {check[1] / parse[1]:.2f}x   (target <= 2.0x, issue 2; <= 1.2x, issue 7)")
    print(f"oomlint CPU / bare parse CPU with the same arena: {check[1] / parse_arena[1]:.2f}x   (oomlint's analysis on top of parsing)")
    print(f"oomlint wall / bare parse wall: {check[0] / parse[0]:.2f}x")
    print(f"warm run (nothing changed): {warm[0] * 1000:.1f} ms wall median   (target < 50 ms, issue 7)")
    print(f"start-up, one 90-line file: {startup[0] * 1000:.1f} ms wall median   (target < 10 ms, issue 7)")
    if ruff:
        print(f"oomlint wall / ruff-wasm wall: {check[0] / ruff[0]:.2f}x   (target <= 0.3x, issue 7); "
              f"per core: oomlint {lines / check[1]:,.0f} lines/s, ruff-wasm {lines / ruff[0]:,.0f} lines/s")
    else:
        print("ruff-wasm: not fetched (bash scripts/bench-deps.sh)")
    for name, (wall, cpu, _) in subset_rows:
        print(f"{name:40} {wall:9.3f} s wall {subset_lines / wall:13,.0f} lines/s")
    for in_loop, what in ((False, "function"), (True, "loop body")):
        big, small = long_times[(100_000, in_loop)], long_times[(10_000, in_loop)]
        print(f"one 100k-line {what}: {big:.2f} s vs 10k lines {small:.2f} s = {big / small:.2f}x   (linear: target <= 11x, issue 15)")
    print(f"10x corpus: {scale10[0]:.2f} s vs 1x {scale1[0]:.2f} s = {scale10[0] / scale1[0]:.2f}x   (target <= 11x); "
          f"peak RSS {rss10:.0f} MiB vs {rss1:.0f} MiB ({t} threads), {rss10_t1:.1f} MiB vs {rss1_t1:.1f} MiB (1 thread)")


# Blocks of one long training function: branches, loops, handlers, comprehensions, attention,
# accumulators, appends, hooks, evaluation, carried state, gradient accumulation, retries; some
# reuse one set of names (rebound again and again), some have names of their own (many live names).
LONG_BLOCKS = [
    """h{i} = model(x)
if h{i}.sum() > {i}:
    outs.append(h{i}.detach())
else:
    h{i} = h{i} * 2
""",
    """scores = q @ k.transpose(-2, -1) / 8
attn = scores.softmax(dim=-1)
attn = dropout(attn)
ctx{i} = attn @ v
""",
    """for step, (xb, yb) in enumerate(loader):
    loss = criterion(model(xb), yb)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    total += loss.item()
""",
    """try:
    y{i} = model(x)
except torch.cuda.OutOfMemoryError:
    torch.cuda.empty_cache()
    y{i} = model(x[:1])
finally:
    count += 1
""",
    """with torch.no_grad():
    preds = [model(b) for b in batches if b is not None]
    acc{i} = sum(p.argmax(-1).float().mean() for p in preds)
""",
    """while count < {i}:
    count += 1
    if count % 7 == 0:
        break
losses.append(loss)
running += loss
""",
    """for j, (xb, yb) in enumerate(loader):
    loss = criterion(model(xb), yb)
    loss.backward()
    if (j + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
    """hidden{i} = None
for xb, yb in loader:
    out, hidden{i} = rnn(xb, hidden{i})
    loss = criterion(out, yb)
    loss.backward()
    optimizer.step()
""",
    """handle{i} = layer.register_forward_hook(lambda mod, inp, out: feats.append(out))
model.eval()
val{i} = model(x)
model.train()
""",
    """summed = 0
for xb in batches:
    summed = summed + criterion(model(xb), y)
summed.backward()
for p in model.parameters():
    norms.append(p.grad.norm().item())
""",
    """x_gpu{i} = x.cuda()
dl{i} = torch.utils.data.DataLoader(dataset, batch_size=8, pin_memory=True, collate_fn=collate)
""",
]


def long_function(lines: int, in_loop: bool = False) -> str:
    """One function of about `lines` lines; with in_loop, its body is one training loop's body."""
    out = ["import torch", "", "", "def train(model, rnn, layer, loader, optimizer, criterion, q, k, v, x, y, batches,",
           "          dropout, dataset, collate, accum):",
           "    outs, losses, feats, norms, total, running, count, loss = [], [], [], [], 0.0, 0.0, 0, None"]
    indent = "    "
    if in_loop:
        out.append("    for epoch in range(10):")
        indent = "        "
    i = 0
    written = len(out)
    while written < lines:
        block = LONG_BLOCKS[i % len(LONG_BLOCKS)].format(i=i)
        out.extend(indent + line for line in block.rstrip("\n").split("\n"))
        written += block.count("\n")
        i += 1
    out.append("    return outs, losses, total")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
