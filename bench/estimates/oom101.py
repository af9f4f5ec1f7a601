# The OOM101 probe's workload (runtime_check/probes.cpp, probe101) as Python code states it, at
# the H200 run's sizes: a validation-style loop that sums the loss tensor, autograd on.
import torch
from torch import nn
import torch.nn.functional as F

WIDTH = 4096
BATCH = 32

model = nn.Sequential(
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
).cuda().bfloat16()
x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
target = torch.zeros(BATCH, WIDTH, device="cuda")

model.eval()
total = 0
for step in range(9):
    loss = F.mse_loss(model(x).float(), target)
    total = total + loss
print(total)
