# OOM401 positive cases: hand-written attention.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads, p=0.1):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.drop = nn.Dropout(p)

    def forward(self, x, mask=None):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = F.softmax(scores, dim=-1)  # expect: OOM401
        attn = self.drop(attn)
        return torch.matmul(attn, v)


def one_liner(q, k, v):
    return (q @ k.transpose(-2, -1)).softmax(dim=-1) @ v  # expect: OOM401


def bmm_form(q, k, v, scale):
    w = torch.bmm(q, k.transpose(1, 2)) * scale
    p = torch.softmax(w, dim=-1)  # expect: OOM401
    return torch.bmm(p, v)


def einsum_form(q, k, v):
    s = torch.einsum("bhld,bhsd->bhls", q, k)
    a = s.softmax(-1)  # expect: OOM401
    return torch.einsum("bhls,bhsd->bhld", a, v)
