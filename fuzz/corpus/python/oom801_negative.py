# OOM801 negative cases.
import torch


def train(model, loader, optimizer, criterion, writer):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        if step % 100 == 0:
            for name, p in model.named_parameters():
                writer.add_scalar(f"grad/{name}", p.grad.norm().item(), step)
        norms = torch.stack([p.grad.norm() for p in model.parameters()]).cpu()
        optimizer.step()


def summary(model):
    # Once, not per step.
    for name, p in model.named_parameters():
        print(name, p.abs().mean().item())
