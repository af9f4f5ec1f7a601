# OOM402 positive cases.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = checkpoint(self.act, self.fc1(x), use_reentrant=False)  # expect: OOM402
        h = checkpoint(self.drop, h, use_reentrant=False)  # expect: OOM402
        h = checkpoint(F.relu, h, use_reentrant=False)  # expect: OOM402
        h = checkpoint(lambda t: t * 2, h, use_reentrant=False)  # expect: OOM402
        return self.fc2(h)
