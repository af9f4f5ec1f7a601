# The OOM201 probe's workload (probe201) at the H200 run's sizes: an evaluation forward over
# batch x sequence token rows with autograd on.
import torch
from torch import nn

WIDTH = 4096
BATCH = 32
SEQ = 2048

model = nn.Sequential(
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
).cuda().bfloat16()
tokens = torch.randn(BATCH * SEQ, WIDTH, device="cuda", dtype=torch.bfloat16)


model.eval()
for step in range(8):
    out = model(tokens)
