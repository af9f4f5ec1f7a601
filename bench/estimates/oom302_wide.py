# OOM302 where it costs: a deep MLP regressor with a small head, whose parameters' gradients
# outweigh what its backward adds above its forward's end, so last step's gradients, kept through
# the forward by a zero_grad after it, raise the step's peak by most of their size. --verify runs
# the probe on these layers.
import torch
from torch import nn

WIDTH = 2048
ROWS = 4096
OUTPUTS = 16

model = nn.Sequential(
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, WIDTH), nn.ReLU(),
    nn.Linear(WIDTH, OUTPUTS),
).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
tokens = torch.randn(ROWS, WIDTH, device="cuda")

for step in range(8):
    loss = model(tokens).float().pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
