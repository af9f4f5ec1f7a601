# OOM107 negative cases.
import torch


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train_rnn(model, loader, optimizer, criterion, hidden):
    for x, y in loader:
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        out, hidden = model(x, hidden)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()


def train_detach_after(model, loader, optimizer, criterion, hidden):
    for x, y in loader:
        optimizer.zero_grad()
        out, hidden = model(x, hidden)
        criterion(out, y).backward()
        optimizer.step()
        hidden = hidden.detach()


def fresh_state(model, loader, optimizer, criterion):
    for x, y in loader:
        hidden = None
        optimizer.zero_grad()
        out, hidden = model(x, hidden)
        criterion(out, y).backward()
        optimizer.step()


def no_grad_ema(model, ema_model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        with torch.no_grad():
            for p_ema, p in zip(ema_model.parameters(), model.parameters()):
                p_ema.mul_(0.99).add_(p, alpha=0.01)
