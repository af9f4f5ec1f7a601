"""The network and input the PyTorch twins of oomlint-probe measure on: the checked file's own
layers when `--workload` states them (shape-faithful, as `oomlint check --verify` passes them),
else the generic MLP of the workload's width and depth. Built as runtime_check/stated_network.cpp
builds them for the LibTorch probe, so both measure the same network.
"""
import torch
import torch.nn as nn

DTYPES = {"f32": torch.float32, "float32": torch.float32, "Float": torch.float32, "bf16": torch.bfloat16,
          "bfloat16": torch.bfloat16, "BFloat16": torch.bfloat16, "f16": torch.float16, "float16": torch.float16,
          "Half": torch.float16}

KINDS = ("Linear", "Embedding", "LayerNorm", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout",
         "Conv1d", "Conv2d", "BatchNorm1d", "BatchNorm2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
         "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Flatten", "View", "Select", "TransformerEncoderLayer",
         "MultiheadAttention", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell")


def check_layers(layers):
    """Empty when the layer list can be built, else why not (as the LibTorch probe says it)."""
    if not layers:
        return "a layer list needs a sized layer (Linear, Conv, LayerNorm, Embedding ...)"
    for i, layer in enumerate(layers):
        kind = layer.get("kind")
        if kind not in KINDS:
            return f"unknown layer kind {kind}"
        if kind == "Embedding" and i != 0:
            return "an Embedding must be the first layer"
    return ""


class StatedLayer(nn.Module):
    """A layer the checked file calls in a way nn.Sequential cannot: self-attention's
    `attn(x, x, x)`, the output of an (output, state) pair, a reshape or a selection, and
    (sequence, batch, features) layers on a batch-first input, as the LibTorch probe calls them."""

    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        kind = spec["kind"]
        hidden = spec.get("out", 0) // 2 if spec.get("bidirectional") else spec.get("out", 0)
        recurrent = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}
        cells = {"LSTMCell": nn.LSTMCell, "GRUCell": nn.GRUCell, "RNNCell": nn.RNNCell}
        self.layer = None
        if kind == "TransformerEncoderLayer":
            self.layer = nn.TransformerEncoderLayer(spec["in"], spec["heads"], dim_feedforward=spec.get("ff", 2048),
                                                    dropout=spec.get("p", 0.5), activation=spec.get("activation", "relu"))
        elif kind == "MultiheadAttention":
            self.layer = nn.MultiheadAttention(spec["in"], spec["heads"], dropout=spec.get("p", 0.5))
        elif kind in recurrent:
            self.layer = recurrent[kind](spec["in"], hidden, num_layers=spec.get("layers", 1), bias=spec.get("bias", True),
                                         batch_first=spec.get("batch_first", False), dropout=spec.get("p", 0.5),
                                         bidirectional=spec.get("bidirectional", False))
        elif kind in cells:
            self.layer = cells[kind](spec["in"], spec["out"], bias=spec.get("bias", True))

    def forward(self, x):
        kind = self.spec["kind"]
        if kind == "View":
            return x.reshape(self.spec["size"])
        if kind == "Select":
            return x.select(self.spec.get("dim", 0), self.spec.get("index", 0))
        if kind == "LSTMCell":
            return self.layer(x)[0]
        if kind in ("GRUCell", "RNNCell"):
            return self.layer(x)
        if kind in ("LSTM", "GRU", "RNN"):
            return self.layer(x)[0]
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(1)
        elif self.spec.get("batch_first"):
            x = x.transpose(0, 1)
        y = self.layer(x) if kind == "TransformerEncoderLayer" else self.layer(x, x, x)[0]
        return y.squeeze(1) if unbatched else y.transpose(0, 1) if self.spec.get("batch_first") else y


def _windowed(spec):
    kind, n = spec["kind"], int(spec["kind"][-2])
    if kind.startswith("Conv"):
        conv = nn.Conv1d if n == 1 else nn.Conv2d
        return conv(spec["in"], spec["out"], spec["kernel"], stride=spec["stride"], dilation=spec["dilation"],
                    groups=spec.get("groups", 1), bias=spec.get("bias", True),
                    padding="same" if spec.get("same") else spec["padding"])
    if kind.startswith("BatchNorm"):
        return (nn.BatchNorm1d if n == 1 else nn.BatchNorm2d)(spec["in"], affine=spec.get("bias", True))
    if kind.startswith("MaxPool"):
        return (nn.MaxPool1d if n == 1 else nn.MaxPool2d)(spec["kernel"], stride=spec["stride"], padding=spec["padding"],
                                                          dilation=spec["dilation"], ceil_mode=spec.get("ceil", False))
    return (nn.AvgPool1d if n == 1 else nn.AvgPool2d)(spec["kernel"], stride=spec["stride"], padding=spec["padding"],
                                                      ceil_mode=spec.get("ceil", False))


def _layer(spec):
    kind = spec["kind"]
    simple = {"ReLU": nn.ReLU, "GELU": nn.GELU, "SiLU": nn.SiLU, "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid}
    if kind in simple:
        return simple[kind]()
    if kind == "Linear":
        return nn.Linear(spec["in"], spec["out"], bias=spec.get("bias", True))
    if kind == "Embedding":
        return nn.Embedding(spec["in"], spec["out"])
    if kind == "Softmax":
        return nn.Softmax(-1)
    if kind == "LogSoftmax":
        return nn.LogSoftmax(-1)
    if kind == "Dropout":
        return nn.Dropout(spec.get("p", 0.5))
    if kind == "LayerNorm":
        return nn.LayerNorm(spec["in"])
    if kind == "Flatten":
        return nn.Flatten(spec.get("start", 1), spec.get("end", -1))
    if kind == "AdaptiveAvgPool1d":
        return nn.AdaptiveAvgPool1d(spec["size"][0])
    if kind == "AdaptiveAvgPool2d":
        return nn.AdaptiveAvgPool2d(tuple(spec["size"]))
    if kind[:4] in ("Conv", "Batc", "MaxP", "AvgP"):
        return _windowed(spec)
    return StatedLayer(spec)


def model_of(w, device):
    """The stated layers in order, else `depth` blocks of Linear(width, width) and GELU."""
    layers = w.get("layers") or []
    if layers:
        net = nn.Sequential(*[_layer(spec) for spec in layers])
    else:
        blocks = []
        for _ in range(w["depth"]):
            blocks += [nn.Linear(w["width"], w["width"]), nn.GELU()]
        net = nn.Sequential(*blocks)
    return net.to(device, DTYPES[w["dtype"]])


def in_features(w):
    for spec in w.get("layers") or []:
        if spec["kind"] in ("Linear", "LayerNorm"):
            return spec["in"]
    return 0


def input_of(w, device, rows=None):
    """One input for model_of's network: the stated shape (token ids for an Embedding first),
    else rows x the first layer's width, else `rows` (default: the batch) x the width."""
    layers, shape, dtype = w.get("layers") or [], w.get("shape") or [], DTYPES[w["dtype"]]
    if layers and layers[0]["kind"] == "Embedding":
        return torch.randint(0, layers[0]["in"], shape or [w["rows"]], device=device)
    if layers and shape:
        return torch.randn(shape, device=device, dtype=dtype)
    if layers:
        return torch.randn(w["rows"], in_features(w), device=device, dtype=dtype)
    return torch.randn(rows or w["batch"], w["width"], device=device, dtype=dtype)
