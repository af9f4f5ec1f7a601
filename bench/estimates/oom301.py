# The OOM301 probe's workload (probe301) at the H200 run's sizes: a training step whose
# zero_grad keeps the gradient buffers through the next forward.
import torch
from torch import nn
import torch.nn.functional as F

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
target = torch.zeros(BATCH * SEQ, WIDTH, device="cuda")

for step in range(8):
    optimizer.zero_grad(set_to_none=False)
    loss = F.mse_loss(model(tokens).float(), target)
    loss.backward()
    optimizer.step()
