# OOM502 negative case: fixed-size images.
import torch
from torch.utils.data import DataLoader


def main(dataset):
    torch.backends.cudnn.benchmark = True
    return DataLoader(dataset, batch_size=32, drop_last=True)
