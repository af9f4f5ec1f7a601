#!/usr/bin/env python3
"""LSP latency across modules, run by hand: an edit in one module to the re-published diagnostics
of an open module that imports it.

A project (pyproject.toml) holds helpers.py, a small module, and train.py, the ~5,000-line
training file of lsp_latency.py, whose first loop sums what `helpers.step_loss()` returns (with
--every, every loop does). Both are open. Each edit of helpers.py switches `step_loss` between
returning the loss (the loop then keeps its graph: an OOM101) and returning `loss.item()` (none);
the time is from the didChange of helpers.py to the publishDiagnostics of train.py.

    python3 bench/lsp_project_latency.py [--server build/oomlint] [--edits 100] [--lines 5000] [--every]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time

from lsp_client import LspClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BLOCK = '''
def train_{i}(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += {sum}
    return total
'''

HELPERS = '''import torch


def step_loss(model, x):
    loss = model(x).sum()
    return {ret}
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--every", action="store_true", help="every loop of train.py sums step_loss() (one finding each)")
    args = ap.parse_args()
    text = "import torch\n\nfrom helpers import step_loss\n"
    blocks = 0
    while text.count("\n") < args.lines:
        uses = args.every or blocks == 0
        text += BLOCK.format(i=blocks, sum="step_loss(model, x)" if uses else "loss.item()")
        blocks += 1
    expected = blocks if args.every else 1
    tmp = tempfile.mkdtemp(prefix="oomlint_lsp_project_")
    try:
        open(os.path.join(tmp, "pyproject.toml"), "w").close()
        helpers = HELPERS.format(ret="loss.item()")
        with open(os.path.join(tmp, "helpers.py"), "w") as f:
            f.write(helpers)
        with open(os.path.join(tmp, "train.py"), "w") as f:
            f.write(text)
        train_uri, helpers_uri = "file://" + os.path.join(tmp, "train.py"), "file://" + os.path.join(tmp, "helpers.py")
        c = LspClient(args.server)
        c.initialize()
        for uri, body in ((helpers_uri, helpers), (train_uri, text)):
            c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                    "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": body}}})
            c.diagnostics(uri)
        ret_line = helpers.split("\n").index("    return loss.item()")
        times = []
        leaky = False
        for v in range(args.edits):
            new = "    return loss.item()" if leaky else "    return loss"
            old_len = len("    return loss") if leaky else len("    return loss.item()")
            rng = {"start": {"line": ret_line, "character": 0}, "end": {"line": ret_line, "character": old_len}}
            t0 = time.perf_counter()
            c.send({"jsonrpc": "2.0", "method": "textDocument/didChange",
                    "params": {"textDocument": {"uri": helpers_uri, "version": v + 2},
                               "contentChanges": [{"range": rng, "text": new}]}})
            d = c.diagnostics(train_uri)
            times.append((time.perf_counter() - t0) * 1000)
            leaky = not leaky
            assert (len(d) == expected) == leaky, f"train.py's diagnostics do not follow helpers.py ({len(d)} of {expected})"
        c.shutdown()
    finally:
        shutil.rmtree(tmp)
    times.sort()
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    print(f"importer of {text.count(chr(10))} lines ({expected} finding(s) toggled), {args.edits} edits of the imported module: median "
          f"{statistics.median(times):.2f} ms, p99 {p99:.2f} ms (didChange of helpers.py -> publishDiagnostics of train.py)")


if __name__ == "__main__":
    main()
