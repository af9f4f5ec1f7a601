# OOM104 positive cases: micro-batch losses summed, one backward after the loop.
import torch
import torch.nn.functional as F


def accumulate(model, batch, optimizer, criterion, accum_steps):
    optimizer.zero_grad()
    total = 0
    for mb in batch.chunk(accum_steps):
        x, y = mb[:, :-1], mb[:, -1]
        total = total + criterion(model(x), y)
    total.backward()  # expect: OOM104
    optimizer.step()


def accumulate_scaled(model, micro_batches, optimizer):
    optimizer.zero_grad()
    loss_sum = 0.0
    for x, y in micro_batches:
        out = model(x)
        loss_sum += F.cross_entropy(out, y)
    (loss_sum / len(micro_batches)).backward()  # expect: OOM104
    optimizer.step()


def from_iterator(model, data_iter, optimizer, criterion, k):
    optimizer.zero_grad()
    acc = 0
    for _ in range(k):
        x, y = next(data_iter)
        acc += criterion(model(x), y)
    acc.backward()  # expect: OOM104
    optimizer.step()


def with_list(model, loader, optimizer, criterion):
    losses = []
    for x, y in loader:
        losses.append(criterion(model(x), y))
    sum(losses).backward()  # expect: OOM104
    optimizer.step()
