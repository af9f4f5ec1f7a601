# OOM103 positive cases: history-free GPU tensors collected across a data loop.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def predict(model, loader):
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            x = x.to(device)
            out = model(x)
            preds.append(out)  # expect: OOM103
    return torch.cat(preds)


@torch.no_grad()
def collect_targets_and_outputs(model, val_loader):
    all_logits = None
    targets = []
    for images, labels in val_loader:
        images = images.cuda()
        labels = labels.cuda()
        logits = model(images)
        targets.append(labels)  # expect: OOM103
        if all_logits is None:
            all_logits = logits
        else:
            all_logits = torch.cat([all_logits, logits])  # expect: OOM103


def detached_but_on_gpu(model, train_loader, optimizer, criterion):
    kept = []
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        kept.append(out.detach())  # expect: OOM103


def sample_last_logits(model, batches):
    kept = []
    with torch.no_grad():
        for batch in batches:
            logits = model(batch.to(device))
            kept.append(logits[:, -1])  # expect: OOM103
    return torch.cat(kept)
