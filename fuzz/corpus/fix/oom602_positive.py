# OOM602 positive case.
import torch
from torch.utils.data import DataLoader


class Batch:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def collate(samples):
    xs = torch.stack([s[0] for s in samples])
    ys = torch.tensor([s[1] for s in samples])
    return Batch(xs, ys)


def make(dataset):
    return DataLoader(dataset, batch_size=32, pin_memory=True, collate_fn=collate)  # expect: OOM602
