# OOM802 negative cases.
import torch


def train(model, loader, optimizer, criterion, writer):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            writer.add_scalar("loss", loss.item(), step)
        print("step", step)
