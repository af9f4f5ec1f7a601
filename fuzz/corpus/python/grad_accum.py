"""A language-model fine-tuning loop with gradient accumulation, written with three memory bugs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=1000, dim=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.out(h)


def micro_batches(batch, k):
    return batch.chunk(k)


def train(model, batches, optimizer, device, accum=4):
    model.train()
    for batch in batches:
        batch = batch.to(device)
        optimizer.zero_grad()
        total = 0
        for mb in micro_batches(batch, accum):
            logits = model(mb[:, :-1])
            total = total + F.cross_entropy(logits.flatten(0, 1), mb[:, 1:].flatten())
        total.backward()  # all `accum` graphs are alive here: OOM104
        optimizer.step()


def train_retained(model, batches, optimizer, device):
    for batch in batches:
        batch = batch.to(device)
        optimizer.zero_grad()
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        loss.backward(retain_graph=True)  # nothing reuses the graph: OOM105
        optimizer.step()


def sample_logits(model, batches, device):
    kept = []
    with torch.no_grad():
        for batch in batches:
            logits = model(batch.to(device))
            kept.append(logits[:, -1])  # stays on the GPU for the whole loop: OOM103
    return torch.cat(kept)


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    lm = TinyLM().to(dev)
    opt = torch.optim.Adam(lm.parameters())
    data = [torch.randint(0, 1000, (8, 33)) for _ in range(10)]
    train(lm, data, opt, dev)
    train_retained(lm, data, opt, dev)
    print(sample_logits(lm, data, dev).shape)
