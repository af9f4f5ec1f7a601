# OOM900 positive cases (off by default; the fixture runner selects all rules).
import torch


def train(model, loader, optimizer, criterion):
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()  # noqa: OOM101  # expect: OOM900
        total += loss  # noqa: OOM101, OOM102, E501  # expect: OOM900
        total += 1  # noqa: OOM999  # expect: OOM900
    return total
