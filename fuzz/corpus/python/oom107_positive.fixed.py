# OOM107 positive cases.
import torch
import torch.nn.functional as F


def train_rnn(model, loader, optimizer, criterion, layers, batch, hidden_size):
    hidden = torch.zeros(layers, batch, hidden_size)
    for x, y in loader:
        optimizer.zero_grad()
        out, hidden = model(x, hidden)  # expect: OOM107
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()


def train_cell(cell, loader, optimizer, h):
    for x, y in loader:
        h = h.detach()
        optimizer.zero_grad()
        h = cell(x, h)  # expect: OOM107
        loss = F.mse_loss(h, y)
        loss.backward()
        optimizer.step()


def ema_target(model, loader, optimizer, criterion):
    target = 0
    for x, y in loader:
        target = target.detach()
        optimizer.zero_grad()
        out = model(x)
        target = 0.99 * target + 0.01 * out  # expect: OOM107
        loss = criterion(out, y) + (out - target).pow(2).mean()
        loss.backward()
        optimizer.step()
