# The OOM103 probe's workload (probe103) at the H200 run's sizes: predictions kept on the GPU
# across an evaluation loop under no_grad.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

WIDTH = 4096
BATCH = 32

model = nn.Sequential(
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
    nn.Linear(WIDTH, WIDTH), nn.GELU(),
).cuda().bfloat16()
loader = DataLoader(TensorDataset(torch.randn(9 * BATCH, WIDTH, dtype=torch.bfloat16)), batch_size=BATCH)

preds = []
with torch.no_grad():
    for (x,) in loader:
        out = model(x.cuda())
        preds.append(out)
