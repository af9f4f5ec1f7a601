# OOM504 negative cases.
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make(seq, batch, data, dtype):
    a = torch.ones(seq, seq, device=device)
    b = torch.from_numpy(np.zeros(3)).to(device)
    c = torch.zeros(seq).to(dtype)
    d = data.to(device)
    e = torch.zeros(seq).cuda(1)
    return a, b, c, d, e
