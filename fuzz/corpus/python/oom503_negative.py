# OOM503 negative cases.
import json

import torch


def resume(model, path, rank, kwargs):
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.load_state_dict(torch.load(path, map_location=f"cuda:{rank}"))
    model.load_state_dict(torch.load(path, "cpu"))
    model.load_state_dict(torch.load(**kwargs))
    with open(path) as f:
        return json.load(f)


def roundtrip(data):
    import io
    return torch.load(io.BytesIO(data))
