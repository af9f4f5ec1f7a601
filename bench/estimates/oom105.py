# The OOM105 probe's workload (probe105) at the H200 run's sizes: backward with retain_graph=True
# and no second backward, the last loss kept for logging.
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
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
target = torch.zeros(BATCH, WIDTH, device="cuda")

for step in range(8):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x).float(), target)
    loss.backward(retain_graph=True)
    optimizer.step()
print(loss)
