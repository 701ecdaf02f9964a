"""Run a placer transformer plan with experts: a GPT whose MLPs are
mixtures of experts, in data and expert parallelism (Megatron-Core's
separate expert mesh), one training step with torch.distributed
(docs/torch-plan.md, "Experts").

What this is: a check of placer's arithmetic (the expert mesh, the
all-to-alls and the gradient reductions a plan with experts implies give
the unsplit model's loss and gradients) where no real engine (torchtitan,
DeepSpeed, Megatron-LM) runs: on CPU, with gloo, on tiny models. It is
hand-written for that test and is not what a user trains with.

The plan is a placer-transformer-plan whose "transformer" has "experts",
"topk" and "expert_ffn" (and "dense_layers": the dense blocks before the
first one with experts) and whose "expert_parallel" (EP), "expert_tensor"
(ETP, 1 here) and "expert_data" (EDP) say the experts' mesh; `placer export
--workload gpt:...,experts=4,topk=2,expert_ffn=32 --strategy ep=2,dp=4 --to
torch-plan` writes one. torchplan.py hands such a plan here.

The model is placer_torch.transformer's pre-norm GPT with, in each layer
from dense_layers on, the MLP replaced by a mixture of experts: a router
(a linear map hidden -> experts, no bias), each token going to its topk
highest-scoring experts with weights the softmax of those topk scores
(Mixtral's and Megatron-Core's default, softmax after top-k), and
`experts` MLPs of expert_ffn (the plan's activation, with biases); the
outputs weighted and summed. No capacity, no token dropped, no auxiliary
loss.

Ranks (tensor 1, pipeline 1: D = replicas ranks): rank d is data-parallel
rank d for everything but the experts: it runs samples [d B/D, (d+1) B/D)
and holds every parameter but the experts; those gradients are averaged
over all D ranks. The experts have their own mesh over the same ranks,
Megatron-Core's order: rank = e + EP x x for expert-parallel rank e and
expert-data-parallel rank x. Rank (e, x) holds experts [e E/EP, (e+1)
E/EP) of every MoE layer (only those: the others are not built); the
expert-parallel group (same x) is EP consecutive ranks, the
expert-data-parallel group (same e) strides EP.

In each MoE layer a rank routes its own tokens, sorts its (token, choice)
pairs by expert, exchanges the counts per expert with the expert-parallel
group (all_to_all_single), sends each token to the rank holding its
expert (all_to_all_single, the dispatch), runs each local expert on the
tokens it received from every rank (one GEMM per expert), sends the
outputs back (all_to_all_single, the combine; its backward is the
dispatch's reverse and the other way round), unsorts them and weights
them by the gates. After the backward an expert's gradient holds the
tokens of its whole expert-parallel group; it is summed over the
expert-data-parallel group and divided by D (not by EDP: the loss is the
mean over all D ranks' tokens), as Megatron-Core does.

gloo runs all_to_all_single (alltoall_base) since torch 1.7; the list
all_to_all only in recent torch (not used here).

run_experts_plan(plan, rank, world) runs in every rank once
torch.distributed is initialised; compare(plan, results) checks the ranks'
results against the unsplit model (reference_step, every token through
every expert, weighted by its gates: no dispatch at all); run(path,
check, seed) is what the command line (tools/dev/torchplan/experts.py, and
torchplan.py for a plan with experts) runs once its flags are parsed.
"""

import copy
import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

from . import transformer
from .collectives import AllToAll, all_to_all
from .plan import PlanError, is_experts_plan, read_json

RTOL, ATOL = transformer.RTOL, transformer.ATOL
MOE_KEYS = ("experts", "topk", "expert_ffn", "dense_layers")
MESH_KEYS = ("expert_parallel", "expert_tensor", "expert_data")
FAULTS = ("wrong-rank", "expert-data-mean", "no-expert-allreduce")


# ---------------------------------------------------------------- the plan

def load_experts_plan(plan):
    """Reads a transformer plan with experts (a path or a dict), checks it
    and returns (plan, cfg): transformer.load_megatron_plan's cfg plus experts,
    topk, expert_ffn, dense_layers, EP, ETP, EDP. Bad input raises a
    one-line PlanError."""
    where = plan if isinstance(plan, str) else "plan"
    plan = read_json(plan, where)
    if not is_experts_plan(plan):
        raise PlanError("%s: no transformer.experts: a dense transformer plan runs in megatron.py" % where)
    dense = copy.deepcopy(plan)
    tr = dense["transformer"]
    moe = {k: tr.pop(k, 0) for k in MOE_KEYS}
    mesh = {k: dense.pop(k, 0) for k in MESH_KEYS}
    _, c = transformer.load_megatron_plan(dense)  # the rest of the plan, as the transformer runner reads it
    for k, v in list(moe.items()) + list(mesh.items()):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise PlanError("%s: %s %r, want a non-negative integer" % (where, k, v))
    E, k, Fe, dl = moe["experts"], moe["topk"], moe["expert_ffn"], moe["dense_layers"]
    if not (1 <= k <= E) or Fe < 1 or dl >= c["layers"]:
        raise PlanError("%s: experts %d, topk %d, expert_ffn %d, dense_layers %d: want 1 <= topk <= experts, "
                        "expert_ffn >= 1 and a layer with experts" % (where, E, k, Fe, dl))
    T, P, D = c["T"], c["P"], c["D"]
    EP, ETP = mesh["expert_parallel"] or 1, mesh["expert_tensor"] or 1
    EDP = mesh["expert_data"] or (T * D // (EP * ETP) if T * D % (EP * ETP) == 0 else 0)
    if ETP * EP * EDP != T * D:
        raise PlanError("%s: expert_tensor %d x expert_parallel %d x expert_data %d is not tensor x replicas = %d x %d"
                        % (where, ETP, EP, EDP, T, D))
    if E % EP:
        raise PlanError("%s: expert_parallel %d does not divide the %d experts" % (where, EP, E))
    if T > 1 or P > 1 or ETP > 1:
        raise PlanError("%s: tensor %d, pipeline %d, expert_tensor %d: this runner runs experts in data and expert "
                        "parallelism only (tensor 1, pipeline 1)" % (where, T, P, ETP))
    c.update(experts=E, topk=k, expert_ffn=Fe, dense_layers=dl, EP=EP, ETP=ETP, EDP=EDP)
    return plan, c


def expert_coords(rank, c):
    """(e, x) of a plan-local rank: expert-parallel rank e, expert-data-parallel
    rank x; rank = e + EP x (Megatron-Core's order, expert-tensor 1)."""
    return rank % c["EP"], rank // c["EP"]


def local_experts(c, e):
    """The experts expert-parallel rank e holds."""
    n = c["experts"] // c["EP"]
    return list(range(e * n, (e + 1) * n))


def is_moe_layer(c, i):
    return i >= c["dense_layers"]


# ------------------------------------------------ the unsplit model (reference)

def param_shapes(c):
    """Name -> shape of the unsplit model's parameters, in order: the transformer's,
    each MoE layer's fc1 and fc2 replaced by its router and experts
    (layers.i.router.weight, layers.i.experts.j.fc1.weight, ...)."""
    H, E, Fe = c["hidden"], c["experts"], c["expert_ffn"]
    fc1 = 2 * Fe if c["activation"] == "swiglu" else Fe
    out = {}
    for name, shape in transformer.param_shapes(c).items():
        parts = name.split(".")
        if parts[0] == "layers" and is_moe_layer(c, int(parts[1])) and parts[2] in ("fc1", "fc2"):
            if name.endswith("fc1.weight"):
                pre = "layers.%s." % parts[1]
                out[pre + "router.weight"] = (E, H)
                for j in range(E):
                    q = pre + "experts.%d." % j
                    out[q + "fc1.weight"], out[q + "fc1.bias"] = (fc1, H), (fc1,)
                    out[q + "fc2.weight"], out[q + "fc2.bias"] = (H, Fe), (H,)
            continue
        out[name] = shape
    return out


def expert_of(name):
    """The expert a parameter belongs to, or None (replicated)."""
    parts = name.split(".")
    return int(parts[3]) if len(parts) > 3 and parts[2] == "experts" else None


def reference_params(c, seed=0, dtype=torch.float64):
    """The unsplit model's parameters drawn from seed by the transformer's rule
    (transformer.draw_params), the router a weight."""
    return transformer.draw_params(param_shapes(c), seed, dtype)


def _mlp(x, prm, pre, c):
    u = F.linear(x, prm[pre + "fc1.weight"], prm[pre + "fc1.bias"])
    if c["activation"] == "swiglu":
        gate, up = u.chunk(2, -1)
        u = F.silu(gate) * up
    else:
        u = F.gelu(u)
    return F.linear(u, prm[pre + "fc2.weight"], prm[pre + "fc2.bias"])


def route(x, w, k):
    """Tokens x [N, H], router weight w [E, H]: the gates [N, k] (softmax of
    the top-k scores) and the experts [N, k] of each token."""
    top, idx = F.linear(x, w).topk(k, -1)
    return top.softmax(-1), idx


def reference_moe(x, prm, i, c):
    """The mixture of experts written plainly: every token through every
    expert, weighted by its gate (zero outside its top-k)."""
    pre = "layers.%d." % i
    shape = x.shape
    x = x.reshape(-1, shape[-1])
    gates, idx = route(x, prm[pre + "router.weight"], c["topk"])
    weight = torch.zeros(x.shape[0], c["experts"], dtype=x.dtype).scatter(1, idx, gates)
    y = sum(weight[:, j:j + 1] * _mlp(x, prm, pre + "experts.%d." % j, c) for j in range(c["experts"]))
    return y.reshape(shape)


def _attention(h, prm, pre, c):
    B, S, H = h.shape
    nh, nkv = c["heads"], c["kv_heads"]
    hd = H // nh
    x = transformer._norm_ref(h, prm, pre + "norm1", c)
    q, k, v = F.linear(x, prm[pre + "qkv.weight"], prm[pre + "qkv.bias"]).split([nh * hd, nkv * hd, nkv * hd], -1)
    q = q.reshape(B, S, nh, hd).transpose(1, 2)
    k = k.reshape(B, S, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, 1)
    v = v.reshape(B, S, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, 1)
    causal = torch.ones(S, S, dtype=torch.bool).triu(1)
    a = (q @ k.transpose(-1, -2) / math.sqrt(hd)).masked_fill(causal, float("-inf")).softmax(-1)
    o = (a @ v).transpose(1, 2).reshape(B, S, nh * hd)
    return h + F.linear(o, prm[pre + "proj.weight"], prm[pre + "proj.bias"])


def model_loss(prm, c, ids, targets, moe=reference_moe):
    """The model on a batch ([batch, seq] tokens), the mean cross-entropy
    over its tokens; moe(x, prm, i, c) is layer i's mixture of experts."""
    S = ids.shape[1]
    h = prm["embedding.word"][ids] + prm["embedding.pos"][:S]
    for i in range(c["layers"]):
        pre = "layers.%d." % i
        h = _attention(h, prm, pre, c)
        x = transformer._norm_ref(h, prm, pre + "norm2", c)
        h = h + (moe(x, prm, i, c) if is_moe_layer(c, i) else _mlp(x, prm, pre, c))
    h = transformer._norm_ref(h, prm, "final_norm", c)
    logits = F.linear(h, prm["embedding.word"] if c["tied"] else prm["output.weight"])
    return F.cross_entropy(logits.reshape(-1, c["vocab"]), targets.reshape(-1))


def reference_step(c, seed=0, dtype=torch.float64):
    """The unsplit model's loss and gradients on the global batch."""
    prm = {n: p.requires_grad_() for n, p in reference_params(c, seed, dtype).items()}
    ids, targets = transformer.batch_data(c, seed)
    loss = model_loss(prm, c, ids, targets)
    loss.backward()
    return float(loss.detach()), {n: p.grad for n, p in prm.items()}


# -------------------------------------------------------- one rank's model

class Rank:
    """One rank's parameters (every replicated one and its experts) and
    its forward on a micro-batch, the experts' tokens dispatched over the
    expert-parallel group."""

    def __init__(self, c, rank, ep, ref, faults=()):
        self.c, self.ep, self.faults = c, ep, faults
        self.e, self.x = expert_coords(rank, c)
        self.local = local_experts(c, self.e)
        self.params = {n: p.clone().requires_grad_() for n, p in ref.items()
                       if expert_of(n) is None or expert_of(n) in self.local}
        self.sent = self.received = 0  # tokens (x top-k choices) to and from other ranks

    def moe(self, x, prm, i, c):
        EP, n, k = c["EP"], c["experts"] // c["EP"], c["topk"]
        pre = "layers.%d." % i
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        gates, idx = route(x, prm[pre + "router.weight"], k)
        expert = idx.reshape(-1)  # the expert of each (token, choice), token-major
        dest = expert // n  # the expert-parallel rank holding it
        if "wrong-rank" in self.faults:  # a broken dispatch: to the next rank, its expert of the same index
            dest = (dest + 1) % EP
        key = dest * n + expert % n  # rank, then its local expert
        order = torch.sort(key, stable=True)[1]
        counts = torch.bincount(key, minlength=EP * n)
        got = all_to_all(counts, self.ep, [n] * EP, [n] * EP).view(EP, n)  # [source, local expert]
        send, recv = counts.view(EP, n).sum(1).tolist(), got.sum(1).tolist()
        me = self.ep.index
        self.sent += sum(send) - send[me]
        self.received += sum(recv) - recv[me]
        tokens = AllToAll.apply(x[order // k], self.ep, send, recv)  # dispatch
        chunks = list(tokens.split(got.reshape(-1).tolist()))  # source-major, then local expert
        for j in range(n):  # each local expert on what every source sent it
            ins = [chunks[s * n + j] for s in range(EP)]
            ys = _mlp(torch.cat(ins), prm, pre + "experts.%d." % self.local[j], c)
            for s, y in enumerate(ys.split([len(t) for t in ins])):
                chunks[s * n + j] = y
        back = AllToAll.apply(torch.cat(chunks), self.ep, recv, send)  # combine
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(len(order))
        y = (back[inverse].view(-1, k, shape[-1]) * gates.unsqueeze(-1)).sum(1)
        return y.reshape(shape)

    def loss(self, ids, targets):
        return model_loss(self.params, self.c, ids, targets, moe=self.moe)


def make_groups(c, base):
    """The groups, created in the same order on every rank of the world:
    the expert-parallel groups (same x), the expert-data-parallel groups
    (same e) and the data-parallel group (every rank)."""
    EP, EDP = c["EP"], c["EDP"]
    kinds = {"expert": {x: [base[e + EP * x] for e in range(EP)] for x in range(EDP)},
             "expert_data": {e: [base[e + EP * x] for x in range(EDP)] for e in range(EP)},
             "data": {(): list(base)}}
    for kind in ("expert", "expert_data", "data"):
        for ranks in kinds[kind].values():
            transformer._group(ranks)
    return kinds


def run_experts_plan(plan, rank, world, seed=0, ranks=None, dtype=torch.float64, faults=()):
    """Runs one training step of the plan in this rank (torch.distributed
    initialised, gloo). ranks: the world's ranks that run the plan (default
    all); every rank of the world must call this, those outside ranks only
    create the groups and return None. faults (tests only): "wrong-rank"
    (tokens dispatched to the next expert-parallel rank), "expert-data-mean"
    (expert gradients divided by EDP instead of D), "no-expert-allreduce".

    Returns {"rank", "coords": (e, x), "experts": the experts it holds,
    "loss": the global batch's mean (every rank), "grads": {name: gradient}
    of the parameters it holds, "sent", "received": the (token, choice)
    pairs it dispatched to and received from other ranks} before any
    optimizer step."""
    plan, c = load_experts_plan(plan)
    base = list(range(world)) if ranks is None else list(ranks)
    if len(base) != c["gpus"]:
        raise PlanError("the plan needs %d processes (replicas %d), not %d" % (c["gpus"], c["D"], len(base)))
    kinds = make_groups(c, base)
    if rank not in base:
        return None
    local = base.index(rank)
    D, M, mbs = c["D"], c["M"], c["mbs"]
    e, x = expert_coords(local, c)
    ep = transformer._comm(kinds["expert"][x], rank)
    me = Rank(c, local, ep, reference_params(c, seed, dtype), faults)
    ids, targets = transformer.batch_data(c, seed)
    per = c["batch"] // D
    loss_sum = torch.zeros((), dtype=dtype)
    for i in range(M):  # gradient accumulation: micro-batch by micro-batch (every rank in the same order)
        lo = local * per + i * mbs
        loss = me.loss(ids[lo:lo + mbs], targets[lo:lo + mbs]) / M
        loss.backward()
        loss_sum += loss.detach()
    grads = {n: (q.grad if q.grad is not None else torch.zeros_like(q)) for n, q in me.params.items()}
    replicated = [g for n, g in grads.items() if expert_of(n) is None]
    experts = [g for n, g in grads.items() if expert_of(n) is not None]
    transformer._flat_all_reduce(replicated, transformer._comm(kinds["data"][()], rank))
    if "no-expert-allreduce" not in faults:
        transformer._flat_all_reduce(experts, transformer._comm(kinds["expert_data"][e], rank))
    for g in replicated:
        g.div_(D)
    for g in experts:
        g.div_(c["EDP"] if "expert-data-mean" in faults else D)
    dist.all_reduce(loss_sum, group=transformer._group(kinds["data"][()]))
    return {"rank": local, "coords": (e, x), "experts": me.local, "loss": float(loss_sum) / D,
            "grads": {n: g.detach().clone() for n, g in grads.items()}, "sent": me.sent, "received": me.received}


# ---------------------------------------------------------------- the check

def held_names(c, rank):
    """The parameters plan-local rank holds: every replicated one, and its
    experts of each MoE layer."""
    mine = set(local_experts(c, expert_coords(rank, c)[0]))
    return [n for n in param_shapes(c) if expert_of(n) is None or expert_of(n) in mine]


def compare(plan, results, seed=0, dtype=torch.float64, rtol=RTOL, atol=ATOL):
    """Checks the ranks' results (a list indexed by plan-local rank) against
    the unsplit model's step. Returns (problems, stats): one-line problems
    (empty: all match) and {"loss", "want_loss", "params", "compared",
    "max_abs", "max_rel", "max_abs_experts"}; every parameter must be compared on some
    rank, each rank must hold exactly its experts."""
    plan, c = load_experts_plan(plan)
    want_loss, want = reference_step(c, seed, dtype)
    stats = {"want_loss": want_loss, "loss": None, "params": len(want), "compared": 0, "max_abs": 0.0,
             "max_rel": 0.0, "max_abs_experts": 0.0}
    if len(results) != c["gpus"]:
        return ["%d results for %d ranks" % (len(results), c["gpus"])], stats
    problems, seen = [], set()
    for r, res in enumerate(results):
        e, x = expert_coords(r, c)
        where = "rank %d (expert-parallel %d, expert-data %d)" % (r, e, x)
        stats["loss"] = res["loss"]
        if abs(res["loss"] - want_loss) > atol + rtol * abs(want_loss):
            problems.append("%s: loss %.12g, unsplit model %.12g" % (where, res["loss"], want_loss))
        if list(res["experts"]) != local_experts(c, e):
            problems.append("%s: experts %s, want %s" % (where, res["experts"], local_experts(c, e)))
        expected = set(held_names(c, r))
        got = set(res["grads"])
        if got != expected:
            problems.append("%s: holds gradients of %s it should not, lacks %s" % (where, sorted(got - expected) or "none",
                                                                                  sorted(expected - got) or "none"))
        for n, g in res["grads"].items():
            if n not in want:
                continue
            w = want[n]
            if g.shape != w.shape:
                problems.append("%s: %s: shape %s, want %s" % (where, n, tuple(g.shape), tuple(w.shape)))
                continue
            diff = float((g - w).abs().max())
            big = w.abs() >= 1e-6
            rel = float(((g - w).abs()[big] / w.abs()[big]).max()) if bool(big.any()) else 0.0
            stats["max_abs"] = max(stats["max_abs"], diff)
            stats["max_rel"] = max(stats["max_rel"], rel)
            if expert_of(n) is not None:
                stats["max_abs_experts"] = max(stats["max_abs_experts"], diff)
            if not torch.allclose(g, w, rtol=rtol, atol=atol):
                problems.append("%s: %s: max difference %.3g (largest gradient %.3g)" % (where, n, diff, float(w.abs().max())))
            else:
                seen.add(n)
                stats["compared"] += 1
    missing = sorted(n for n in want if n not in seen)
    if missing and not problems:
        problems.append("not compared: %s" % ", ".join(missing))
    return problems, stats


# ---------------------------------------------------------- the command line

def _cli_rank(rank, world, plan, out_dir, seed):
    res = run_experts_plan(plan, rank, world, seed=seed)
    if out_dir:
        torch.save(res, os.path.join(out_dir, "rank%d.pt" % rank))
    print("rank %d (expert-parallel %d, expert-data %d): experts %s, loss %.9f, %d (token, choice) pairs sent to "
          "and %d received from other ranks" % ((rank,) + tuple(res["coords"]) + (res["experts"], res["loss"],
                                                                               res["sent"], res["received"])),
          flush=True)


def _print_check(plan, c, results, seed):
    problems, st = compare(plan, results, seed=seed)
    for line in problems:
        print("check: %s" % line, file=sys.stderr)
    print("check: loss %.12g (unsplit %.12g); gradients of %d parameters on %d ranks, %d (rank, "
          "parameter) pairs compared (each rank its %d of %d experts per MoE layer): max abs difference "
          "%.3g (experts %.3g), max rel difference %.3g (elements >= 1e-6); rtol %g, atol %g: %s"
          % (st["loss"], st["want_loss"], st["params"], c["gpus"], st["compared"], c["experts"] // c["EP"],
             c["experts"], st["max_abs"], st["max_abs_experts"], st["max_rel"], RTOL, ATOL,
             "FAILED" if problems else "ok"))
    return 1 if problems else 0


def run(path, check=False, seed=0):
    """python3 tools/dev/torchplan/torchplan.py --plan moe.plan.json [--check]:
    one training step on `replicas` CPU processes (gloo), experts split
    over the expert-parallel groups; check compares the loss and every
    rank's gradients with the unsplit model (exit 1 if any differs).
    Returns the exit status."""
    return transformer.run_command(path, check, seed, load_experts_plan, _cli_rank, _print_check, "experts-")
