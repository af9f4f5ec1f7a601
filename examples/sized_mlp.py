"""A tabular-regression script whose sizes are all in the code: oomlint estimates each mistake's cost.

Run `oomlint check examples/sized_mlp.py`: the findings end with "(estimated ...)", and
`--output-format json` gives the formula and where each size was read.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FEATURES = 512
HIDDEN = 2048
BATCH = 4096
EPOCHS = 3

features = torch.randn(100_000, FEATURES)
targets = torch.randn(100_000, 1)
train_loader = DataLoader(TensorDataset(features, targets), batch_size=BATCH, shuffle=True)
val_loader = DataLoader(TensorDataset(torch.randn(10_000, FEATURES), torch.randn(10_000, 1)), batch_size=BATCH)

model = nn.Sequential(
    nn.Linear(FEATURES, HIDDEN),
    nn.ReLU(),
    nn.Dropout(0.1),
    nn.Linear(HIDDEN, HIDDEN),
    nn.ReLU(),
    nn.Linear(HIDDEN, 1),
).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

for epoch in range(EPOCHS):
    model.train()
    epoch_loss = 0.0
    for x, y in train_loader:
        x, y = x.cuda(), y.cuda()
        optimizer.zero_grad(set_to_none=False)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        epoch_loss += loss

    model.eval()
    predictions = []
    for x, y in val_loader:
        predictions.append(model(x.cuda()))
    print(epoch, epoch_loss / len(train_loader))
