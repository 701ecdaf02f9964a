"""The runner: a placer torch plan on a whole model, without torch.fx.

Every rank builds the whole model from the same seed, and keeps only what
its stages use (the rest goes to the meta device). The plan's module
calls are its units: a call of a module the plan places (path, or path#k for
its k-th call in a forward) whose own calls below all run on the same
stage; glue between them (residual adds, reshapes, masks, any Python) is
replayed on every rank. A forward on stage v runs the model's own forward
with each unit's `forward` wrapped: a unit of v computes and sends its
output to the later stages that read it; a unit of another stage is not
computed: its output (any nesting of tuples, lists, dicts, ModelOutputs) is
received from its stage when v reads it (a leaf requiring grad, so that
backward sends its gradient back), and is zeros of its shape when v does
not (glue only); v stops at the first unit after its last own one.

What v reads is found once, before training, by running the forward twice
on one micro-batch: the module calls (the call tree and the units), then
which unit outputs and parameters reach each unit's inputs through glue
(a TorchFunctionMode follows every torch operation between unit calls).
A parameter read by several stages (tied embeddings, a block applied on
two stages, the root's own parameters used by glue) is kept on each of
them and its gradient is summed over them, as Megatron-LM does for tied
embeddings.

Random draws (dropout, stochastic depth) come from streams seeded at every
unit boundary (stream_seed), the same on every rank of a replica, so that
glue replayed on two ranks draws one mask and the unsplit model run per
micro-batch with the same seeds (UnitStreams, placer_torch.check) draws
what the plan draws; Analysis.effects names the modules whose train-mode
result a plan changes (placer_torch.semantics).
"""

import collections
import contextlib
import datetime
import hashlib
import functools
import gc
import os
import sys
import time
import weakref

import torch
import torch.distributed as dist
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from .plan import PlanError, load_plan, module_stages, split_entry
from .semantics import aten_effect, effects_list


class _Stop(Exception):
    """Ends a stage's forward at the first unit after its last one."""


def _torch_version():
    v = torch.__version__.split("+")[0].split(".")
    return tuple(int("".join(c for c in x if c.isdigit()) or 0) for x in v[:2])


def check_torch(plan, where="plan"):
    """Refuses a strategy the installed torch lacks, in one line."""
    if plan.get("shard") == "fsdp" and _torch_version() < (2, 4):
        raise PlanError("%s: shard fsdp needs torch 2.4 or later (torch.distributed.fsdp.fully_shard); this is "
                        "torch %s" % (where, torch.__version__))


# Nested values: a flat list of tensors and a spec to rebuild the nesting.

def flatten(obj):
    leaves = []
    return leaves, _flat(obj, leaves)


def _flat(o, leaves):
    if isinstance(o, torch.Tensor):
        leaves.append(o)
        return ("t",)
    if isinstance(o, tuple) and hasattr(o, "_fields"):
        return ("nt", type(o), [_flat(x, leaves) for x in o])
    if isinstance(o, (tuple, list)):
        return ("seq", type(o), [_flat(x, leaves) for x in o])
    if isinstance(o, dict):
        keys = list(o.keys())
        return ("map", type(o), keys, [_flat(o[k], leaves) for k in keys])
    return ("c", o)


def unflatten(spec, leaves):
    return _unflat(spec, iter(leaves))


def _unflat(spec, it):
    kind = spec[0]
    if kind == "t":
        return next(it)
    if kind == "c":
        return spec[1]
    if kind == "nt":
        return spec[1](*[_unflat(s, it) for s in spec[2]])
    if kind == "seq":
        items = [_unflat(s, it) for s in spec[2]]
        if spec[1] in (tuple, list):
            return spec[1](items)
        try:
            return spec[1](items)
        except TypeError:
            return tuple(items)
    vals = [_unflat(s, it) for s in spec[3]]
    if spec[1] is dict:
        return dict(zip(spec[2], vals))
    try:
        return spec[1](**dict(zip(spec[2], vals)))  # dataclasses such as transformers' ModelOutput
    except TypeError:
        return spec[1](zip(spec[2], vals))


def _tensors(obj, out):
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _tensors(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensors(x, out)


# Recording: which unit outputs and parameters flow, through glue, into
# each unit's inputs and into the model's output.

_INPLACE = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ior__", "__iand__", "__ixor__"}


class _Track(TorchFunctionMode):
    def __init__(self, rec):
        super().__init__()
        self.rec = rec

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        rec = self.rec
        if rec.depth:
            return out
        ins = []
        _tensors(args, ins)
        _tensors(kwargs, ins)
        for t in ins:
            n = rec.tnames.get(id(t))
            if n is not None and rec.reads.get(n, rec.calls + 1) > rec.calls:
                rec.reads[n] = rec.calls
        srcs = set()
        for t in ins:
            p = rec.prov.get(id(t))
            if p:
                srcs |= p
        if not srcs:
            return out
        name = getattr(func, "__name__", "")
        if (name in _INPLACE or (name.endswith("_") and not name.endswith("__"))) and args and \
                isinstance(args[0], torch.Tensor):
            rec.mark(args[0], srcs)
        outs = []
        _tensors(out, outs)
        for t in outs:
            rec.mark(t, srcs)
        return out


class _Call:
    __slots__ = ("path", "idx", "children", "owner", "stages")

    def __init__(self, path, idx):
        self.path, self.idx, self.children = path, idx, []
        self.owner, self.stages = None, set()


class Unit:
    """One unit call: module path, its call index, the stage that runs it,
    the calls below it (path -> count), and what the recording found."""

    def __init__(self, uid, path, idx, owner, nested):
        self.uid, self.path, self.idx, self.owner, self.nested = uid, path, idx, owner, nested
        self.deps, self.params = set(), set()  # unit ids and parameter names reaching its inputs
        self.spec, self.meta = None, None      # its output's nesting and tensor (shape, dtype)s

    def __repr__(self):
        return "%s#%d" % (self.path or "<root>", self.idx)


class _Effects(TorchDispatchMode):
    """Notes, per innermost module running it, each ATen op of a forward
    whose result a plan changes in train mode (placer_torch.semantics:
    batch statistics, random draws)."""

    def __init__(self, stack, found):
        super().__init__()
        self.stack, self.found = stack, found

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func).split(".")
        e = aten_effect(func, name[1] if len(name) > 1 else name[0], args, kwargs)
        if e is not None:
            self.found.setdefault(self.stack[-1].path if self.stack else "", set()).add(e)
        return func(*args, **kwargs)


def _call_tree(model, args, kwargs, effects=None):
    """Runs the forward once with every module's forward wrapped; returns
    the root calls (a forward makes one, the model's own). effects, a
    dict, gets {module path: set of placer_torch.semantics effects}."""
    tops, stack, counts = [], [], collections.Counter()
    undo = []

    def wrap(path, module):
        orig = module.forward

        @functools.wraps(orig)
        def fw(*a, **k):
            c = _Call(path, counts[path])
            counts[path] += 1
            (stack[-1].children if stack else tops).append(c)
            stack.append(c)
            try:
                return orig(*a, **k)
            finally:
                stack.pop()
        return fw

    for path, m in model.named_modules():
        undo.append((m, m.__dict__.get("forward")))
        m.forward = wrap(path, m)
    try:
        with (_Effects(stack, effects) if effects is not None else contextlib.nullcontext()):
            model(*args, **kwargs)
    finally:
        for m, had in undo:
            if had is None:
                del m.forward
            else:
                m.forward = had
    return tops


class Analysis:
    """What a plan means for a model: the units in program order, each
    stage's units, which unit outputs each stage reads (needs) and who
    reads each unit's output (consumers), and the stages reading each
    parameter (readers). It needs no torch.distributed."""

    def __init__(self, model, plan, args, kwargs, where="plan", loss_fn=None, target=None):
        self.plan = plan
        self.n = len(plan["stages"])
        self.V = plan["virtual"]
        self.S = self.n // self.V
        modules = dict(model.named_modules())
        self.modules = modules
        entries = {}
        for e, s in module_stages(plan).items():
            name, k = split_entry(e)
            if name not in modules:
                raise PlanError("%s: module %r (stage %d) is not in %s: a plan for another model?"
                                % (where, name, s, type(model).__name__))
            entries[(name, k)] = s
        for name in plan["checkpoint"]:
            if name not in modules:
                raise PlanError("%s: checkpoint module %r is not in %s" % (where, name, type(model).__name__))
        has_params = {p: any(True for _ in m.parameters()) for p, m in modules.items()}

        state = _save_state(model)
        found = {}
        try:
            tops = _call_tree(model, args, kwargs, found)
        finally:
            _restore_state(model, state)
        # The modules whose train-mode result a plan changes (batch
        # statistics, random draws): [{"module", "class", "effect"}].
        self.effects = effects_list(found, {p: type(m).__name__ for p, m in modules.items()})
        seen = collections.Counter()

        def path_entry(path):
            while "." in path:
                path = path.rsplit(".", 1)[0]
                if (path, None) in entries:
                    return entries[(path, None)]
            return None

        def resolve(c, inherited):
            seen[c.path] += 1
            e = entries.get((c.path, c.idx))
            if e is None:
                e = entries.get((c.path, None))
            if e is None and inherited is None:  # a container the forward does not call (nn.ModuleList)
                e = path_entry(c.path)
            c.owner = e if e is not None else (inherited if has_params[c.path] else None)
            below = e if e is not None else inherited
            st = {c.owner} if c.owner is not None else set()
            for ch in c.children:
                st |= resolve(ch, below)
            c.stages = st
            return st

        units = []

        def nested(c, acc):
            for ch in c.children:
                acc[ch.path] += 1
                nested(ch, acc)
            return acc

        def mark(c):
            if c.owner is not None and c.stages == {c.owner}:
                units.append(Unit(len(units), c.path, c.idx, c.owner, dict(nested(c, collections.Counter()))))
                return
            for ch in c.children:
                mark(ch)

        for c in tops:
            resolve(c, None)
            mark(c)
        for (name, k), s in entries.items():
            if k is not None and k >= seen[name]:
                raise PlanError("%s: module %r is called %d times in a forward; stage %d places its call #%d"
                                % (where, name, seen[name], s, k))
        self.units = units
        self.unit_of = {(u.path, u.idx): u.uid for u in units}
        self.unit_paths = sorted({u.path for u in units})
        owned = [[u.uid for u in units if u.owner == v] for v in range(self.n)]
        for v in range(self.n):
            if not owned[v]:
                names = plan["stages"][v]["modules"]
                raise PlanError("%s: stage %d runs no module call of its own (%s%s): more stages than the model's "
                                "modules, or its modules run inside another stage's" %
                                (where, v, ", ".join(names[:3]), ", ..." if len(names) > 3 else ""))
        self.owned = owned
        self.last = [max(o) for o in owned]
        # The second forward: what flows where.
        rec = _Recorder(self, model)
        state = _save_state(model)
        try:
            out = rec.run(args, kwargs)
        finally:
            _restore_state(model, state)
        missing = [u for u in units if u.spec is None]
        if missing:
            raise PlanError("%s: the forward's module calls differ between two runs (%s not called the second "
                            "time): data-dependent control flow" % (where, missing[0]))
        self.shapes = {signature(args, kwargs): [(u.spec, u.meta) for u in units]}
        out_deps, out_params = rec.deps_of(out)
        self.reads = rec.reads
        self.output_stage = self.n - 1
        needs = [set() for _ in range(self.n)]
        readers = collections.defaultdict(set)
        names = {id(p): n for n, p in model.named_parameters()}
        self.param_names = [n for n, _ in model.named_parameters()]
        for u in units:
            needs[u.owner] |= {d for d in u.deps if units[d].owner != u.owner}
            for p in modules[u.path].parameters():
                readers[names[id(p)]].add(u.owner)
            for n in u.params:
                readers[n].add(u.owner)
        needs[self.n - 1] |= {d for d in out_deps if units[d].owner != self.n - 1}
        for n in out_params:
            readers[n].add(self.n - 1)
        for v in range(self.n):
            for d in sorted(needs[v]):
                if units[d].owner > v:
                    reader = next((u for u in units if u.owner == v and d in u.deps), "the output")
                    raise PlanError("%s: stage %d's %s reads the output of %s in stage %d: the stages are not in "
                                    "forward order" % (where, v, reader, units[d], units[d].owner))
        self.needs = needs
        self.consumers = {u.uid: sorted(v for v in range(self.n) if u.uid in needs[v]) for u in units}
        self.readers = {n: frozenset(v % self.S for v in vs) for n, vs in readers.items()}
        self.vreaders = {n: frozenset(vs) for n, vs in readers.items()}
        unit_paths = set(self.unit_paths)
        for name in plan["checkpoint"]:
            inside = any(name.startswith(p + ".") or p == "" for p in unit_paths)
            below = [u for u in units if u.path.startswith(name + ".")]
            if name not in unit_paths and not inside and below:
                raise PlanError("%s: checkpoint %r: its forward runs %s (a module call placed apart): name a module "
                                "placed whole on one stage" % (where, name, below[0]))
        if loss_fn is not None:
            try:
                loss = loss_fn(out, target)
                if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
                    raise TypeError("it returns %s, not a scalar tensor" % type(loss).__name__)
            except Exception as e:
                raise PlanError("the loss %s cannot take %s's output (%s): %s" % (
                    getattr(loss_fn, "__name__", "loss_fn"), type(model).__name__, _describe(out),
                    (str(e).splitlines() or [type(e).__name__])[0]))

    def record_shapes(self, model, args, kwargs, absent=(), device=None):
        """The units' output nesting and shapes for a micro-batch of another
        shape (one more recording forward; the units in absent, whose
        parameters this rank does not hold, on the meta device)."""
        keep = [(u.deps, u.params, u.spec, u.meta) for u in self.units]
        for u in self.units:
            u.spec = None
        state = _save_state(model)
        try:
            _Recorder(self, model, absent, device).run(args, kwargs)
        finally:
            _restore_state(model, state)
        changed = [u for u, k in zip(self.units, keep) if u.spec is None or (u.deps, u.params) != k[:2]]
        shapes = [(u.spec, u.meta) for u in self.units]
        for u, k in zip(self.units, keep):
            u.deps, u.params, u.spec, u.meta = k
        if changed:
            raise PlanError("a micro-batch of another shape changes what flows into %s: data-dependent control "
                            "flow" % changed[0])
        self.shapes[signature(args, kwargs)] = shapes


def _describe(out):
    if isinstance(out, torch.Tensor):
        return "a tensor of shape %s" % list(out.shape)
    if isinstance(out, dict):
        return "%s with %s" % (type(out).__name__, ", ".join(map(str, out.keys())))
    if isinstance(out, (tuple, list)):
        return "a %s of %d" % (type(out).__name__, len(out))
    return type(out).__name__


def signature(args, kwargs):
    ts = []
    _tensors((args, kwargs), ts)
    return tuple((tuple(t.shape), str(t.dtype)) for t in ts)


class _Recorder:
    """The second recording forward: every unit computes; its outputs are
    marked as its own, and each unit's inputs' marks are its deps. reads:
    parameter or buffer name -> the unit calls started when glue first read
    it (a stage stopping before then never reads it). The units in absent
    (another rank's, whose parameters are on the meta device) run on the
    meta device, their outputs zeros of the shape found there."""

    def __init__(self, an, model, absent=(), device=None):
        self.an, self.model = an, model
        self.absent, self.device = set(absent), device
        self.prov, self.keep, self.depth = {}, [], 0
        self.reads, self.calls = {}, 0
        self.tnames = {id(b): n for n, b in model.named_buffers()}
        for n, p in model.named_parameters():
            self.tnames[id(p)] = n
            self.mark(p, {n})

    def mark(self, t, srcs):
        cur = self.prov.get(id(t))
        self.prov[id(t)] = (cur | srcs) if cur else set(srcs)
        self.keep.append(t)

    def deps_of(self, obj):
        ts = []
        _tensors(obj, ts)
        srcs = set()
        for t in ts:
            srcs |= self.prov.get(id(t), set())
        return {d for d in srcs if isinstance(d, int)}, {d for d in srcs if isinstance(d, str)}

    def run(self, args, kwargs):
        an = self.an
        counts = collections.Counter()
        undo = []

        def wrap(path, module):
            orig = module.forward

            @functools.wraps(orig)
            def fw(*a, **k):
                if self.depth:
                    return orig(*a, **k)
                idx = counts[path]
                counts[path] += 1
                uid = an.unit_of.get((path, idx))
                if uid is None:
                    return orig(*a, **k)
                u = an.units[uid]
                for p, n in u.nested.items():
                    counts[p] += n
                u.deps, u.params = self.deps_of((a, k))
                self.calls += 1
                self.depth += 1
                try:
                    if uid in self.absent:
                        out = _meta_call(an.modules[path], orig, a, k, self.device, u)
                    else:
                        out = orig(*a, **k)
                finally:
                    self.depth -= 1
                leaves, u.spec = flatten(out)
                u.meta = [(tuple(t.shape), t.dtype) for t in leaves]
                for t in leaves:
                    self.prov[id(t)] = {uid}
                    self.keep.append(t)
                return out
            return fw

        for path in an.unit_paths:
            m = an.modules[path]
            undo.append((m, m.__dict__.get("forward")))
            m.forward = wrap(path, m)
        try:
            with _Track(self):
                return self.model(*args, **kwargs)
        finally:
            for m, had in undo:
                if had is None:
                    del m.forward
                else:
                    m.forward = had


def _meta_call(module, orig, a, k, device, u):
    """orig(*a, **k), a unit of another rank, on the meta device (its
    parameters and buffers, and the tensors it is given): its output, with
    each tensor zeros of the shape and dtype found there on device."""
    swapped = []
    meta = {}

    def on_meta(t):
        if id(t) not in meta:
            m = torch.empty_like(t, device="meta")
            meta[id(t)] = torch.nn.Parameter(m, t.requires_grad) if isinstance(t, torch.nn.Parameter) else m
        return meta[id(t)]
    for m in module.modules():
        for d in (m._parameters, m._buffers):
            for n, t in list(d.items()):
                if t is not None and t.device.type != "meta":
                    swapped.append((d, n, t))
                    d[n] = on_meta(t)
    try:
        leaves, spec = flatten((a, k))
        ma, mk = unflatten(spec, [torch.empty_like(t, device="meta") for t in leaves])
        with torch.no_grad():
            out = orig(*ma, **mk)
    except Exception as e:
        raise PlanError("a micro-batch of another shape: %s (stage %d, not held on this rank) cannot run on the meta "
                        "device to find its output's shape (%s): give batches that split into micro-batches of the "
                        "first batch's shapes" % (u, u.owner, (str(e).splitlines() or [type(e).__name__])[0]))
    finally:
        for d, n, t in swapped:
            d[n] = t
    leaves, spec = flatten(out)
    return unflatten(spec, [torch.zeros(t.shape, dtype=t.dtype, device=device) for t in leaves])


def _save_state(model):
    return ([None if b.device.type == "meta" else b.detach().clone() for b in model.buffers()],
            torch.get_rng_state())


def _restore_state(model, state):
    bufs, rng = state
    with torch.no_grad():
        for b, s in zip(model.buffers(), bufs):
            if s is not None and not torch.equal(b, s):  # a copy bumps the version that saved tensors check
                b.copy_(s)
    torch.set_rng_state(rng)


# Random streams: what a forward draws (dropout, stochastic depth) comes
# from a stream seeded at every unit boundary by (the plan's base seed,
# step, replica, micro-batch, boundary): 0 the forward's start, 2u + 1
# before unit u's call, 2u + 2 after it. Every rank of a replica so draws
# the same numbers at the same point of the forward, whether it computes
# the unit, receives its output or only replays the glue around it, and
# the unsplit model run micro-batch by micro-batch with the same seeds
# (UnitStreams: placer_torch.check's reference) draws them too.

def stream_seed(base, step, replica, mb, boundary):
    """The seed of one stretch of a forward's random stream (63 bits)."""
    key = ("%d/%d/%d/%d/%d" % (base, step, replica, mb, boundary)).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") & ((1 << 63) - 1)


def reseed(seed, device=None):
    """Seeds the CPU generator (and device's, a CUDA device)."""
    torch.default_generator.manual_seed(seed)
    if device is not None and device.type == "cuda":
        torch.cuda.default_generators[device.index if device.index is not None else
                                      torch.cuda.current_device()].manual_seed(seed)


def rng_state(device=None):
    return torch.get_rng_state(), (torch.cuda.get_rng_state(device) if device is not None and
                                   device.type == "cuda" else None)


def set_rng_state(state, device=None):
    torch.set_rng_state(state[0])
    if state[1] is not None:
        torch.cuda.set_rng_state(state[1], device)


class UnitStreams:
    """The runner's random streams on a whole model (the unsplit
    reference of placer_torch.check): while a micro-batch's forward runs
    (begin ... end), each unit call of an (an Analysis of this model)
    reseeds before and after it as a plan's forward does."""

    def __init__(self, model, an, base, device=None):
        self.an, self.base, self.device = an, base, device
        self.key, self.counts, self.depth = None, collections.Counter(), 0
        self.undo = []
        for path in an.unit_paths:
            m = an.modules[path]
            self.undo.append((m, m.__dict__.get("forward")))
            m.forward = self._wrap(path, m.forward)

    def _wrap(self, path, inner):
        @functools.wraps(inner)
        def fw(*a, **k):
            if self.key is None or self.depth:
                return inner(*a, **k)
            idx = self.counts[path]
            self.counts[path] += 1
            uid = self.an.unit_of.get((path, idx))
            if uid is None:
                return inner(*a, **k)
            for p, n in self.an.units[uid].nested.items():
                self.counts[p] += n
            self.seed(2 * uid + 1)
            self.depth += 1
            try:
                out = inner(*a, **k)
            finally:
                self.depth -= 1
            self.seed(2 * uid + 2)
            return out
        return fw

    def begin(self, step, replica, mb):
        self.key, self.counts, self.depth = (step, replica, mb), collections.Counter(), 0
        self.seed(0)

    def end(self):
        self.key = None

    def seed(self, boundary):
        reseed(stream_seed(self.base, *(self.key + (boundary,))), self.device)

    def remove(self):
        for m, had in self.undo:
            if had is None:
                del m.forward
            else:
                m.forward = had


# Schedules.

def schedule_order(kind, pos, S, M, V=1):
    """The order of pipeline rank pos's forwards and backwards:
    [("F" or "B", micro-batch, stage)]. gpipe: every forward, then every
    backward. 1f1b: S - 1 - pos forwards to fill the pipeline, then one
    forward and one backward in turn, then the remaining backwards.
    interleaved (V stages per rank: pos, pos + S, ...): Megatron-LM's
    order, M a multiple of S: forwards in groups of S micro-batches per
    stage, (S - pos - 1) x 2 + (V - 1) x S of them to fill, then in turn."""
    if kind == "gpipe":
        return [("F", i, pos) for i in range(M)] + [("B", i, pos) for i in range(M)]
    if kind == "1f1b" or V == 1:
        warm = min(S - 1 - pos, M)
        out = [("F", i, pos) for i in range(warm)]
        f, b = warm, 0
        while f < M:
            out += [("F", f, pos), ("B", b, pos)]
            f, b = f + 1, b + 1
        return out + [("B", i, pos) for i in range(b, M)]
    total = M * V

    def mb(k):
        return (k // (S * V)) * S + k % S

    def fwd(k):
        return ("F", mb(k), ((k // S) % V) * S + pos)

    def bwd(k):
        return ("B", mb(k), (V - 1 - (k // S) % V) * S + pos)
    warm = min((S - pos - 1) * 2 + (V - 1) * S, total)
    out = [fwd(k) for k in range(warm)]
    f, b = warm, 0
    while f < total:
        out += [fwd(f), bwd(b)]
        f, b = f + 1, b + 1
    return out + [bwd(k) for k in range(b, total)]


def split_batch(values, parts, where="inputs"):
    """Splits each tensor (dimension 0) of a list of values into parts
    (torch.tensor_split: sizes differ by at most one); returns the lists
    per part and the part sizes."""
    sizes, cols = None, []
    for v in values:
        if isinstance(v, torch.Tensor) and v.dim() > 0:
            if v.shape[0] < parts:
                raise PlanError("%s: a batch of %d cannot make %d micro-batches" % (where, v.shape[0], parts))
            pieces = torch.tensor_split(v, parts)
            sizes = [p.shape[0] for p in pieces]
            cols.append(pieces)
        else:
            cols.append([v] * parts)
    if sizes is None:
        raise PlanError("%s: no tensor to split into micro-batches" % where)
    return [[c[i] for c in cols] for i in range(parts)], sizes


class _Forward:
    """One forward of one stage on one micro-batch, and what its backward
    needs."""

    def __init__(self, rt, mb, v, shapes):
        self.rt, self.mb, self.v, self.shapes = rt, mb, v, shapes
        self.counts = collections.Counter()
        self.depth = 0
        self.sent, self.received, self.loss = [], [], None

    def unit_call(self, uid, inner, a, k):
        self.rt._reseed(self.mb, 2 * uid + 1)
        out = self._unit_call(uid, inner, a, k)
        self.rt._reseed(self.mb, 2 * uid + 2)
        return out

    def _unit_call(self, uid, inner, a, k):
        rt, an = self.rt, self.rt.an
        u = an.units[uid]
        for p, n in u.nested.items():
            self.counts[p] += n
        if u.owner == self.v:
            self.depth += 1
            try:
                out = inner(*a, **k)
            finally:
                self.depth -= 1
            cons = an.consumers[uid]
            if cons:
                # What is sent, and the backward's roots, are copies taken
                # now: the rest of this stage's forward may change the
                # output in place (`y += shortcut` after a unit whose output
                # is sent, a ReLU(inplace=True)), which would change the
                # data of an isend not yet done and put the in-place op in
                # the gradient sent back. The model keeps the output itself
                # (and the hooks FSDP put on it, which a copy's backward
                # reaches through the unit's autograd node).
                leaves, _ = flatten(out)
                sent = [t.clone(memory_format=torch.contiguous_format) for t in leaves]
                rt._note("sent", self.mb, self.v, sent)
                for c in cons:
                    rt._send(sent, c, self.mb, uid)
                self.sent.append((uid, sent))
            return out
        if uid > an.last[self.v] and self.v != an.output_stage:
            raise _Stop()
        spec, meta = self.shapes[uid]
        if uid in an.needs[self.v]:
            leaves = rt._recv(u, meta, self.v, self.mb)
            rt._note("received", self.mb, self.v, leaves)
            self.received.append((uid, leaves))
            # The glue and units get a copy of each leaf that requires grad:
            # the model may change it in place (timm's ResNet: `x +=
            # shortcut`, ReLU(inplace=True)), which autograd refuses on a
            # leaf; the leaf's .grad still gets the gradient to send back.
            return unflatten(spec, [t.clone() if t.requires_grad else t for t in leaves])
        return unflatten(spec, [torch.zeros(s, dtype=d, device=rt.device) for s, d in meta])


def _dtype(d):
    return str(d).replace("torch.", "")


def p2p_timeout():
    """Seconds a stage waits for one point-to-point send or receive (gloo)
    before the run fails with a line naming it: PLACER_TORCH_P2P_TIMEOUT
    (0: no limit), default 180."""
    v = os.environ.get("PLACER_TORCH_P2P_TIMEOUT", "")
    try:
        return float(v) if v.strip() else 180.0
    except ValueError:
        raise PlanError("PLACER_TORCH_P2P_TIMEOUT=%r: seconds (0: no limit)" % v)


def _tag(mb, uid, units, back):
    return (mb * (units + 1) + uid) * 2 + (1 if back else 0)


class Placed:
    """A model under a plan on this rank: `schedule.step(...)` runs one
    step's forwards and backwards and leaves the gradients of
    `stage_parameters()` in their .grad (summed over the stages that read
    each, averaged as the global batch's mean over the replicas);
    `optimizer(cls, **kw)` makes the optimizer of those parameters
    (ZeroRedundancyOptimizer with shard zero2)."""

    def __init__(self, model, plan, loss_fn, example_inputs=(), example_kwargs=None, rank=None, world=None,
                 device=None, analysis=None, rng_seed=None):
        self.plan = plan = load_plan(plan)
        self.model = model
        self.loss_fn = loss_fn
        self.rank = dist.get_rank() if rank is None else rank
        self.world = dist.get_world_size() if world is None else world
        self.n, self.V = len(plan["stages"]), plan["virtual"]
        self.S, self.R, self.M = self.n // self.V, plan["replicas"], plan["micro_batches"]
        if self.world != self.R * self.S:
            raise PlanError("the plan needs %d replicas x %d stages = %d processes, not %d"
                            % (self.R, self.S, self.R * self.S, self.world))
        if plan["schedule"] == "interleaved" and self.V > 1 and self.M % self.S:
            raise PlanError("schedule interleaved: micro_batches %d is not a multiple of the %d pipeline ranks"
                            % (self.M, self.S))
        self.shard = plan["shard"]
        # gloo's waits take a timeout; NCCL's would block the CPU on the
        # stream (and NCCL has its own watchdog).
        self.timeout_s = p2p_timeout() if dist.get_backend() == "gloo" else 0
        check_torch(plan)
        self.replica, self.pos = divmod(self.rank, self.S)
        self.device = torch.device(device) if device is not None else torch.device("cpu")
        if rng_seed is None:
            # The base of the step's random streams: drawn on every rank
            # (each rank's generator moves alike), rank 0's kept.
            t = torch.randint(0, 1 << 62, (1,), dtype=torch.int64).to(self.device)
            if self.world > 1:
                dist.broadcast(t, src=0)
            rng_seed = int(t.item())
        self.rng_seed, self.steps = int(rng_seed), 0
        model.to(self.device)
        example_kwargs = dict(example_kwargs or {})
        if analysis is None:
            mbs, _ = self._micro(list(example_inputs), example_kwargs, None)
            a, k, _ = mbs[0]
            analysis = Analysis(model, plan, a, k)
            for a, k, _ in mbs[1:]:  # the example's other micro-batch shapes, while the whole model is here
                if signature(a, k) not in analysis.shapes:
                    analysis.record_shapes(model, a, k)
        self.an = an = analysis
        self.stages = [v for v in range(self.n) if v % self.S == self.pos]
        self.held = [n for n in an.param_names if self.pos in an.readers.get(n, ())]
        self.absent = [u.uid for u in an.units if u.owner % self.S != self.pos]
        self._free_others()
        names = dict(model.named_parameters())
        # Groups: every rank creates every group, in the same order.
        self.dp_groups = [dist.new_group([r * self.S + q for r in range(self.R)]) if self.R > 1 else None
                          for q in range(self.S)]
        self.sum_groups = {}
        for rs in sorted({tuple(sorted(r)) for r in an.readers.values()}):
            ranks = [r * self.S + q for r in range(self.R) for q in rs]
            g = dist.new_group(ranks) if len(ranks) > 1 else None
            if self.pos in rs:
                self.sum_groups[rs] = g
        self.fsdp = []
        if self.shard == "fsdp":
            self._fully_shard(names)
        self.fsdp_names = set()
        for m in self.fsdp:
            self.fsdp_names |= {n for n, p in model.named_parameters() if any(p is q for q in m.parameters())}
        self.zero = None
        self.ctx = None
        self._arming = False
        self.works, self.mail, self.boundary = {}, {}, []
        self._make_buckets()
        self._install()
        self.schedule = _Schedule(self)

    # --- set-up

    def _free_others(self):
        """Puts on the meta device the parameters and buffers this rank
        does not use: those of the other ranks' units, unless one of this
        rank's stages reads them (a tied embedding, a block applied on two
        stages, glue before the stage stops). They keep their names and
        shapes; their memory is freed once nothing else refers to them."""
        an, model = self.an, self.model
        if len(self.stages) == self.n:
            return
        stops = [float("inf") if v == an.output_stage else an.last[v] + 1 for v in self.stages]
        keep = set(self.held) | {n for n, c in an.reads.items() if c <= max(stops)}
        mine = {u.path for u in an.units if u.owner in self.stages}
        theirs = {u.path for u in an.units if u.owner not in self.stages}

        def under(name, paths):
            mod = name.rsplit(".", 1)[0] if "." in name else ""
            return any(mod == p or mod.startswith(p + ".") or p == "" for p in paths)
        for n, _ in model.named_buffers():
            if under(n, mine) or not under(n, theirs):
                keep.add(n)
        ids = {id(t) for n, t in list(model.named_parameters()) + list(model.named_buffers()) if n in keep}
        meta = {}
        for m in model.modules():
            for d in (m._parameters, m._buffers):
                for n, t in list(d.items()):
                    if t is None or id(t) in ids or t.device.type == "meta":
                        continue
                    if id(t) not in meta:
                        e = torch.empty_like(t, device="meta")
                        meta[id(t)] = torch.nn.Parameter(e, t.requires_grad) if isinstance(t, torch.nn.Parameter) \
                            else e
                    d[n] = meta[id(t)]

    def _fully_shard(self, names):
        try:
            from torch.distributed.fsdp import fully_shard
        except ImportError:
            from torch.distributed._composable.fsdp import fully_shard
        from torch.distributed.device_mesh import init_device_mesh
        an = self.an
        mesh = init_device_mesh(self.device.type, (self.R, self.S), mesh_dim_names=("dp", "pp"))["dp"]
        pid = {id(p): n for n, p in self.model.named_parameters()}
        unit_mods = {}
        for u in an.units:
            unit_mods.setdefault(u.path, set()).add(u.owner)
        inside = collections.defaultdict(set)  # parameter -> unit modules holding it
        for path in unit_mods:
            for p in an.modules[path].parameters():
                inside[pid[id(p)]].add(path)
        chosen = []
        for path, owners in unit_mods.items():
            if not owners <= set(self.stages) or path == "":
                continue
            ps = [pid[id(p)] for p in an.modules[path].parameters()]
            if not ps:
                continue
            if all(an.readers[n] == frozenset([self.pos]) and
                   all(q == path or q.startswith(path + ".") or path.startswith(q + ".") for q in inside[n])
                   for n in ps):
                chosen.append(path)
        # Small units (a position embedding, a final norm) are not worth
        # their own all-gather and reduce-scatter: they go with the root
        # (one stage) or with the replicated parameters' buckets.
        size = {p: sum(q.numel() for q in an.modules[p].parameters()) for p in chosen}
        chosen = [p for p in chosen if size[p] * 4 >= max(size.values())] if chosen else []
        for path in sorted(chosen, key=lambda p: -p.count(".")):
            if any(path.startswith(c + ".") for c in chosen if c != path):
                continue  # FSDP takes it with its ancestor (nested units run on one stage)
            fully_shard(an.modules[path], mesh=mesh)
            self.fsdp.append(an.modules[path])
        if self.S == 1:
            fully_shard(self.model, mesh=mesh)
            self.fsdp.append(self.model)
        for m in self.fsdp:
            # The losses are already scaled to the global batch's mean:
            # FSDP sums (gloo has no PREMUL_SUM for its division by 1).
            m.set_gradient_divide_factor(1.0)
            if hasattr(m, "set_force_sum_reduction_for_comms"):
                m.set_force_sum_reduction_for_comms(True)

    def _install(self):
        an = self.an
        ck = set(self.plan["checkpoint"])

        def checkpointed(orig):
            from torch.utils.checkpoint import checkpoint

            @functools.wraps(orig)
            def fw(*a, **k):
                if torch.is_grad_enabled():
                    return checkpoint(orig, *a, use_reentrant=False, **k)
                return orig(*a, **k)
            return fw

        def unit(path, inner):
            @functools.wraps(inner)
            def fw(*a, **k):
                ctx = self.ctx
                if ctx is None or ctx.depth:
                    return inner(*a, **k)
                idx = ctx.counts[path]
                ctx.counts[path] += 1
                uid = an.unit_of.get((path, idx))
                if uid is None:
                    return inner(*a, **k)
                return ctx.unit_call(uid, inner, a, k)
            return fw

        for path in sorted(set(an.unit_paths) | ck):
            m = an.modules[path]
            inner = m.forward
            if path in ck:
                inner = checkpointed(inner)
            m.forward = unit(path, inner) if path in an.unit_paths else inner

    def _micro(self, args, kwargs, target):
        keys = list(kwargs)
        vals = list(args) + [kwargs[k] for k in keys] + ([target] if target is not None else [])
        parts, sizes = split_batch(vals, self.M)
        out = []
        for p in parts:
            p = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in p]
            a = p[:len(args)]
            k = dict(zip(keys, p[len(args):len(args) + len(keys)]))
            out.append((a, k, p[-1] if target is not None else None))
        return out, sizes

    # --- point to point

    def _rank_of(self, v):
        return self.replica * self.S + v % self.S

    def _send(self, leaves, to_v, mb, uid, back=False, from_v=None):
        """isend of each leaf to stage to_v (a stage of this rank: into
        mail). The work and its tensor wait in self.works under ("F", mb,
        the sending stage) for an output, ("B", to_v) for a gradient, until
        _finish waits on them (the step's backward of mb, the next gradient
        sent to to_v) or the step ends."""
        if to_v % self.S == self.pos:
            self.mail[(uid, to_v, mb, back)] = leaves
            return
        dst = self._rank_of(to_v)
        key = ("B", to_v) if back else ("F", mb, self.an.units[uid].owner)
        for i, t in enumerate(leaves):
            t = t.detach()
            if t.dtype == torch.bool:
                t = t.to(torch.uint8)
            t = t.contiguous()
            what = ("stage %d's send of the gradient of %s's output %d (shape %s, %s) to stage %d, micro-batch %d" %
                    (from_v, self.an.units[uid], i, list(t.shape), _dtype(t.dtype), to_v, mb) if back else
                    "stage %d's send of %s's output %d (shape %s, %s) to stage %d, micro-batch %d" %
                    (self.an.units[uid].owner, self.an.units[uid], i, list(t.shape), _dtype(t.dtype), to_v, mb))
            self._note("send", mb, to_v if back else self.an.units[uid].owner, [t])
            self.works.setdefault(key, []).append((dist.isend(t, dst, tag=_tag(mb, uid, len(self.an.units), back)),
                                                   t, what))

    def _finish(self, key):
        """Waits on the sends under key and lets their tensors go."""
        for w, _, what in self.works.pop(key, ()):
            self._wait(w, what)

    def _note(self, kind, mb, v, tensors):
        """Notes tensors crossing stages (weak references): live_boundary()
        says which are still allocated."""
        self.boundary.extend((weakref.ref(t), kind, mb, v) for t in tensors)

    def live_boundary(self):
        """The boundary tensors of the current (or last) step still alive:
        [(kind, micro-batch, stage, bytes)], kind "sent" (a unit's output
        copied for the send and the backward), "send" (a tensor an isend
        holds), "received" (a received value, the model reads a copy) and
        "grad" (a gradient sent back). A micro-batch's are freed once its
        backward on this stage has run (a gradient sent back: once the next
        one to the same stage is sent, with virtual stages at the step's
        end)."""
        out = []
        for r, kind, mb, v in self.boundary:
            t = r()
            if t is not None:
                out.append((kind, mb, v, t.numel() * t.element_size()))
        return out

    def _wait(self, work, what):
        """work.wait() within the point-to-point timeout: a value that never
        comes (a send or receive the other side does not make) ends the run
        with one line naming it, instead of hanging."""
        if not self.timeout_s:
            work.wait()
            return
        try:
            ok = work.wait(datetime.timedelta(seconds=self.timeout_s))
        except RuntimeError as e:
            if "closed by peer" in str(e):
                # The other side's process ended (its own error, or its
                # timeout, closed the connection): a moment for it to exit
                # first, so that the launch reports its line, not this one.
                time.sleep(5)
                raise PlanError("%s: the other stage's process ended" % what)
            if "imeout" not in str(e) and "imed out" not in str(e):
                raise
            ok = False
        if ok is False:
            raise PlanError("%s: not done after %g s (a hang: the other stage never matched it; "
                            "PLACER_TORCH_P2P_TIMEOUT sets the wait)" % (what, self.timeout_s))

    def _recv(self, u, meta, v, mb):
        grad = torch.is_grad_enabled()
        if u.owner % self.S == self.pos:
            leaves = [t.detach() for t in self.mail.pop((u.uid, v, mb, False))]
        else:
            src = self._rank_of(u.owner)
            leaves = []
            for i, (shape, dtype) in enumerate(meta):
                t = torch.empty(shape, dtype=torch.uint8 if dtype == torch.bool else dtype, device=self.device)
                self._wait(dist.irecv(t, src, tag=_tag(mb, u.uid, len(self.an.units), False)),
                           "stage %d's receive of %s's output %d (shape %s, %s) from stage %d, micro-batch %d" %
                           (v, u, i, list(shape), _dtype(dtype), u.owner, mb))
                leaves.append(t.bool() if dtype == torch.bool else t)
        return [t.requires_grad_() if grad and t.is_floating_point() else t for t in leaves]

    def _recv_grads(self, uid, from_v, mb, leaves):
        want = [t for t in leaves if t.is_floating_point()]
        if from_v % self.S == self.pos:
            return self.mail.pop((uid, from_v, mb, True))
        src = self._rank_of(from_v)
        out = []
        for i, t in enumerate(want):
            g = torch.empty(t.shape, dtype=t.dtype, device=self.device)
            self._wait(dist.irecv(g, src, tag=_tag(mb, uid, len(self.an.units), True)),
                       "stage %d's receive of the gradient of %s's output %d (shape %s, %s) from stage %d, "
                       "micro-batch %d" % (self.an.units[uid].owner, self.an.units[uid], i, list(t.shape),
                                           _dtype(t.dtype), from_v, mb))
            out.append(g)
        return out

    # --- the step

    def forward(self, mb, v, a, k, target, scale):
        sig = signature(a, k)
        if sig not in self.an.shapes:
            if self.fsdp:
                raise PlanError("shard fsdp: a micro-batch of shape %s, the plan was recorded with %s: give "
                                "batches that split into micro-batches of one shape" %
                                ([list(x[0]) for x in sig], [list(x[0]) for x in next(iter(self.an.shapes))]))
            self.an.record_shapes(self.model, a, k, self.absent, self.device)
        ctx = _Forward(self, mb, v, self.an.shapes[sig])
        self.ctx = ctx
        self._reseed(mb, 0)
        try:
            out = self.model(*a, **k)
        except _Stop:
            out = None
        finally:
            self.ctx = None
        if v == self.an.output_stage:
            loss = self.loss_fn(out, target)
            ctx.loss = loss * scale
            ctx.raw_loss = loss.detach()
        return ctx

    def _reseed(self, mb, boundary):
        reseed(stream_seed(self.rng_seed, self.steps, self.replica, mb, boundary), self.device)

    def backward(self, ctx):
        an = self.an
        roots, grads = [], []
        if ctx.loss is not None:
            roots.append(ctx.loss)
            grads.append(None)
        acc = collections.OrderedDict()
        for uid, leaves in ctx.sent:
            fl = [t for t in leaves if t.is_floating_point()]
            for c in an.consumers[uid]:
                gs = self._recv_grads(uid, c, ctx.mb, leaves)
                for t, g in zip(fl, gs):
                    if not t.requires_grad:
                        continue
                    if id(t) in acc:
                        acc[id(t)] = (t, acc[id(t)][1] + g)
                    else:
                        acc[id(t)] = (t, g)
        # The consumers have received this micro-batch's outputs (they sent
        # their gradients, or ran their forward of it, which needs nothing
        # from a later point of this rank's order): the isends are done.
        self._finish(("F", ctx.mb, ctx.v))
        for t, g in acc.values():
            roots.append(t)
            grads.append(g)
        del acc
        if roots:
            torch.autograd.backward(roots, grads)
        del roots, grads
        sent = set()
        for uid, leaves in ctx.received:
            gs = [t.grad if t.grad is not None else torch.zeros_like(t) for t in leaves if t.is_floating_point()]
            for t in leaves:
                t.grad = None
            owner = an.units[uid].owner
            if owner % self.S == self.pos:
                self.mail[(uid, ctx.v, ctx.mb, True)] = gs
            else:
                if self.V == 1 and owner not in sent:
                    # The previous micro-batch's gradients to that stage:
                    # it has received them (or does, at its backward of
                    # that micro-batch, before any of this one's).
                    self._finish(("B", owner))
                    sent.add(owner)
                self._note("grad", ctx.mb, ctx.v, gs)
                self._send(gs, owner, ctx.mb, uid, back=True, from_v=ctx.v)
        ctx.sent, ctx.received, ctx.loss = [], [], None  # the graph and the copies go with them

    def sync_grads(self):
        """Sums each held parameter's gradient over the stages that read it
        and the replicas (FSDP's parameters: FSDP's reduce-scatter);
        zero2: each replica keeps the gradients of its optimizer shard."""
        names = dict(self.model.named_parameters())
        for n in self.held:
            p = names[n]
            if n not in self.fsdp_names and p.grad is None:
                p.grad = torch.zeros_like(p)
        self._arming = False
        for b in self.buckets:
            if b.work is None:
                self._launch(b)
        for b in self.buckets:
            if b.work is not None:
                b.work.wait()
                b.work = None
        if self.shard == "zero2" and self.R > 1:
            if self.zero is None:
                raise PlanError("shard zero2: make the optimizer with placed.optimizer(...) before the first step "
                                "(it decides which replica keeps which gradient)")
            own = self.zero_owner
            for j in range(self.R):
                ps = [names[n] for n in self.held if n not in self.fsdp_names and own[n] == j]
                if not ps:
                    continue
                single = [p for p in ps if len(self.an.readers[self._name(p)]) == 1]
                if single:
                    flat = torch.cat([p.grad.reshape(-1) for p in single])
                    dist.reduce(flat, dst=j * self.S + self.pos, group=self.dp_groups[self.pos])
                    if j == self.replica:
                        _unflat_into(flat, [p.grad for p in single])
                if j != self.replica:
                    for p in ps:
                        p.grad = None

    # Gradient buckets: each held parameter's .grad is a view into a flat
    # buffer per (group, dtype) and up to 4 MB, summed by one all-reduce;
    # with torch 2.1 or later and one stage per rank, the buckets of the
    # data-parallel group start as soon as the last micro-batch's backward
    # has filled them, overlapping the rest of the backward (as DDP does).

    def _sum_group(self, rs):
        return self.sum_groups.get(rs)

    def _make_buckets(self, cap=4 << 20):
        names = dict(self.model.named_parameters())
        by = collections.defaultdict(list)
        for n in reversed(self.held):
            if n in self.fsdp_names:
                continue
            rs = tuple(sorted(self.an.readers[n]))
            if (self.shard == "zero2" and len(rs) == 1) or self.sum_groups.get(rs) is None:
                continue
            by[(rs, str(names[n].dtype))].append(names[n])
        self.buckets = []
        for (rs, _), ps in sorted(by.items()):
            cur, size = [], 0
            for p in ps:
                cur.append(p)
                size += p.numel() * p.element_size()
                if size >= cap:
                    self.buckets.append(_Bucket(rs, cur, self.device))
                    cur, size = [], 0
            if cur:
                self.buckets.append(_Bucket(rs, cur, self.device))
        self.early = []
        if hasattr(torch.Tensor, "register_post_accumulate_grad_hook") and self.V == 1:
            self.early = [b for b in self.buckets if len(b.rs) == 1]
            of = {id(p): b for b in self.early for p in b.params}
            for b in self.early:
                for p in b.params:
                    p.register_post_accumulate_grad_hook(functools.partial(self._filled, of[id(p)]))
        self._next = 0

    def _attach(self):
        for b in self.buckets:
            b.count, b.work = 0, None
            for p, o in zip(b.params, b.offsets):
                if p.grad is None:
                    v = b.view(p, o)
                    v.zero_()
                    p.grad = v
                elif p.grad.data_ptr() != b.ptr(o):
                    v = b.view(p, o)
                    v.copy_(p.grad)
                    p.grad = v
        self._next = 0

    def _filled(self, b, p):
        if not self._arming:
            return
        b.count += 1
        if b.count == len(b.params):
            b.count = -1
            while self._next < len(self.early) and self.early[self._next].count == -1:
                self._launch(self.early[self._next])
                self._next += 1

    def _launch(self, b):
        for p, o in zip(b.params, b.offsets):
            if p.grad is None:
                p.grad = b.view(p, o)
                p.grad.zero_()
            elif p.grad.data_ptr() != b.ptr(o):  # autograd replaced the view
                v = b.view(p, o)
                v.copy_(p.grad)
                p.grad = v
        g = self._sum_group(b.rs)
        if g is not None:
            b.work = dist.all_reduce(b.flat, group=g, async_op=True)
        else:
            b.work = None
            b.count = -2

    def _name(self, p):
        if not hasattr(self, "_pname"):
            self._pname = {id(q): n for n, q in self.model.named_parameters()}
        return self._pname[id(p)]

    # --- for the caller

    def stage_parameters(self):
        """This rank's parameters: those its stages read (after fully_shard:
        the sharded ones)."""
        names = dict(self.model.named_parameters())
        return [names[n] for n in self.held]

    def named_stage_parameters(self):
        names = dict(self.model.named_parameters())
        return [(n, names[n]) for n in self.held]

    def stage_modules(self):
        """The modules this rank runs: its units' modules (FSDP-wrapped
        with shard fsdp)."""
        return [self.an.modules[p] for p in sorted({u.path for u in self.an.units if u.owner in self.stages})]

    def optimizer(self, cls, **kw):
        """The optimizer of stage_parameters(): cls(params, **kw), or with
        shard zero2 torch's ZeroRedundancyOptimizer over the stage's
        replicas (each keeps its share of the optimizer state)."""
        params = self.stage_parameters()
        if self.shard != "zero2" or self.R == 1:
            return cls(params, **kw)
        from torch.distributed.optim import ZeroRedundancyOptimizer
        self.zero = ZeroRedundancyOptimizer(params, optimizer_class=cls, process_group=self.dp_groups[self.pos], **kw)
        owner = {}
        for j, groups in enumerate(self.zero._partition_parameters()):
            for g in groups:
                for p in g["params"]:
                    owner[self._name(p)] = j
        self.zero_owner = owner
        return self.zero

    def gradients(self):
        """{name: gradient} of the parameters whose gradient this rank holds
        after a step (FSDP's: gathered whole, a collective over the
        replicas; zero2: the rank's share), on the CPU."""
        out = {}
        for n, p in self.named_stage_parameters():
            g = p.grad
            if g is None:
                continue
            if hasattr(g, "full_tensor"):
                g = g.full_tensor()
            out[n] = g.detach().cpu()
        return out


class _Bucket:
    def __init__(self, rs, params, device):
        self.rs, self.params = rs, params
        self.offsets, n = [], 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.flat = torch.zeros(n, dtype=params[0].dtype, device=device)
        self.count, self.work = 0, None

    def view(self, p, o):
        return self.flat[o:o + p.numel()].view_as(p)

    def ptr(self, o):
        return self.flat.data_ptr() + o * self.flat.element_size()


def _unflat_into(flat, grads):
    off = 0
    for g in grads:
        g.copy_(flat[off:off + g.numel()].view_as(g))
        off += g.numel()


class _Schedule:
    """step(*inputs, target=..., losses=None, batch=None, **kwargs): one
    training step on this replica's batch (every rank of the replica gets
    the same inputs): the plan's micro-batches in the plan's schedule; the
    gradients are left in the stage parameters' .grad (accumulated onto
    what is there: zero them between steps). Returns the loss, the mean
    over the global batch (batch: its size, default this batch x R), on
    every rank; losses, a list, receives this rank's micro-batch losses."""

    def __init__(self, placed):
        self.p = placed
        self.order = schedule_order(placed.plan["schedule"], placed.pos, placed.S, placed.M, placed.V)

    def step(self, *inputs, target=None, losses=None, batch=None, **kwargs):
        pl = self.p
        if target is None:
            raise PlanError("step: no target")
        mbs, sizes = pl._micro(list(inputs), kwargs, target)
        B = batch or sum(sizes) * pl.R
        pl.works, pl.mail, pl.boundary = {}, {}, []
        saved = {}
        loss_sum = torch.zeros((), dtype=torch.float64, device=pl.device)
        last_b = {}
        for kind, i, v in self.order:
            if kind == "B":
                last_b[v] = i
        pl._attach()
        # The forwards draw from the plan's streams (stream_seed); the
        # caller's random state is as it was before the step.
        state = rng_state(pl.device)
        try:
            for kind, i, v in self.order:
                a, k, t = mbs[i]
                if kind == "F":
                    saved[(i, v)] = ctx = pl.forward(i, v, a, k, t, sizes[i] / B)
                    if ctx.loss is not None:
                        loss_sum += ctx.loss.detach().double()
                        if losses is not None:
                            losses.append(ctx.raw_loss)
                else:
                    for m in pl.fsdp:
                        m.set_requires_gradient_sync(i == last_b[v], recurse=False)
                    pl._arming = i == last_b[v]
                    pl.backward(saved.pop((i, v)))
                    pl._arming = False
        finally:
            set_rng_state(state, pl.device)
            pl.steps += 1
        for key in list(pl.works):
            pl._finish(key)
        pl.works, pl.mail = {}, {}
        work = dist.all_reduce(loss_sum, async_op=True) if pl.world > 1 else None
        pl.sync_grads()
        if work is not None:
            work.wait()
        return float(loss_sum)


def apply_plan(model, plan, loss_fn, example_inputs=(), example_kwargs=None, rank=None, world=None, device=None,
               analysis=None, rng_seed=None):
    """Places model (built the same on every rank, e.g. from one seed)
    under plan on this rank; torch.distributed must be initialised with R
    x S ranks (rank = replica x S + pipeline rank). example_inputs and
    example_kwargs: a batch like the ones step will take (its first
    micro-batch is run twice to find the module calls and what flows
    between them). rng_seed: the base of the steps' random streams
    (dropout's draws: stream_seed), default drawn from torch's generator
    on every rank and rank 0's kept. Returns a Placed: .schedule.step(...),
    .optimizer(...), .stage_parameters(), .stage_modules(), .gradients(),
    .an.effects (the modules whose train-mode result the plan changes:
    placer_torch.semantics)."""
    return Placed(model, plan, loss_fn, example_inputs, example_kwargs, rank, world, device, analysis, rng_seed)


# Processes on one machine.

# What a rank of launch() is doing (launch names it when the rank dies).
PHASES = ("starting", "joining the process group", "running", "at the final barrier",
          "destroying the process group", "exiting")


def _worker(rank, world, port, backend, fn, args, phase=None, environ=None):
    def at(i):
        if phase is not None:
            phase[rank] = i
    if environ is not None:  # the launching process's, as a spawned rank has it (a forkserver's is older)
        os.environ.clear()
        os.environ.update(environ)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    at(1)
    dist.init_process_group(backend, rank=rank, world_size=world)
    at(2)
    fn(rank, world, *args)  # an exception ends this process: spawn then ends the others, which may wait on it
    at(3)
    # What fn placed (a Placed is a cycle through the model's wrapped
    # forwards) holds process groups and their works: freed now, while the
    # interpreter is whole and no collective is running.
    gc.collect()
    dist.barrier()
    at(4)
    dist.destroy_process_group()
    at(5)
    # No interpreter teardown: a gloo thread still letting go of a finished
    # collective's tensor then takes the GIL of a finalizing interpreter,
    # and the process aborts ("terminate called without an active
    # exception", SIGABRT; seen under load, docs/torch-plan.md). fn's
    # results are written; the exit code is spawn's.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _ephemeral_low(path="/proc/sys/net/ipv4/ip_local_port_range"):
    """The lowest port the kernel hands out for outgoing connections and
    bind(0) (Linux's net.ipv4.ip_local_port_range; 32768 elsewhere, its
    default)."""
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(tries=64):
    """A TCP port free on 127.0.0.1 for a rendezvous, from below the
    kernel's ephemeral range: between this check and the store's bind, a
    port from that range can be taken by any process's outgoing connection
    (gloo's, for one), which made launches beside other launches fail with
    EADDRINUSE; below it only an explicit bind can take it. A random port
    in [10000, low) that binds now; else one bind(0) gives."""
    import random
    import socket

    low = _ephemeral_low()
    rng = random.SystemRandom()
    for _ in range(tries if low > 10000 else 0):
        port = rng.randrange(10000, low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RankDied(RuntimeError):
    """A rank of launch() ended by a signal: one line naming the rank, the
    signal and what it was doing (PHASES); done is whether fn had returned
    on that rank (its results written)."""

    def __init__(self, rank, world, signal, phase):
        self.rank, self.signal, self.phase = rank, signal, PHASES[phase]
        self.done = phase >= 3
        super().__init__("rank %d of %d died of %s %s%s" % (
            rank, world, signal, ("" if phase == 3 else "while ") + self.phase,
            ", after its work had finished (the gloo teardown race under load: run it again)" if self.done else ""))


# The processes launch starts: on Linux forked from a forkserver that has
# imported torch once (multiprocessing's forkserver with a preload,
# Python 3.4+; torch.multiprocessing.start_processes' start_method), not
# spawned, each of which imports torch anew (about 2.5 CPU s a rank on
# torch 2.14). The forkserver imports no more than this list and starts
# no threads or CUDA, so a fork of it is as clean as a spawn; each rank
# then takes the launching process's environment (_worker) as spawn would.
_PRELOAD = ["torch", "torch.distributed", "placer_torch.runner"]


def _start_method(mp):
    """forkserver (torch preloaded) on Linux, else spawn."""
    if sys.platform.startswith("linux") and "forkserver" in mp.get_all_start_methods():
        mp.get_context("forkserver").set_forkserver_preload(_PRELOAD)
        return "forkserver"
    return "spawn"


def launch(world, fn, args=(), backend=None):
    """Starts world processes on this machine (torch.multiprocessing,
    forkserver or spawn: _start_method) and runs fn(rank, world, *args) in
    each with torch.distributed initialised: gloo, or nccl when CUDA is
    there. A rank that raises: start_processes' exception (its traceback's
    last line is the error); a rank ended by a signal: RankDied."""
    import torch.multiprocessing as mp
    backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    method = _start_method(mp)
    phase = mp.get_context(method).RawArray("i", world)
    try:
        mp.start_processes(_worker, args=(world, free_port(), backend, fn, args, phase, dict(os.environ)),
                           nprocs=world, join=True, start_method=method)
    except mp.ProcessExitedException as e:
        if not getattr(e, "signal_name", None):
            raise
        raise RankDied(e.error_index, world, e.signal_name, phase[e.error_index]) from None
