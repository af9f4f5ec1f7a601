#!/usr/bin/env python3
"""SEED-dataloader-pinned-collate: does a DataLoader with workers, pin_memory and a custom
collate_fn leak GPU memory, epoch after epoch?

The claim answered (an article's section 2.3): `num_workers > 0` with `pin_memory=True` and a custom
`collate_fn` leaks GPU memory slowly, visible in nvidia-smi; use `pin_memory=False,
persistent_workers=False`. The pinning thread and the worker processes are Python's, so this probe
is a Python script beside the LibTorch probes, with the same protocol: a warm-up epoch, then
meters read after every epoch, growth as the least-squares slope over the measured epochs.

Variants: the collate function returns (a) a tuple of tensors, (b) a batch class without
`pin_memory()` (the pin thread hands it back unpinned), (c) a batch class with it; each with
`persistent_workers` on and off. Each epoch runs a small training step per batch.

Meters per epoch: the device allocator (allocated, reserved), the driver's view (cudaMemGetInfo for
the device, NVML per process for this process and its workers, which sees contexts), host RSS of
the main process and of the workers (the largest sum seen during the epoch: non-persistent workers
exit with it; their private pages too, which is what copy-on-read grows), and pinned host memory (the caching host allocator's bytes in use).

Without a GPU (or with --tiny and no CUDA) it runs on the CPU, reports host memory and says the
device columns are not measured.

    python3 runtime_check/seed_dataloader.py --json seed.json --txt seed.txt --svg-dir svg
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import subprocess
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

MiB = 1024 * 1024


# ---------------------------------------------------------------------------- the workload


class ShardedImages(Dataset):
    """A map-style dataset as real ones are written: a Python list of per-sample records (paths,
    labels, tags) read by index, and an image decoded per sample (here: generated from the index)."""

    def __init__(self, samples, side):
        self.side = side
        self.records = [{"path": f"shard-{i // 1000:03d}/img-{i:07d}.jpg", "label": i % 1000,
                         "tags": ["train", f"class-{i % 1000}"]} for i in range(samples)]

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        rec = self.records[i]
        g = torch.Generator().manual_seed(i)
        image = torch.randint(0, 256, (3, self.side, self.side), generator=g, dtype=torch.uint8)
        return image, rec["label"], rec["path"]


def collate_tuple(samples):
    images = torch.stack([s[0] for s in samples])
    labels = torch.tensor([s[1] for s in samples])
    return images, labels


class Batch:
    """A custom batch without `pin_memory()`: the pin thread returns it as it is (pageable)."""

    def __init__(self, samples):
        self.images = torch.stack([s[0] for s in samples])
        self.labels = torch.tensor([s[1] for s in samples])
        self.paths = [s[2] for s in samples]

    def to(self, device):
        self.images = self.images.to(device, non_blocking=True)
        self.labels = self.labels.to(device, non_blocking=True)
        return self


class PinnedBatch(Batch):
    """The same batch with `pin_memory()`, which the DataLoader's pin thread calls."""

    def pin_memory(self):
        self.images = self.images.pin_memory()
        self.labels = self.labels.pin_memory()
        return self


COLLATES = {
    "tuple": collate_tuple,
    "batch-class": Batch,
    "batch-class-pin_memory": PinnedBatch,
}


def to_device(batch, device):
    if isinstance(batch, Batch):
        batch = batch.to(device)
        return batch.images, batch.labels
    images, labels = batch
    return images.to(device, non_blocking=True), labels.to(device, non_blocking=True)


# ---------------------------------------------------------------------------- meters


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def private_bytes(pid):
    """Pages only this process holds (Private_Clean + Private_Dirty): what copy-on-read grows."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1]) * 1024
    except OSError:
        pass
    return total


def children(pid):
    """Direct children of `pid` (the DataLoader's worker processes), from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return out


class Nvml:
    """Per-process device memory from the driver (NVML through ctypes: no Python package needed)."""

    class ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t (v2 / v3)
        _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                    ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]

    def __init__(self, index):
        self.lib = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            handle = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle)) != 0:
                return
            self.lib, self.handle = lib, handle
            self.query = getattr(lib, "nvmlDeviceGetComputeRunningProcesses_v3", None) or \
                lib.nvmlDeviceGetComputeRunningProcesses_v2
        except OSError:
            self.lib = None

    def device_count(self):
        if self.lib is None:
            return 0
        count = ctypes.c_uint(0)
        return count.value if self.lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0 else 0

    def driver_version(self):
        if self.lib is None:
            return None
        buf = ctypes.create_string_buffer(96)
        return buf.value.decode() if self.lib.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(96)) == 0 else None

    def used_by(self, pids):
        """Bytes the driver accounts to these processes, or None when NVML cannot say."""
        if self.lib is None:
            return None
        count = ctypes.c_uint(64)
        infos = (self.ProcessInfo * 64)()
        if self.query(self.handle, ctypes.byref(count), infos) != 0:
            return None
        seen = {infos[i].pid: infos[i].usedGpuMemory for i in range(count.value)}
        if not any(p in seen for p in pids):
            return None  # another PID namespace: the driver's PIDs are not ours
        return sum(seen.get(p, 0) for p in pids)


def pinned_bytes():
    stats = getattr(torch.cuda, "host_memory_stats", None)
    if stats is None:
        return None
    s = stats()
    for key in ("allocated_bytes.current", "allocated_bytes.all.current", "active_bytes.current"):
        if key in s:
            return int(s[key])
    for key, value in s.items():
        if "allocated_bytes" in key and key.endswith(".current"):
            return int(value)
    return None


def slope(ys):
    """Least-squares growth per epoch."""
    n = len(ys)
    if n < 2 or any(y is None for y in ys):
        return None
    mx, my = (n - 1) / 2, sum(ys) / n
    num = sum((i - mx) * (y - my) for i, y in enumerate(ys))
    den = sum((i - mx) ** 2 for i in range(n))
    return num / den


# ---------------------------------------------------------------------------- one variant

METERS = ["allocated", "reserved", "driver_used", "process_used", "main_rss", "workers_rss", "workers_private", "pinned"]
DEVICE_METERS = {"allocated", "reserved", "driver_used", "process_used", "pinned"}


def run_variant(collate_name, persistent, cfg, device, nvml):
    torch.manual_seed(0)
    data = ShardedImages(cfg["samples"], cfg["side"])
    cuda = device.type == "cuda"
    loader = DataLoader(data, batch_size=cfg["batch"], shuffle=True, num_workers=cfg["workers"],
                        pin_memory=cuda, collate_fn=COLLATES[collate_name], persistent_workers=persistent)
    features = 3 * cfg["side"] * cfg["side"]
    model = nn.Sequential(nn.Flatten(), nn.Linear(features, 512), nn.ReLU(), nn.Linear(512, 1000)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    me = os.getpid()
    epochs = []
    for epoch in range(cfg["epochs"] + 1):  # epoch 0 warms up (workers, allocator, CUDA context)
        workers_peak = workers_private = 0
        t0 = time.perf_counter()
        for i, batch in enumerate(loader):
            images, labels = to_device(batch, device)
            loss = nn.functional.cross_entropy(model(images.float().div_(255)), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if i % cfg["sample_every"] == 0:
                workers = children(me)
                workers_peak = max(workers_peak, sum(rss_bytes(p) for p in workers))
                workers_private = max(workers_private, sum(private_bytes(p) for p in workers))
        if cuda:
            torch.cuda.synchronize()
        row = {"epoch": epoch, "seconds": time.perf_counter() - t0, "main_rss": rss_bytes(me),
               "workers_rss": workers_peak, "workers_private": workers_private}
        if cuda:
            free, total = torch.cuda.mem_get_info(device)
            row.update(allocated=torch.cuda.memory_allocated(device), reserved=torch.cuda.memory_reserved(device),
                       driver_used=total - free, process_used=nvml.used_by([me] + children(me)), pinned=pinned_bytes())
        else:
            row.update({k: None for k in DEVICE_METERS})
        epochs.append(row)
    del loader
    measured = epochs[1:]
    slopes = {k: slope([r[k] for r in measured]) for k in METERS}
    growth = {k: (None if measured[0][k] is None else measured[-1][k] - measured[0][k]) for k in METERS}
    return {"collate": collate_name, "persistent_workers": persistent, "pin_memory": cuda,
            "epochs": epochs, "slope_bytes_per_epoch": slopes, "growth_bytes": growth,
            "verdict": verdict(slopes, growth, cuda, len(measured))}


def verdict(slopes, growth, cuda, n):
    """Flat: no device meter grows by more than 1 MiB over the measured epochs (allocator blocks
    are 2 MiB; a leak of one pinned batch per epoch would grow by far more)."""
    words = []
    if cuda:
        grew = [k for k in ("allocated", "reserved", "driver_used", "process_used", "pinned")
                if growth[k] is not None and growth[k] > MiB]
        words.append("device memory grows: " + ", ".join(grew) if grew else
                     f"device memory flat over {n} epochs (allocated, reserved, driver, pinned)")
    else:
        words.append("device not measured (no GPU)")
    for k, label in (("main_rss", "main-process RSS"), ("workers_rss", "workers' RSS"),
                     ("workers_private", "workers' private memory")):
        if growth[k] is not None and growth[k] > 8 * MiB:
            words.append(f"{label} grows {growth[k] / MiB:.1f} MiB ({(slopes[k] or 0) / MiB:.2f} MiB/epoch)")
    return "; ".join(words)


# ---------------------------------------------------------------------------- reports


def fmt(b):
    if b is None:
        return "n/m"
    sign = "-" if b < 0 else ""
    b = abs(b)
    for unit, size in (("GiB", 1024 ** 3), ("MiB", MiB), ("KiB", 1024)):
        if b >= size:
            return f"{sign}{b / size:.1f} {unit}"
    return f"{sign}{b:.0f} B"


def table(result):
    lines = [f"device: {result['provenance'].get('gpu', result['device'])}   torch {result['provenance']['torch']}   "
             f"workers {result['config']['workers']}   epochs {result['config']['epochs']} (+1 warm-up)"]
    if result["device"] == "cpu":
        lines.append("device columns (allocated, reserved, driver, process, pinned) are not measured: no GPU")
    for v in result["variants"]:
        lines.append("")
        lines.append(f"SEED-dataloader-pinned-collate  collate={v['collate']}  persistent_workers={v['persistent_workers']}"
                     f"  pin_memory={v['pin_memory']}")
        lines.append("  epoch " + "".join(f"{m:>16}" for m in METERS))
        for r in v["epochs"]:
            lines.append(f"  {r['epoch']:>5} " + "".join(f"{fmt(r[m]):>16}" for m in METERS) +
                         ("   (warm-up)" if r["epoch"] == 0 else ""))
        lines.append("  slope/epoch " + "".join(f"{fmt(v['slope_bytes_per_epoch'][m]):>16}" for m in METERS)[6:])
        lines.append(f"  verdict: {v['verdict']}")
    return "\n".join(lines) + "\n"


def svg(variant, path):
    """One chart per variant: each meter in MiB over the epochs."""
    w, h, pad = 640, 320, 48
    series = {m: [r[m] for r in variant["epochs"]] for m in METERS}
    series = {m: [y / MiB for y in ys] for m, ys in series.items() if all(y is not None for y in ys)}
    top = max([max(ys) for ys in series.values()] + [1.0])
    n = len(variant["epochs"])
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf", "#e377c2"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<text x="{pad}" y="16">SEED-dataloader-pinned-collate: collate={variant["collate"]}, '
           f'persistent_workers={variant["persistent_workers"]} (MiB per epoch)</text>',
           f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#000"/>',
           f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="#000"/>',
           f'<text x="4" y="{pad + 4}">{top:.0f}</text><text x="4" y="{h - pad}">0</text>']
    for k, (m, ys) in enumerate(series.items()):
        pts = " ".join(f"{pad + (w - 2 * pad) * i / max(1, n - 1):.1f},{h - pad - (h - 2 * pad) * y / top:.1f}"
                       for i, y in enumerate(ys))
        out.append(f'<polyline fill="none" stroke="{colours[k % len(colours)]}" stroke-width="1.5" points="{pts}"/>')
        out.append(f'<text x="{w - pad + 4 - 120}" y="{pad + 14 * k}" fill="{colours[k % len(colours)]}">{m}</text>')
    out.append("</svg>")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def provenance_of(device, nvml):
    out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "python": platform.python_version(), "host": platform.node()}
    if device.type == "cuda":
        stats = getattr(torch.cuda, "host_memory_stats", None)
        out.update(gpu=torch.cuda.get_device_name(device), cuda=torch.version.cuda,
                   nvml_per_process=nvml.lib is not None, driver=nvml.driver_version(),
                   host_memory_stats=sorted(stats().keys()) if stats else None)
    return out


def write_outputs(text, result, txt_path, json_path):
    """The table on standard output and in `txt_path`, the result in `json_path` (either optional)."""
    sys.stdout.write(text)
    if txt_path:
        with open(txt_path, "w") as fh:
            fh.write(text)
    if json_path:
        with open(json_path, "w") as fh:
            json.dump(result, fh, indent=1)
            fh.write("\n")


def write_reports(result, args):
    write_outputs(table(result), result, args.txt, args.json)
    if args.svg_dir:
        os.makedirs(args.svg_dir, exist_ok=True)
        for v in result["variants"]:
            svg(v, os.path.join(args.svg_dir, f"SEED-dataloader-{v['collate']}-persistent-{str(v['persistent_workers']).lower()}.svg"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=24)
    ap.add_argument("--samples", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--side", type=int, default=224, help="image side (3 x side x side uint8)")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--tiny", action="store_true", help="a few epochs of a few samples: the CPU-only test")
    ap.add_argument("--device", default="auto", help="auto, cuda or cpu")
    ap.add_argument("--json")
    ap.add_argument("--txt")
    ap.add_argument("--svg-dir")
    ap.add_argument("--render", metavar="JSON", help="print the table and charts of a result file, run nothing")
    ap.add_argument("--variant", help=argparse.SUPPRESS)  # COLLATE,PERSISTENT: one variant, JSON on stdout
    args = ap.parse_args()
    if args.render:
        with open(args.render) as fh:
            result = json.load(fh)
        args.json = None
        write_reports(result, args)
        return
    cfg = {"epochs": args.epochs, "samples": args.samples, "batch": args.batch, "side": args.side,
           "workers": args.workers, "sample_every": 8}
    if args.tiny:
        cfg.update(epochs=3, samples=64, batch=16, side=8, workers=2, sample_every=1)
    device = torch.device(args.device if args.device != "auto" else "cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("seed_dataloader: --device cuda but no GPU is visible")
    if args.variant:
        collate_name, persistent = args.variant.split(",")
        nvml = Nvml(device.index or 0) if device.type == "cuda" else None
        v = run_variant(collate_name, persistent == "1", cfg, device, nvml)
        v["provenance"] = provenance_of(device, nvml)
        json.dump(v, sys.stdout)
        return
    # Each variant in a fresh process: its own CUDA context, allocator and pinned-memory cache, so
    # nothing one variant left behind is counted in another.
    result = {"probe": "SEED-dataloader-pinned-collate", "claim": "A DataLoader with num_workers > 0, pin_memory=True "
              "and a custom collate_fn leaks GPU memory epoch after epoch", "device": device.type,
              "config": cfg, "meters": METERS, "variants": []}
    for collate_name in COLLATES:
        for persistent in (False, True):
            cmd = [sys.executable, os.path.abspath(__file__), "--device", device.type, "--epochs", str(args.epochs),
                   "--samples", str(args.samples), "--batch", str(args.batch), "--side", str(args.side),
                   "--workers", str(args.workers), "--variant", f"{collate_name},{int(persistent)}"]
            if args.tiny:
                cmd.append("--tiny")
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"seed_dataloader: variant {collate_name} persistent={persistent} failed:\n{run.stderr[-2000:]}")
            v = json.loads(run.stdout)
            result.setdefault("provenance", v.pop("provenance"))
            v.pop("provenance", None)
            result["variants"].append(v)
    result["provenance"]["command"] = " ".join(["seed_dataloader.py"] + sys.argv[1:])
    write_reports(result, args)


if __name__ == "__main__":
    main()
