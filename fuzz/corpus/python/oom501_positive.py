# OOM501 positive cases.
import torch
from torch.cuda import empty_cache


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()  # expect: OOM501


def evaluate(model, val_loader):
    with torch.no_grad():
        for x, _ in val_loader:
            model(x)
            empty_cache()  # expect: OOM501


def only_statement(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # expect: OOM501
