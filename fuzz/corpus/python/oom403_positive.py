# OOM403 positive cases.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint as ckpt
from torch.utils import checkpoint as cp


class Net(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks

    def forward(self, x):
        for block in self.blocks:
            x = ckpt(block, x)  # expect: OOM403
        x = cp.checkpoint_sequential(self.blocks, 2, x)  # expect: OOM403
        x = torch.utils.checkpoint.checkpoint(self.blocks[0], x, preserve_rng_state=False,)  # expect: OOM403
        return x
