# OOM502 positive case.
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def pad_collate(batch):
    xs, ys = zip(*batch)
    return pad_sequence(xs, batch_first=True), torch.stack(ys)


def main(dataset):
    torch.backends.cudnn.benchmark = True  # expect: OOM502
    return DataLoader(dataset, batch_size=32, collate_fn=pad_collate)
