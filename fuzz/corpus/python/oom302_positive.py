# OOM302 positive cases: zero_grad between the forward and the backward.
import torch


def train(model, loader, optimizer, criterion):
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        optimizer.zero_grad()  # expect: OOM302
        loss.backward()
        optimizer.step()


def train_step(self_model, batch, opt, criterion):
    logits = self_model(batch)
    loss = criterion(logits, batch)
    opt.zero_grad()  # expect: OOM302
    loss.backward()
    opt.step()


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, loader, criterion):
        for x, y in loader:
            pred = self.model(x)
            loss = criterion(pred, y)
            self.model.zero_grad()  # expect: OOM302
            loss.backward()
            self.optimizer.step()
