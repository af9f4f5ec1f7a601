# OOM106 positive cases.
import torch


def gradient_penalty(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(create_graph=True)  # expect: OOM106
        penalty = sum(p.grad.pow(2).sum() for p in model.parameters())
        penalty.backward()
        optimizer.step()


def functional(loss):
    torch.autograd.backward(loss, create_graph=True)  # expect: OOM106
