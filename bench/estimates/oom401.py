# The attention of the OOM401 probe's block (runtime_check/probes.cpp, manualAttention) as Python
# code states it, at the H200 run's sizes: what the hand-written attention keeps for backward
# beyond what the fused kernel keeps (bench/estimates/measure_attention.py measures it).
import math

import torch

BATCH = 32
HEADS = 32
SEQ = 2048
HEAD_DIM = 128

q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, device="cuda", dtype=torch.bfloat16, requires_grad=True)
v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, device="cuda", dtype=torch.bfloat16, requires_grad=True)

for step in range(9):
    scores = q @ k.transpose(-2, -1) / math.sqrt(HEAD_DIM)
    out = torch.softmax(scores, dim=-1) @ v
    out.float().pow(2).mean().backward()
