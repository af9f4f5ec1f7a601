"""The same kind of training script written the memory-safe way: oomlint reports nothing here."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(out.transpose(1, 2).reshape(b, t, d))


class Model(nn.Module):
    def __init__(self, dim=256, heads=8, depth=4, classes=10):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


def train_epoch(model, loader, optimizer, scaler, device, accum_steps):
    model.train()
    running = 0.0
    losses = []
    optimizer.zero_grad(set_to_none=True)
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y) / accum_steps
        scaler.scale(loss).backward()
        if (step + 1) % accum_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        running += loss.item()
        losses.append(loss.detach().cpu())
    return running / max(1, len(loader)), losses


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = 0
    predictions = []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        correct += (logits.argmax(dim=1) == y).sum().item()
        predictions.append(logits.argmax(dim=1).cpu())
    return correct / len(loader.dataset), torch.cat(predictions)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--accum-steps", type=int, default=4)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.amp.GradScaler(device.type, enabled=device.type == "cuda")
    data = TensorDataset(torch.randn(512, 64, 256), torch.randint(0, 10, (512,)))
    loader = DataLoader(data, batch_size=32, shuffle=True, pin_memory=True)
    for epoch in range(args.epochs):
        loss, _ = train_epoch(model, loader, optimizer, scaler, device, args.accum_steps)
        acc, _ = evaluate(model, loader, device)
        print(f"epoch {epoch}: loss {loss:.4f} accuracy {acc:.3f}")
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
