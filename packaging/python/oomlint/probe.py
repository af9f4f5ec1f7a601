"""The PyTorch twins of oomlint-probe, with its command line and its JSON, for `oomlint check
--verify` where no oomlint-probe is installed (the wheel, the tarball and the .deb carry none).
They measure on the user's own PyTorch: on a CUDA GPU with its allocator's statistics, on the CPU
with the profiler's allocation events (PyTorch keeps no statistics of its CPU allocator).

    python3 probe.py [--which-device] [--device auto|cuda|cpu] [--dtype f32|bf16|f16]
                     [--width N] [--depth N] [--heads N] [--batch N] [--seq N] [--vocab N]
                     [--steps N] [--accum N] [--workload FILE] [--json PATH|-] [--list] [CODE ...]

Exit status: 0, 2 for a bad request, 3 when this Python cannot import torch.
It runs only its own probes: no user code is executed.
"""
import argparse
import json
import os
import subprocess
import sys
import time

# Run as a script from lib/oomlint/python/oomlint/: its siblings are imported as the package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SIZES = ("width", "depth", "heads", "batch", "seq", "vocab", "steps", "accum")
DEFAULTS = {"width": 256, "depth": 4, "heads": 4, "batch": 16, "seq": 128, "vocab": 8192, "steps": 8, "accum": 4,
            "dtype": "f32", "layers": [], "rows": 0, "shape": []}


def fail(message, status=2):
    print(f"oomlint probe twins: {message}", file=sys.stderr)
    sys.exit(status)


def workload_of(args, check_layers):
    """The sizes: the defaults, then --workload's JSON, then the flags given."""
    w = dict(DEFAULTS)
    if args.workload:
        try:
            with open(args.workload, encoding="utf-8") as f:
                given = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"cannot read {args.workload}: {e}")
        if not isinstance(given, dict):
            fail(f"{args.workload} is not a JSON object")
        for key in SIZES + ("rows",):
            if isinstance(given.get(key), int):
                w[key] = given[key]
        for key, kind in (("dtype", str), ("layers", list), ("shape", list)):
            if isinstance(given.get(key), kind):
                w[key] = given[key]
    for key in SIZES:
        if getattr(args, key) is not None:
            w[key] = getattr(args, key)
    if args.dtype:
        w["dtype"] = args.dtype
    if any(w[key] <= 0 for key in SIZES):
        fail("sizes must be positive")
    if w["width"] % w["heads"]:
        fail("width must be a multiple of heads")
    if w["layers"]:
        if not all(isinstance(layer, dict) and isinstance(layer.get("kind"), str) for layer in w["layers"]):
            fail(f"{args.workload}: each layer needs a \"kind\"")
        bad = check_layers(w["layers"])
        if bad:
            fail(f"{args.workload}: {bad}")
        if w["rows"] <= 0:
            fail(f"{args.workload}: a layer list needs \"rows\", the input's rows")
    return w


def driver_version():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                             text=True, check=True, timeout=30).stdout
        return out.split("\n")[0].strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def run_twin(code, twin, w):
    entry = {"code": code, "title": twin.__name__, "available": True, "note": ""}
    try:
        anti, fix = twin(w)[:2]
    except Exception as e:  # a network the twin cannot run is a measurement it cannot give, as in the probe
        entry.update(available=False, note=f"failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        return entry
    entry["anti"], entry["fix"] = anti, fix
    entry["delta"] = {k: anti[k] - fix[k] for k in ("peak_bytes", "retained_bytes", "growth_bytes_per_step")}
    return entry


def main(argv):
    ap = argparse.ArgumentParser(prog="oomlint probe twins", description=__doc__.split("\n\n")[0])
    ap.add_argument("codes", nargs="*")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--which-device", action="store_true")
    ap.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    ap.add_argument("--dtype", choices=("f32", "float32", "bf16", "bfloat16", "f16", "float16"))
    for key in SIZES:
        ap.add_argument(f"--{key}", type=int)
    ap.add_argument("--workload")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        fail(f"{sys.executable} cannot import torch ({e})", 3)
    from oomlint import probe_twins
    from oomlint.probe_network import DTYPES, check_layers
    from oomlint.probe_twins import TWINS as MLP_TWINS
    from oomlint.probe_twins_blocks import TWINS as BLOCK_TWINS
    twins = dict(MLP_TWINS + BLOCK_TWINS)
    if args.list:
        for code in twins:
            print(code)
        return 0
    unknown = [c for c in args.codes if c not in twins]
    if unknown:
        fail(f"no twin for {', '.join(unknown)} (see --list)")
    cuda = torch.cuda.is_available() and args.device != "cpu"
    if args.device == "cuda" and not cuda:
        fail("CUDA requested but no device is available")
    if args.which_device:
        print("cuda" if cuda else "cpu")
        return 0
    w = workload_of(args, check_layers)
    probe_twins.DEVICE = "cuda" if cuda else "cpu"
    torch.manual_seed(0)
    # The first GEMM allocates cuBLAS's workspace, which must not count against a probe.
    a = torch.randn(256, 256, device=probe_twins.DEVICE, dtype=DTYPES[w["dtype"]], requires_grad=True)
    (a @ a).float().sum().backward()
    del a
    probes = []
    for code in args.codes or list(twins):
        probes.append(run_twin(code, twins[code], w))
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    device = (f"cuda:0 ({torch.cuda.get_device_name(0)}), PyTorch {torch.__version__} twins" if cuda
              else f"cpu (PyTorch {torch.__version__} twins, the profiler's allocation events)")
    doc = {"provenance": {"device": device,
                          "torch": torch.__version__, "driver": driver_version(),
                          "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                          "command": " ".join([sys.executable, os.path.abspath(__file__)] + argv)},
           "workload": w, "probes": probes}
    if args.json == "-":
        print(json.dumps(doc, indent=2))
    else:
        for p in probes:
            if p["available"]:
                print(f"{p['code']:16} peak {p['anti']['peak_bytes']:>14,} vs {p['fix']['peak_bytes']:>14,} with the fix")
            else:
                print(f"{p['code']:16} {p['note']}")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
