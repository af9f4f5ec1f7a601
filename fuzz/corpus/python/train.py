"""A small image-classifier training script with the memory mistakes people really make.

Run `oomlint check examples/train.py` to see them; `oomlint rule OOM101` explains each one.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        attn = F.softmax(scores, dim=-1)
        out = attn @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


class Classifier(nn.Module):
    def __init__(self, dim=256, heads=8, classes=10):
        super().__init__()
        self.attn = SelfAttention(dim, heads)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.attn(x).mean(dim=1))


def make_loader(n=512, t=64, dim=256):
    xs = torch.randn(n, t, dim)
    ys = torch.randint(0, 10, (n,))
    return DataLoader(TensorDataset(xs, ys), batch_size=32, shuffle=True)


def train(model, loader, optimizer, criterion, epochs=2):
    history = []
    for epoch in range(epochs):
        model.train()
        running_loss = 0.0
        for step, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss = criterion(out, y)
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            optimizer.step()
            running_loss += loss
            history.append(loss)
            torch.cuda.empty_cache()
        print(f"epoch {epoch}: loss {running_loss / len(loader):.4f}")
    return history


def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        correct += (logits.argmax(dim=1) == y).sum().item()
    return correct / len(loader.dataset)


def main():
    model = Classifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    train_loader, val_loader = make_loader(), make_loader(128)
    train(model, train_loader, optimizer, criterion)
    print("accuracy", evaluate(model, val_loader))


if __name__ == "__main__":
    main()
