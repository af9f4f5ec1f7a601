#!/usr/bin/env python3
"""Notebook speed, run by hand: `oomlint check` on a 200-cell, 5,000-line notebook, and the
language server's time from a one-cell edit (LSP 3.17 notebookDocument/didChange) to that cell's
publishDiagnostics.

    python3 bench/notebook_bench.py [--server build/oomlint] [--cells 200] [--lines 5000] [--runs 21] [--edits 200]

Targets (issue "Jupyter notebooks"): check < 30 ms; LSP edit median < 5 ms.
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
    args = ap.parse_args()
    nb, sources = notebook(args.cells, args.lines)
    total_lines = sum(s.count("\n") for s in sources)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "long.ipynb")
        with open(path, "w") as fh:
            json.dump(nb, fh, indent=1)
            fh.write("\n")
        check = [args.server, "check", "--no-cache", "--isolated", "--exit-zero", "-q", path]
        subprocess.run(check, check=True, capture_output=True)
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(check, check=True, capture_output=True)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"{len(sources)} cells, {total_lines} lines: oomlint check median {statistics.median(times):.1f} ms "
              f"(min {min(times):.1f}, max {max(times):.1f}) over {args.runs} runs   (target < 30 ms)")

    c = LspClient(args.server)
    send, diagnostics_of = c.send, c.diagnostics
    c.initialize()
    nb_uri = "file:///tmp/oomlint_bench_long.ipynb"
    cell_uris = [f"vscode-notebook-cell:/tmp/oomlint_bench_long.ipynb#c{k}" for k in range(len(sources))]
    send({"jsonrpc": "2.0", "method": "notebookDocument/didOpen",
          "params": {"notebookDocument": {"uri": nb_uri, "notebookType": "jupyter-notebook", "version": 1,
                                          "cells": [{"kind": 2, "document": u} for u in cell_uris]},
                     "cellTextDocuments": [{"uri": u, "languageId": "python", "version": 1, "text": s}
                                           for u, s in zip(cell_uris, sources)]}})
    diagnostics_of(cell_uris[-1])
    # Edit cell 100: `running_{i} += loss.item()` <-> `running_{i} += loss` (a finding appears, goes).
    target = len(sources) // 2
    lines = sources[target].split("\n")
    row = next(n for n, l in enumerate(lines) if "+= loss.item()" in l)
    col = lines[row].index("loss.item()") + 4
    times = []
    leaky = False
    for v in range(args.edits):
        if leaky:
            change = {"range": {"start": {"line": row, "character": col}, "end": {"line": row, "character": col}}, "text": ".item()"}
        else:
            change = {"range": {"start": {"line": row, "character": col}, "end": {"line": row, "character": col + 7}}, "text": ""}
        t0 = time.perf_counter()
        send({"jsonrpc": "2.0", "method": "notebookDocument/didChange",
              "params": {"notebookDocument": {"uri": nb_uri, "version": v + 2},
                         "change": {"cells": {"textContent": [{"document": {"uri": cell_uris[target], "version": v + 2},
                                                               "changes": [change]}]}}}})
        d = diagnostics_of(cell_uris[target])
        times.append((time.perf_counter() - t0) * 1000)
        leaky = not leaky
        assert any(x["code"] == "OOM101" for x in d) == leaky, "diagnostics do not follow the edit"
    c.shutdown()
    times.sort()
    print(f"LSP: {args.edits} one-cell edits: median {statistics.median(times):.2f} ms, "
          f"p99 {times[min(len(times) - 1, int(0.99 * len(times)))]:.2f} ms (didChange -> that cell's diagnostics)   (target < 5 ms)")


if __name__ == "__main__":
    main()
