# The OOM302 probe's workload (probe302) at the H200 run's sizes: a training step whose
# zero_grad runs after the forward, so last step's gradients are alive through it. Here the
# activations' gradients make the backward the step's peak anyway: no estimate.
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
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
tokens = torch.randn(BATCH * SEQ, WIDTH, device="cuda", dtype=torch.bfloat16)

for step in range(8):
    loss = model(tokens).float().pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
