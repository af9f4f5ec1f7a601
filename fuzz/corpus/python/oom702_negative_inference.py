# OOM702 negative: float16 autocast for inference only (no backward in the file).
import torch


@torch.no_grad()
def predict(model, x):
    with torch.autocast("cuda", dtype=torch.float16):
        return model(x)
