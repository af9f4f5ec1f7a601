# The OOM102 probe's workload (probe102) at the H200 run's sizes: each step's output is stored
# with its graph.
import torch
from torch import nn

WIDTH = 4096
BATCH = 32

model = nn.Sequential(
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
).cuda().bfloat16()
x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)

model.eval()
outputs = []
with torch.no_grad():
    warm = model(x)
for step in range(9):
    out = model(x)
    outputs.append(out)
