# OOM102 negative cases.
import torch
import torch.nn.functional as F


def detached(model, loader, optimizer, criterion):
    losses = []
    outputs = []
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        losses.append(loss.detach())
        outputs.append(out.detach().cpu())
        outputs.append(out.argmax(dim=1).tolist())


def losses_for_one_backward(model, loader, optimizer, criterion):
    # Collected on purpose and back-propagated together after the loop.
    losses = []
    for x, y in loader:
        losses.append(criterion(model(x), y))
    torch.stack(losses).mean().backward()  # expect: OOM104
    optimizer.step()


def per_iteration_list(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        parts = []
        out = model(x)
        parts.append(criterion(out, y))
        parts.append(out.pow(2).mean())
        sum(parts).backward()
        optimizer.step()


def forward_features(model, x):
    # Collecting intermediate features inside a forward is how FPNs work: not a data loop.
    feats = []
    for layer in model.layers:
        x = layer(x)
        feats.append(x)
    return feats


def no_grad_collect(model, loader):
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds.append(model(x).cpu())
    return preds


def plain_numbers(loader):
    sizes = []
    for x, y in loader:
        sizes.append(x.shape[0])
        sizes.append(len(y))
