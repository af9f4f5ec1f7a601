# The OOM106 probe's workload (runtime_check/probes.cpp, probe106) as Python code states it, at
# the H200 run's sizes: backward(create_graph=True) every step, gradients zeroed in place.
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

for step in range(9):
    # Zeroed by hand, as the probe does: in place, without the detach zero_grad() would make.
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()
    loss = F.mse_loss(model(x).float(), target)
    loss.backward(create_graph=True)
