# OOM101 positive cases: history-carrying tensors accumulated across iterations.
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


def train_epoch(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss  # expect: OOM101
    return total / len(loader)


def train_plus_form(model, train_loader, opt):
    epoch_loss = 0
    for i, (x, y) in enumerate(train_loader):
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        epoch_loss = epoch_loss + loss  # expect: OOM101


def weighted(model, loader, optimizer, criterion):
    total = 0
    for x, y in tqdm(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss * x.size(0)  # expect: OOM101


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


def with_meter(model, loader, optimizer, criterion):
    loss_meter = AverageMeter()
    for batch in loader:
        x, y = batch
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        loss_meter.update(loss, x.size(0))  # expect: OOM101


class Trainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.criterion = nn.CrossEntropyLoss()
        self.total_loss = 0

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.optimizer.zero_grad()
                logits = self.model(x)
                loss = self.criterion(logits, y)
                loss.backward()
                self.optimizer.step()
                self.total_loss += loss  # expect: OOM101


def dict_of_losses(model, loader, optimizer, criterion):
    running = {"loss": 0.0}
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running["loss"] += loss  # expect: OOM101


def nested_epochs(model, loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        epoch_total = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            epoch_total += loss  # expect: OOM101


def hf_style(model, dataloader, optimizer):
    tr_loss = 0
    for batch in dataloader:
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        tr_loss += loss  # expect: OOM101


def step_helper(model, x, y, optimizer, criterion):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()


def helper_loop(model, loader, optimizer, criterion):
    # The loop trains through a local helper; the accumulation still leaks.
    total = 0
    for x, y in loader:
        step_helper(model, x, y, optimizer, criterion)
        out = model(x)
        total += criterion(out, y)  # expect: OOM101


def evaluate(model, val_loader, criterion):
    # Evaluation without no_grad: each batch's graph is kept by the total.
    model.eval()
    total = 0
    for x, y in val_loader:
        out = model(x)  # expect: OOM201
        total += criterion(out, y)  # expect: OOM101
    return total
