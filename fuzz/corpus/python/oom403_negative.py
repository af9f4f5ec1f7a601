# OOM403 negative cases.
import torch
from torch.utils.checkpoint import checkpoint


def forward(blocks, x, opts):
    x = checkpoint(blocks[0], x, use_reentrant=False)
    x = checkpoint(blocks[1], x, use_reentrant=True)
    x = checkpoint(blocks[2], x, **opts)
    return x


def checkpoint_model(path, state):
    # A local helper that happens to be called checkpoint.
    torch.save(state, path)
