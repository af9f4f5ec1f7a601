# OOM701 positive cases.
import torch
from torch.cuda.amp import GradScaler, autocast
from torch.cuda import amp


def train(model, loader, optimizer, criterion):
    scaler = torch.cuda.amp.GradScaler()  # expect: OOM701
    scaler2 = GradScaler(init_scale=1024)  # expect: OOM701
    for x, y in loader:
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):  # expect: OOM701
            loss = criterion(model(x), y)
        with amp.autocast():  # expect: OOM701
            loss = loss + criterion(model(x), y)
        with autocast(True):  # expect: OOM701
            loss = loss + 1
        with torch.cpu.amp.autocast():  # expect: OOM701
            pass
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return scaler2
