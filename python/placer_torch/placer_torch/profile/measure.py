"""placer profile's measurements (placer profile runs this; its Go side
writes the profile file, docs/profile.md).

Reads a request (JSON, argv[1]): the model's shape, the shard shapes to
time, the collectives' groups and sizes, the processes, the threads a
process and the budget in seconds. Launches the processes (gloo on a
CPU, NCCL on GPUs), times on the device at hand and prints one JSON
object a line on stdout as each figure is measured (the Go side keeps
every line it got, so an interrupted run keeps what it measured);
progress on stderr.

On a CPU every process times the same shape at once (the processes share
the cores, as in the runs the profile predicts); rank 0 reports. On GPUs
rank 0 times the layers while the others wait.
"""

import json
import os
import signal
import statistics
import sys
import time
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.checkpoint import checkpoint

from .. import collectives
from ..measuring import cpu_name, driver, emit, say
from ..runner import free_port
from . import fp8, frameworks, layers

# torch 2.14 marks all_gather_into_tensor and reduce_scatter_tensor, which
# layers.py's sequence-parallel gathers and the collectives' timings call,
# deprecated with a FutureWarning in every process at their first call
# (torch/distributed/c10d_logger.py); eight lines of it in the progress
# of a 4-process profile said nothing to its user. These two alone are
# dropped: every other warning still shows. Set at import, so that the
# processes mp.spawn starts (which import this module) drop them too.
warnings.filterwarnings("ignore", category=FutureWarning,
                        message=r"`torch\.distributed\.(all_gather_into_tensor|reduce_scatter_tensor)` is deprecated")


class Timer:
    """Seconds between two points on the device (CUDA events on a GPU)."""

    def __init__(self, cuda):
        self.cuda = cuda

    def start(self):
        if self.cuda:
            self.a, self.b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.a.record()
        else:
            self.t0 = time.perf_counter()

    def stop(self):
        if self.cuda:
            self.b.record()
            self.b.synchronize()
            return self.a.elapsed_time(self.b) / 1e3
        return time.perf_counter() - self.t0


EVERYONE = [False]


def time_part(make, shape, req, dev, timer, kind, group=None, ep_group=None, etp_group=None):
    """Forward and backward medians (and the peak memory) of one part
    (a block, the embedding, the loss) at one shard shape: its kernels
    alone, or with group (this process's tensor-parallel group, every
    process in one), ep_group (its expert-parallel group) or etp_group
    (its expert-tensor group) its collectives in place, every process
    timing."""
    c = req["model"]
    if shape.get("block") == "dense":
        c = layers.dense_config(c)  # a dense layer before the experts
    T, sp, mbs, seq = shape["tp"], shape.get("sp", False), shape["mbs"], shape["seq"]
    full = shape.get("recompute", "none") == "full"
    selective = shape.get("recompute", "none") == "selective"
    together = group is not None or ep_group is not None or etp_group is not None or (dist.is_initialized() and EVERYONE[0])
    torch.manual_seed(0)
    shard = layers.Shard(T, dist.get_rank() % T if group is not None else 0, group, sp)
    # A layer is timed as a stack of as many as the model has, up to 4,
    # each with its own weights, the input passed from one to the next:
    # a step's layers miss the caches that one layer timed over and over
    # on the same input hits (the tiny Llama on 2 CPU processes: a
    # layer's forward 3.29 ms alone in a loop, 3.67 ms inside the step).
    reps = max(1, min(4, c.get("layers", 1))) if kind == "layer" else 1
    if kind == "layer":
        degrees = (shape.get("ep", 1), ep_group, shape.get("etp", 1), etp_group)
        # Each layer at its place in the model (layers.window_of: which
        # layers attend through the sliding window).
        part = torch.nn.ModuleList([make(c, shard, *degrees, layer=i) for i in range(reps)]).to(dev)
        for layer in part:
            layer.recompute_core = selective
    else:
        part = make(c, shard).to(dev)
    cos, sin = layers.rotary_for(c, seq)
    cos, sin = cos.to(dev), sin.to(dev)
    rows = seq // T if sp else seq
    ids = torch.randint(0, c["vocab"], (mbs, seq), device=dev)
    if kind == "layer":
        # A framework's layer takes [batch, seq, hidden] (frameworks.py),
        # layers.Block [seq, batch, hidden].
        dims = (mbs, rows) if getattr(part[0], "batch_first", False) else (rows, mbs)
        x = torch.randn(*dims, c["hidden"], device=dev, requires_grad=True)

        def fwd():
            y = x
            for layer in part:
                y = checkpoint(layer, y, cos, sin, use_reentrant=False) if full else layer(y, cos, sin)
            return y
    elif kind == "embedding":
        def fwd():
            return part(ids)
    else:
        x = torch.randn(rows, mbs, c["hidden"], device=dev, requires_grad=True)

        def fwd():
            return part(x, ids)
    ctx = torch.autocast("cuda", dtype=torch.bfloat16) if req["dtype"] == "bf16" else torch.autocast("cpu", enabled=False)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()

    def once(back):
        with ctx:
            y = fwd()
        if back:
            y.backward(torch.ones_like(y) if y.dim() == 0 else torch.full_like(y, 1e-3))
            # The weights' gradients kept, each backward adding to them
            # as a step's micro-batches do (runs.py zeroes them once a
            # step, not to None): a tiny MoE layer's forward and backward
            # took 16.0 to 16.6 ms with them dropped after each, 16.8 to
            # 17.1 ms adding (a dense one 12.5 to 12.7, 13.0). The
            # input's is dropped: in a step it is an activation's.
            if x_grad is not None:
                x_grad.grad = None

    x_grad = x if kind != "embedding" else None
    for _ in range(req["warmup"]):
        once(True)
    # Loops of k runs, timed whole (a process sharing cores is
    # descheduled for whole time slices: one run's time is noise), k
    # chosen so that a loop takes about loop_s; the forward alone in one
    # loop, forward and backward in the next, the backward their
    # difference; the median over the repeats.
    timer.start()
    once(True)
    one = max(timer.stop(), 1e-6)
    k = max(1, min(1000, int(req.get("loop_s", 0.05) / one)))
    if together:
        # The same k on every process (the largest any asks for), so that
        # all of them are busy for the whole of every timed loop: with
        # each its own k, one that finished early left its cores to the
        # others, and a layer's time varied by 30% from one profile to
        # the next.
        kt = torch.tensor([k], device=dev)
        dist.all_reduce(kt, op=dist.ReduceOp.MAX)
        k = int(kt.item())
    fs, fbs = [], []
    for _ in range(req["repeats"]):
        for back, out in ((False, fs), (True, fbs)):
            if together:
                dist.barrier()
            timer.start()
            for _ in range(k):
                once(back)
            out.append(timer.stop() / k)
    f, fb = statistics.median(fs) / reps, statistics.median(fbs) / reps
    return f, max(fb - f, 1e-9), (torch.cuda.max_memory_allocated() if dev.type == "cuda" else 0)


def burst_for(dev, hidden, seconds=1e-3):
    """A compute burst of about `seconds` (matmuls at the model's hidden
    size): what a step runs between two collectives."""
    a = torch.randn(256, hidden, device=dev)
    b = torch.randn(hidden, hidden, device=dev)
    t0 = time.perf_counter()
    for _ in range(5):
        a @ b
    one = max((time.perf_counter() - t0) / 5, 1e-7)
    n = max(1, int(seconds / one))

    def burst():
        for _ in range(n):
            a @ b
    return burst


def time_collective(op, group, nbytes, ranks, req, dev, timer, wire=None):
    """One collective's time as a step issues it. On a GPU: back to back
    (the kernels queue on the stream). On a CPU: through the runner's own
    functions (placer_torch.collectives as layers.py calls them: the activations cast from the compute's FP32 to
    the wire's BF16 and back, as the step does) and each after a burst of
    compute, the time of (burst + collective) less the burst's own: gloo's
    threads sleep while the cores compute, and a step pays their waking
    (2 processes, a 128 KiB all-reduce: 0.40 ms back to back, 1.25 ms
    after a millisecond of matmuls; runs.py's tensor-parallel step spent
    1.65 ms an all-reduce, docs/profile.md). wire "fp32" (a CPU's
    all-reduce, all-gather and reduce-scatter): the FP32 gradients' and
    weights' own collective, FP32 on the wire and nothing cast (DDP's
    buckets, runs.py's flat reduction, FSDP2's FP32 weights and
    gradients on a CPU): 16 MiB all-reduced in 20 ms where the
    activations' path (cast, BF16, cast back) took 46 to 51 ms."""
    me = dist.get_rank()
    n = len(ranks)
    dt = torch.bfloat16
    g = group
    cpu = dev.type == "cpu"
    src = torch.float32 if cpu else dt  # the compute's dtype; the wire is BF16
    if wire == "fp32":
        el = max(n, int(nbytes) // 4 // n * n)
        x = torch.ones(el, dtype=torch.float32, device=dev)
        big = torch.empty(el, dtype=torch.float32, device=dev)
        small = torch.empty(el // n, dtype=torch.float32, device=dev)
        run = {"all_reduce": lambda: dist.all_reduce(x, group=g),  # noqa: E731
               "all_gather": lambda: dist.all_gather_into_tensor(big, x[: el // n], group=g),
               "reduce_scatter": lambda: dist.reduce_scatter_tensor(small, x, group=g)}[op]
        return time_loops(run, g, req, dev, timer), el * 4
    el = max(n, int(nbytes) // 2 // n * n)
    c = layers.comm(g)  # as the layers call it
    if op == "all_reduce":
        x = torch.ones(el, dtype=src, device=dev)
        run = (lambda: collectives.all_reduce(x, c)) if cpu else (lambda: dist.all_reduce(x, group=g))  # noqa: E731
    elif op == "all_gather":
        if cpu:
            x = torch.ones(el // n, 1, dtype=src, device=dev)
            run = lambda: collectives.all_gather(x, c)  # noqa: E731
        else:
            x, out = torch.ones(el // n, dtype=dt, device=dev), torch.empty(el, dtype=dt, device=dev)
            run = lambda: dist.all_gather_into_tensor(out, x, group=g)  # noqa: E731
    elif op == "reduce_scatter":
        if cpu:
            x = torch.ones(el, 1, dtype=src, device=dev)
            run = lambda: collectives.reduce_scatter(x, c)  # noqa: E731
        else:
            x, out = torch.ones(el, dtype=dt, device=dev), torch.empty(el // n, dtype=dt, device=dev)
            run = lambda: dist.reduce_scatter_tensor(out, x, group=g)  # noqa: E731
    elif op == "all_to_all":
        x, out = torch.ones(el, dtype=dt, device=dev), torch.empty(el, dtype=dt, device=dev)
        run = lambda: dist.all_to_all_single(out, x, group=g)  # noqa: E731
    else:  # send_recv: ranks[0] to ranks[1], as runs.py's pipeline: cast, isend, recv, cast back
        x = torch.ones(el, dtype=src, device=dev)

        def run():
            if me == ranks[0]:
                y = x.to(dt)
                dist.isend(y, ranks[1]).wait()
            elif me == ranks[1]:
                w = torch.empty(el, dtype=dt, device=dev)
                dist.recv(w, ranks[0])
                w.to(src)
    return time_loops(run, g, req, dev, timer), el * 2


def time_loops(run, g, req, dev, timer):
    """The median time of run, a collective over group g (on a CPU after
    a burst of compute, less the burst's own; time_collective)."""
    cpu = dev.type == "cpu"
    burst = burst_for(dev, req["model"]["hidden"]) if cpu else None
    for _ in range(req["warmup"]):
        run()
    dist.barrier(group=g)
    t0 = time.perf_counter()
    run()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    # Loops of k runs timed whole, as the layers' (k the same on every
    # rank: the largest any rank asks for).
    one = max(time.perf_counter() - t0, 1e-6) + (1e-3 if cpu else 0)
    k = torch.tensor([max(1, min(200, int(req.get("loop_s", 0.05) / one)))], device=dev)
    dist.all_reduce(k, op=dist.ReduceOp.MAX, group=g)
    k = int(k.item())

    def loop(comm, comp):
        dist.barrier(group=g)
        timer.start()
        for _ in range(k):
            if comp:
                burst()
            if comm:
                run()
        return timer.stop() / k
    ts = []
    for _ in range(req["repeats"]):
        if cpu:
            ts.append(loop(True, True) - loop(False, True))
        else:
            ts.append(loop(True, False))
    return max(statistics.median(ts), 1e-7)


def time_optimizer(req, dev, timer):
    n = req["optimizer_params"]
    p = torch.nn.Parameter(torch.zeros(n, device=dev))
    p.grad = torch.ones(n, device=dev)
    opt = torch.optim.AdamW([p], lr=1e-4, foreach=True)
    ts = []
    for i in range(req["warmup"] + req["repeats"]):
        timer.start()
        opt.step()
        opt.zero_grad(set_to_none=False)
        t = timer.stop()
        if i >= req["warmup"]:
            ts.append(t)
    return statistics.median(ts), n


def time_host(dev):
    """The host's issue of one op recorded for autograd (a tiny multiply,
    many in a row, host time over ops) and of one backward node."""
    x = torch.ones(8, device=dev, requires_grad=True)
    n = 2000
    y = x
    t0 = time.perf_counter()
    for _ in range(n):
        y = y * 1.0
    issue = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    y.sum().backward()
    back = (time.perf_counter() - t0) / n
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return issue, back


def caching_malloc():
    """glibc's malloc as a caching allocator, as CUDA's is: freed memory
    kept for the next allocation (no trim) and every block up to the
    threshold's 32 MiB limit from the heap (no mmap and page faults per
    activation). A CPU step keeps its micro-batches' activations and the
    profile's loops free theirs at once; without it each kept
    activation was fresh pages, and a layer's forward in a step ran 9%
    to 17% slower than the profile timed it. Both the profile and
    runs.py call it; elsewhere than glibc it does nothing."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD (its 64-bit maximum)
    except (OSError, AttributeError):
        pass


def worker(rank, world, port, req):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills us
    cuda = req["device"] == "cuda"
    if cuda:
        torch.cuda.set_device(rank)
        dev = torch.device("cuda", rank)
    else:
        dev = torch.device("cpu")
        torch.set_num_threads(req["threads"])
        caching_malloc()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
    timer = Timer(cuda)
    lead = rank == 0
    # The budget counts from when placer started (its deadline, seconds
    # since the epoch), not from here: 4 processes took 20 s to start and
    # import torch on 2 cores.
    deadline = req.get("deadline") or time.time() + req["budget_s"]
    makers = fp8_makers(req, dev)
    parts = {"layer": layers.Block, "embedding": layers.Embedding, "loss": layers.Loss}
    if req.get("framework"):
        # The framework's own layer in place of layers.Block (main has
        # refused one that does not import); the embedding and the loss
        # stay layers.py's.
        parts["layer"] = frameworks.plan(req["framework"], req["model"])[1]
    everyone = not cuda  # on a CPU every process times at once
    EVERYONE[0] = everyone and world > 1
    if lead:
        issue, back = time_host(dev)
        emit({"kind": "host", "issue_s": issue, "issue_backward_s": back})
    # Tensor-parallel groups for the in-place timings: for each degree T
    # the profile times that divides the processes, the world split into
    # groups of T consecutive ranks (every process creates every group,
    # in one order); the process's own.
    tp_groups, xp_groups = {}, {}
    if world > 1:
        for key, groups in (("tp", tp_groups),):
            for T in sorted({sh.get(key, 1) for k in ("layer", "embedding", "loss") for sh in req.get(k + "s") or []}):
                if T < 2 or T > world or world % T:
                    continue
                for first in range(0, world, T):
                    g = dist.new_group(list(range(first, first + T)))
                    if first <= rank < first + T:
                        groups[T] = g
        xp_groups = expert_groups(world, rank, req.get("layers") or [])
    # What every plan needs first: the embedding, the loss, the
    # optimizer's step and the collectives; then the layer shapes in the
    # order the request lists them (each degree at the first micro-batch,
    # whole sequence and no recomputation first: the shapes plans use
    # most), so that a budget cut leaves out the shapes plans need least.
    # With the layers first, 4 processes on 2 cores spent a 5-minute
    # budget on 50 of 90 layer shapes and measured no embedding, loss or
    # collective.
    ends = (lead, everyone, world, tp_groups, xp_groups, makers)
    more = time_kinds(("embedding", "loss"), req, dev, timer, deadline, parts, *ends)
    if req.get("optimizer_params"):
        # One step, timed whatever the budget (a few milliseconds).
        if lead or everyone:
            t, n = time_optimizer(req, dev, timer)
            if lead:
                emit({"kind": "optimizer", "name": "adamw", "params": n, "seconds": t})
                say("optimizer: AdamW over %d parameters %.3f ms" % (n, t * 1e3))
        if world > 1:
            dist.barrier()
    if more and (world == 1 or time_collectives(req, dev, timer, deadline, lead, world, rank, cuda)):
        time_kinds(("layer",), req, dev, timer, deadline, parts, *ends)
    if world > 1:
        dist.destroy_process_group()


def spent(deadline, world):
    """Whether the budget is spent (rank 0's clock decides for every
    process, so that all of them stop at the same shape)."""
    stop = [time.time() > deadline]
    if world > 1:
        dist.broadcast_object_list(stop, src=0)
    return stop[0]


def time_kinds(kinds, req, dev, timer, deadline, parts, lead, everyone, world, tp_groups, xp_groups, makers):
    """Times each shape of each kind of kinds (layer, embedding, loss)
    the request lists, until the deadline: False where it passed."""
    for kind in kinds:
        shapes = req.get(kind + "s") or []
        for i, shape in enumerate(shapes):
            if spent(deadline, world):
                if lead:
                    say("budget spent: %s shapes from %d of %d on left out" % (kind, i + 1, len(shapes)))
                return False
            why = frameworks.refuses(req.get("framework"), shape) if kind == "layer" else None
            if why:
                if lead:
                    say("%s %d/%d %s: left out: %s" % (kind, i + 1, len(shapes), shape, why))
                continue
            g = tp_groups.get(shape["tp"])
            xd = (shape.get("etp", 1), shape.get("ep", 1)) if kind == "layer" else (1, 1)
            eg, xg = xp_groups.get(xd, (None, None))
            # In place where every degree above 1 of the shape has its
            # groups among the processes (tensor, expert-tensor x expert).
            tp_ok, x_ok = shape["tp"] == 1 or g is not None, xd == (1, 1) or xd in xp_groups
            groups = (g, eg, xg) if (shape["tp"] > 1 or xd != (1, 1)) and tp_ok and x_ok else None
            timed = (lead, everyone, world, groups)
            time_shape(parts[kind], kind, shape, "%s %d/%d %s" % (kind, i + 1, len(shapes), shape), req, dev, timer, *timed)
            if kind == "layer":
                # Under each FP8 recipe, timed as its line without one.
                for recipe, make in makers:
                    time_shape(make, kind, shape, "layer %s fp8=%s" % (shape, recipe), req, dev, timer, *timed,
                               extra={"fp8": recipe})
    return True


def time_collectives(req, dev, timer, deadline, lead, world, rank, cuda):
    """Times each collective of the request over each group size that
    divides the processes, until the deadline: False where it passed."""
    for group_size in req["groups"]:
        if group_size > world or world % group_size:
            continue
        # Every group of this size at once (the world split into
        # world/size of them), as a plan's groups communicate
        # together; rank 0's group reports.
        mine, ranks = None, None
        for first in range(0, world, group_size):
            rs = list(range(first, first + group_size))
            g = dist.new_group(rs)
            if rank in rs:
                mine, ranks = g, rs
        for op in req["ops"]:
            if op == "send_recv" and group_size != 2:
                continue
            for nbytes in req["sizes"]:
                if spent(deadline, world):
                    if lead:
                        say("budget spent: collectives from %s over %d on left out" % (op, group_size))
                    return False
                # On a CPU the FP32 gradients' and weights'
                # collectives too, nothing cast (time_collective).
                wires = [None, "fp32"] if not cuda and op in ("all_reduce", "all_gather", "reduce_scatter") else [None]
                for wire in wires:
                    t, real = time_collective(op, mine, nbytes, ranks, req, dev, timer, wire)
                    if lead:
                        line = {"kind": "collective", "op": op, "group": group_size, "bytes": real, "seconds": t}
                        if wire:
                            line["wire"] = wire
                        emit(line)
                        say("%s%s over %d (x%d groups), %d bytes: %.3f ms" % (op, " (%s, uncast)" % wire if wire else "",
                                                                           group_size, world // group_size, real, t * 1e3))
                    dist.barrier()
    return True


def fp8_makers(req, dev):
    """The layer's makers under each --fp8 recipe (fp8.plan; main has
    refused what this device cannot run): [(recipe, make)]."""
    recipes = req.get("fp8") or []
    if not recipes:
        return []
    _, maker, err = fp8.plan(recipes, dev, req["model"])
    if err:
        raise SystemExit(err)
    return [(r, maker(r)) for r in recipes]


def time_shape(make, kind, shape, what, req, dev, timer, lead, everyone, world, groups, extra=None):
    """One line of kind at shape (make's part; extra's keys added):
    its kernels alone, then, where groups (this process's tensor,
    expert and expert-tensor groups) is not None, with its collectives
    in place; emitted by the lead, said as what."""
    if lead or everyone:
        f, b, peak = time_part(make, shape, req, dev, timer, kind)
    if world > 1:
        dist.barrier()
    if lead:
        line = dict(shape, kind=kind, **(extra or {}), forward_s=f, backward_s=b, peak_bytes=peak)
        msg = "%s: %.3f ms + %.3f ms" % (what, f * 1e3, b * 1e3)
    if groups is not None:
        g, eg, xg = groups
        fi, bi, _ = time_part(make, shape, req, dev, timer, kind, group=g, ep_group=eg, etp_group=xg)
        if lead:
            line.update(forward_inplace_s=fi, backward_inplace_s=bi)
            msg += "; with its collectives in place %.3f ms + %.3f ms" % (fi * 1e3, bi * 1e3)
        dist.barrier()
    if lead:
        emit(line)
        say(msg)


def expert_groups(world, rank, shapes):
    """The experts' groups of the in-place timings: for each
    (etp, ep) of the shapes with etp x ep dividing the processes, the
    world split into meshes of etp x ep consecutive ranks, each as
    Megatron-Core lays the experts' out (core_v0.16.0, 3bec9aa,
    megatron/core/parallel_state.py: the expert mesh's order
    tp-ep-dp-pp, the expert-tensor group innermost): an expert-tensor
    group is etp consecutive ranks, an expert-parallel group ep ranks
    striding etp. Every process creates every group, in one order.
    {(etp, ep): (this process's expert-parallel group or None,
    its expert-tensor group or None)}."""
    out = {}
    for etp, ep in sorted({(sh.get("etp", 1), sh.get("ep", 1)) for sh in shapes}):
        n = etp * ep
        if n < 2 or n > world or world % n:
            continue
        mine = [None, None]
        for first in range(0, world, n):
            if ep > 1:
                for j in range(etp):
                    rs = list(range(first + j, first + n, etp))
                    g = dist.new_group(rs)
                    if rank in rs:
                        mine[0] = g
            if etp > 1:
                for e in range(ep):
                    rs = list(range(first + e * etp, first + (e + 1) * etp))
                    g = dist.new_group(rs)
                    if rank in rs:
                        mine[1] = g
        out[(etp, ep)] = tuple(mine)
    return out


def main():
    req = json.loads(sys.argv[1])
    if req.get("device") == "cuda" and not torch.cuda.is_available():
        # Asked for a GPU: the CPU profiled in its place would be read as
        # the GPU's by nobody, and cost the run's budget.
        emit({"kind": "refused", "error": "--device cuda: torch %s sees no CUDA device (--device cpu profiles the CPU)" % torch.__version__})
        sys.exit(2)
    cuda = torch.cuda.is_available() and req.get("device", "auto") != "cpu"
    req["device"] = "cuda" if cuda else "cpu"
    world = req["procs"]
    if cuda:
        world = min(world, torch.cuda.device_count()) if world > 0 else torch.cuda.device_count()
    world = max(1, world)
    req["dtype"] = "bf16" if cuda else "fp32"
    mem = torch.cuda.get_device_properties(0).total_memory if cuda else os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // world
    meta = {"kind": "meta", "dtype": req["dtype"],
            "device": {"kind": req["device"], "name": torch.cuda.get_device_name(0) if cuda else cpu_name(),
                       "count": world, "memory_bytes": mem,
                       "threads": 0 if cuda else req["threads"], "cores": os.cpu_count() or 0},
            "software": {"torch": torch.__version__, "backend": "nccl" if cuda else "gloo", "framework": "pytorch",
                         "cuda": torch.version.cuda or "" if cuda else "", "driver": driver() if cuda else ""}}
    if req.get("framework"):
        # Whose layer is timed (its class), or one line saying why it
        # cannot be (placer profile exits 2 with it).
        sw, _, err = frameworks.plan(req["framework"], req["model"])
        if err:
            emit({"kind": "refused", "error": err})
            sys.exit(2)
        meta["software"].update(sw)
    if req.get("fp8"):
        # What runs the FP8 recipes, or one line saying why they cannot
        # run here (placer profile exits 2 with it).
        framework, _, err = fp8.plan(req["fp8"], torch.device("cuda", 0) if cuda else torch.device("cpu"), req["model"])
        if err:
            emit({"kind": "refused", "error": err})
            sys.exit(2)
        meta["software"]["fp8"] = framework
    # The collectives time_collectives will time (placer's profile says
    # how many of them an interrupted run missed).
    meta["collectives"] = sum(len(req["sizes"]) * (2 if not cuda and op in ("all_reduce", "all_gather", "reduce_scatter") else 1)
                              for g in req["groups"] if g <= world and world % g == 0
                              for op in req["ops"] if op != "send_recv" or g == 2) if world > 1 else 0
    emit(meta)
    say("%d %s process(es), budget %.0f s" % (world, meta["device"]["name"], req["budget_s"]))
    port = free_port()
    if world == 1:
        worker(0, 1, port, req)
    else:
        mp.spawn(worker, args=(world, port, req), nprocs=world)


if __name__ == "__main__":
    main()
