# OOM602 negative cases.
import torch
from torch.utils.data import DataLoader


class Batch:
    def __init__(self, x):
        self.x = x

    def pin_memory(self):
        self.x = self.x.pin_memory()
        return self


def collate(samples):
    return Batch(torch.stack(samples))


def collate_dict(samples):
    return {"x": torch.stack(samples)}


def make(dataset):
    a = DataLoader(dataset, batch_size=32, pin_memory=True, collate_fn=collate)
    b = DataLoader(dataset, batch_size=32, pin_memory=True, collate_fn=collate_dict)
    return a, b
