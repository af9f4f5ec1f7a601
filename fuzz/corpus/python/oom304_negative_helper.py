# OOM304 negative: zero_grad lives in a helper.
import torch


def reset(optimizer):
    optimizer.zero_grad(set_to_none=True)


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        reset(optimizer)
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
