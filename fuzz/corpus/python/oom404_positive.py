# OOM404 positive cases: fp32 logits under autocast in LM training.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, vocab_size):
    for tokens, targets in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens)
            loss = F.cross_entropy(logits.float().view(-1, vocab_size), targets.view(-1))  # expect: OOM404
        loss.backward()
        optimizer.step()


def train_plain(model, loader, optimizer, vocab_size):
    for tokens, targets in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens)
            loss = F.cross_entropy(logits.view(-1, vocab_size), targets.view(-1))  # expect: OOM404
        loss.backward()
        optimizer.step()
