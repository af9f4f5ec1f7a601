"""Checks of the probes' PyTorch twins that need no GPU, run by tests/twins_test.cpp with Debian's
python3-torch (CPU): every layer kind `check --verify` can state builds and runs forward and
backward with the shapes the LibTorch probe gives it, bad layer lists are refused as the probe
refuses them, and the twins' command line refuses what it cannot do. Exits 1 on the first failure.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "packaging", "python"))

import torch  # noqa: E402

from oomlint.probe_network import KINDS, check_layers, input_of, model_of  # noqa: E402

WINDOW = {"stride": [1], "padding": [0], "dilation": [1]}
WINDOW2 = {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1]}

# (workload, the output's shape): each layer kind the probe builds, as verify states it.
CASES = [
    ({"layers": [{"kind": "Linear", "in": 8, "out": 16}, {"kind": "GELU"}, {"kind": "Dropout", "p": 0.1},
                 {"kind": "LayerNorm", "in": 16}, {"kind": "SiLU"}, {"kind": "Tanh"}, {"kind": "Sigmoid"},
                 {"kind": "ReLU"}, {"kind": "Linear", "in": 16, "out": 4, "bias": False}, {"kind": "LogSoftmax"},
                 {"kind": "Softmax"}], "rows": 5}, [5, 4]),
    ({"layers": [{"kind": "Embedding", "in": 100, "out": 12}, {"kind": "Linear", "in": 12, "out": 100}],
      "rows": 6, "shape": [2, 3]}, [2, 3, 100]),
    ({"layers": [{"kind": "Conv2d", "in": 3, "out": 8, "kernel": [3, 3], "groups": 1, **WINDOW2},
                 {"kind": "BatchNorm2d", "in": 8}, {"kind": "MaxPool2d", "kernel": [2, 2], "stride": [2, 2],
                                                    "padding": [0, 0], "dilation": [1, 1]},
                 {"kind": "AvgPool2d", "kernel": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1]},
                 {"kind": "AdaptiveAvgPool2d", "size": [1, 1]}, {"kind": "Flatten", "start": 1, "end": -1},
                 {"kind": "Linear", "in": 8, "out": 10}], "rows": 4, "shape": [4, 3, 16, 16]}, [4, 10]),
    ({"layers": [{"kind": "Conv1d", "in": 4, "out": 6, "kernel": [3], "same": True, **WINDOW},
                 {"kind": "BatchNorm1d", "in": 6}, {"kind": "MaxPool1d", "kernel": [2], "stride": [2], "padding": [0],
                                                    "dilation": [1]},
                 {"kind": "AvgPool1d", "kernel": [2], "stride": [2], "padding": [0], "dilation": [1]},
                 {"kind": "AdaptiveAvgPool1d", "size": [3]}, {"kind": "View", "size": [2, 18]}],
      "rows": 2, "shape": [2, 4, 16]}, [2, 18]),
    ({"layers": [{"kind": "TransformerEncoderLayer", "in": 16, "out": 16, "heads": 4, "ff": 32, "p": 0.1,
                  "activation": "gelu", "batch_first": True, "layers": 1},
                 {"kind": "MultiheadAttention", "in": 16, "out": 16, "heads": 2, "p": 0.0, "batch_first": True},
                 {"kind": "Select", "dim": 1, "index": -1}], "rows": 3, "shape": [3, 5, 16]}, [3, 16]),
    ({"layers": [{"kind": "LSTM", "in": 8, "out": 20, "layers": 2, "p": 0.0, "batch_first": True,
                  "bidirectional": True},
                 {"kind": "GRU", "in": 20, "out": 6, "layers": 1, "p": 0.0, "batch_first": True},
                 {"kind": "RNN", "in": 6, "out": 5, "layers": 1, "p": 0.0, "batch_first": True},
                 {"kind": "Select", "dim": 1, "index": -1}], "rows": 2, "shape": [2, 7, 8]}, [2, 5]),
    ({"layers": [{"kind": "LSTMCell", "in": 8, "out": 9}, {"kind": "GRUCell", "in": 9, "out": 7},
                 {"kind": "RNNCell", "in": 7, "out": 3}], "rows": 4, "shape": [4, 8]}, [4, 3]),
    ({"width": 32, "depth": 2, "batch": 3}, [3, 32]),  # no layers: the generic MLP
]

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL {what}")


covered = set()
for workload, shape in CASES:
    w = {"width": 256, "depth": 4, "batch": 16, "dtype": "f32", **workload}
    covered.update(spec["kind"] for spec in w.get("layers", []))
    what = " ".join(spec["kind"] for spec in w.get("layers", [])) or "the generic MLP"
    expect(check_layers(w["layers"]) == "" if w.get("layers") else True, f"{what}: check_layers accepts it")
    model = model_of(w, "cpu")
    out = model(input_of(w, "cpu"))
    expect(list(out.shape) == shape, f"{what}: output {list(out.shape)}, expected {shape}")
    out.float().pow(2).mean().backward()
    expect(all(p.grad is not None for p in model.parameters() if p.requires_grad), f"{what}: backward reaches every parameter")
expect(covered == set(KINDS), f"every layer kind is built here: missing {sorted(set(KINDS) - covered)}")

expect("unknown layer kind" in check_layers([{"kind": "Bilinear"}]), "an unknown kind is refused")
expect("first layer" in check_layers([{"kind": "Linear", "in": 4, "out": 4}, {"kind": "Embedding", "in": 9, "out": 4}]),
       "an Embedding after the first layer is refused")

# The command line, as `check --verify` runs it: the device question, and what it refuses.
probe = [sys.executable, os.path.join(ROOT, "packaging", "python", "oomlint", "probe.py")]
env = dict(os.environ, CUDA_VISIBLE_DEVICES="")


def run(*args):
    return subprocess.run(probe + list(args), capture_output=True, text=True, env=env)


r = run("--which-device")
expect(r.returncode == 0 and r.stdout.strip() == "cpu", f"--which-device says cpu without CUDA ({r.stdout!r} {r.stderr!r})")
# On the CPU the profiler's allocation events stand in for the allocator's statistics.
r = run("--json", "-", "--width", "64", "--depth", "2", "--batch", "8", "--steps", "4", "OOM102")
doc = json.loads(r.stdout) if r.returncode == 0 else {}
measured = doc.get("probes", [{}])[0]
expect(doc.get("provenance", {}).get("device", "").startswith("cpu (PyTorch") and measured.get("available"),
       f"without CUDA the twins measure on the CPU ({r.returncode} {r.stderr[-300:]!r})")
if measured.get("available"):
    # OOM102 keeps each step's output with its graph: it grows; the detached copy grows by the output only.
    anti, fix = measured["anti"]["growth_bytes_per_step"], measured["fix"]["growth_bytes_per_step"]
    expect(anti > fix > 0 and fix == 8 * 64 * 4, f"OOM102 on the CPU: growth {anti} with the graph, {fix} detached (8x64 floats)")
r = run("OOM999")
expect(r.returncode == 2 and "no twin for OOM999" in r.stderr, f"an unknown code is refused ({r.stderr!r})")
listed = run("--list").stdout.split()
expect("OOM101" in listed and "OOM305-adagrad" in listed and "OOM401" in listed and len(listed) == 18,
       f"--list names the 18 twins ({listed})")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
