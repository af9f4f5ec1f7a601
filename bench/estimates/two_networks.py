# Two stated networks in one file, each with its own leaking evaluation loop, for --verify on the
# H200 (runtime_check/results/h200-verify-per-finding.json): each finding is measured on the
# network of its own forward, which is what its estimate sizes.
import torch
from torch import nn

encoder = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda()
scorer = nn.Sequential(nn.Linear(512, 2048), nn.Tanh(), nn.Linear(2048, 1)).cuda()
x = torch.randn(4096, 1024, device="cuda")
z = torch.randn(8192, 512, device="cuda")

encoder.eval()
scorer.eval()
embeddings = []
for step in range(9):
    embeddings.append(encoder(x))
scores = []
for step in range(9):
    scores.append(scorer(z))
