# OOM402 negative cases: whole blocks.
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self, blocks, dim):
        super().__init__()
        self.blocks = blocks
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        x = checkpoint(self.mlp, x, use_reentrant=False)
        x = checkpoint(lambda t: self.mlp(t) + t, x, use_reentrant=False)
        return x
