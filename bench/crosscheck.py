#!/usr/bin/env python3
"""Cross-checks oomlint-probe against PyTorch itself (run on the GPU machine, by hand).

Re-runs the probes written in Python (TWINS below), with the workload recorded in the probe's JSON and the same measuring protocol (baseline before a warm-up step, peak reset after it,
torch.cuda.max_memory_allocated), and prints both numbers side by side with their difference.

    python3 bench/crosscheck.py --probe-json results.json
"""
import argparse
import json
import math
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def measure(step, steps, reset=None):
    if reset:
        reset()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    step(-1)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for i in range(steps):
        step(i)
        torch.cuda.synchronize()
    return {"peak_bytes": torch.cuda.max_memory_allocated() - base, "retained_bytes": torch.cuda.memory_allocated() - base}


def mlp(w):
    layers = []
    for _ in range(w["depth"]):
        layers += [nn.Linear(w["width"], w["width"]), nn.GELU()]
    return nn.Sequential(*layers).to("cuda", DTYPES[w["dtype"]])


DTYPES = {"BFloat16": torch.bfloat16, "Float": torch.float32, "Half": torch.float16}


def loss_of(out):
    return out.float().pow(2).mean()


def oom101(w):
    model = mlp(w)
    x = torch.randn(w["batch"], w["width"], device="cuda", dtype=DTYPES[w["dtype"]])
    state = {"total": torch.zeros((), device="cuda")}

    def anti(i):
        state["total"] = state["total"] + loss_of(model(x))

    a = measure(anti, w["steps"])
    del state["total"]
    fl = [0.0]

    def fix(i):
        fl[0] += loss_of(model(x)).item()

    return a, measure(fix, w["steps"])


def oom201(w):
    model = mlp(w).eval()
    x = torch.randn(w["batch"] * w["seq"], w["width"], device="cuda", dtype=DTYPES[w["dtype"]])

    def anti(i):
        model(x)

    def fix(i):
        with torch.no_grad():
            model(x)

    return measure(anti, w["steps"]), measure(fix, w["steps"])


def zero_grad(params, set_to_none):
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            p.grad.zero_()


def sgd_step(params, lr=1e-4):
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p.sub_(p.grad * lr)


def trained_mlp(w):
    """The MLP, its parameters and the reset between variants (gradients dropped), as the probe's
    training probes set them up."""
    model = mlp(w)
    params = list(model.parameters())
    return model, params, lambda: zero_grad(params, True)


def x_of(w, rows=None):
    return torch.randn(rows or w["batch"], w["width"], device="cuda", dtype=DTYPES[w["dtype"]])


def tokens_of(w):
    return x_of(w, w["batch"] * w["seq"])


def oom102(w):
    model, x = mlp(w), x_of(w)
    anti_kept, fix_kept = [], []
    a = measure(lambda i: anti_kept.append(model(x)), w["steps"])
    anti_kept.clear()
    return a, measure(lambda i: fix_kept.append(model(x).detach()), w["steps"])


def oom103(w):
    model, x = mlp(w), x_of(w)
    with torch.no_grad():
        anti_kept, fix_kept = [], []
        a = measure(lambda i: anti_kept.append(model(x)), w["steps"])
        anti_kept.clear()
        return a, measure(lambda i: fix_kept.append(model(x).cpu()), w["steps"])


def oom104(w):
    model, params, reset = trained_mlp(w)
    mbs = [x_of(w) for _ in range(w["accum"])]

    def anti(i):
        zero_grad(params, True)
        total = torch.zeros((), device="cuda")
        for mb in mbs:
            total = total + loss_of(model(mb))
        total.backward()
        sgd_step(params)

    def fix(i):
        zero_grad(params, True)
        for mb in mbs:
            (loss_of(model(mb)) / len(mbs)).backward()
        sgd_step(params)

    return measure(anti, w["steps"], reset), measure(fix, w["steps"], reset)


def oom105(w):
    model, params, reset = trained_mlp(w)
    x = x_of(w)
    last = {}

    def step(retain):
        def run(i):
            zero_grad(params, True)
            loss = loss_of(model(x))
            loss.backward(retain_graph=retain)
            sgd_step(params)
            last["loss"] = loss
        return run

    a = measure(step(True), w["steps"], reset)
    last.clear()
    f = measure(step(False), w["steps"], reset)
    last.clear()
    return a, f


def oom106(w):
    model, params, reset = trained_mlp(w)
    x = x_of(w)

    def anti(i):
        zero_grad(params, False)
        loss_of(model(x)).backward(create_graph=True)

    def fix(i):
        zero_grad(params, False)
        grads = torch.autograd.grad([loss_of(model(x))], params, create_graph=True)
        for p, g in zip(params, grads):
            if p.grad is not None:
                p.grad.add_(g.detach())
            else:
                p.grad = g.detach()

    a = measure(anti, w["steps"], reset)
    f = measure(fix, w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom107(w):
    cell = nn.Linear(2 * w["width"], w["width"]).to("cuda", DTYPES[w["dtype"]])
    params = list(cell.parameters())
    x = x_of(w)
    state = {"h": torch.zeros(w["batch"], w["width"], device="cuda", dtype=x.dtype)}

    def anti(i):
        zero_grad(params, True)
        state["h"] = torch.tanh(cell(torch.cat([x, state["h"]], 1)))
        loss_of(state["h"]).backward(retain_graph=True)

    a = measure(anti, w["steps"])
    state["h"] = torch.zeros(w["batch"], w["width"], device="cuda", dtype=x.dtype)

    def fix(i):
        zero_grad(params, True)
        state["h"] = torch.tanh(cell(torch.cat([x, state["h"].detach()], 1)))
        loss_of(state["h"]).backward()

    f = measure(fix, w["steps"])
    del state["h"]
    return a, f


def train_step(model, params, x, zero_first, set_to_none):
    if zero_first:
        zero_grad(params, set_to_none)
    loss = loss_of(model(x))
    if not zero_first:
        zero_grad(params, set_to_none)
    loss.backward()
    sgd_step(params)


def oom301(w):
    model, params, reset = trained_mlp(w)
    x = tokens_of(w)
    train_step(model, params, x, True, False)  # gradients exist before measuring
    a = measure(lambda i: train_step(model, params, x, True, False), w["steps"], reset)
    f = measure(lambda i: train_step(model, params, x, True, True), w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom302(w):
    model, params, reset = trained_mlp(w)
    x = tokens_of(w)
    train_step(model, params, x, True, True)
    a = measure(lambda i: train_step(model, params, x, False, True), w["steps"], reset)
    train_step(model, params, x, True, True)
    f = measure(lambda i: train_step(model, params, x, True, True), w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom303(w):
    model, params, reset = trained_mlp(w)
    mbs = [x_of(w) for _ in range(w["accum"])]

    def run(scaled):
        def step(i):
            zero_grad(params, True)
            for mb in mbs:
                loss = loss_of(model(mb))
                (loss / len(mbs) if scaled else loss).backward()
            sgd_step(params)
        return step

    a = measure(run(False), w["steps"], reset)
    f = measure(run(True), w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom501(w):
    model, params, reset = trained_mlp(w)
    x = x_of(w)

    def anti(i):
        train_step(model, params, x, True, True)
        torch.cuda.empty_cache()

    return measure(anti, w["steps"], reset), measure(lambda i: train_step(model, params, x, True, True), w["steps"], reset)


def oom504(w):
    n = w["batch"] * w["width"] * 64

    def anti(i):
        torch.zeros(n).to("cuda")

    def fix(i):
        torch.zeros(n, device="cuda")

    return measure(anti, w["steps"]), measure(fix, w["steps"])


def frozen_half(w, make):
    model, params, reset = trained_mlp(w)
    x = x_of(w)
    half = len(params) // 2
    for p in params[:half]:
        p.requires_grad_(False)

    def run(given):
        # Built in the warm-up step, after the baseline, as the probe builds it.
        opt = []

        def step(i):
            if not opt:
                opt.append(make(given))
            zero_grad(params, True)
            loss_of(model(x)).backward()
            opt[0].step()
        return step

    a = measure(run(params), w["steps"], reset)
    f = measure(run(params[half:]), w["steps"], reset)
    return a, f


def oom305(w):
    # One tensor at a time, as LibTorch's Adam steps (PyTorch's default foreach path batches
    # its temporaries over all parameters, a different peak for the same pattern).
    return frozen_half(w, lambda given: torch.optim.Adam(given, lr=1e-4, foreach=False))


def oom305_adagrad(w):
    return frozen_half(w, lambda given: torch.optim.Adagrad(given, lr=1e-4, foreach=False))


class Checkpointed(torch.autograd.Function):
    """The probe's checkpoint: keeps only the input, runs fn without saving activations, and
    recomputes it with grad on in backward."""

    @staticmethod
    def forward(ctx, x, fn):
        ctx.fn = fn
        ctx.save_for_backward(x)
        with torch.no_grad():
            return fn(x)

    @staticmethod
    def backward(ctx, grad):
        x = ctx.saved_tensors[0].detach().requires_grad_(True)
        with torch.enable_grad():
            y = ctx.fn(x)
        y.backward(grad)
        return x.grad, None


def oom402(w, with_none=False):
    """Per-op against per-block checkpointing; with_none also measures no checkpointing (the seed
    claim SEED-dense-checkpointing compares per-op checkpointing with that)."""
    dtype = DTYPES[w["dtype"]]
    layers = [nn.Linear(w["width"], w["width"]).to("cuda", dtype) for _ in range(2 * w["depth"])]
    x = tokens_of(w).requires_grad_(True)

    def block(b):
        return lambda t: layers[2 * b + 1](F.gelu(layers[2 * b](t)))

    blocks = [block(b) for b in range(w["depth"])]

    def clear():
        for layer in layers:
            for p in layer.parameters():
                p.grad = None
        x.grad = None

    def anti(i):
        h = x
        for b in range(w["depth"]):
            h = layers[2 * b + 1](Checkpointed.apply(layers[2 * b](h), F.gelu))
        loss_of(h).backward()
        clear()

    def fix(i):
        h = x
        for b in range(w["depth"]):
            h = Checkpointed.apply(h, blocks[b])
        loss_of(h).backward()
        clear()

    def none(i):
        h = x
        for b in range(w["depth"]):
            h = blocks[b](h)
        loss_of(h).backward()
        clear()

    a, f = measure(anti, w["steps"]), measure(fix, w["steps"])
    return (a, f, measure(none, w["steps"])) if with_none else (a, f)


def oom404(w):
    dtype = DTYPES[w["dtype"]]
    up = torch.float64 if dtype == torch.float32 else torch.float32
    b, t, v = w["batch"], w["seq"], w["vocab"]
    logits = torch.randn(b, t, v, device="cuda", dtype=dtype).requires_grad_(True)
    target = torch.randint(0, v, (b, t), device="cuda")

    def anti(i):
        lp = torch.log_softmax(logits.to(up), -1)
        F.nll_loss(lp.view(-1, v), target.view(-1)).backward()
        logits.grad = None

    chunks = max(1, min(8, t))

    def fix(i):
        parts, tparts = logits.chunk(chunks, 1), target.chunk(chunks, 1)
        for p, tp in zip(parts, tparts):
            lp = torch.log_softmax(p.to(up), -1)
            (F.nll_loss(lp.reshape(-1, v), tp.reshape(-1)) / len(parts)).backward()
        logits.grad = None

    return measure(anti, w["steps"]), measure(fix, w["steps"])


class Block(nn.Module):
    """The probe's pre-norm transformer block, attention kernel passed in."""

    def __init__(self, w):
        super().__init__()
        d = w["width"]
        self.heads = w["heads"]
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, attention):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        a = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        h = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


def manual_attention(q, k, v):
    # A function, as in the probe: `scores` dies when it returns (softmax saves its output).
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    return torch.matmul(torch.softmax(scores, -1), v)


def oom401(w):
    block = Block(w).to("cuda", DTYPES[w["dtype"]])
    x = torch.randn(w["batch"], w["seq"], w["width"], device="cuda", dtype=DTYPES[w["dtype"]])

    def reset():
        for p in block.parameters():
            p.grad = None

    def anti(i):
        reset()
        loss_of(block(x, manual_attention)).backward()

    def fix(i):
        reset()
        loss_of(block(x, F.scaled_dot_product_attention)).backward()

    return measure(anti, w["steps"], reset), measure(fix, w["steps"], reset)


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
TWINS = (("OOM101", oom101), ("OOM102", oom102), ("OOM103", oom103), ("OOM104", oom104), ("OOM105", oom105),
         ("OOM106", oom106), ("OOM107", oom107), ("OOM201", oom201), ("OOM301", oom301), ("OOM302", oom302),
         ("OOM303", oom303), ("OOM305", oom305), ("OOM305-adagrad", oom305_adagrad),
         ("OOM401", oom401), ("OOM402", oom402), ("OOM404", oom404),
         ("OOM501", oom501), ("OOM504", oom504), ("SEED-lambda-lr", seed_lambda_lr), ("SEED-logging", seed_logging),
         ("SEED-unscaled-accumulation", oom303), ("SEED-empty-cache", oom501),
         ("SEED-dense-checkpointing", seed_dense_checkpointing), ("SEED-eval-without-no-grad", oom201))


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
