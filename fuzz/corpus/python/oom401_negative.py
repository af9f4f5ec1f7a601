# OOM401 negative cases.
import torch
import torch.nn.functional as F


def fused(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def classifier_head(logits):
    return F.softmax(logits, dim=-1)


def weights_returned(q, k, v):
    # need_weights: the probabilities are wanted, a fused kernel cannot return them.
    attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    out = attn @ v
    return out, attn


def gating(x, w, experts):
    gates = F.softmax(x @ w, dim=-1)
    return gates @ experts


def no_value_product(q, k):
    probs = (q @ k.transpose(-2, -1)).softmax(-1)
    return probs.sum(-1)
