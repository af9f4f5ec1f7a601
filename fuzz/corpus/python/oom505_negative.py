# OOM505 negative case: the device is set.
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def main(dataset):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return DataLoader(dataset, batch_size=32, pin_memory=True)
