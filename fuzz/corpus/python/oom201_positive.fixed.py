# OOM201 positive cases: forward passes on evaluation paths with autograd on.
import torch
import torch.nn as nn
import torch as t
from tqdm import tqdm


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x)  # expect: OOM201
            correct += (out.argmax(1) == y).sum().item()
    return correct


def validate(net, val_loader, criterion):
    total = 0.0
    with torch.no_grad():
        for i, (x, y) in enumerate(tqdm(val_loader)):
            logits = net(x)  # expect: OOM201
            total += criterion(logits, y).item()
    return total


def predict(model, x):
    with torch.no_grad():
        return model(x).softmax(-1)  # expect: OOM201


class Runner:
    def __init__(self, model):
        self.model = model

    def test(self, loader):
        self.model.eval()
        outs = []
        with torch.no_grad():
            for batch in loader:
                outs.append(self.model(batch).argmax(-1).tolist())  # expect: OOM201
        return outs

    def run_inference(self, x):
        with torch.no_grad():
            return self.model.forward(x)  # expect: OOM201


def train_then_eval(model, train_loader, val_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        val_loss = 0.0
        with torch.no_grad():
            for x, y in val_loader:
                val_loss += criterion(model(x), y).item()  # expect: OOM201


def script_level(model, data):
    model.eval()
    with t.autocast("cuda"):
        with torch.no_grad():
            out = model(data)  # expect: OOM201
    return out
