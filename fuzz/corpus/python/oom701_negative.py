# OOM701 negative cases.
import torch


def train(model, x):
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(x)
    with torch.amp.autocast(device_type="cuda"):
        out = model(x)
    return scaler, out
