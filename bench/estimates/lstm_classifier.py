# An LSTM sequence classifier that reads its last step (`out[:, -1]`), for the shape-faithful probe
# on the H200 (runtime_check/results/h200-verify-per-finding.json). cuDNN decides what the LSTM
# keeps, so the finding has no estimate; the probe builds the file's own layers, the step included.
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features=256, hidden=1024, classes=10):
        super().__init__()
        self.rnn = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


model = Classifier().cuda()
x = torch.randn(64, 256, 256, device="cuda")

scores = []
model.eval()
for step in range(9):
    scores.append(model(x))
