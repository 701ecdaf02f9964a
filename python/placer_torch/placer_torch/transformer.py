"""Run a placer transformer plan (placer-transformer-plan; or
placer-torch-plan version 2, its spelling before it had a name of its
own): Megatron-LM-style tensor (T), pipeline (P) and data (D)
parallelism of a uniform GPT transformer, one training step, with
torch.distributed (docs/torch-plan.md, "Transformer plans").

What this is: a check of placer's arithmetic (the shards, the
collectives and the pipeline order a transformer plan implies give the
unsplit model's loss and gradients) where no real engine (torchtitan,
DeepSpeed, Megatron-LM) runs: on CPU, with gloo, on tiny models. It is
hand-written for that test and is not what a user trains with: a plan
this runner checks is trained with Megatron-LM (placer export --to
megatron) or a real engine of the user's.

The plan's "transformer" describes the model (a pre-norm GPT decoder);
"tensor", "pipeline" and "replicas" the degrees; "stages" which blocks each
pipeline stage holds. Rank layout (Megatron-LM's default order):
rank = t + T * (d + D * p) for tensor rank t, data-parallel rank d and
pipeline stage p; a tensor group is T consecutive ranks.

Every rank builds the unsplit model's parameters from the seed (tiny
models: this runner is a check of the parallel arithmetic, not a trainer
of big ones) and keeps its shards:

- column-parallel (QKV, fc1 / SwiGLU gate and up): rank t holds heads/T
  heads (kv_heads/T key/value heads) and ffn/T columns; its input goes
  through "copy to the tensor group" (identity forward, all-reduce
  backward), or with sequence parallelism an all-gather along the sequence
  (reduce-scatter backward);
- row-parallel (attention output, fc2): the matching input columns; its
  output goes through "reduce from the tensor group" (all-reduce forward,
  identity backward), or a reduce-scatter along the sequence (all-gather
  backward); the bias is added once, after the reduction;
- vocabulary-parallel embedding (vocab/T rows; tokens outside masked to
  zero, then reduced like a row-parallel output) and output layer with a
  vocabulary-parallel cross-entropy (max and sum of exponentials
  all-reduced over the tensor group; nobody gathers the logits);
- pipeline: activations and their gradients between stages with
  isend/recv, per micro-batch, GPipe or 1F1B order
  (placer_torch.runner.schedule_order);
- after the backward: with sequence parallelism the gradients of the
  norms, the row-parallel biases and the position embedding (computed on a
  sequence shard) are all-reduced over the tensor group; all gradients
  are averaged over the data-parallel group; with tied embeddings and
  P > 1 the two copies of the word embedding (first and last stage) are
  all-reduced over the embedding group.

gloo has no reduce-scatter in torch 1.13: it is an all-reduce followed by
taking one's own chunk (same values, more traffic).

run_megatron_plan(plan, rank, world) runs in every rank once
torch.distributed is initialised; compare(plan, results) checks ranks'
results against the unsplit model; run(path, check, seed) is what the
command line (tools/dev/torchplan/megatron.py, and torchplan.py for a
transformer plan) runs once its flags are parsed.
"""

import datetime
import math
import os
import shutil
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .collectives import (Comm, CopyToTensorGroup, GatherFromSequence, ReduceFromTensorGroup, ReduceScatterToSequence,
                          all_reduce)
from .plan import PLAN_FORMAT as MODULE_PLAN_FORMAT, TRANSFORMER_FORMAT, PlanError, read_json
from .runner import launch, schedule_order

PLAN_FORMAT = TRANSFORMER_FORMAT  # version 1
OLD_SPELLING = (MODULE_PLAN_FORMAT, 2)  # what placer wrote before
RTOL, ATOL = 1e-5, 1e-6
TIMEOUT = datetime.timedelta(seconds=120)
NORMS = ("layernorm", "rmsnorm")
ACTIVATIONS = ("gelu", "swiglu")


# ---------------------------------------------------------------- the plan

def load_megatron_plan(plan):
    """Reads a transformer plan (a path or a dict), checks it and returns
    (plan, cfg); cfg holds the transformer's sizes and the degrees. Bad
    input raises a one-line PlanError."""
    where = plan if isinstance(plan, str) else "plan"
    plan = read_json(plan, where)
    if not isinstance(plan, dict) or plan.get("format") not in (PLAN_FORMAT, OLD_SPELLING[0]):
        raise PlanError("%s: format %r, want %r" % (where, isinstance(plan, dict) and plan.get("format"), PLAN_FORMAT))
    if (plan["format"], plan.get("version")) not in ((PLAN_FORMAT, 1), OLD_SPELLING):
        raise PlanError("%s: %s version %r, this runner reads %s version 1 (and %s version %d)"
                        % ((where, plan["format"], plan.get("version"), PLAN_FORMAT) + OLD_SPELLING))
    tr = plan.get("transformer")
    if not isinstance(tr, dict):
        raise PlanError("%s: no transformer" % where)
    if tr.get("experts"):
        raise PlanError("%s: transformer.experts: a plan with experts runs in experts.py (torchplan.py sends it there)" % where)

    def pos_int(doc, key, default=None, what="transformer."):
        v = doc.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise PlanError("%s: %s%s %r, want a positive integer" % (where, what, key, v))
        return v

    c = {k: pos_int(tr, k) for k in ("layers", "hidden", "heads", "seq", "vocab", "batch")}
    c["kv_heads"] = pos_int(tr, "kv_heads", c["heads"])
    c["ffn"] = pos_int(tr, "ffn", 4 * c["hidden"])
    c["tied"] = bool(tr.get("tied", True))
    c["norm"] = tr.get("norm", "layernorm")
    c["activation"] = tr.get("activation", "gelu")
    if c["norm"] not in NORMS:
        raise PlanError("%s: transformer.norm %r, want one of %s" % (where, c["norm"], ", ".join(NORMS)))
    if c["activation"] not in ACTIVATIONS:
        raise PlanError("%s: transformer.activation %r, want one of %s" % (where, c["activation"], ", ".join(ACTIVATIONS)))
    T, P, D = (pos_int(plan, k, what="") for k in ("tensor", "pipeline", "replicas"))
    c.update(T=T, P=P, D=D)
    gpus = plan.get("gpus", T * P * D)
    if gpus != T * P * D:
        raise PlanError("%s: gpus %r is not tensor x pipeline x replicas = %d x %d x %d = %d"
                        % (where, gpus, T, P, D, T * P * D))
    c["gpus"] = gpus
    H, nh, nkv = c["hidden"], c["heads"], c["kv_heads"]
    if H % nh:
        raise PlanError("%s: hidden %d is not divisible by heads %d" % (where, H, nh))
    if nh % nkv:
        raise PlanError("%s: heads %d is not divisible by kv_heads %d" % (where, nh, nkv))
    for key in ("heads", "kv_heads", "ffn", "vocab"):
        if c[key] % T:
            raise PlanError("%s: tensor %d does not divide transformer.%s %d" % (where, T, key, c[key]))
    c["sp"] = bool(plan.get("sequence_parallel", False))
    if c["sp"] and c["seq"] % T:
        raise PlanError("%s: sequence_parallel: tensor %d does not divide seq %d" % (where, T, c["seq"]))
    if plan.get("schedule") not in ("gpipe", "1f1b"):
        raise PlanError("%s: schedule %r, want gpipe or 1f1b" % (where, plan.get("schedule")))
    M = pos_int(plan, "micro_batches", what="")
    B = c["batch"]
    mbs = plan.get("micro_batch_size", B // (D * M) if B % (D * M) == 0 else None)
    if mbs is None or isinstance(mbs, bool) or not isinstance(mbs, int) or mbs < 1 or D * M * mbs != B:
        raise PlanError("%s: batch %d is not replicas x micro_batches x micro_batch_size = %d x %d x %s"
                        % (where, B, D, M, mbs))
    c.update(M=M, mbs=mbs)
    stages = plan.get("stages")
    if not isinstance(stages, list) or len(stages) != P:
        raise PlanError("%s: %s stages for pipeline %d" % (where, len(stages) if isinstance(stages, list) else "no", P))
    layers = []
    for i, s in enumerate(stages):
        if not isinstance(s, dict) or s.get("stage") != i:
            raise PlanError("%s: stages[%d] is not stage %d" % (where, i, i))
        ls = s.get("layers", [])
        if not isinstance(ls, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in ls):
            raise PlanError("%s: stage %d: layers %r, want a list of layer indices" % (where, i, ls))
        layers.append(list(ls))
        if bool(s.get("embedding")) != (i == 0):
            raise PlanError("%s: stage %d: the embedding must be in stage 0 only" % (where, i))
        if bool(s.get("output")) != (i == P - 1):
            raise PlanError("%s: stage %d: the output layer must be in the last stage (%d) only" % (where, i, P - 1))
    flat = [x for ls in layers for x in ls]
    if flat != list(range(c["layers"])):
        raise PlanError("%s: the stages' layers %s are not layers 0..%d in order" % (where, layers, c["layers"] - 1))
    c["stage_layers"] = layers
    c["schedule"] = plan["schedule"]
    return plan, c


def coords(rank, c, layout="megatron"):
    """(t, d, p) of a plan-local rank: rank = t + T * (d + D * p). layout
    "swapped" (a deliberately wrong one, for the tests) reads rank = d + D
    * (t + T * p)."""
    T, D = c["T"], c["D"]
    if layout == "swapped":
        d, rest = rank % D, rank // D
        return rest % T, d, rest // T
    return rank % T, (rank // T) % D, rank // (T * D)


def rank_of(t, d, p, c, layout="megatron"):
    if layout == "swapped":
        return d + c["D"] * (t + c["T"] * p)
    return t + c["T"] * (d + c["D"] * p)


# ------------------------------------------------ the unsplit model (reference)

def param_shapes(c):
    """Name -> shape of the unsplit model's parameters, in order."""
    H, V, S, Fn = c["hidden"], c["vocab"], c["seq"], c["ffn"]
    hd = H // c["heads"]
    qkv = (c["heads"] + 2 * c["kv_heads"]) * hd
    fc1 = 2 * Fn if c["activation"] == "swiglu" else Fn
    out = {"embedding.word": (V, H), "embedding.pos": (S, H)}

    def norm(name):
        out[name + ".weight"] = (H,)
        if c["norm"] == "layernorm":
            out[name + ".bias"] = (H,)
    for i in range(c["layers"]):
        pre = "layers.%d." % i
        norm(pre + "norm1")
        out[pre + "qkv.weight"], out[pre + "qkv.bias"] = (qkv, H), (qkv,)
        out[pre + "proj.weight"], out[pre + "proj.bias"] = (H, c["heads"] * hd), (H,)
        norm(pre + "norm2")
        out[pre + "fc1.weight"], out[pre + "fc1.bias"] = (fc1, H), (fc1,)
        out[pre + "fc2.weight"], out[pre + "fc2.bias"] = (H, Fn), (H,)
    norm("final_norm")
    if not c["tied"]:
        out["output.weight"] = (V, H)
    return out


def reference_params(c, seed=0, dtype=torch.float64):
    """The unsplit model's parameters, drawn from seed (draw_params)."""
    return draw_params(param_shapes(c), seed, dtype)


def draw_params(shapes, seed=0, dtype=torch.float64):
    """Parameters of these shapes (name: shape, in order) drawn from seed:
    weights ~ N(0, 1/fan_in), embeddings ~ N(0, 1), biases and norm
    offsets ~ N(0, 0.1^2), norm scales ~ 1 + N(0, 0.1^2); large enough for
    the gradients to be far above the check's absolute tolerance."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in shapes.items():
        x = torch.randn(shape, generator=g, dtype=torch.float64)
        if name.startswith("embedding."):
            pass
        elif "norm" in name:
            x = (1 + 0.1 * x) if name.endswith(".weight") else 0.1 * x
        elif name.endswith(".bias"):
            x = 0.1 * x
        else:
            x = x / math.sqrt(shape[1])
        out[name] = x.to(dtype)
    return out


def batch_data(c, seed=0):
    """The global batch: token ids and targets, [batch, seq]."""
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)
    return ids, torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)


def _norm_ref(x, prm, name, c):
    if c["norm"] == "layernorm":
        return F.layer_norm(x, x.shape[-1:], prm[name + ".weight"], prm[name + ".bias"], 1e-5)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * prm[name + ".weight"]


def reference_loss(prm, c, ids, targets):
    """The unsplit model on the whole batch, written plainly in [batch,
    seq, hidden]: the mean cross-entropy over all tokens."""
    B, S = ids.shape
    nh, nkv, H = c["heads"], c["kv_heads"], c["hidden"]
    hd = H // nh
    h = prm["embedding.word"][ids] + prm["embedding.pos"][:S]
    causal = torch.ones(S, S, dtype=torch.bool).triu(1)
    for i in range(c["layers"]):
        pre = "layers.%d." % i
        x = _norm_ref(h, prm, pre + "norm1", c)
        q, k, v = F.linear(x, prm[pre + "qkv.weight"], prm[pre + "qkv.bias"]).split([nh * hd, nkv * hd, nkv * hd], -1)
        q = q.reshape(B, S, nh, hd).transpose(1, 2)
        k = k.reshape(B, S, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, 1)
        v = v.reshape(B, S, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, 1)
        a = (q @ k.transpose(-1, -2) / math.sqrt(hd)).masked_fill(causal, float("-inf")).softmax(-1)
        o = (a @ v).transpose(1, 2).reshape(B, S, nh * hd)
        h = h + F.linear(o, prm[pre + "proj.weight"], prm[pre + "proj.bias"])
        x = _norm_ref(h, prm, pre + "norm2", c)
        u = F.linear(x, prm[pre + "fc1.weight"], prm[pre + "fc1.bias"])
        if c["activation"] == "swiglu":
            gate, up = u.chunk(2, -1)
            u = F.silu(gate) * up
        else:
            u = F.gelu(u)
        h = h + F.linear(u, prm[pre + "fc2.weight"], prm[pre + "fc2.bias"])
    h = _norm_ref(h, prm, "final_norm", c)
    logits = F.linear(h, prm["embedding.word"] if c["tied"] else prm["output.weight"])
    return F.cross_entropy(logits.reshape(-1, c["vocab"]), targets.reshape(-1))


def reference_step(c, seed=0, dtype=torch.float64):
    """The unsplit model's loss and gradients on the global batch."""
    prm = {n: p.requires_grad_() for n, p in reference_params(c, seed, dtype).items()}
    ids, targets = batch_data(c, seed)
    loss = reference_loss(prm, c, ids, targets)
    loss.backward()
    return float(loss), {n: p.grad for n, p in prm.items()}


# ------------------------------------------------------------------ shards

def shard(name, full, c, t):
    """Tensor rank t's slice of the unsplit parameter (or gradient) `name`."""
    T = c["T"]
    if T == 1:
        return full
    hd = c["hidden"] // c["heads"]
    if ".qkv." in name:
        parts = full.split([c["heads"] * hd, c["kv_heads"] * hd, c["kv_heads"] * hd], 0)
        return torch.cat([x.chunk(T, 0)[t] for x in parts], 0)
    if ".fc1." in name:
        parts = full.chunk(2, 0) if c["activation"] == "swiglu" else (full,)
        return torch.cat([x.chunk(T, 0)[t] for x in parts], 0)
    if name.endswith("proj.weight") or name.endswith("fc2.weight"):
        return full.chunk(T, 1)[t]
    if name in ("embedding.word", "output.weight"):
        return full.chunk(T, 0)[t]
    return full


def sequence_parallel_param(name):
    """Parameters used on a sequence shard under sequence parallelism:
    their gradients are partial sums over the tensor group."""
    return "norm" in name or name.endswith("proj.bias") or name.endswith("fc2.bias") or name == "embedding.pos"


def stage_param_names(c, p):
    names = list(param_shapes(c))
    keep = []
    layers = set(c["stage_layers"][p])
    for n in names:
        if n.startswith("embedding."):
            if p == 0 or (n == "embedding.word" and c["tied"] and p == c["P"] - 1):
                keep.append(n)
        elif n.startswith("layers."):
            if int(n.split(".")[1]) in layers:
                keep.append(n)
        elif p == c["P"] - 1:
            keep.append(n)
    return keep


# ----------------------------------------------------------- communication

_GROUPS = {}


def _group(ranks):
    """The gloo group of these global ranks, created once (every rank of
    the world must call this for every group, in the same order)."""
    key = (id(dist.group.WORLD), tuple(sorted(ranks)))  # a new default group: new groups
    if key not in _GROUPS:
        _GROUPS[key] = dist.new_group(list(key[1]), timeout=TIMEOUT)
    return _GROUPS[key]


class VocabParallelCrossEntropy(torch.autograd.Function):
    """Cross-entropy of logits split over the vocabulary: [s, b, V/T] on
    tensor rank t holding vocabulary rows [start, start + V/T). The max, the
    target's logit and the sum of exponentials are all-reduced; the
    gradient (softmax - one-hot) is local. Returns per-token losses [s, b]."""

    @staticmethod
    def forward(ctx, logits, target, comm, start):
        n = logits.shape[-1]
        m = all_reduce(logits.max(-1)[0], comm, dist.ReduceOp.MAX)
        z = logits - m.unsqueeze(-1)
        outside = (target < start) | (target >= start + n)
        local = (target - start).masked_fill(outside, 0)
        picked = z.gather(-1, local.unsqueeze(-1)).squeeze(-1).masked_fill(outside, 0.0)
        picked = all_reduce(picked, comm)
        e = z.exp()
        total = all_reduce(e.sum(-1), comm)
        ctx.save_for_backward(e / total.unsqueeze(-1), local, outside)
        return total.log() - picked

    @staticmethod
    def backward(ctx, g):
        softmax, local, outside = ctx.saved_tensors
        onehot = torch.zeros_like(softmax).scatter_(-1, local.unsqueeze(-1), (~outside).unsqueeze(-1).to(softmax.dtype))
        return (softmax - onehot) * g.unsqueeze(-1), None, None, None


# -------------------------------------------------------- one rank's stage

class Stage:
    """Tensor rank t's shards of pipeline stage p, and its forward on one
    micro-batch ([seq, micro-batch, hidden] inside, as Megatron-LM)."""

    def __init__(self, c, p, t, tp, ref):
        self.c, self.p, self.t, self.tp = c, p, t, tp
        self.params = {n: shard(n, ref[n], c, t).clone().requires_grad_() for n in stage_param_names(c, p)}
        self.first, self.last = p == 0, p == c["P"] - 1

    def _norm(self, x, name):
        return _norm_ref(x, self.params, name, self.c)

    def _column_input(self, x):
        if self.c["sp"]:
            return GatherFromSequence.apply(x, self.tp)
        return CopyToTensorGroup.apply(x, self.tp)

    def _row_output(self, y):
        if self.c["sp"]:
            return ReduceScatterToSequence.apply(y, self.tp)
        return ReduceFromTensorGroup.apply(y, self.tp)

    def _block(self, h, i):
        c, prm, pre = self.c, self.params, "layers.%d." % i
        T = c["T"]
        nh, nkv, hd = c["heads"] // T, c["kv_heads"] // T, c["hidden"] // c["heads"]
        x = self._column_input(self._norm(h, pre + "norm1"))
        S, B = x.shape[:2]
        q, k, v = F.linear(x, prm[pre + "qkv.weight"], prm[pre + "qkv.bias"]).split([nh * hd, nkv * hd, nkv * hd], -1)
        q = q.reshape(S, B, nh, hd).permute(1, 2, 0, 3)
        k = k.reshape(S, B, nkv, hd).permute(1, 2, 0, 3).repeat_interleave(nh // nkv, 1)
        v = v.reshape(S, B, nkv, hd).permute(1, 2, 0, 3).repeat_interleave(nh // nkv, 1)
        causal = torch.ones(S, S, dtype=torch.bool).triu(1)
        a = (q @ k.transpose(-1, -2) / math.sqrt(hd)).masked_fill(causal, float("-inf")).softmax(-1)
        o = (a @ v).permute(2, 0, 1, 3).reshape(S, B, nh * hd)
        h = h + self._row_output(F.linear(o, prm[pre + "proj.weight"])) + prm[pre + "proj.bias"]
        x = self._column_input(self._norm(h, pre + "norm2"))
        u = F.linear(x, prm[pre + "fc1.weight"], prm[pre + "fc1.bias"])
        if c["activation"] == "swiglu":
            gate, up = u.chunk(2, -1)
            u = F.silu(gate) * up
        else:
            u = F.gelu(u)
        return h + self._row_output(F.linear(u, prm[pre + "fc2.weight"])) + prm[pre + "fc2.bias"]

    def forward(self, x, ids=None, targets=None):
        """x: the previous stage's output (None in stage 0); ids, targets:
        the micro-batch's [micro-batch, seq] tokens. Returns the output to
        send on, or in the last stage the micro-batch's per-token losses."""
        c, prm, T, t = self.c, self.params, self.c["T"], self.t
        if self.first:
            ids = ids.t()
            n = c["vocab"] // T
            outside = (ids < t * n) | (ids >= (t + 1) * n)
            h = F.embedding((ids - t * n).masked_fill(outside, 0), prm["embedding.word"])
            h = h.masked_fill(outside.unsqueeze(-1), 0.0)
            h = self._row_output(h)
            pos = prm["embedding.pos"]
            if c["sp"]:
                pos = pos.chunk(T, 0)[t]
            x = h + pos.unsqueeze(1)
        for i in c["stage_layers"][self.p]:
            x = self._block(x, i)
        if not self.last:
            return x
        x = self._column_input(self._norm(x, "final_norm"))
        w = prm["embedding.word"] if c["tied"] else prm["output.weight"]
        logits = F.linear(x, w)
        return VocabParallelCrossEntropy.apply(logits, targets.t(), self.tp, t * (c["vocab"] // T))


def make_groups(c, base, layout="megatron"):
    """Every group the plan needs, created in the same order on every rank
    of the world: tensor groups (same p, d), data-parallel groups (same p,
    t), embedding groups (first and last stage, same t, d; tied and P > 1)
    and the plan's whole set of ranks (point-to-point, the loss).
    Returns {kind: {key: global ranks}} and creates the gloo groups."""
    T, P, D = c["T"], c["P"], c["D"]

    def glob(t, d, p):
        return base[rank_of(t, d, p, c, layout)]
    kinds = {"tensor": {}, "data": {}, "embedding": {}, "all": {(): list(base)}}
    for p in range(P):
        for d in range(D):
            kinds["tensor"][(p, d)] = [glob(t, d, p) for t in range(T)]
        for t in range(T):
            kinds["data"][(p, t)] = [glob(t, d, p) for d in range(D)]
    if P > 1 and c["tied"]:
        for t in range(T):
            for d in range(D):
                kinds["embedding"][(t, d)] = [glob(t, d, 0), glob(t, d, P - 1)]
    for kind in ("tensor", "data", "embedding", "all"):
        for ranks in kinds[kind].values():
            _group(ranks)
    return kinds


def _comm(ranks, me):
    return Comm(_group(ranks), len(ranks), sorted(ranks).index(me))


def run_megatron_plan(plan, rank, world, seed=0, ranks=None, dtype=torch.float64, faults=()):
    """Runs one training step of the plan in this rank. torch.distributed
    must be initialised (gloo). ranks: the world's ranks that run the plan,
    in plan order (default: all; len(ranks) == gpus); every rank of the
    world must call this, those outside ranks only create the groups and
    return None. faults (tests only): "swapped" (a wrong rank layout),
    "no-embedding-allreduce", "no-sequence-allreduce", "no-data-allreduce".

    Returns {"rank": plan-local rank, "coords": (t, d, p), "loss": the
    global batch's mean loss (every rank), "grads": {name: this rank's
    gradient shard}} before any optimizer step."""
    plan, c = load_megatron_plan(plan)
    base = list(range(world)) if ranks is None else list(ranks)
    if len(base) != c["gpus"]:
        raise PlanError("the plan needs %d processes (tensor %d x pipeline %d x replicas %d), not %d"
                        % (c["gpus"], c["T"], c["P"], c["D"], len(base)))
    layout = "swapped" if "swapped" in faults else "megatron"
    kinds = make_groups(c, base, layout)
    if rank not in base:
        return None
    local = base.index(rank)
    t, d, p = coords(local, c, layout)
    T, P, D, M = c["T"], c["P"], c["D"], c["M"]
    tp = _comm(kinds["tensor"][(p, d)], rank)
    everyone = _group(kinds["all"][()])
    stage = Stage(c, p, t, tp, reference_params(c, seed, dtype))
    ids, targets = batch_data(c, seed)
    per = c["batch"] // D
    mbs = c["mbs"]
    micro = [(ids[d * per + i * mbs:d * per + (i + 1) * mbs], targets[d * per + i * mbs:d * per + (i + 1) * mbs])
             for i in range(M)]
    seq = c["seq"] // T if c["sp"] else c["seq"]
    shape = (seq, mbs, c["hidden"])
    prev = base[rank_of(t, d, p - 1, c, layout)] if p > 0 else None
    nxt = base[rank_of(t, d, p + 1, c, layout)] if p < P - 1 else None
    works, saved = [], {}
    loss_sum = torch.zeros((), dtype=dtype)
    tokens = mbs * c["seq"]
    for kind, i, _ in schedule_order(c["schedule"], p, P, M):
        if kind == "F":
            x = None
            if prev is not None:
                x = torch.empty(shape, dtype=dtype)
                dist.recv(x, prev, group=everyone)
                x.requires_grad_()
            out = stage.forward(x, *micro[i])
            if nxt is not None:
                y = out.detach().contiguous()
                works.append((dist.isend(y, nxt, group=everyone), y))
            else:
                out = out.sum() / (tokens * M)  # the replica's mean over its micro-batches
                loss_sum += out.detach()
            saved[i] = (x, out)
        else:
            x, out = saved.pop(i)
            if nxt is None:
                out.backward()
            else:
                g = torch.empty(shape, dtype=dtype)
                dist.recv(g, nxt, group=everyone)
                torch.autograd.backward(out, g)
            if prev is not None:
                gx = x.grad.contiguous()
                works.append((dist.isend(gx, prev, group=everyone), gx))
    for w, _ in works:
        w.wait()
    grads = {n: (q.grad if q.grad is not None else torch.zeros_like(q)) for n, q in stage.params.items()}
    # Sequence parallel: norms, row-parallel biases and positions saw one
    # sequence shard each; sum over the tensor group (one flat tensor).
    if c["sp"] and T > 1 and "no-sequence-allreduce" not in faults:
        _flat_all_reduce([g for n, g in grads.items() if sequence_parallel_param(n)], tp)
    # Data parallel: the average over the replicas.
    if D > 1 and "no-data-allreduce" not in faults:
        dp = _comm(kinds["data"][(p, t)], rank)
        gs = list(grads.values())
        _flat_all_reduce(gs, dp)
        for g in gs:
            g.div_(D)
    # Tied embeddings over stages: both copies get the sum.
    if (t, d) in kinds["embedding"] and p in (0, P - 1) and "no-embedding-allreduce" not in faults:
        _flat_all_reduce([grads["embedding.word"]], _comm(kinds["embedding"][(t, d)], rank))
    # The loss: last stage, tensor rank 0, averaged over the replicas.
    contrib = loss_sum.clone() if (p == P - 1 and t == 0) else torch.zeros((), dtype=dtype)
    dist.all_reduce(contrib, group=everyone)
    return {"rank": local, "coords": (t, d, p), "loss": float(contrib) / D,
            "grads": {n: g.detach().clone() for n, g in grads.items()}}


def _flat_all_reduce(tensors, comm):
    if comm.size == 1 or not tensors:
        return
    flat = torch.cat([g.reshape(-1) for g in tensors])
    dist.all_reduce(flat, group=comm.group)
    off = 0
    for g in tensors:
        g.copy_(flat[off:off + g.numel()].view_as(g))
        off += g.numel()


# ---------------------------------------------------------------- the check

def compare(plan, results, seed=0, dtype=torch.float64, rtol=RTOL, atol=ATOL):
    """Checks the ranks' results (a list indexed by plan-local rank, as
    run_megatron_plan returns them) against the unsplit model's step,
    reading rank r as coords(r) (Megatron's layout). Returns a list of
    one-line problems (empty: all match), and checks that every shard of
    every parameter was compared."""
    plan, c = load_megatron_plan(plan)
    want_loss, want = reference_step(c, seed, dtype)
    problems = []
    if len(results) != c["gpus"]:
        return ["%d results for %d ranks" % (len(results), c["gpus"])]
    seen = set()
    for r, res in enumerate(results):
        t, d, p = coords(r, c)
        where = "rank %d (t=%d d=%d p=%d)" % (r, t, d, p)
        if abs(res["loss"] - want_loss) > atol + rtol * abs(want_loss):
            problems.append("%s: loss %.12g, unsplit model %.12g" % (where, res["loss"], want_loss))
        expected = set(stage_param_names(c, p))
        if set(res["grads"]) != expected:
            problems.append("%s: gradients of %s, want %s" % (where, sorted(res["grads"]), sorted(expected)))
        for n, g in res["grads"].items():
            if n not in want:
                continue
            w = shard(n, want[n], c, t)
            if g.shape != w.shape:
                problems.append("%s: %s: shape %s, want %s" % (where, n, tuple(g.shape), tuple(w.shape)))
            elif not torch.allclose(g, w, rtol=rtol, atol=atol):
                problems.append("%s: %s: max difference %.3g (largest gradient %.3g)"
                                % (where, n, float((g - w).abs().max()), float(w.abs().max())))
            else:
                seen.add((n, t))
    missing = sorted(n for n in want for t in range(c["T"]) if (n, t) not in seen)
    if missing and not problems:
        problems.append("not compared: %s" % ", ".join(missing))
    return problems


# ---------------------------------------------------------- the command line

def _cli_rank(rank, world, plan, out_dir, seed):
    res = run_megatron_plan(plan, rank, world, seed=seed)
    if out_dir:
        torch.save(res, os.path.join(out_dir, "rank%d.pt" % rank))
    if rank == 0:
        print("loss %.9f" % res["loss"], flush=True)


def _print_check(plan, c, results, seed):
    problems = compare(plan, results, seed=seed)
    for line in problems:
        print("check: %s" % line, file=sys.stderr)
    if problems:
        return 1
    print("check: the loss and the gradients of %d ranks match the unsplit model" % c["gpus"])
    return 0


def run(path, check=False, seed=0):
    """python3 tools/dev/torchplan/torchplan.py --plan gpt.plan.json [--check]:
    one training step on tensor x pipeline x replicas CPU processes (gloo);
    prints the loss; check compares the loss and every rank's gradient
    shards with the unsplit model (exit 1 if any differs). Returns the exit
    status."""
    return run_command(path, check, seed, load_megatron_plan, _cli_rank, _print_check, "megatron-")


def run_command(path, check, seed, load, cli_rank, print_check, prefix):
    """The command line of a transformer plan's runner (this module's and
    placer_torch.experts'), its flags parsed (tools/dev/torchplan/megatron.py:
    --plan, --check, --seed; torchplan.py's module-plan options ignored).
    load(path) is (plan, config); cli_rank(rank, world, plan, out_dir,
    seed) runs one rank, saving its result in out_dir; print_check(plan,
    config, results, seed) prints the check and is the exit code. Under
    torchrun (RANK and WORLD_SIZE set) this process is one rank, without a
    check; else it launches config["gpus"] gloo processes. Returns the exit
    status: a bad plan is one line on stderr and 1."""
    try:
        plan, c = load(path)
        if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun: no check
            dist.init_process_group("gloo")
            cli_rank(dist.get_rank(), dist.get_world_size(), plan, None, seed)
            dist.destroy_process_group()
            return 0
        out_dir = tempfile.mkdtemp(prefix=prefix) if check else None
        try:
            launch(c["gpus"], cli_rank, (plan, out_dir, seed), backend="gloo")
            if check:
                results = [torch.load(os.path.join(out_dir, "rank%d.pt" % r)) for r in range(c["gpus"])]
                return print_check(plan, c, results, seed)
        finally:
            if out_dir:
                shutil.rmtree(out_dir, ignore_errors=True)
    except PlanError as e:
        print("torchplan: %s" % e, file=sys.stderr)
        return 1
    return 0
