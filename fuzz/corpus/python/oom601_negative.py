# OOM601 negative cases.
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Arrays(Dataset):
    def __init__(self, path):
        self.data = np.load(path)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return torch.from_numpy(self.data[i])


class Listed(Dataset):
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def loaders(workers):
    a = DataLoader(Arrays("x.npy"), batch_size=64, num_workers=8)
    b = DataLoader(Listed(range(10)), batch_size=64, num_workers=0)
    c = DataLoader(Listed(range(10)), batch_size=64, num_workers=workers)
    return a, b, c
