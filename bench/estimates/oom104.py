# The OOM104 probe's workload (runtime_check/probes.cpp, probe104) as Python code states it, at
# 8192 rows per micro-batch (runtime_check/results/h200-estimates.json): k micro-batch losses
# summed, one backward. At the suite's 32 rows the parameters, not the graphs, set the peak.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import torch.nn.functional as F

WIDTH = 4096
ROWS = 8192
ACCUM = 4

model = nn.Sequential(
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
).cuda().bfloat16()
micro_batches = DataLoader(
    TensorDataset(torch.randn(ACCUM * ROWS, WIDTH, dtype=torch.bfloat16), torch.arange(ACCUM * ROWS)),
    batch_size=ROWS,
)
target = torch.zeros(ROWS, WIDTH, device="cuda")

for step in range(9):
    model.zero_grad()
    total = 0
    for x, _ in micro_batches:
        total = total + F.mse_loss(model(x.cuda()).float(), target)
    total.backward()
