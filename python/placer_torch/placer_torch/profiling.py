"""Measured op costs: runs the real training step under torch.profiler and
writes each graph op's measured time into the exported graph
(torchexport --profile; docs/import.md, "Profiling"), with the
exporter's own training step (placer_torch.exporter).

Matching. The exporter records the ATen ops that reach the dispatcher
below autograd, in execution order; the profiler records every ATen call
as a tree (aten::linear holds aten::t and aten::addmm). Each profiled step's
events are walked in start order (a pre-order walk of the trees), and each
graph op (Input, Parameter and Buffer ops aside) takes the first event at
or after a cursor whose name is aten::<the op's type> or its in-place or
out-of-place twin (add for add_ and add_ for add; an out= variant has the
plain name); the cursor then
moves past that event's subtree, so that an op's own internals are never
matched to later graph ops. When the graph op's next event lies beyond
the nearest event of one of the next four graph ops, the op is left unmatched
instead (an op the real run does not make, such as the gradient copies a
fake-tensor recording shows where the real AccumulateGrad steals the
gradient): it keeps its roofline cost, and the count of unmatched ops is
printed. Ops matched in some steps take the median of those.

Times. On a CPU run an op's time is its event's CPU time, children
included, and there is no dispatch time (the CPU runs the op as it
dispatches it). On CUDA an op's time is the device time of the kernels its
event (and its children) launched, and its dispatch time is the event's
CPU time, children included (the dispatcher, autograd's bookkeeping and
the launches); the kernels' names go into the meta file, and their count
(kernels, memsets and copies: launch_count) into the graph's launches.
"""

import bisect
import json
import os
import platform
import statistics

import torch

from . import exporter

COST_TABLE_FORMAT = "placer-cost-table"
COST_TABLE_VERSION = 1
# Ops no profiled event stands for: the state, and optimizer.step()'s start.
_STATE_OPS = ("Input", "Parameter", "Buffer", "OptimizerStep")
_MAX_SAMPLES = 64  # times kept per cost-table entry
_LOOKAHEAD = 4  # graph ops looked ahead of a match (see match)


def device_name(device):
    """The name measurements on device are filed under: the GPU's name, or
    the CPU's model and thread count."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "cpu: %s, %d threads" % (model, torch.get_num_threads())


def _depth(e):
    d = 0
    while e.cpu_parent is not None:
        e = e.cpu_parent
        d += 1
    return d


def _is_under(e, root):
    while e is not None:
        if e is root:
            return True
        e = e.cpu_parent
    return False


def _kernels(e):
    """(device seconds, kernel names) of the kernels e and its children launched."""
    names, total = [], 0.0
    stack = [e]
    while stack:
        x = stack.pop()
        for k in getattr(x, "kernels", []) or []:
            names.append(k.name)
            total += getattr(k, "duration", 0) or 0
        stack.extend(x.cpu_children)
    return total * 1e-6, names


def launch_count(counts):
    """An op's launches on the GPU's stream (the graph's launches: placer's
    host model issues each at its measured cost) from the kernels, memsets
    and copies its event launched in each profiled step: their median,
    rounded half up (a cuDNN convolution picks its algorithm once, then
    launches the same kernels every step)."""
    return int(statistics.median(counts) + 0.5)


def _step_events(events, marker):
    """The events inside the record_function marker, in pre-order."""
    inside = [e for e in events if e is not marker and e.time_range.start >= marker.time_range.start
              and e.time_range.end <= marker.time_range.end and e.name.startswith("aten::")]
    inside.sort(key=lambda e: (e.time_range.start, _depth(e)))
    return inside


def _base(t):
    """An ATen op's name without its in-place mark: add_ -> add,
    _foreach_mul_ -> _foreach_mul (and __iadd__ -> __iadd__)."""
    return t[:-1] if t.endswith("_") and not t.endswith("__") else t


def _names(t):
    """The profiler's names an op of type t may have: itself, its in-place
    or out-of-place twin (add, add_: the recording and the real run may
    take either, as autograd's gradient accumulation does; an out= variant
    has the plain name), and the CPU kernels' _for_cpu spelling."""
    b = _base(t)
    return tuple("aten::" + n + k for n in (t, b + "_" if b == t else b) for k in ("", "_for_cpu"))


def match(types, events):
    """Graph op index -> event for one step. types: each graph op's type
    (None for ops that take no time); events: the step's ATen events in
    pre-order."""
    subtree_end = [0] * len(events)
    for i in range(len(events) - 1, -1, -1):
        j = i + 1
        while j < len(events) and _is_under(events[j], events[i]):
            j = subtree_end[j]
        subtree_end[i] = j

    where = {}  # event name -> its positions, ascending
    for p, e in enumerate(events):
        where.setdefault(e.name, []).append(p)

    def nearest(t, cur):
        best = None
        for name in _names(t):
            ps = where.get(name, ())
            k = bisect.bisect_left(ps, cur)
            if k < len(ps) and (best is None or ps[k] < best):
                best = ps[k]
        return best

    order = [i for i, t in enumerate(types) if t is not None]
    out, cur = {}, 0
    for k, i in enumerate(order):
        p = nearest(types[i], cur)
        if p is None:
            continue
        # An op whose event lies beyond one of the next few ops' is one the
        # real run does not make (or makes elsewhere): leave it unmatched.
        ahead = [nearest(types[j], cur) for j in order[k + 1:k + 1 + _LOOKAHEAD] if _base(types[j]) != _base(types[i])]
        if any(q is not None and q < p for q in ahead):
            continue
        out[i] = events[p]
        cur = subtree_end[p]
    return out


def profile_step(graph, meta, build_model, make_inputs, loss_fn, optimizer_cls, optimizer_kwargs, device="cpu",
                 steps=5, warmup=3, seed=0, log=None, execution=None):
    """Runs the training step warmup + steps times on device (the last
    steps under torch.profiler) and writes measured times into graph's ops
    (time_s; dispatch_s on CUDA) and kernel names into meta's ops. Returns
    (matched, unmatched, device name, [(op, [seconds])]). execution (the
    exporter's execution_settings) runs the step as the graph records it:
    the optimizer's implementation, torch.autocast on device around
    forward and loss, and the TF32 settings (restored after)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    device = torch.device(device)
    step, sync = _real_step(build_model, make_inputs, loss_fn, optimizer_cls, optimizer_kwargs, device, seed,
                            execution)
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    if execution is not None:
        torch.backends.cuda.matmul.allow_tf32 = bool(execution.get("tf32_matmul"))
        torch.backends.cudnn.allow_tf32 = bool(execution.get("tf32_cudnn", True))
    try:
        for _ in range(warmup):
            step()
        sync()
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        with profile(activities=acts) as prof:
            for k in range(steps):
                with record_function("placer_step_%d" % k):
                    step()
                sync()
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    events = list(prof.events())
    markers = sorted((e for e in events if e.name.startswith("placer_step_")), key=lambda e: e.time_range.start)
    ops = graph["ops"]
    types = [None if o["type"] in _STATE_OPS else o["type"] for o in ops]
    times = [[] for _ in ops]
    disp = [[] for _ in ops]
    launches = [[] for _ in ops]
    kernels = [None] * len(ops)
    for m in markers:
        for i, (t, d, names) in _times(types, events, m, device).items():
            times[i].append(t)
            if d is not None:
                disp[i].append(d)
            if names is not None:
                launches[i].append(len(names))
                kernels[i] = names
    matched = 0
    for i, o in enumerate(ops):
        if not times[i]:
            continue
        matched += 1
        o["time_s"] = statistics.median(times[i])
        if disp[i]:
            o["dispatch_s"] = statistics.median(disp[i])
        if launches[i]:
            o["launches"] = launch_count(launches[i])
        if kernels[i] is not None and meta is not None:
            meta["ops"][i]["kernels"] = kernels[i]
    unmatched = sum(1 for t in types if t is not None) - matched
    name = device_name(device)
    if meta is not None:
        meta["profile"] = {"device": name, "steps": steps, "warmup": warmup, "matched": matched,
                           "unmatched": unmatched, "torch": torch.__version__}
    return matched, unmatched, name, [(ops[i], times[i]) for i in range(len(ops)) if times[i]]


def _times(types, events, marker, device):
    """Graph op index -> (seconds, dispatch seconds or None, kernel names)
    of one profiled step (the events inside marker): on CUDA the device
    time of the kernels the op's event launched and its CPU time as the
    dispatch, on a CPU its CPU time and no dispatch."""
    out = {}
    for i, e in match(types, _step_events(events, marker)).items():
        if device.type == "cuda":
            t, names = _kernels(e)
            out[i] = (t, e.cpu_time_total * 1e-6, names)
        else:
            out[i] = (e.cpu_time_total * 1e-6, None, None)
    return out


def step_times(graph, build_model, make_inputs, loss_fn, optimizer_cls, optimizer_kwargs, device="cpu", steps=5,
               warmup=3, seed=0, execution=None):
    """Yields, for each of steps profiled steps (after warmup unprofiled
    ones), {graph op index: (seconds, dispatch seconds or None)}: each
    step under its own torch.profiler, so that a caller stopped after k
    steps keeps k steps' times (placer profile --model). Times as
    profile_step's."""
    from torch.profiler import ProfilerActivity, profile, record_function

    device = torch.device(device)
    step, sync = _real_step(build_model, make_inputs, loss_fn, optimizer_cls, optimizer_kwargs, device, seed,
                            execution)
    types = [None if o["type"] in _STATE_OPS else o["type"] for o in graph["ops"]]
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    if execution is not None:
        torch.backends.cuda.matmul.allow_tf32 = bool(execution.get("tf32_matmul"))
        torch.backends.cudnn.allow_tf32 = bool(execution.get("tf32_cudnn", True))
    try:
        for _ in range(warmup):
            step()
        sync()
        for k in range(steps):
            with profile(activities=acts) as prof:
                with record_function("placer_step_%d" % k):
                    step()
                sync()
            events = list(prof.events())
            marker = next(e for e in events if e.name == "placer_step_%d" % k)
            yield {i: (t, d) for i, (t, d, _) in _times(types, events, marker, device).items()}
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32


def _real_step(build_model, make_inputs, loss_fn, optimizer_cls, optimizer_kwargs, device, seed, execution):
    """(step, sync): the model built on device and its training step as a
    closure (exporter.training_step, with execution's optimizer and
    autocast), and a function that waits for the device."""
    torch.manual_seed(seed)
    model = build_model().to(device)
    model.train()
    inputs, target = make_inputs()
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = tuple(t.to(device) for t in inputs)
    target = exporter._map_tensors(target, lambda t: t.to(device))
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    impl = (execution or {}).get("optimizer_impl") or "for-loop"
    opts = exporter._distinct(exporter.make_optimizers(named, optimizer_cls, optimizer_kwargs, impl))
    ac = exporter.AUTOCAST[(execution or {}).get("autocast") or "off"]

    step = exporter.training_step(model, inputs, target, loss_fn, opts, named, device.type, ac)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return step, sync


def cost_key(op, device):
    """The cost table's key of a graph op: what the graph format holds of
    it (type, dtype, first output's shape, FLOPs, bytes), not its inputs'
    shapes, and the device."""
    return {"device": device, "type": op["type"], "dtype": op.get("dtype", "f32"), "shape": list(op.get("shape", [])),
            "flops": op.get("flops", 0), "bytes_read": op.get("bytes_read", 0),
            "bytes_written": op.get("bytes_written", 0)}


def _key_text(k):
    return json.dumps(k, sort_keys=True)


def merge_cost_table(path, device, measured):
    """Merges measured ([(graph op, [seconds])]) into the cost table at
    path (created when absent): per key, the times of every run (the last
    _MAX_SAMPLES), their median and count. Returns the number of entries."""
    table = {"format": COST_TABLE_FORMAT, "version": COST_TABLE_VERSION, "entries": []}
    if os.path.exists(path):
        with open(path) as f:
            table = json.load(f)
        if table.get("format") != COST_TABLE_FORMAT:
            raise ValueError("%s: not a placer cost table (format %r)" % (path, table.get("format")))
    byk = {_key_text(e["key"]): e for e in table["entries"]}
    for op, ts in measured:
        k = cost_key(op, device)
        e = byk.setdefault(_key_text(k), {"key": k, "times_s": []})
        e["times_s"] = (e["times_s"] + list(ts))[-_MAX_SAMPLES:]
        e["time_s"] = statistics.median(e["times_s"])
        e["samples"] = len(e["times_s"])
    table["entries"] = [byk[k] for k in sorted(byk)]
    exporter._write_json(path, table, indent=1)
    return len(table["entries"])
