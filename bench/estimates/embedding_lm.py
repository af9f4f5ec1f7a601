# A token model whose first layer is an nn.Embedding, for the shape-faithful probe on the H200
# (runtime_check/results/h200-embedding-verify.json): `oomlint check --verify` runs this file's own
# layers on random token ids of the stated (batch, sequence) shape.
import torch
from torch import nn

VOCAB = 32000
WIDTH = 1024

model = nn.Sequential(
    nn.Embedding(VOCAB, WIDTH),
    nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(),
    nn.Linear(4 * WIDTH, WIDTH),
).cuda().bfloat16()
tokens = torch.randint(0, VOCAB, (16, 1024), device="cuda")

hidden = []
model.eval()
for step in range(9):
    hidden.append(model(tokens))
