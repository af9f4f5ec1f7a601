# OOM301 positive cases.
import torch


def step(model, optimizer, x, y, criterion):
    optimizer.zero_grad()  # expect: OOM301
    criterion(model(x), y).backward()
    optimizer.step()
    model.zero_grad()  # expect: OOM301
    model.zero_grad()  # expect: OOM301
