# OOM304 negative cases: gradients are cleared somewhere in the file.
import torch


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        for p in model.parameters():
            p.grad = None
