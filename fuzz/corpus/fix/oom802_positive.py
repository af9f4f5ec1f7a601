# OOM802 positive cases (off by default; the fixture runner selects all rules).
import torch


def train(model, loader, optimizer, criterion, writer):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss)  # expect: OOM802
        writer.add_scalar("loss", loss.item(), step)  # expect: OOM802
