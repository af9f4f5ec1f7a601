# OOM303 negative cases.
import torch


def scaled(model, loader, optimizer, criterion, k):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / k
        loss.backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()


def scaled_later(model, loader, optimizer, criterion, k):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss /= k
        loss.backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()


def scaled_inline(model, loader, optimizer, criterion, k):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        (loss / k).backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()


def every_step(model, loader, optimizer, criterion, log_every):
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if i % log_every == 0:
            print(loss.item())


def helper_loss(model, loader, optimizer, compute_loss, k):
    for i, batch in enumerate(loader):
        loss = compute_loss(model, batch)
        loss.backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
