# OOM503 positive cases.
import torch
from torch import load


def resume(model, path):
    state = torch.load(path, map_location="cpu")  # expect: OOM503
    model.load_state_dict(state["model"])
    extra = load(path + ".extra", weights_only=True, map_location="cpu")  # expect: OOM503
    return extra
