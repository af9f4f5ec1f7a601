# OOM303 positive cases: accumulation without dividing the loss.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, criterion, accum_steps):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss = loss / accum_steps
        loss.backward()  # expect: OOM303
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def train_scaler(model, loader, optimizer, scaler, args):
    for step, batch in enumerate(loader):
        out = model(batch["x"])
        loss = F.mse_loss(out, batch["y"])
        loss = loss / args.grad_accum
        scaler.scale(loss).backward()  # expect: OOM303
        if step % args.grad_accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
