# A batch-first transformer encoder layer and self-attention, for the shape-faithful probe on the
# H200 (runtime_check/results/h200-layers-verify.json). No formula sizes attention (the kernel
# decides what it keeps), so the finding has no estimate; the probe measures the file's own layers.
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
        self.attn = nn.MultiheadAttention(512, 8, batch_first=True)

    def forward(self, x):
        h = self.block(x)
        h, _ = self.attn(h, h, h)
        return h


model = Encoder().cuda()
x = torch.randn(16, 256, 512, device="cuda")

hidden = []
model.eval()
for step in range(9):
    hidden.append(model(x))
