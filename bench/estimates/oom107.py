# The OOM107 probe's workload (runtime_check/probes.cpp, probe107) as Python code states it, at
# the H200 run's sizes: a recurrent cell whose state is fed back without detach.
import torch
from torch import nn
import torch.nn.functional as F

WIDTH = 4096
BATCH = 32

cell = nn.Linear(2 * WIDTH, WIDTH).cuda().bfloat16()
x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
target = torch.zeros(BATCH, WIDTH, device="cuda")

h = torch.zeros(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
for step in range(9):
    cell.zero_grad()
    h = torch.tanh(cell(torch.cat([x, h], dim=1)))
    F.mse_loss(h.float(), target).backward(retain_graph=True)
