# OOM105 positive cases: retain_graph=True with no second backward over that graph.
import torch
import torch.nn.functional as F
from torch import autograd


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()  # expect: OOM105
        optimizer.step()


def train_grad(model, loader, optimizer):
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        grads = torch.autograd.grad(loss, list(model.parameters()))  # expect: OOM105
        for p, g in zip(model.parameters(), grads):
            p.grad = g
        optimizer.step()


def train_alias(model, train_loader, opt, criterion):
    for batch in train_loader:
        opt.zero_grad()
        out = model(batch)
        autograd.backward(criterion(out, batch))  # expect: OOM105
        opt.step()


def scaled(model, loader, optimizer, scaler, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        scaler.scale(loss).backward()  # expect: OOM105
        scaler.step(optimizer)
        scaler.update()
