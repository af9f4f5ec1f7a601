# OOM101 negative cases: look alike, but nothing keeps a graph alive.
import torch
import torch.nn as nn


def item_total(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        total += float(loss)
        total += loss.detach()
        total += loss.data


def under_no_grad(model, loader, criterion):
    total = 0
    with torch.no_grad():
        for x, y in loader:
            total += criterion(model(x), y)


@torch.no_grad()
def decorated(model, loader, criterion):
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)


def inference_mode(model, loader, criterion):
    total = 0
    with torch.inference_mode():
        for x, y in loader:
            total += criterion(model(x), y)


def reset_each_iteration(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        total = 0
        loss = criterion(model(x), y)
        total += loss
        total.backward()
        optimizer.step()


def multi_loss_one_step(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = 0
        for head in model.heads:
            loss += criterion(head(x), y)
        loss.backward()
        optimizer.step()


def counters(model, loader, optimizer, criterion):
    correct = 0
    seen = 0
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        correct += (out.argmax(1) == y).sum().item()
        correct += (out.argmax(1) == y).sum()
        seen += y.size(0)
        seen += len(y)


def not_a_loop(model, x, y, criterion):
    total = 0
    total += criterion(model(x), y)
    return total


def unknown_value(model, loader, optimizer, compute):
    total = 0
    for x, y in loader:
        loss = compute(model, x, y)
        loss.backward()
        optimizer.step()
        total += loss


def helper_builds_loss(model, micro_batches, criterion):
    # Summed for a single backward by the caller: that is OOM104's business, not a leak here.
    total = 0
    for mb in micro_batches:
        total += criterion(model(mb), mb)
    return total


def meter_with_item(model, loader, optimizer, criterion, meter):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        meter.update(loss.item(), x.size(0))


def metric_update(model, loader, optimizer, criterion, metric):
    # torchmetrics-style metrics compute without grad: not an AverageMeter.
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        metric.update(out, y)


def noqa_suppressed(model, loader, optimizer, criterion):
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss  # noqa: OOM101
        total += loss  # noqa
        total += loss  # NOQA:oom101,E501
