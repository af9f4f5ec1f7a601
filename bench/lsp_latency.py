#!/usr/bin/env python3
"""LSP latency, run by hand: time from a one-line didChange to its publishDiagnostics.

Opens a ~5,000-line training file in `oomlint server` over stdio, then sends N single-line
incremental edits (alternately introducing and removing a finding) and prints median and p99.

    python3 bench/lsp_latency.py [--server build/oomlint] [--edits 200] [--lines 5000]

It also prints the server's resident memory (VmRSS) after the open and after the last edit:
`--edits 10000` shows whether memory stays bounded under a long editing session.
"""
import argparse
import os
import statistics
import time

from lsp_client import LspClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BLOCK = '''
def train_{i}(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total
'''


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--lines", type=int, default=5000)
    args = ap.parse_args()
    text = "import torch\n"
    i = 0
    while text.count("\n") < args.lines:
        text += BLOCK.format(i=i)
        i += 1
    lines = text.split("\n")
    target = next(n for n, l in enumerate(lines) if "total += loss.item()" in l)
    col = lines[target].index("loss.item()")

    c = LspClient(args.server)
    p, send, recv, wait_diags = c.p, c.send, c.recv, c.diagnostics
    c.initialize()
    uri = "file:///tmp/oomlint_latency.py"
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
          "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
    wait_diags()
    rss_open = rss_kib(p.pid)
    rss_mid = None
    times = []
    leaky = False
    for v in range(args.edits):
        if leaky:   # `loss` -> `loss.item()`
            rng = {"start": {"line": target, "character": col}, "end": {"line": target, "character": col + 4}}
            new = "loss.item()"
        else:       # `loss.item()` -> `loss`
            rng = {"start": {"line": target, "character": col}, "end": {"line": target, "character": col + 11}}
            new = "loss"
        t0 = time.perf_counter()
        send({"jsonrpc": "2.0", "method": "textDocument/didChange",
              "params": {"textDocument": {"uri": uri, "version": v + 2}, "contentChanges": [{"range": rng, "text": new}]}})
        d = wait_diags()
        times.append((time.perf_counter() - t0) * 1000)
        if v == args.edits // 10:
            rss_mid = rss_kib(p.pid)
        leaky = not leaky
        assert (len(d) == 1) == leaky, "diagnostics do not follow the edit"
    rss_end = rss_kib(p.pid)
    c.shutdown()
    times.sort()
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    print(f"{text.count(chr(10))} lines, {args.edits} one-line edits: median {statistics.median(times):.2f} ms, "
          f"p99 {p99:.2f} ms, max {times[-1]:.2f} ms (didChange -> publishDiagnostics)")
    print(f"server RSS: {rss_open / 1024:.1f} MiB after open, {rss_mid / 1024:.1f} MiB after {args.edits // 10 + 1} edits, "
          f"{rss_end / 1024:.1f} MiB after {args.edits} edits")


if __name__ == "__main__":
    main()
