"""The PyTorch twins of the probes that build their own blocks rather than train the MLP: per-op
checkpointing (OOM402), fp32 logits (OOM404) and hand-written attention (OOM401). See
probe_twins.py.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from oomlint.probe_network import DTYPES
from oomlint import probe_twins
from oomlint.probe_twins import loss_of, measure, tokens_of


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
    layers = [nn.Linear(w["width"], w["width"]).to(probe_twins.DEVICE, dtype) for _ in range(2 * w["depth"])]
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
    logits = torch.randn(b, t, v, device=probe_twins.DEVICE, dtype=dtype).requires_grad_(True)
    target = torch.randint(0, v, (b, t), device=probe_twins.DEVICE)

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
    block = Block(w).to(probe_twins.DEVICE, DTYPES[w["dtype"]])
    x = torch.randn(w["batch"], w["seq"], w["width"], device=probe_twins.DEVICE, dtype=DTYPES[w["dtype"]])

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


TWINS = (("OOM401", oom401), ("OOM402", oom402), ("OOM404", oom404))
