# OOM506 positive cases.
import torch


def run(model, batch, step):
    try:
        loss = step(model, batch)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        loss = step(model, batch[: len(batch) // 2])  # expect: OOM506
    return loss


def run_legacy(model, batch):
    try:
        out = model(batch)
    except RuntimeError as e:
        if "out of memory" in str(e):
            out = model(batch[:1])  # expect: OOM506
        else:
            raise
    return out
