#!/usr/bin/env python3
"""Probes for OOM503 and OOM505, the rules whose cost lands on another GPU than the one a rank uses.

OOM503  `torch.load` of a checkpoint saved from cuda:0, without `map_location`, restores its
        tensors onto cuda:0 whatever device the loading rank uses; with `map_location="cpu"` and a
        move to the rank's device they land where they belong.
OOM505  a DataLoader with `pin_memory=True` in a rank that uses GPU 1 but never calls
        `torch.cuda.set_device(1)`: the pinning thread's CUDA context is created on the current
        device, GPU 0.

Every variant runs in a fresh process (its own CUDA contexts). The parent never initialises CUDA:
it reads the driver's per-process view (NVML, which sees contexts) for each GPU while the variant's
process waits, then releases it; the variant reports its own allocator statistics.

With two or more GPUs in the host the probes measure the cross-device effect (two ranks for OOM503,
rank 1 for OOM505). With one GPU they refuse that measurement clearly and, with --single-gpu,
measure what one GPU can show: what a process that meant to stay on the host puts on GPU 0 (a
`torch.load` without `map_location`; a pinning DataLoader). Without a GPU they refuse.

    python3 runtime_check/multi_gpu.py --json multi.json --txt multi.txt [--single-gpu] [--mib 512]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_dataloader import Nvml, MiB, fmt, write_outputs  # noqa: E402  (NVML through ctypes, formatting, outputs)

NEEDS = 2


# ---------------------------------------------------------------------------- variants (children)


def child(args):
    """One variant in this process; prints READY with its allocator view, then waits for the parent."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    device = args.device_index
    if args.variant == "pin-none":  # the baseline: a host-only process that touches no CUDA at all
        print("READY " + json.dumps({"allocated": {}}), flush=True)
        sys.stdin.readline()
        return
    if args.set_device:
        torch.cuda.set_device(device)
    if args.variant.startswith("load"):
        if args.variant == "load-default":
            state = torch.load(args.checkpoint)  # what OOM503 flags
        else:
            state = torch.load(args.checkpoint, map_location="cpu")
            if device >= 0:
                state = {k: v.to(f"cuda:{device}") for k, v in state.items()}
        keep = [state]
    else:  # pin: a DataLoader whose pin thread runs while batches are drawn
        data = TensorDataset(torch.randn(256, 1024), torch.zeros(256))
        loader = DataLoader(data, batch_size=32, num_workers=2, pin_memory=True)
        keep = [b for b in loader]
        if device >= 0:
            x = keep[0][0].to(f"cuda:{device}", non_blocking=True)
            keep.append(x)
    # The allocator of the current device only: asking about another device could create a
    # context there, which is what the parent is measuring.
    allocated = {}
    if torch.cuda.is_initialized():
        allocated[torch.cuda.current_device()] = torch.cuda.memory_allocated()
    print("READY " + json.dumps({"allocated": allocated}), flush=True)
    sys.stdin.readline()  # the parent reads the driver's view, then lets go
    del keep


def run_variant(script_args, gpus, nvml):
    """Runs one variant (or one per rank); returns each process's allocator and driver views."""
    procs = []
    for extra in script_args:
        cmd = [sys.executable, os.path.abspath(__file__), "--child"] + extra
        procs.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    out = []
    for p in procs:
        line = p.stdout.readline()
        if not line.startswith("READY "):
            p.kill()
            raise RuntimeError(f"variant failed: {line.strip() or p.wait()}")
        out.append({"pid": p.pid, "allocated": json.loads(line[6:])["allocated"]})
    time.sleep(0.2)
    for r in out:
        r["driver"] = {d: nvml[d].used_by([r["pid"]]) or 0 for d in range(gpus)}
    for p in procs:
        p.stdin.write("\n")
        p.stdin.flush()
        p.wait()
    return out


def per_gpu(processes, gpus):
    return {d: sum(p["driver"][d] for p in processes) for d in range(gpus)}


# ---------------------------------------------------------------------------- probes


def oom503(args, gpus, nvml, tmp):
    import torch

    ckpt = os.path.join(tmp, "ckpt.pt")
    # Saved from cuda:0 in a process of its own, as a training job's checkpoint is.
    subprocess.run([sys.executable, "-c",
                    "import torch,sys; n=int(sys.argv[2]); "
                    "torch.save({f'w{i}': torch.randn(n // 4, 1024 * 1024 // 4, device='cuda:0') for i in range(4)}, sys.argv[1])",
                    ckpt, str(args.mib)], check=True)
    del torch
    ranks = [0, 1] if gpus >= NEEDS else [-1]
    result = {"code": "OOM503", "checkpoint_bytes": args.mib * MiB, "ranks": ranks, "variants": []}
    names = (("load-default", "torch.load(path)"),
             ("load-cpu", 'map_location="cpu", then .to(the rank\'s device)' if gpus >= NEEDS else 'torch.load(path, map_location="cpu")'))
    for variant, name in names:
        spec = [["--variant", variant, "--checkpoint", ckpt, "--device-index", str(r)] + (["--set-device"] if r >= 0 else [])
                for r in ranks]
        procs = run_variant(spec, gpus, nvml)
        result["variants"].append({"variant": name, "processes": procs, "driver_per_gpu": per_gpu(procs, gpus)})
    return result


def oom505(args, gpus, nvml, tmp):
    rank_device = 1 if gpus >= NEEDS else -1
    result = {"code": "OOM505", "rank_device": rank_device, "variants": []}
    if rank_device >= 0:
        variants = [("pin", False, f"rank on GPU {rank_device}: pin_memory=True, no set_device"),
                    ("pin", True, f"rank on GPU {rank_device}: pin_memory=True after torch.cuda.set_device({rank_device})")]
    else:
        variants = [("pin", False, "host-only process: pin_memory=True"),
                    ("pin-none", False, "host-only process: no pinning DataLoader")]
    for variant, set_device, name in variants:
        spec = [["--variant", variant, "--device-index", str(rank_device)] + (["--set-device"] if set_device else [])]
        procs = run_variant(spec, gpus, nvml)
        result["variants"].append({"variant": name, "processes": procs, "driver_per_gpu": per_gpu(procs, gpus)})
    return result


def report(result):
    lines = [f"{result['provenance'].get('gpu', 'no GPU')} x{result['gpus']}   torch {result['provenance']['torch']}   "
             f"mode: {result['mode']}"]
    for p in result["probes"]:
        lines.append("")
        if not p.get("available", True):
            lines.append(f"{p['code']}: not measured: {p['reason']}")
            continue
        lines.append(p["code"] + ("  (single GPU: what a host-only process puts on GPU 0)" if result["mode"] == "single-gpu" else ""))
        for v in p["variants"]:
            gpu = "  ".join(f"GPU{d} {fmt(b)}" for d, b in sorted(v["driver_per_gpu"].items()))
            alloc = sum(sum(a.values()) for a in (x["allocated"] for x in v["processes"]))
            lines.append(f"  {v['variant']:<58} driver: {gpu}   allocator: {fmt(alloc)}")
        if "verdict" in p:
            lines.append(f"  verdict: {p['verdict']}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--txt")
    ap.add_argument("--single-gpu", action="store_true", help="with one GPU, measure what one GPU shows instead of refusing")
    ap.add_argument("--mib", type=int, default=512, help="checkpoint size (OOM503)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    ap.add_argument("--checkpoint", help=argparse.SUPPRESS)
    ap.add_argument("--device-index", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--set-device", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return 0
    nvml0 = Nvml(0)
    gpus = nvml0.device_count()
    import torch  # noqa: F401  (its version only; CUDA stays uninitialised in this process)
    provenance = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "torch": torch.__version__, "python": platform.python_version(), "host": platform.node(),
                  "command": " ".join(["multi_gpu.py"] + sys.argv[1:])}
    if gpus:
        provenance["driver"] = nvml0.driver_version()
        provenance["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                                           capture_output=True, text=True).stdout.strip() or "GPU"
    mode = "two-gpu" if gpus >= NEEDS else "single-gpu" if gpus == 1 and args.single_gpu else "refused"
    result = {"probe": "multi-gpu", "gpus": gpus, "mode": mode, "provenance": provenance, "probes": []}
    if mode == "refused":
        reason = (f"needs {NEEDS} GPUs in one host, found {gpus}" +
                  ("; --single-gpu measures what one GPU shows" if gpus == 1 else ""))
        result["probes"] = [{"code": c, "available": False, "reason": reason} for c in ("OOM503", "OOM505")]
    else:
        import tempfile
        nvml = [Nvml(d) for d in range(gpus)]
        with tempfile.TemporaryDirectory() as tmp:
            for probe in (oom503, oom505):
                p = probe(args, gpus, nvml, tmp)
                p["available"] = True
                p["verdict"] = verdict(p, mode)
                result["probes"].append(p)
    write_outputs(report(result), result, args.txt, args.json)
    return 3 if mode == "refused" else 0


def verdict(p, mode):
    a, b = p["variants"][0]["driver_per_gpu"], p["variants"][1]["driver_per_gpu"]
    if mode == "two-gpu":
        return (f"GPU 0 holds {fmt(a[0])} with the flagged code vs {fmt(b[0])} with the fix "
                f"({fmt(a[0] - b[0])} that belongs to another GPU)")
    return (f"the flagged code puts {fmt(a[0])} on GPU 0 in a process that meant to stay on the host; "
            f"the fix {fmt(b[0])}")


if __name__ == "__main__":
    sys.exit(main())
