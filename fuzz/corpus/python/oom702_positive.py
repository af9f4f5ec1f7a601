# OOM702 positive cases.
import torch


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):  # expect: OOM702
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


def train_default(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast(device_type="cuda"):  # expect: OOM702
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
