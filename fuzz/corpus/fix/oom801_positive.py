# OOM801 positive case.
import torch


def train(model, loader, optimizer, criterion, writer):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        for name, p in model.named_parameters():
            writer.add_scalar(f"grad/{name}", p.grad.norm().item(), step)  # expect: OOM801
        optimizer.step()
