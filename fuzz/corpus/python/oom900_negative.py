# OOM900 negative cases.
import torch


def train(model, loader, optimizer, criterion):
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss  # noqa: OOM101
        total += 1  # noqa
        total += 2  # noqa: E501
    return total
