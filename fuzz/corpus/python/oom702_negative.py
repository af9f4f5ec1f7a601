# OOM702 negative cases: a scaler is used, or bfloat16.
import torch


def train(model, loader, optimizer, criterion):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_bf16(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


def recompute(run, inputs, autocast_kwargs):
    with torch.enable_grad(), torch.autocast("cuda", **autocast_kwargs):
        outputs = run(*inputs)
    torch.autograd.backward(outputs)
