"""A training step of realistic size for bench/trace_overhead.py: an 8-block MLP, 2048 wide, on a
batch of 1024, with AdamW. `python bench/trace_workload.py [STEPS]`."""
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
width, depth, batch = 2048, 8, 1024
layers = []
for _ in range(depth):
    layers += [nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width)]
model = nn.Sequential(*layers, nn.Linear(width, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(batch, width, device="cuda")
y = torch.randint(0, 10, (batch,), device="cuda")
for step in range(int(sys.argv[1]) if len(sys.argv) > 1 else 60):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(f"step {step}: loss {loss.item():.4f}")
