# OOM404 negative cases.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, vocab_size):
    for tokens, targets in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens)
        # Outside autocast: the user chose where fp32 happens.
        loss = F.cross_entropy(logits.float().view(-1, vocab_size), targets.view(-1))
        loss.backward()
        optimizer.step()


@torch.no_grad()
def generate(model, tokens):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(tokens)
        return logits.float().softmax(-1)
