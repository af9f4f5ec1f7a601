# OOM601 positive cases.
import json
import os

from torch.utils.data import DataLoader, Dataset


class Captions(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.samples = json.load(f)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return self.samples[i]


class Files(Dataset):
    def __init__(self, root):
        self.items = []
        for name in os.listdir(root):
            self.items.append(os.path.join(root, name))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def loaders():
    train = Captions("train.json")
    a = DataLoader(train, batch_size=64, num_workers=8)  # expect: OOM601
    b = DataLoader(Files("/data"), batch_size=64, shuffle=True, num_workers=4)  # expect: OOM601
    return a, b
