# OOM102 positive cases: history-carrying tensors stored where they outlive the iteration.
import torch
import torch.nn as nn
import torch.nn.functional as F


def losses_list(model, loader, optimizer, criterion):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)  # expect: OOM102
    return losses


def outputs_kept(model, train_loader, optimizer):
    outputs = []
    for x, y in train_loader:
        optimizer.zero_grad()
        out = model(x)
        loss = F.mse_loss(out, y)
        loss.backward()
        optimizer.step()
        outputs.append(out)  # expect: OOM102


def history_by_step(model, loader, optimizer, criterion):
    history = {}
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        history[step] = loss  # expect: OOM102


class Trainer:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.losses = []

    def train(self, loader):
        for batch in loader:
            x, y = batch
            self.optimizer.zero_grad()
            logits = self.model(x)
            loss = self.criterion(logits, y)
            loss.backward()
            self.optimizer.step()
            self.last_logits = logits  # expect: OOM102
            self.losses.append(loss)  # expect: OOM102


def eval_keeps_outputs(model, val_loader):
    model.eval()
    preds = []
    for x, _ in val_loader:
        out = model(x)  # expect: OOM201
        preds.append(out)  # expect: OOM102
    return preds


def tuple_store(model, loader, optimizer, criterion):
    records = []
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        records.append((loss, out))  # expect: OOM102
