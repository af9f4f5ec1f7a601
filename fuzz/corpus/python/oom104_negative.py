# OOM104 negative cases.
import torch


def backward_per_micro_batch(model, micro_batches, optimizer, criterion):
    optimizer.zero_grad()
    for x, y in micro_batches:
        loss = criterion(model(x), y) / len(micro_batches)
        loss.backward()
    optimizer.step()


def multi_head_loss(model, x, y, optimizer, criterion):
    # Several heads over one forward: one graph, not k micro-batches.
    optimizer.zero_grad()
    feats = model.backbone(x)
    loss = 0
    for head in model.heads:
        loss = loss + criterion(head(feats), y)
    loss.backward()
    optimizer.step()


def regularisers(model, x, y, optimizer, criterion):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    for p in model.parameters():
        loss = loss + 1e-4 * p.pow(2).sum()
    loss.backward()
    optimizer.step()


def logging_only(model, micro_batches, criterion, optimizer):
    total = 0
    for x, y in micro_batches:
        loss = criterion(model(x), y)
        loss.backward()
        total += loss.item()
    optimizer.step()
