"""`oomlint trace`: records a PyTorch training run's GPU memory, step by step.

`oomlint trace -- python train.py ARGS` runs this file as

    python [PYTHON OPTIONS] .../oomlint/trace.py train.py ARGS      (or: ... trace.py -m MODULE ARGS)

with its settings in OOMLINT_TRACE_* environment variables. It turns on the CUDA caching
allocator's history (every allocation and free, with its Python stack), runs the program as
`python` would, marks a step at every optimizer step, and writes what it saw as one JSON file
(docs/trace.md gives its schema) plus PyTorch's own snapshot pickle, which
https://pytorch.org/memory_viz opens.

In a program of your own, `oomlint.trace.step()` marks a step where no optimizer steps (a custom
update, an inference loop). Outside `oomlint trace` it does nothing.
"""
import functools
import os
import sys
import time

FORMAT = "oomlint-trace"
VERSION = 1

_state = None  # the run being traced: a _Run, or None outside `oomlint trace`


def step():
    """Marks the end of a step. Once called, optimizer steps no longer mark steps by themselves."""
    if _state is not None:
        _state.manual = True
        _state.mark()


def _say(message):
    sys.stderr.write(f"oomlint trace: {message}\n")
    sys.stderr.flush()


class _StopTracing(BaseException):
    """Raised from a step marker once --steps steps are done. A BaseException, so that the
    program's own `except Exception:` does not swallow it."""


class _Hooks:
    """The program's own hooks, wrapped so that the trace knows which tensors each call saw.

    A hook that keeps a layer's output (OOM108) allocates nothing: no allocation's stack names it.
    The report ties a kept block to the hooks that saw it in the step that made it.
    """

    def __init__(self, run, library_dirs):
        self.run = run
        self.library_dirs = library_dirs
        self.sites = []  # [filename, first line, last line, name]
        self.site_ids = {}
        self.calls = []  # [step, data_ptr, site]

    def site(self, fn):
        code = getattr(fn, "__code__", None)
        if code is None or not _is_user_file(code.co_filename, self.library_dirs):
            return None
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        sid = self.site_ids.get(key)
        if sid is None:
            lines = [line for _, _, line in code.co_lines() if line] if hasattr(code, "co_lines") else []
            sid = self.site_ids[key] = len(self.sites)
            self.sites.append([code.co_filename, code.co_firstlineno, max(lines + [code.co_firstlineno]), code.co_name])
        return sid

    def wrap(self, fn):
        sid = self.site(fn)
        if sid is None:
            return fn
        run, calls, limit = self.run, self.calls, self.run.max_events

        def hook(*args, **kwargs):
            result = fn(*args, **kwargs)
            if len(calls) < limit:
                step = len(run.steps) + 1
                for t in _cuda_tensors(args, 3):
                    calls.append([step, t.data_ptr(), sid])
            return result

        return functools.update_wrapper(hook, fn)

    def install(self, torch):
        """Wraps every hook the program registers from here on: on modules (each module's, and the
        global ones) and on tensors."""
        import importlib
        for name in ("register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                     "register_full_backward_pre_hook", "register_backward_hook"):
            original = getattr(torch.nn.Module, name, None)
            if original is not None:
                setattr(torch.nn.Module, name, _wrapping_method(original, self))
        module = importlib.import_module("torch.nn.modules.module")
        for name in ("register_module_forward_hook", "register_module_forward_pre_hook",
                     "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
                     "register_module_backward_hook"):
            original = getattr(module, name, None)
            if original is None:
                continue
            patched = _wrapping_function(original, self)
            for holder in (module, torch.nn.modules):
                if getattr(holder, name, None) is original:
                    setattr(holder, name, patched)
        torch.Tensor.register_hook = _wrapping_method(torch.Tensor.register_hook, self)


def _wrapping_method(original, hooks):
    """`original(self, hook, ...)`, registering the wrapped hook instead."""
    @functools.wraps(original)
    def method(self, hook, *args, **kwargs):
        return original(self, hooks.wrap(hook), *args, **kwargs)
    return method


def _wrapping_function(original, hooks):
    """`original(hook, ...)`, registering the wrapped hook instead."""
    @functools.wraps(original)
    def function(hook, *args, **kwargs):
        return original(hooks.wrap(hook), *args, **kwargs)
    return function


def _cuda_tensors(obj, depth):
    """The CUDA tensors in a hook's arguments: the tensors themselves, and those in tuples, lists and
    dicts down to `depth` levels."""
    if getattr(obj, "is_cuda", False) and hasattr(obj, "data_ptr"):
        yield obj
    elif depth > 0 and isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _cuda_tensors(item, depth - 1)
    elif depth > 0 and isinstance(obj, dict):
        for item in obj.values():
            yield from _cuda_tensors(item, depth - 1)


class _Run:
    def __init__(self, torch, device, output, steps_limit, frames, max_events, progress):
        self.torch = torch
        self.device = device
        self.output = output
        self.steps_limit = steps_limit
        self.frames = frames
        self.max_events = max_events
        self.progress = progress
        self.manual = False
        self.first_optimizer = None
        self.steps = []  # [step, allocated, reserved, peak_allocated, time_s]
        self.started = time.perf_counter()
        self.last_report = self.started
        self.baseline = 0  # bytes allocated before the program started (the libraries' workspaces)
        self.hooks = None  # _Hooks, while the history is recorded
        self.history = True

    def on_optimizer_step(self, optimizer, args, kwargs):
        if self.manual:
            return
        # With several optimizers (a GAN's D and G), the first one that steps marks the steps.
        if self.first_optimizer is None:
            self.first_optimizer = id(optimizer)
        if id(optimizer) == self.first_optimizer:
            self.mark()

    def mark(self):
        torch = self.torch
        stats = torch.cuda.memory_stats(self.device)
        now = time.perf_counter()
        self.steps.append([len(self.steps) + 1, stats.get("allocated_bytes.all.current", 0),
                           stats.get("reserved_bytes.all.current", 0), stats.get("allocated_bytes.all.peak", 0),
                           round(now - self.started, 6)])
        torch.cuda.reset_peak_memory_stats(self.device)
        _mark_step(torch, self.device)
        if self.progress and now - self.last_report >= 2.0:
            self.last_report = now
            _say(f"step {len(self.steps)}: allocated {_mib(self.steps[-1][1])}, reserved {_mib(self.steps[-1][2])}")
        if self.steps_limit and len(self.steps) >= self.steps_limit:
            raise _StopTracing()


def _mark_step(torch, device):
    # A one-byte block allocated and freed here is the step's mark in the allocator's history: the
    # history has no other way to say where a step ends. The converter drops it again.
    marker = torch.empty(1, dtype=torch.uint8, device=device)
    del marker


def _warm_up(torch, device):
    """Makes the CUDA libraries' workspaces before the history starts.

    The first matrix product on a thread allocates cuBLAS's workspace (32 MiB on an H100), once per
    thread: in the program's first forward, and on autograd's device thread in its first backward.
    They are the libraries', not the program's, and would read as activations and gradients.
    Returns the bytes allocated before the program starts.
    """
    w = torch.ones(8, 8, device=device, requires_grad=True)
    b = torch.zeros(8, device=device, requires_grad=True)
    torch.nn.functional.linear(w, w, b).sum().backward()
    del w, b
    torch.cuda.synchronize(device)
    return torch.cuda.memory_allocated(device)


def _mib(n):
    return f"{n / 1048576:.1f} MiB"


def _is_user_file(path, library_dirs):
    if not path or path.startswith("<") or path == "??":
        return False
    if path.endswith((".cpp", ".cc", ".cu", ".cuh", ".c", ".h", ".hpp")) or not path.endswith(".py"):
        return False
    if not os.path.isabs(path):
        return True
    real = os.path.realpath(path)
    return not any(real == d or real.startswith(d + os.sep) for d in library_dirs)


def _library_dirs():
    import sysconfig
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.add(os.path.realpath(p))
    for p in sys.path:
        if p and ("site-packages" in p or "dist-packages" in p):
            dirs.add(os.path.realpath(p))
    dirs.add(os.path.realpath(os.path.dirname(os.path.abspath(__file__))))
    return sorted(dirs)


def _convert(run, snapshot, ended, exit_code, argv, oom):
    """The allocator's history as the trace's compact arrays (docs/trace.md)."""
    cwd = os.getcwd()
    library_dirs = _library_dirs()
    here = os.path.realpath(os.path.abspath(__file__))
    files, file_ids, frames, frame_ids, stacks, stack_ids = [], {}, [], {}, [], {}

    def file_id(name):
        fid = file_ids.get(name)
        if fid is None:
            shown = name
            if os.path.isabs(name):
                rel = os.path.relpath(name, cwd)
                if not rel.startswith(".."):
                    shown = rel
            fid = file_ids[name] = len(files)
            files.append([shown, _is_user_file(name, library_dirs)])
        return fid

    def stack_id(entry_frames):
        key = tuple((f.get("filename", ""), f.get("line", 0), f.get("name", "")) for f in entry_frames)
        sid = stack_ids.get(key)
        if sid is None:
            ids = []
            for fk in key:
                fr = frame_ids.get(fk)
                if fr is None:
                    fr = frame_ids[fk] = len(frames)
                    frames.append([file_id(fk[0]), int(fk[1] or 0), fk[2]])
                ids.append(fr)
            sid = stack_ids[key] = len(stacks)
            stacks.append(ids)
        return sid

    traces = snapshot.get("device_traces", [])
    entries = traces[run.device] if run.device < len(traces) else []
    events, marks, skip = [], [], set()
    actions = {"alloc": "a", "free_requested": "f", "segment_alloc": "sa", "segment_map": "sa",
               "segment_free": "sf", "segment_unmap": "sf", "oom": "oom"}
    for e in entries:
        action = e.get("action")
        fr = e.get("frames") or []
        if action == "alloc" and fr and fr[0].get("name") == "_mark_step" and \
                os.path.realpath(fr[0].get("filename", "")) == here:
            marks.append(len(events))
            skip.add(e["addr"])
            continue
        if action in ("free_requested", "free_completed") and e.get("addr") in skip:
            if action == "free_completed":
                skip.discard(e["addr"])
            continue
        code = actions.get(action)
        if code is None:
            continue
        addr = e.get("device_free", 0) if code == "oom" else e.get("addr", 0)
        events.append([code, addr, e.get("size", 0), stack_id(fr)])

    # The history is a ring: when it overflowed, its first marks are gone, and the steps that
    # remain are the last ones.
    dropped = run.history and (len(entries) >= run.max_events or len(marks) < len(run.steps))
    steps = []
    offset = len(run.steps) - len(marks)
    for i, s in enumerate(run.steps):
        at = marks[i - offset] if i >= offset else -1
        steps.append([s[0], s[1], s[2], s[3], at, s[4]])

    hook_sites, hook_calls = [], []
    if run.hooks is not None:
        hook_sites = [[file_id(f), first, last, name] for f, first, last, name in run.hooks.sites]
        hook_calls = run.hooks.calls

    props = run.torch.cuda.get_device_properties(run.device)
    return {
        "format": FORMAT,
        "version": VERSION,
        "run": {
            "argv": argv,
            "cwd": cwd,
            "python": sys.version.split()[0],
            "torch": run.torch.__version__,
            "device": run.device,
            "device_name": props.name,
            "total_memory": props.total_memory,
            "frames": run.frames,
            "steps_limit": run.steps_limit,
            "ended": ended,
            "exit_code": exit_code,
            "history_dropped": dropped,
            "history": run.history,
            "baseline_allocated": run.baseline,
            "seconds": round(time.perf_counter() - run.started, 3),
        },
        "files": files,
        "frames": frames,
        "stacks": stacks,
        "steps": steps,
        "events": events,
        "hooks": hook_sites,
        "hook_calls": hook_calls,
        "oom": oom,
    }


def _oom_site(exc):
    """The innermost frame of the program's own files in an out-of-memory error's traceback."""
    import traceback
    library_dirs = _library_dirs()
    site = None
    for fs in traceback.extract_tb(exc.__traceback__):
        if _is_user_file(os.path.abspath(fs.filename), library_dirs):
            site = fs
    out = {"message": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    if site is not None:
        path = os.path.abspath(site.filename)
        rel = os.path.relpath(path, os.getcwd())
        out.update({"file": path if rel.startswith("..") else rel, "line": site.lineno, "name": site.name})
    return out


def _write(run, ended, exit_code, argv, oom):
    import json
    import pickle
    torch = run.torch
    snapshot = torch.cuda.memory._snapshot() if run.history else {"device_traces": [], "segments": []}
    if run.history:
        torch.cuda.memory._record_memory_history(enabled=None)
    trace = _convert(run, snapshot, ended, exit_code, argv, oom)
    base = run.output[:-5] if run.output.endswith(".json") else run.output
    tmp = run.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(trace, fh, separators=(",", ":"))
    os.replace(tmp, run.output)
    if run.history:
        with open(base + ".pickle", "wb") as fh:
            pickle.dump(snapshot, fh)
    if run.progress:
        _say(f"wrote {run.output} ({len(trace['steps'])} steps, {len(trace['events'])} events) and "
             f"{base}.pickle (for pytorch.org/memory_viz)")


def _settings():
    env = os.environ
    steps = env.get("OOMLINT_TRACE_STEPS", "")
    device = env.get("OOMLINT_TRACE_DEVICE", "") or "0"
    if device.startswith("cuda:"):
        device = device[5:]
    return {
        "output": os.path.abspath(env.get("OOMLINT_TRACE_OUTPUT", "") or "oomlint-trace.json"),
        "steps": int(steps) if steps else 0,
        "device": int(device),
        "frames": env.get("OOMLINT_TRACE_FRAMES", "") or "python",
        "max_events": int(env.get("OOMLINT_TRACE_MAX_EVENTS", "") or 1000000),
        "progress": env.get("OOMLINT_TRACE_PROGRESS", "1") != "0",
        # 0: steps and counters only, no allocation history (bench/trace_overhead.py's baseline)
        "history": env.get("OOMLINT_TRACE_HISTORY", "1") != "0",
    }


def _register_module():
    """Makes `import oomlint.trace` in the traced program return this very module, whichever
    oomlint package (if any) the environment has."""
    import types
    me = sys.modules[__name__]
    try:
        import oomlint as package
    except ImportError:
        package = types.ModuleType("oomlint")
        package.__path__ = [os.path.dirname(os.path.abspath(__file__))]
        sys.modules["oomlint"] = package
    package.trace = me
    sys.modules["oomlint.trace"] = me


def _main(args):
    global _state
    if not args:
        _say("usage: trace.py SCRIPT [ARGS...] | -m MODULE [ARGS...]")
        return 2
    settings = _settings()
    try:
        import torch
    except ImportError as e:
        _say(f"PyTorch cannot be imported by {sys.executable}: {e}")
        return 2
    if not torch.cuda.is_available():
        _say(f"no CUDA device is available to PyTorch {torch.__version__} in {sys.executable} "
             "(trace measures GPU memory; the program was not run)")
        return 2
    if settings["device"] >= torch.cuda.device_count():
        _say(f"--device {settings['device']}: this machine has {torch.cuda.device_count()} CUDA device(s)")
        return 2
    record = getattr(torch.cuda.memory, "_record_memory_history", None)
    import importlib
    hook = getattr(importlib.import_module("torch.optim.optimizer"), "register_optimizer_step_post_hook", None)
    if record is None or hook is None:
        _say(f"PyTorch {torch.__version__} is too old: trace needs 2.1 or newer")
        return 2

    _register_module()
    torch.cuda.set_device(settings["device"])
    run = _Run(torch, settings["device"], settings["output"], settings["steps"], settings["frames"],
               settings["max_events"], settings["progress"])
    _state = run
    run.history = settings["history"]
    run.baseline = _warm_up(torch, settings["device"])
    torch.cuda.reset_peak_memory_stats(settings["device"])
    stacks = "all" if settings["frames"] == "all" else "python"
    if run.history:
        # Stacks of allocations only: the report reads no free's stack, and each one costs.
        record(enabled="all", context="alloc", stacks=stacks, max_entries=settings["max_events"])
    hook(run.on_optimizer_step)
    if run.history:
        run.hooks = _Hooks(run, _library_dirs())
        run.hooks.install(torch)

    import runpy
    program = list(args)
    # torch.OutOfMemoryError from 2.5 on; torch.cuda.OutOfMemoryError before (the same class since).
    out_of_memory = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    ended, exit_code, oom, pending = "exit", 0, None, None
    try:
        if program[0] == "-m":
            if len(program) < 2:
                _say("-m needs a module name")
                return 2
            sys.argv = [program[1]] + program[2:]
            sys.path[0] = os.getcwd()
            runpy.run_module(program[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = program
            sys.path[0] = os.path.dirname(os.path.abspath(program[0]))
            runpy.run_path(program[0], run_name="__main__")
    except _StopTracing:
        ended = "steps"
    except SystemExit as e:
        code = e.code
        exit_code = code if isinstance(code, int) else (0 if code is None else 1)
        pending = e
    except out_of_memory as e:
        ended, exit_code, oom, pending = "oom", 1, _oom_site(e), e
    except KeyboardInterrupt as e:
        ended, exit_code, pending = "interrupted", 130, e
    except BaseException as e:  # the program's own error: recorded, then raised again
        ended, exit_code, pending = "error", 1, e
    finally:
        _state = None
        try:
            _write(run, ended, exit_code, program, oom)
        except Exception as e:  # never hide the program's own outcome behind the trace's
            _say(f"could not write the trace: {e}")
    if pending is not None:
        raise pending
    return 0


if __name__ == "__main__":
    # Run as a file, this module is `__main__`: the traced program's `import oomlint.trace` must
    # find it under its real name (see _register_module).
    sys.modules.setdefault("oomlint_trace_bootstrap", sys.modules[__name__])
    sys.exit(_main(sys.argv[1:]))
