# OOM505 negative case: not distributed.
import torch
from torch.utils.data import DataLoader


def main(dataset):
    return DataLoader(dataset, batch_size=32, pin_memory=True)
