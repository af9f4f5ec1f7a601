# OOM506 negative cases.
import logging

import torch


def run(model, batch, step):
    oom = False
    try:
        loss = step(model, batch)
    except torch.cuda.OutOfMemoryError:
        oom = True
    if oom:
        torch.cuda.empty_cache()
        loss = step(model, batch[: len(batch) // 2])
    return loss


def skip_batch(model, batch):
    try:
        return model(batch)
    except torch.cuda.OutOfMemoryError:
        logging.warning("skipping batch")
        torch.cuda.empty_cache()
        return None


def other_error(model, batch, fallback):
    try:
        return model(batch)
    except ValueError:
        return fallback(batch)
