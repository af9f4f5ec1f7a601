# The OOM305-adagrad probe's workload (frozenHalf) at the H200 run's sizes: the MLP's lower half
# frozen, Adagrad built over every parameter, so it allocates its `sum` for the frozen half too.
import torch
from torch import nn

WIDTH = 4096


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.lower = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH), nn.GELU())
        self.upper = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH), nn.GELU())

    def forward(self, x):
        return self.upper(self.lower(x))


model = MLP().cuda().bfloat16()
model.lower.requires_grad_(False)
optimizer = torch.optim.Adagrad(model.parameters(), lr=1e-4)
