#!/usr/bin/env python3
"""Notebook speed, run by hand: `oomlint check` on a 200-cell, 5,000-line notebook, and the
language server's time from a one-cell edit (LSP 3.17 notebookDocument/didChange) to that cell's
publishDiagnostics.

    python3 bench/notebook_bench.py [--server build/oomlint] [--vs OTHER_BUILD/oomlint] [--cells 200] [--lines 5000]
                                    [--runs 21] [--edits 200]

Targets (issue "Jupyter notebooks"): check < 30 ms; LSP edit median < 5 ms. And against the same
code as one .py file (issue "Fast loops"; the cells one after another, each magic line commented
out): `check` of the notebook at most 1.1x the .py's, the notebook's edit median at most the .py's
for the same edit. The two take turns, and the ratios are taken run by run and edit by edit.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

from lsp_client import LspClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETUP = """import torch
import torch.nn as nn
import torch.nn.functional as F
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
"""

# A cell of a long experiment notebook: a model, a training loop, an evaluation (one leak in it).
CELL = """class Block{i}(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, width * 4)
        self.fc2 = nn.Linear(width * 4, width)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


model_{i} = Block{i}(64).to(device)
opt_{i} = torch.optim.AdamW(model_{i}.parameters(), lr=1e-3)
running_{i} = 0.0
for step in range(10):
    x = torch.randn(8, 64, device=device)
    opt_{i}.zero_grad()
    loss = model_{i}(x).pow(2).mean()
    loss.backward()
    opt_{i}.step()
    running_{i} += loss.item()
%time print(running_{i})
model_{i}.eval()
with torch.no_grad():
    preds_{i} = model_{i}(torch.randn(8, 64, device=device))
"""


def notebook(cells, lines):
    per_cell = max(1, lines // cells)
    sources = [SETUP]
    i = 0
    while len(sources) < cells:
        body = CELL.format(i=i)
        while body.count("\n") < per_cell:
            body += f"note_{i}_{body.count(chr(10))} = {i}\n"
        sources.append(body)
        i += 1
    nb = {"cells": [], "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    for k, src in enumerate(sources):
        nb["cells"].append({"cell_type": "code", "execution_count": None, "id": f"c{k}", "metadata": {}, "outputs": [],
                            "source": src.splitlines(keepends=True)})
    return nb, sources


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--cells", type=int, default=200)
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--vs", help="a second server (B, the baseline): its edits alternate with A's, and A/B is "
                                  "taken edit by edit, so a drift in the machine's speed moves both alike")
    args = ap.parse_args()
    nb, sources = notebook(args.cells, args.lines)
    total_lines = sum(s.count("\n") for s in sources)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "long.ipynb")
        with open(path, "w") as fh:
            json.dump(nb, fh, indent=1)
            fh.write("\n")
        os.makedirs(os.path.join(d, "py"))  # a folder of its own: neither file is the other's neighbour
        py_path = os.path.join(d, "py", "long.py")
        with open(py_path, "w") as fh:
            fh.write(as_python(sources))
        compare_py(args.server, path, py_path, args.runs)
        servers = [args.server] + ([args.vs] if args.vs else [])
        checks = [[s, "check", "--no-cache", "--isolated", "--exit-zero", "-q", path] for s in servers]
        for check in checks:
            subprocess.run(check, check=True, capture_output=True)
        times = [[] for _ in servers]
        for _ in range(args.runs):  # with --vs, A and B take turns
            for check, t in zip(checks, times):
                t0 = time.perf_counter()
                subprocess.run(check, check=True, capture_output=True)
                t.append((time.perf_counter() - t0) * 1000)
        for name, t in zip("AB", times):
            print(f"{len(sources)} cells, {total_lines} lines: oomlint check{' ' + name if args.vs else ''} median "
                  f"{statistics.median(t):.1f} ms (min {min(t):.1f}, max {max(t):.1f}) over {args.runs} runs   (target < 30 ms)")
        if args.vs:
            print(f"check A/B, run by run: median {statistics.median(a / b for a, b in zip(*times)):.3f}")

    servers = [args.server] + ([args.vs] if args.vs else [])
    sessions = [NotebookSession(s, sources) for s in servers]
    times = [[] for _ in servers]
    for v in range(args.edits):  # with --vs, the servers take turns: each edit goes to A, then B
        for session, t in zip(sessions, times):
            t.append(session.edit(v))
    for session in sessions:
        session.close()
    # The same edit in the same code as one .py file, taking turns with the notebook's.
    notebook_session, py_session = NotebookSession(args.server, sources), PySession(args.server, sources)
    nb_times, py_times = [], []
    for v in range(args.edits):
        nb_times.append(notebook_session.edit(v))
        py_times.append(py_session.edit(v))
    notebook_session.close()
    py_session.close()
    ratios = [a / b for a, b in zip(nb_times, py_times)]
    print(f"LSP edit, notebook cell vs the same code as one .py: medians {statistics.median(nb_times):.2f} ms vs "
          f"{statistics.median(py_times):.2f} ms, edit by edit {statistics.median(ratios):.3f}x   (target <= 1.0x)")
    for name, t in zip("AB", times):
        t = sorted(t)
        print(f"LSP{' ' + name if args.vs else ''}: {args.edits} one-cell edits: median {statistics.median(t):.2f} ms, "
              f"p99 {t[min(len(t) - 1, int(0.99 * len(t)))]:.2f} ms (didChange -> that cell's diagnostics)   (target < 5 ms)")
    if args.vs:
        ratios = [a / b for a, b in zip(times[0], times[1])]
        print(f"LSP A/B, edit by edit: median {statistics.median(ratios):.3f}   (A = {servers[0]}, B = {servers[1]})")


def toggle(row, col, leaky):
    """The edit that puts `.item()` back at (row, col) when the line is leaky, else takes it out."""
    at = {"line": row, "character": col}
    if leaky:
        return {"range": {"start": at, "end": at}, "text": ".item()"}
    return {"range": {"start": at, "end": {"line": row, "character": col + 7}}, "text": ""}


def settle(session, uri, t0):
    """Milliseconds from t0 to `uri`'s diagnostics, which must follow the edit just sent."""
    d = session.client.diagnostics(uri)
    elapsed = (time.perf_counter() - t0) * 1000
    session.leaky = not session.leaky
    assert any(x["code"] == "OOM101" for x in d) == session.leaky, "diagnostics do not follow the edit"
    return elapsed


def as_python(sources):
    """The notebook's code as one .py file: the cells one after another, magic lines commented out."""
    out = []
    for src in sources:
        for line in src.splitlines(keepends=True):
            out.append("# " + line if line.lstrip().startswith(("%", "!")) else line)
        if not out[-1].endswith("\n"):
            out.append("\n")
    return "".join(out)


def compare_py(server, nb_path, py_path, runs):
    """`check` of the notebook and of the same code as a .py, taking turns."""
    cmds = [[server, "check", "--no-cache", "--isolated", "--exit-zero", "-q", p] for p in (nb_path, py_path)]
    for c in cmds:
        subprocess.run(c, check=True, capture_output=True)
    times = [[], []]
    for _ in range(runs):
        for c, t in zip(cmds, times):
            t0 = time.perf_counter()
            subprocess.run(c, check=True, capture_output=True)
            t.append((time.perf_counter() - t0) * 1000)
    ratio = statistics.median(a / b for a, b in zip(*times))
    print(f"check, notebook vs the same code as one .py: medians {statistics.median(times[0]):.1f} ms vs "
          f"{statistics.median(times[1]):.1f} ms, run by run {ratio:.3f}x   (target <= 1.1x)")


class PySession:
    """The same code as one .py document, with NotebookSession's edit at the same place."""

    def __init__(self, server, sources):
        self.client = LspClient(server)
        self.client.initialize()
        self.uri = "file:///tmp/oomlint_bench_long.py"
        text = as_python(sources)
        self.client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                          "params": {"textDocument": {"uri": self.uri, "languageId": "python", "version": 1, "text": text}}})
        self.client.diagnostics(self.uri)
        target = len(sources) // 2
        first = sum(src.count("\n") for src in sources[:target])  # the target cell's first line in the file
        lines = sources[target].split("\n")
        row = next(n for n, l in enumerate(lines) if "+= loss.item()" in l)
        self.row = first + row
        self.col = lines[row].index("loss.item()") + 4
        self.leaky = False

    def edit(self, v):
        change = toggle(self.row, self.col, self.leaky)
        t0 = time.perf_counter()
        self.client.send({"jsonrpc": "2.0", "method": "textDocument/didChange",
                          "params": {"textDocument": {"uri": self.uri, "version": v + 2}, "contentChanges": [change]}})
        return settle(self, self.uri, t0)

    def close(self):
        self.client.shutdown()


class NotebookSession:
    """One server with the notebook open, toggling `running_{i} += loss.item()` <-> `running_{i} += loss`
    in the middle cell (a finding appears, goes)."""

    def __init__(self, server, sources):
        self.client = LspClient(server)
        self.client.initialize()
        self.nb_uri = "file:///tmp/oomlint_bench_long.ipynb"
        self.cell_uris = [f"vscode-notebook-cell:/tmp/oomlint_bench_long.ipynb#c{k}" for k in range(len(sources))]
        self.client.send({"jsonrpc": "2.0", "method": "notebookDocument/didOpen",
                          "params": {"notebookDocument": {"uri": self.nb_uri, "notebookType": "jupyter-notebook", "version": 1,
                                                          "cells": [{"kind": 2, "document": u} for u in self.cell_uris]},
                                     "cellTextDocuments": [{"uri": u, "languageId": "python", "version": 1, "text": s}
                                                           for u, s in zip(self.cell_uris, sources)]}})
        self.client.diagnostics(self.cell_uris[-1])
        self.target = len(sources) // 2
        lines = sources[self.target].split("\n")
        self.row = next(n for n, l in enumerate(lines) if "+= loss.item()" in l)
        self.col = lines[self.row].index("loss.item()") + 4
        self.leaky = False

    def edit(self, v):
        """Milliseconds from the didChange of edit `v` to the edited cell's diagnostics."""
        change = toggle(self.row, self.col, self.leaky)
        uri = self.cell_uris[self.target]
        t0 = time.perf_counter()
        self.client.send({"jsonrpc": "2.0", "method": "notebookDocument/didChange",
                          "params": {"notebookDocument": {"uri": self.nb_uri, "version": v + 2},
                                     "change": {"cells": {"textContent": [{"document": {"uri": uri, "version": v + 2},
                                                                           "changes": [change]}]}}}})
        return settle(self, uri, t0)

    def close(self):
        self.client.shutdown()

if __name__ == "__main__":
    main()
