# OOM505 positive case.
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def main(dataset, model):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = model.to(f"cuda:{local_rank}")
    loader = DataLoader(dataset, batch_size=32, pin_memory=True)  # expect: OOM505
    return loader
