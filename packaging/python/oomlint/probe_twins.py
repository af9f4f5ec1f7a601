"""The PyTorch twins of oomlint-probe's probes: each runs a rule's anti-pattern and its fix on the
same workload, with the probe's measuring protocol, on the user's own PyTorch and CUDA GPU.
`oomlint check --verify` runs them (oomlint/probe.py) where no oomlint-probe is installed, as
after `pip install oomlint`; bench/crosscheck.py holds them to within 5% of the LibTorch probe.
"""
import time

import torch
import torch.nn as nn

from oomlint.probe_network import DTYPES, input_of, model_of


def slope(ys):
    """Least-squares growth of ys over their steps."""
    n = len(ys)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(ys) / n
    return sum((i - mx) * (y - my) for i, y in enumerate(ys)) / sum((i - mx) ** 2 for i in range(n))


# Where the twins run: "cuda" (torch.cuda's allocator statistics) or "cpu" (the CPU allocator's
# allocations and frees, as the profiler records them). probe.py sets it.
DEVICE = "cuda"


def measure(step, steps, reset=None):
    """The LibTorch probe's protocol: the bytes held before a warm-up step are the baseline, the
    peak is reset after it, then `steps` steps, each synchronised and sampled."""
    if reset:
        reset()
    if DEVICE != "cuda":
        return measure_cpu(step, steps)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    step(-1)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    allocated = []
    start = time.perf_counter()
    for i in range(steps):
        step(i)
        torch.cuda.synchronize()
        allocated.append(torch.cuda.memory_allocated() - base)
    ms = (time.perf_counter() - start) * 1000 / max(1, steps)
    return {"peak_bytes": torch.cuda.max_memory_allocated() - base, "retained_bytes": torch.cuda.memory_allocated() - base,
            "growth_bytes_per_step": slope(allocated), "ms_per_step": ms, "allocated_per_step": allocated}


def _ns(event, name):
    """An event's time in ns, whichever the PyTorch version names (start_ns / start_us)."""
    return getattr(event, f"{name}_ns")() if hasattr(event, f"{name}_ns") else getattr(event, f"{name}_us")() * 1000


def measure_cpu(step, steps):
    """The same protocol on the CPU: PyTorch keeps no statistics of its CPU allocator, so every
    allocation and free is taken from the profiler's memory events (what oomlint-probe's counting
    allocator sees), and the live bytes are summed over them in time order."""
    from torch.profiler import ProfilerActivity, profile, record_function
    marks = []
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for i in [-1] + list(range(steps)):
            with record_function(f"oomlint_step_{i}"):
                step(i)
    events = prof.profiler.kineto_results.events()
    # In time order; events of the same instant keep the order they were recorded in.
    memory = sorted(((_ns(e, "start"), e.nbytes()) for e in events if e.name() == "[memory]"), key=lambda m: m[0])
    for e in events:
        if e.name().startswith("oomlint_step_"):
            marks.append((int(e.name()[len("oomlint_step_"):]), _ns(e, "start") + _ns(e, "duration")))
    ends = [t for _, t in sorted(marks)]
    if len(ends) != steps + 1:
        raise RuntimeError("the profiler did not record every step")
    live, at = 0, 0
    while at < len(memory) and memory[at][0] <= ends[0]:  # the warm-up: the baseline is before it
        live += memory[at][1]
        at += 1
    peak, allocated = live, []  # the peak is reset after the warm-up
    for end in ends[1:]:
        while at < len(memory) and memory[at][0] <= end:
            live += memory[at][1]
            at += 1
            peak = max(peak, live)
        allocated.append(live)
    # No time per step: the profiler's own cost would be in it.
    return {"peak_bytes": peak, "retained_bytes": allocated[-1] if allocated else live,
            "growth_bytes_per_step": slope(allocated), "ms_per_step": 0.0, "allocated_per_step": allocated}


def mlp(w):
    return model_of(w, DEVICE)


def loss_of(out):
    return out.float().pow(2).mean()


def oom101(w):
    model = mlp(w)
    x = x_of(w)
    state = {"total": torch.zeros((), device=DEVICE)}

    def anti(i):
        state["total"] = state["total"] + loss_of(model(x))

    a = measure(anti, w["steps"])
    del state["total"]
    fl = [0.0]

    def fix(i):
        fl[0] += loss_of(model(x)).item()

    return a, measure(fix, w["steps"])


def oom201(w):
    model = mlp(w).eval()
    x = tokens_of(w)

    def anti(i):
        model(x)

    def fix(i):
        with torch.no_grad():
            model(x)

    return measure(anti, w["steps"]), measure(fix, w["steps"])


def zero_grad(params, set_to_none):
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            p.grad.zero_()


def sgd_step(params, lr=1e-4):
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p.sub_(p.grad * lr)


def trained_mlp(w):
    """The MLP, its parameters and the reset between variants (gradients dropped), as the probe's
    training probes set them up."""
    model = mlp(w)
    params = list(model.parameters())
    return model, params, lambda: zero_grad(params, True)


def x_of(w, rows=None):
    return input_of(w, DEVICE, rows)


def tokens_of(w):
    """Token rows (batch x sequence) through the MLP; a stated input's rows are all of them."""
    return x_of(w, w["batch"] * w["seq"])


def oom102(w):
    model, x = mlp(w), x_of(w)
    anti_kept, fix_kept = [], []
    a = measure(lambda i: anti_kept.append(model(x)), w["steps"])
    anti_kept.clear()
    return a, measure(lambda i: fix_kept.append(model(x).detach()), w["steps"])


def oom103(w):
    model, x = mlp(w), x_of(w)
    with torch.no_grad():
        anti_kept, fix_kept = [], []
        a = measure(lambda i: anti_kept.append(model(x)), w["steps"])
        anti_kept.clear()
        return a, measure(lambda i: fix_kept.append(model(x).cpu()), w["steps"])


def oom104(w):
    model, params, reset = trained_mlp(w)
    mbs = [x_of(w) for _ in range(w["accum"])]

    def anti(i):
        zero_grad(params, True)
        total = torch.zeros((), device=DEVICE)
        for mb in mbs:
            total = total + loss_of(model(mb))
        total.backward()
        sgd_step(params)

    def fix(i):
        zero_grad(params, True)
        for mb in mbs:
            (loss_of(model(mb)) / len(mbs)).backward()
        sgd_step(params)

    return measure(anti, w["steps"], reset), measure(fix, w["steps"], reset)


def oom105(w):
    model, params, reset = trained_mlp(w)
    x = x_of(w)
    last = {}

    def step(retain):
        def run(i):
            zero_grad(params, True)
            loss = loss_of(model(x))
            loss.backward(retain_graph=retain)
            sgd_step(params)
            last["loss"] = loss
        return run

    a = measure(step(True), w["steps"], reset)
    last.clear()
    f = measure(step(False), w["steps"], reset)
    last.clear()
    return a, f


def oom106(w):
    model, params, reset = trained_mlp(w)
    x = x_of(w)

    def anti(i):
        zero_grad(params, False)
        loss_of(model(x)).backward(create_graph=True)

    def fix(i):
        zero_grad(params, False)
        grads = torch.autograd.grad([loss_of(model(x))], params, create_graph=True)
        for p, g in zip(params, grads):
            if p.grad is not None:
                p.grad.add_(g.detach())
            else:
                p.grad = g.detach()

    a = measure(anti, w["steps"], reset)
    f = measure(fix, w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom107(w):
    cell = nn.Linear(2 * w["width"], w["width"]).to(DEVICE, DTYPES[w["dtype"]])
    params = list(cell.parameters())
    x = x_of(w)
    state = {"h": torch.zeros(w["batch"], w["width"], device=DEVICE, dtype=x.dtype)}

    def anti(i):
        zero_grad(params, True)
        state["h"] = torch.tanh(cell(torch.cat([x, state["h"]], 1)))
        loss_of(state["h"]).backward(retain_graph=True)

    a = measure(anti, w["steps"])
    state["h"] = torch.zeros(w["batch"], w["width"], device=DEVICE, dtype=x.dtype)

    def fix(i):
        zero_grad(params, True)
        state["h"] = torch.tanh(cell(torch.cat([x, state["h"].detach()], 1)))
        loss_of(state["h"]).backward()

    f = measure(fix, w["steps"])
    del state["h"]
    return a, f


def train_step(model, params, x, zero_first, set_to_none):
    if zero_first:
        zero_grad(params, set_to_none)
    loss = loss_of(model(x))
    if not zero_first:
        zero_grad(params, set_to_none)
    loss.backward()
    sgd_step(params)


def oom301(w):
    model, params, reset = trained_mlp(w)
    x = tokens_of(w)
    train_step(model, params, x, True, False)  # gradients exist before measuring
    a = measure(lambda i: train_step(model, params, x, True, False), w["steps"], reset)
    f = measure(lambda i: train_step(model, params, x, True, True), w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom302(w):
    model, params, reset = trained_mlp(w)
    x = tokens_of(w)
    train_step(model, params, x, True, True)
    a = measure(lambda i: train_step(model, params, x, False, True), w["steps"], reset)
    train_step(model, params, x, True, True)
    f = measure(lambda i: train_step(model, params, x, True, True), w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom303(w):
    model, params, reset = trained_mlp(w)
    mbs = [x_of(w) for _ in range(w["accum"])]

    def run(scaled):
        def step(i):
            zero_grad(params, True)
            for mb in mbs:
                loss = loss_of(model(mb))
                (loss / len(mbs) if scaled else loss).backward()
            sgd_step(params)
        return step

    a = measure(run(False), w["steps"], reset)
    f = measure(run(True), w["steps"], reset)
    zero_grad(params, True)
    return a, f


def oom501(w):
    model, params, reset = trained_mlp(w)
    x = x_of(w)

    def anti(i):
        train_step(model, params, x, True, True)
        if DEVICE == "cuda":
            torch.cuda.empty_cache()

    return measure(anti, w["steps"], reset), measure(lambda i: train_step(model, params, x, True, True), w["steps"], reset)


def oom504(w):
    n = w["batch"] * w["width"] * 64

    def anti(i):
        torch.zeros(n).to(DEVICE)

    def fix(i):
        torch.zeros(n, device=DEVICE)

    return measure(anti, w["steps"]), measure(fix, w["steps"])


def frozen_half(w, make):
    model, params, reset = trained_mlp(w)
    x = x_of(w)
    half = len(params) // 2
    for p in params[:half]:
        p.requires_grad_(False)

    def run(given):
        # Built in the warm-up step, after the baseline, as the probe builds it.
        opt = []

        def step(i):
            if not opt:
                opt.append(make(given))
            zero_grad(params, True)
            loss_of(model(x)).backward()
            opt[0].step()
        return step

    a = measure(run(params), w["steps"], reset)
    f = measure(run(params[half:]), w["steps"], reset)
    return a, f


def oom305(w):
    # One tensor at a time, as LibTorch's Adam steps (PyTorch's default foreach path batches
    # its temporaries over all parameters, a different peak for the same pattern).
    return frozen_half(w, lambda given: torch.optim.Adam(given, lr=1e-4, foreach=False))


def oom305_adagrad(w):
    return frozen_half(w, lambda given: torch.optim.Adagrad(given, lr=1e-4, foreach=False))


# The rules' probes that train or evaluate the MLP (or the file's stated network), with their twins.
TWINS = (("OOM101", oom101), ("OOM102", oom102), ("OOM103", oom103), ("OOM104", oom104), ("OOM105", oom105),
         ("OOM106", oom106), ("OOM107", oom107), ("OOM201", oom201), ("OOM301", oom301), ("OOM302", oom302),
         ("OOM303", oom303), ("OOM305", oom305), ("OOM305-adagrad", oom305_adagrad), ("OOM501", oom501),
         ("OOM504", oom504))
