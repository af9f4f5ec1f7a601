# OOM301 negative cases.
import torch


def step(model, optimizer, x, y, criterion, keep):
    optimizer.zero_grad()
    optimizer.zero_grad(set_to_none=True)
    optimizer.zero_grad(True)
    optimizer.zero_grad(set_to_none=keep)
    criterion(model(x), y).backward()
    optimizer.step()
