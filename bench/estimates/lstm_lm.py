# An LSTM language model (embedding, two stacked LSTM layers, a vocabulary head), for the
# shape-faithful probe on the H200 (runtime_check/results/h200-layers-verify.json). cuDNN decides
# what the LSTM keeps, so the finding has no estimate; the probe measures the file's own layers.
import torch
from torch import nn


class LanguageModel(nn.Module):
    def __init__(self, vocab=10000, width=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.LSTM(width, width, num_layers=2, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


model = LanguageModel().cuda()
tokens = torch.randint(0, 10000, (32, 128), device="cuda")

logits = []
model.eval()
for step in range(9):
    logits.append(model(tokens))
