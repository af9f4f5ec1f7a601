# OOM304 positive case: gradients never cleared.
import torch


def train(model, loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()  # expect: OOM304
