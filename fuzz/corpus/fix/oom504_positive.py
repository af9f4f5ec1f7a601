# OOM504 positive cases.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make(seq, batch, dim):
    mask = torch.ones(seq, seq).cuda()  # expect: OOM504
    pos = torch.arange(seq).to(device)  # expect: OOM504
    noise = torch.randn(batch, dim).to("cuda")  # expect: OOM504
    return mask, pos, noise
