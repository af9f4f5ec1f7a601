# The OOM402 probe's workload (runtime_check/probes.cpp, probe402) as Python code states it, at
# the H200 run's sizes: four Linear-GELU-Linear blocks of width 4096 in bf16, each checkpointing
# only its GELU, trained on a (32, 2048, 4096) input.
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

WIDTH = 4096


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        return self.fc2(checkpoint(self.act, self.fc1(x), use_reentrant=False))


model = nn.Sequential(Block(WIDTH), Block(WIDTH), Block(WIDTH), Block(WIDTH)).cuda().bfloat16()
x = torch.randn(32, 2048, WIDTH, device="cuda", dtype=torch.bfloat16, requires_grad=True)

for step in range(9):
    model(x).float().pow(2).mean().backward()
    model.zero_grad(set_to_none=True)
    x.grad = None
