"""placer's predictions against the real training step (make fidelity;
docs/hardware.md, "make fidelity").

For each model (the zoo's resnet50, inception_v3, vit_b_16, bert_base and
gpt2_small by default, or --model NAME|package.module:factory), each batch
size (the model's batch B and B/2, B/4, B/8, those below 1 left out; or
--batches) and precision (fp32, or bf16: torch.autocast(dtype=bfloat16)
around forward and loss; --precision, repeatable):

1. the training step is exported with tools/dev/torchexport/torchexport.py
   --profile (the real step run under torch.profiler: each op's measured
   time, and on CUDA its dispatch time, written into the graph), with the
   execution settings the real step below runs with (torchexport --device,
   --optimizer-impl for-loop, --autocast bf16 for bf16, and --tf32-matmul
   and --tf32-cudnn as this process's torch.backends say: PyTorch's
   defaults, matmuls strict FP32 and cuDNN convolutions TF32, unless
   changed), so that placer costs f32 convolutions on TF32 tensor cores
   where the real step runs them so;
2. placer predicts it three ways, each with `placer eval --hardware H
   --host --json` (one GPU, single placement, FIFO, no fusion; --host
   models the CPU thread that dispatches the kernels):
   - roofline: the graph without its measured times, on the preset H
     (default: the GPU's own, h200 on an H200, h100 on an H100 or a CPU);
   - calibrated: the graph without its measured kernel times but with
     the profile's dispatch times (the host is measured, not fitted:
     calibrate fits kernels only), on a profile fitted by `placer calibrate
     --from-profile` to the measured op times of the *other* models
     (leave-one-out: calibrate takes one graph, so the other models'
     profiled ops are pooled into one graph file first; with a single
     model there is no other, and it is calibrated on its own ops, which
     the row says);
   - measured: the profiled graph itself (placer takes an op's measured
     time where it has one, the roofline's elsewhere);
3. the real step runs here in PyTorch on the same model, batch and
   precision, built as the exporter's profile builds it (one optimizer per
   parameter, foreach=False, which is what the graph records): warm-up,
   then the median wall time of --steps steps, each between
   torch.cuda.synchronize calls; the peak of torch.cuda.max_memory_allocated
   over those steps; and the GPU-busy fraction, the device time of every
   kernel and copy torch.profiler records over --profile-steps more steps
   (intervals merged) per step, over the median step time;
4. prints one row per (model, batch, precision) and the mean absolute
   error of each prediction; --json prints one JSON object per row
   instead; --out FILE writes them all (rows, mean errors, notes) as one
   JSON object, atomically. --table FILE prints the table of such a file.

--device cpu checks the plumbing without a GPU: the step is profiled and
timed on the CPU, the predictions are still placer's for --hardware (a
GPU), so the step-time errors mean nothing; there is no kernel time on a
CPU, and the GPU-busy fields are null. Peak memory does compare: the real
peak is then the most tensor storage live at once in one more step on the
CPU (the parameters, optimizer state, buffers and inputs live at its
start, plus the peak of the allocations and frees torch.profiler records
with profile_memory), and the graph is exported with --device cpu, so it
records what the CPU runs (its attention kernels among them).
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
EXPORTER_DIR = os.path.join(ROOT, "tools", "dev", "torchexport")
EXPORTER = os.path.join(EXPORTER_DIR, "torchexport.py")

ZOO_DEFAULT = ("resnet50", "inception_v3", "vit_b_16", "bert_base", "gpt2_small")
KINDS = ("roofline", "calibrated", "measured")
PRECISIONS = ("fp32", "bf16")
FORMAT = "placer-fidelity"
GIB = float(1 << 30)
# The project's targets (docs/hardware.md): step time within 5% with
# measured costs and 15% with the calibrated roofline, peak memory within
# 10%, GPU-busy share within 0.1.
TARGETS = {"measured_ms_pct": 5.0, "calibrated_ms_pct": 15.0, "peak_pct": 10.0, "busy_abs": 0.1}
CPU_NOTE = ("device cpu: no CUDA kernel time on a CPU: the GPU-busy share is null, and the step times are placer's "
            "for a GPU, not comparable with a CPU step (this checks the plumbing); the real peak is the CPU "
            "allocator's (tensor storage live at once, from torch.profiler's memory events), comparable with "
            "placer's for the graph exported with --device cpu")


class UsageError(Exception):
    """A bad argument: main prints it as one line and exits 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


# ---- pure parts ----

def batch_list(b):
    """The batches of a model whose batch is b: b, b/2, b/4, b/8 (integer
    division), those below 1 left out, each once."""
    out = []
    for d in (1, 2, 4, 8):
        x = b // d
        if x >= 1 and x not in out:
            out.append(x)
    return out


def pct_error(pred, real):
    """(pred - real) / real in percent; None when either is missing, not
    finite, or real is 0."""
    if not _finite(pred) or not _finite(real) or real == 0:
        return None
    return 100.0 * (pred - real) / real


def abs_diff(pred, real):
    """pred - real (the GPU-busy share's error, in share units); None when
    either is missing or not finite."""
    if not _finite(pred) or not _finite(real):
        return None
    return pred - real


def mean_abs(values):
    """(mean of |v| over the finite values, how many); (None, 0) when none."""
    xs = [abs(v) for v in values if _finite(v)]
    if not xs:
        return None, 0
    return sum(xs) / len(xs), len(xs)


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def fill_errors(row):
    """Adds each prediction kind's errors to a row that has the real and
    predicted numbers."""
    for k in KINDS:
        row[k + "_err_pct"] = pct_error(row.get(k + "_ms"), row.get("real_ms"))
        row[k + "_peak_err_pct"] = pct_error(row.get(k + "_peak_gib"), row.get("real_peak_gib"))
        row[k + "_busy_err"] = abs_diff(row.get(k + "_busy"), row.get("real_busy"))
    return row


def summary(rows):
    """The mean absolute error of each prediction kind over the rows: step
    time and peak memory in percent, GPU-busy share in share units, each
    with the number of rows it is over."""
    s = {}
    for k in KINDS:
        for field, key in (("_err_pct", "_ms_pct"), ("_peak_err_pct", "_peak_pct"), ("_busy_err", "_busy_abs")):
            m, n = mean_abs(r.get(k + field) for r in rows)
            s[k + key] = m
            s[k + key + "_rows"] = n
    return s


def merge_intervals(iv):
    """Total length covered by the (start, end) intervals."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def _fmt(x, spec, none="-"):
    return none if not _finite(x) else format(x, spec)


def _err(x):
    return "" if not _finite(x) else "(%+.1f%%)" % x


def format_table(rows, s=None, notes=()):
    """The table of rows (and the mean absolute errors of summary s)."""
    head = ["model", "batch", "prec", "real ms", "roofline ms", "calibrated ms", "measured ms",
            "real GiB", "pred GiB", "real busy", "busy roof/cal/meas"]
    lines = []
    for r in rows:
        busy = "/".join(_fmt(r.get(k + "_busy"), ".2f") for k in KINDS)
        lines.append([
            str(r.get("model")), str(r.get("batch")), str(r.get("precision")),
            _fmt(r.get("real_ms"), ".2f"),
            *["%s %s" % (_fmt(r.get(k + "_ms"), ".2f"), _err(r.get(k + "_err_pct"))) for k in KINDS],
            _fmt(r.get("real_peak_gib"), ".2f"),
            "%s %s" % (_fmt(r.get("measured_peak_gib"), ".2f"), _err(r.get("measured_peak_err_pct"))),
            _fmt(r.get("real_busy"), ".2f"), busy,
        ])
    w = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w[i]) if i < 3 else h.rjust(w[i]) for i, h in enumerate(head))]
    for l in lines:
        out.append("  ".join(c.ljust(w[i]) if i < 3 else c.rjust(w[i]) for i, c in enumerate(l)).rstrip())
    if s is not None:
        def m(key, unit):
            v, n = s.get(key), s.get(key + "_rows", 0)
            return "-" if v is None else ("%.1f%%" % v if unit == "%" else "%.3f" % v) + " (n=%d)" % n
        out.append("")
        out.append("mean absolute error      roofline            calibrated          measured")
        for label, key, unit in (("step time", "_ms_pct", "%"), ("peak memory", "_peak_pct", "%"),
                                 ("GPU-busy share", "_busy_abs", "")):
            out.append("%-24s %-19s %-19s %s" % (label, m("roofline" + key, unit), m("calibrated" + key, unit),
                                                  m("measured" + key, unit)))
        out.append("targets: step time within %g%% with measured costs, %g%% calibrated; peak memory "
                   "within %g%%; GPU-busy share within %g" % (TARGETS["measured_ms_pct"], TARGETS["calibrated_ms_pct"],
                                                               TARGETS["peak_pct"], TARGETS["busy_abs"]))
    for r in rows:
        for n in r.get("notes", []):
            out.append("note: %s b%s: %s" % (r.get("model"), r.get("batch"), n))
    for n in notes:
        out.append("note: " + n)
    return "\n".join(out)


def write_json_atomic(path, obj):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


def _log(msg):
    print("fidelity: " + msg, file=sys.stderr, flush=True)


# ---- placer ----

def run_placer(placer, args):
    """(stdout, None) or (None, one line saying why)."""
    try:
        r = subprocess.run([placer] + list(args), capture_output=True, text=True)
    except OSError as e:
        return None, "%s: %s" % (placer, e)
    if r.returncode != 0:
        msg = (r.stderr.strip() or r.stdout.strip() or "exit status %d" % r.returncode).splitlines()
        return None, "placer %s: %s" % (args[0], msg[-1] if msg else "")
    return r.stdout, None


def predict(placer, graph, hardware, host=True):
    """placer eval's step time (ms), peak memory (GiB) and GPU-busy share
    (busy time over step time) for graph on one GPU of hardware, or an
    error line."""
    # --host=false, not no flag: eval models the host by default for a
    # graph that records an eager PyTorch run, as these exports do.
    args = ["eval", "--graph", graph, "--hardware", hardware, "--json", "--host" if host else "--host=false"]
    out, err = run_placer(placer, args)
    if err:
        return None, err
    try:
        e = json.loads(out)
        step = float(e["step_time_s"])
        dev = e["devices_detail"][0]
        peak = float(dev["peak_memory"])
        busy = float(dev["busy_s"]) / step if step > 0 else None
    except (ValueError, KeyError, IndexError, TypeError) as x:
        return None, "placer eval --json: unexpected output (%s)" % x
    return {"ms": step * 1e3, "peak_gib": peak / GIB, "busy": busy, "oom": bool(e.get("oom"))}, None


def preset_for(gpu_name):
    """placer's preset for a GPU by its name (placer's hw.PresetFor): h200
    for an NVIDIA H200, h100 for an H100, a100, v100, p100; h100 for any
    other (a CPU)."""
    n = (gpu_name or "").upper()
    for p in ("H200", "H100", "A100", "V100", "P100"):
        if p in n:
            return p.lower()
    return "h100"


def strip_times(graph_path, out_path, keep_dispatch=False):
    """Writes the graph without measured times (time_s, and dispatch_s
    unless keep_dispatch), so that placer predicts its kernels from the
    roofline, and its meta file beside."""
    with open(graph_path) as f:
        g = json.load(f)
    for op in g["ops"]:
        op.pop("time_s", None)
        if not keep_dispatch:
            op.pop("dispatch_s", None)
    write_json_atomic(out_path, g)
    meta = _meta(graph_path)
    if os.path.exists(meta):
        with open(meta) as f:
            m = json.load(f)
        m.pop("profile", None)
        write_json_atomic(_meta(out_path), m)


def pool_profiles(graph_paths, out_path, name):
    """One graph file holding the measured ops of several profiled graphs
    (placer calibrate --from-profile reads one graph): each op with a
    measured time, its name prefixed with its graph's, no tensors. Returns
    the number of ops."""
    ops, device = [], None
    for p in graph_paths:
        with open(p) as f:
            g = json.load(f)
        for op in g["ops"]:
            if "time_s" not in op:
                continue
            o = {k: op[k] for k in ("type", "class", "dtype", "shape", "flops", "bytes_read", "bytes_written",
                                    "time_s") if k in op}
            o["name"] = "%s/%s" % (g.get("name", os.path.basename(p)), op["name"])
            ops.append(o)
        try:
            with open(_meta(p)) as f:
                device = device or json.load(f).get("profile", {}).get("device")
        except (OSError, ValueError):
            pass
    write_json_atomic(out_path, {"format": "placer-graph", "version": 1, "name": name, "ops": ops, "tensors": []})
    write_json_atomic(_meta(out_path), {"format": "placer-torch-meta", "version": 1, "graph": name,
                                        "profile": {"device": device}, "ops": []})
    return len(ops)


def _meta(path):
    return path[:-5] + ".meta.json" if path.endswith(".json") else path + ".meta.json"


# ---- the real step ----

def measure_real(model, input_shapes, batch, loss, optimizer, device, warmup, steps, profile_steps, seed=0,
                 precision="fp32"):
    """Runs the training step on device (forward and loss under
    torch.autocast with bfloat16 for precision bf16) and returns a dict: real_ms (the
    median of steps synchronized steps after warmup), real_peak_gib (on
    CUDA torch.cuda.max_memory_allocated over the timed steps, on a CPU
    cpu_peak_bytes of one more step) and on CUDA real_busy (the device
    time torch.profiler records per step, over real_ms)."""
    import gc

    import torch
    from placer_torch import exporter as te, zoo

    dev = torch.device(device)
    cuda = dev.type == "cuda"
    free_cuda()
    build, make_inputs, loss_fn, b = te.model_spec(model, input_shapes, batch, loss, zoo.MODELS)
    torch.manual_seed(seed)
    res = {"real_ms": None, "real_peak_gib": None, "real_busy": None}
    try:
        m = build().to(dev)
        m.train()
        inputs, target = make_inputs()
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        inputs = tuple(t.to(dev) for t in inputs)
        target = te._map_tensors(target, lambda t: t.to(dev))
        opt_cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[optimizer]
        kw = {"lr": 1e-3}
        if optimizer == "sgd":
            kw["momentum"] = 0.9
        import inspect
        if "foreach" in inspect.signature(opt_cls.__init__).parameters:
            kw["foreach"] = False
        named = [(n, p) for n, p in m.named_parameters() if p.requires_grad]
        opts = [opt_cls([p], **kw) for _, p in named]

        step = te.training_step(m, inputs, target, loss_fn, opts, named, dev.type,
                                torch.bfloat16 if precision == "bf16" else None)

        def sync():
            if cuda:
                torch.cuda.synchronize(dev)

        for _ in range(warmup):
            step()
        sync()
        if cuda:
            torch.cuda.reset_peak_memory_stats(dev)
        times = []
        for _ in range(steps):
            sync()
            t0 = time.perf_counter()
            step()
            sync()
            times.append(time.perf_counter() - t0)
        res["real_ms"] = statistics.median(times) * 1e3
        if cuda:
            res["real_peak_gib"] = torch.cuda.max_memory_allocated(dev) / GIB
        else:
            res["real_peak_gib"] = cpu_peak_bytes(step, m, named, opts, inputs, target) / GIB
        if cuda and profile_steps > 0:
            from torch.profiler import ProfilerActivity, profile
            sync()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                t0 = time.perf_counter()
                for _ in range(profile_steps):
                    step()
                sync()
                wall = time.perf_counter() - t0
            busy_s = device_time(prof.events())
            res["real_profiled_ms"] = wall / profile_steps * 1e3
            if busy_s is not None:
                res["real_kernel_ms"] = busy_s / profile_steps * 1e3
                res["real_busy"] = res["real_kernel_ms"] / res["real_ms"]
        res["device_name"] = torch.cuda.get_device_name(dev) if cuda else "cpu"
        if cuda:  # PyTorch's defaults: FP32 matmuls in FP32, convolutions (cuDNN) in TF32
            try:
                res["tf32_matmul"] = bool(torch.backends.cuda.matmul.allow_tf32)
                res["tf32_cudnn"] = bool(torch.backends.cudnn.allow_tf32)
            except Exception:  # pragma: no cover
                pass
    finally:
        m = inputs = target = opts = named = None
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    return res


def cpu_peak_bytes(step, model, named, opts, inputs, target):
    """The most bytes of tensor storage live at once during one more run
    of step on the CPU: what is live when it starts (the parameters, the
    optimizer's state, the buffers, the inputs and targets: what placer's
    graph holds from the start) plus the peak of the allocations and frees
    torch.profiler records with profile_memory (the CPU allocator's every
    allocation, in the order they happen)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    from placer_torch import exporter as te

    def nbytes(t):
        return t.numel() * t.element_size()
    live = sum(nbytes(p) for _, p in named) + sum(nbytes(b) for b in model.buffers())
    for o in opts:
        for st in o.state.values():
            live += sum(nbytes(v) for v in st.values() if isinstance(v, torch.Tensor))
    live += sum(nbytes(t) for t in inputs) + sum(nbytes(t) for t in te._tensors(target))
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = [e for e in prof.profiler.kineto_results.events()
              if e.name() == "[memory]" and e.device_type() == torch.autograd.DeviceType.CPU]
    # torch 2.x stamps events in ns, 1.13 in us; the sort is stable.
    events.sort(key=lambda e: e.start_ns() if hasattr(e, "start_ns") else e.start_us() * 1000)
    cur = peak = 0
    for e in events:
        cur += e.nbytes()
        peak = max(peak, cur)
    return live + peak


def free_cuda():
    """Returns the memory this process's allocator caches to the GPU (after
    a step that failed, for the exporter's profile run in another process
    and the next step's peak)."""
    import gc
    gc.collect()
    if "torch" in sys.modules:
        import torch
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()


def device_time(events):
    """Seconds the GPU was busy in a profile: the union of the device-side
    events' intervals (kernels, copies, memsets); where the profiler gives
    none, the sum of the kernel durations it attached to CPU events."""
    try:
        from torch.autograd import DeviceType
    except ImportError:  # pragma: no cover
        DeviceType = None
    iv = []
    for e in events:
        dt = getattr(e, "device_type", None)
        if DeviceType is None or dt is None or dt == DeviceType.CPU:
            continue
        # record_function ranges drawn on the GPU's timeline span kernels
        # and idle time alike: not work.
        if getattr(e, "is_user_annotation", False) or "annotation" in str(getattr(e, "activity_type", "") or ""):
            continue
        iv.append((e.time_range.start, e.time_range.end))
    if iv:
        return merge_intervals(iv) * 1e-6
    total, found = 0.0, False
    for e in events:
        for k in getattr(e, "kernels", []) or []:
            total += getattr(k, "duration", 0) or 0
            found = True
    return total * 1e-6 if found else None


# ---- the run ----

def export_command(python, model, input_shapes, batch, loss, optimizer, device, profile, profile_steps, out,
                   precision="fp32", tf32=(False, True)):
    """The exporter's command line: the step as measure_real runs it
    (device kind, one optimizer per parameter, autocast for bf16, TF32 as
    tf32 = (matmul, cudnn) says)."""
    cmd = [python, EXPORTER, "--model", model, "--batch", str(batch), "--optimizer", optimizer, "-o", out,
           "--device", "cuda" if device.startswith("cuda") else "cpu", "--optimizer-impl", "for-loop",
           "--tf32-matmul", "on" if tf32[0] else "off", "--tf32-cudnn", "on" if tf32[1] else "off"]
    if precision == "bf16":
        cmd += ["--autocast", "bf16"]
    if ":" in model:
        for s in input_shapes:
            cmd += ["--input-shape", s]
        cmd += ["--loss", loss]
    if profile:
        cmd += ["--profile", "--profile-device", device, "--profile-steps", str(profile_steps)]
    return cmd


def export(python, model, input_shapes, batch, loss, optimizer, device, profile, profile_steps, out,
           precision="fp32", tf32=(False, True)):
    """Runs the exporter; returns None or one line saying why it failed."""
    cmd = export_command(python, model, input_shapes, batch, loss, optimizer, device, profile, profile_steps, out,
                         precision, tf32)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        lines = (r.stderr.strip() or r.stdout.strip()).splitlines()
        return "torchexport: exit status %d: %s" % (r.returncode, lines[-1] if lines else "")
    return None


def parse_args(argv):
    p = _Parser(prog="fidelity.py", description="placer's predicted step time, peak memory and GPU-busy share "
                "against the real PyTorch training step (docs/hardware.md, make fidelity)")
    p.add_argument("--model", action="append", default=[],
                   help="a zoo model or package.module:factory (as torchexport takes it); repeat for several "
                   "(default: %s)" % ", ".join(ZOO_DEFAULT))
    p.add_argument("--input-shape", action="append", default=[], metavar="SHAPE[:DTYPE]",
                   help="for package.module:factory models: one example's input shape, as torchexport takes it")
    p.add_argument("--loss", default="cross-entropy", help="for package.module:factory models: torchexport's --loss")
    p.add_argument("--batch", type=int, default=0,
                   help="the model's batch B (default: the zoo's; 1 for a factory); the batches are B, B/2, B/4, B/8")
    p.add_argument("--batches", default="", help="the batch sizes, comma-separated, instead of B, B/2, B/4, B/8")
    p.add_argument("--precision", action="append", default=[],
                   help="fp32 (default) or bf16 (torch.autocast around forward and loss, exported with torchexport "
                   "--autocast bf16); repeat for both")
    p.add_argument("--optimizer", default="adam", choices=["adam", "adamw", "sgd"])
    p.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default cuda; cpu checks the plumbing only)")
    p.add_argument("--placer", default=None, help="the placer binary (default $PLACER, else bin/placer)")
    p.add_argument("--hardware", default=None,
                   help="placer's hardware preset or profile file (default: the GPU's own preset, h100 for a CPU)")
    p.add_argument("--no-host", action="store_true",
                   help="predict without placer eval --host (no host-side model; the busy share is then 1)")
    p.add_argument("--no-profile", action="store_true",
                   help="export without --profile: no measured nor calibrated prediction")
    p.add_argument("--warmup", type=int, default=5, help="warm-up steps before timing (default 5)")
    p.add_argument("--steps", type=int, default=20, help="timed steps; their median is the step time (default 20)")
    p.add_argument("--profile-steps", type=int, default=5,
                   help="steps under torch.profiler, for the exporter's op times and the busy share (default 5)")
    p.add_argument("--work", default=None, help="where the graphs and profiles go (default out/fidelity)")
    p.add_argument("--python", default=sys.executable, help="the python that runs the exporter (default this one)")
    p.add_argument("--json", action="store_true", help="print one JSON object per row instead of the table")
    p.add_argument("-o", "--out", default=None, help="write rows, mean errors and notes as one JSON object to FILE")
    p.add_argument("--table", metavar="FILE", default=None, help="print the table of a --out FILE and exit")
    p.add_argument("--rescore", metavar="FILE", action="append", default=[],
                   help="predict again the rows of this --out or --json FILE (repeatable) from their profiled graphs in "
                   "--graphs, against their real figures: no GPU needed")
    p.add_argument("--graphs", metavar="DIR", default=None, help="with --rescore: where the rows' profiled graphs are")
    a = p.parse_args(argv)
    if a.table:
        return a
    if a.rescore:
        if not a.graphs:
            raise UsageError("--rescore needs --graphs DIR (the profiled graphs the rows name)")
        a.hardware = a.hardware or "h100"
        a.placer = a.placer or os.environ.get("PLACER") or os.path.join(ROOT, "bin", "placer")
        if not os.access(a.placer, os.X_OK):
            raise UsageError("no placer binary at %s: build it with make build, or name it with --placer" % a.placer)
        return a
    a.precision = a.precision or ["fp32"]
    for pr in a.precision:
        if pr not in PRECISIONS:
            raise UsageError("--precision %s: want %s" % (pr, " or ".join(PRECISIONS)))
    for flag, v, lo in (("--warmup", a.warmup, 0), ("--steps", a.steps, 1), ("--profile-steps", a.profile_steps, 1),
                        ("--batch", a.batch, 0)):
        if v < lo:
            raise UsageError("%s %d: want at least %d" % (flag, v, lo))
    if a.batches:
        try:
            a.batch_list = [int(x) for x in a.batches.split(",") if x.strip()]
        except ValueError:
            raise UsageError("--batches %r: want sizes separated by commas, e.g. 32,16,8" % a.batches)
        if not a.batch_list or any(b < 1 for b in a.batch_list):
            raise UsageError("--batches %r: want positive sizes" % a.batches)
    else:
        a.batch_list = None
    a.models = a.model or list(ZOO_DEFAULT)
    factories = [m for m in a.models if ":" in m]
    if factories and not a.input_shape:
        raise UsageError("--model %s needs --input-shape (one example's shape without the batch, as torchexport "
                         "takes it)" % factories[0])
    if a.input_shape and len(factories) != len(a.models):
        raise UsageError("--input-shape is for package.module:factory models; zoo models have their own inputs")
    a.placer = a.placer or os.environ.get("PLACER") or os.path.join(ROOT, "bin", "placer")
    if not os.access(a.placer, os.X_OK):
        raise UsageError("no placer binary at %s: build it with make build (where Go is) and bring it, or name it "
                         "with --placer or $PLACER" % a.placer)
    return a


def run(a):
    import torch
    from placer_torch import zoo

    device = a.device or "cuda"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError("--device %s: torch %s sees no CUDA device; run on a GPU host, or --device cpu to check the "
                         "plumbing only" % (device, torch.__version__))
    if not (device == "cpu" or re.match(r"^cuda(:\d+)?$", device)):
        raise UsageError("--device %s: want cuda, cuda:N or cpu" % device)
    for m in a.models:
        if ":" not in m and m not in zoo.MODELS:
            raise UsageError("--model %s: not a zoo model (%s) nor package.module:factory" % (
                m, ", ".join(sorted(zoo.MODELS))))
    if not a.hardware:
        a.hardware = preset_for(torch.cuda.get_device_name(torch.device(device)) if device != "cpu" else "")
    work = a.work or os.path.join(ROOT, "out", "fidelity")
    os.makedirs(work, exist_ok=True)
    notes = []
    if device == "cpu":
        notes.append(CPU_NOTE)
    profile = not a.no_profile
    # The TF32 settings the real steps run with (this process's), which the
    # exports record for placer.
    tf32 = (bool(torch.backends.cuda.matmul.allow_tf32), bool(torch.backends.cudnn.allow_tf32))

    rows, graphs = [], {}  # graphs: model -> profiled graph paths
    for model in a.models:
        b0 = a.batch or (zoo.MODELS[model].batch if ":" not in model else 1)
        for batch in a.batch_list or batch_list(b0):
            for prec in a.precision:
                row = {"model": model, "batch": batch, "precision": prec, "device": device, "hardware": a.hardware,
                       "host": not a.no_host, "notes": []}
                rows.append(row)
                g = os.path.join(work, "%s-b%d-%s.json" % (_safe(model), batch, prec))
                row["graph"] = g
                _log("%s batch %d %s: exporting%s" % (model, batch, prec, " and profiling on " + device if profile else ""))
                t0 = time.monotonic()
                err = export(a.python, model, a.input_shape, batch, a.loss, a.optimizer, device, profile,
                             a.profile_steps, g, prec, tf32)
                if err:
                    row["notes"].append(err)
                    row["graph"] = None
                    _log(err)
                else:
                    row["export_s"] = round(time.monotonic() - t0, 2)
                    try:
                        with open(_meta(g)) as f:
                            pm = json.load(f).get("profile")
                        if pm:
                            row["profile_matched"], row["profile_unmatched"] = pm.get("matched"), pm.get("unmatched")
                    except (OSError, ValueError):
                        pass
                    if profile:
                        graphs.setdefault(model, []).append(g)
                _log("%s batch %d %s: running the real step on %s" % (model, batch, prec, device))
                try:
                    row.update(measure_real(model, a.input_shape, batch, a.loss, a.optimizer, device, a.warmup,
                                            a.steps, a.profile_steps, precision=prec))
                except Exception as e:  # an OOM, or the model's own failure: the row says so
                    msg = str(e).strip().splitlines()
                    row["notes"].append("real step: %s: %s" % (type(e).__name__, msg[0] if msg else ""))
                    _log(row["notes"][-1])
                free_cuda()

    predict_rows(rows, graphs, a.placer, a.hardware, not a.no_host, profile, work)
    return rows, summary(rows), notes


def predict_rows(rows, graphs, placer, hardware, host, profile, work):
    """placer's predictions of rows (each with its graph, or None): the
    roofline, calibrated and measured ones (run's step 2), each row's
    errors filled in. graphs: model -> its profiled graph paths, for the
    leave-one-out calibration."""
    calib = {}
    if profile:
        for model in dict.fromkeys(r["model"] for r in rows):
            others = [g for m, gs in graphs.items() if m != model for g in gs]
            on = "others"
            if not others:
                others, on = graphs.get(model, []), "self"
            if not others:
                continue
            pool = os.path.join(work, "%s-loo-pool.json" % _safe(model))
            hw = os.path.join(work, "%s-loo.hw.json" % _safe(model))
            n = pool_profiles(others, pool, "pool-without-" + _safe(model))
            _log("%s: calibrating %s on %d measured ops of %d graphs (%s)" % (
                model, hardware, n, len(others), "leave-one-out" if on == "others" else "its own: no other model"))
            out, err = run_placer(placer, ["calibrate", "--from-profile", pool, "--hardware", hardware,
                                             "--out", hw, "-q"])
            if out:
                with open(hw[:-8] + ".calibrate.txt", "w") as f:
                    f.write(out)
            names = [os.path.splitext(os.path.basename(g))[0] for g in others]
            calib[model] = (hw if not err else None, err, on, names)

    for row in rows:
        g = row.get("graph")
        if g:
            plain = g[:-5] + ".noprofile.json"
            strip_times(g, plain)
            hw_cal, cal_err, on, names = calib.get(row["model"], (None, None, None, []))
            jobs = [("roofline", plain, hardware)]
            if profile:
                kernels = g[:-5] + ".nokerneltimes.json"
                strip_times(g, kernels, keep_dispatch=True)
                jobs.append(("calibrated", kernels, hw_cal))
                jobs.append(("measured", g, hardware))
            if on:
                row["calibrated_on"] = names
                if on == "self":
                    row["notes"].append("calibrated on its own measured ops (no other model to leave it out for)")
            for kind, graph, hw in jobs:
                if hw is None:
                    row["notes"].append("no %s prediction: %s" % (kind, cal_err or "no profile"))
                    continue
                pr, err = predict(placer, graph, hw, host=host)
                if err:
                    row["notes"].append("%s prediction: %s" % (kind, err))
                    continue
                row[kind + "_ms"], row[kind + "_peak_gib"], row[kind + "_busy"] = pr["ms"], pr["peak_gib"], pr["busy"]
                if pr["oom"]:
                    row["notes"].append("%s prediction: out of memory on %s" % (kind, hw))
        for k in KINDS:
            for f in ("_ms", "_peak_gib", "_busy"):
                row.setdefault(k + f, None)
        fill_errors(row)


def rescore(a):
    """--rescore: placer's predictions again, by this placer, for the rows
    of fidelity --out or --json files measured on a GPU (their real
    figures kept), from the profiled graphs they wrote, found by file name
    in --graphs: no GPU and no torch needed. Rows whose graph is not there
    are left out. Returns (rows, summary, notes)."""
    rows, graphs, notes = [], {}, []
    for path in a.rescore:
        try:
            with open(path) as f:
                text = f.read()
            try:
                doc = json.loads(text)
                got = doc["rows"] if isinstance(doc, dict) and "rows" in doc else [doc]
            except ValueError:  # --json output: one object per line
                got = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError("--rescore %s: %s" % (path, e))
        for r in got:
            g = os.path.join(a.graphs, os.path.basename(r.get("graph") or ""))
            if not r.get("graph") or not os.path.exists(g):
                continue
            row = {k: v for k, v in r.items() if not k.startswith(KINDS) and k != "notes"}
            row.update({"graph": g, "hardware": a.hardware, "host": not a.no_host, "notes": []})
            rows.append(row)
            graphs.setdefault(row["model"], []).append(g)
    if not rows:
        raise UsageError("--rescore: no row's graph is in --graphs %s" % a.graphs)
    work = a.work or tempfile.mkdtemp(prefix="fidelity-rescore-")
    os.makedirs(work, exist_ok=True)
    # The derived graphs go to work, not beside the committed ones.
    staged = {}
    for m, gs in graphs.items():
        for g in gs:
            dst = os.path.join(work, os.path.basename(g))
            for src, d in ((g, dst), (_meta(g), _meta(dst))):
                if os.path.exists(src):
                    with open(src) as fi, open(d, "w") as fo:
                        fo.write(fi.read())
            staged[g] = dst
    graphs = {m: [staged[g] for g in gs] for m, gs in graphs.items()}
    for row in rows:
        row["graph"] = staged[row["graph"]]
    predict_rows(rows, graphs, a.placer, a.hardware, not a.no_host, True, work)
    return rows, summary(rows), notes


def main(argv=None):
    try:
        a = parse_args(argv)
        if a.table:
            try:
                with open(a.table) as f:
                    doc = json.load(f)
            except (OSError, ValueError) as e:
                raise UsageError("--table %s: %s" % (a.table, e))
            if doc.get("format") != FORMAT:
                raise UsageError("--table %s: not a %s file" % (a.table, FORMAT))
            print(format_table(doc["rows"], doc.get("mean_abs_error"), doc.get("notes", [])))
            return 0
        start = time.monotonic()
        rows, s, notes = rescore(a) if a.rescore else run(a)
    except UsageError as e:
        print("fidelity: %s" % e, file=sys.stderr)
        return 1
    if a.out:
        write_json_atomic(a.out, {"format": FORMAT, "version": 1, "targets": TARGETS, "rows": rows,
                                  "mean_abs_error": s, "notes": notes, "wall_s": round(time.monotonic() - start, 1)})
    if a.json:
        for r in rows:
            print(json.dumps(r, sort_keys=True))
        for n in notes:
            _log("note: " + n)
    else:
        print(format_table(rows, s, notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
