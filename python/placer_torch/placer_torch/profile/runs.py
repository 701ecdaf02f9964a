"""Timed training steps of a tiny Llama (layers.py) under several plans on
CPU processes with gloo: the runs a CPU profile predicts
(placer_torch.profile.cpuloop). Not a trainer: each rank draws its own shards (no
checkpoint to match), and what Megatron-LM also reduces beside the plan's
collectives (replicated norms' gradients under sequence parallelism) is
left out; every collective the plan's costs count is run.

One launch runs every plan: its groups made once, the plans then timed in
interleaved rounds (plan A, B, C, ..., A, B, C, ...; each built for its
turn, a warm-up step and the timed steps, then dropped), so that a load
on the machine falls on every plan alike; a plan's time is the median of
its steps over the rounds.

Plan: "tp=T,pp=P,dp=D,mbs=B" (placer's keys), and sp=on (sequence
parallelism), recompute=full (each block checkpointed), fsdp=on
(FSDP2 over the data-parallel group) and, in a model with experts, ep
and etp (expert and expert-tensor parallelism; etp defaults to T, as
placer's). Rank layout Megatron-LM's: rank = t + T (d + D p); the
experts' groups Megatron-Core's expert mesh over each stage's ranks
(expert_mesh). A model with experts and dense_layers runs its first
dense_layers layers dense (layers.dense_config), as DeepSeek's. Data
parallelism: DistributedDataParallel where P = 1 and the experts (if
any) are replicated as the rest (its bucketed all-reduce beside the
last micro-batch's backward, no_sync before); else one flat all-reduce
after the step's backwards, and one of the experts' gradients over
their expert-data-parallel group.
Pipeline: 1F1B, activations and gradients between stages as BF16 (isend,
recv). AdamW over each rank's shards.

Prints one JSON object a line: {"plan", "step_s" (median), "steps": [...],
"loss"}: loss is the first round's warm-up step's loss (before any
update: the untrained model's, about ln(vocab) whichever the plan), the
mean over the last stage's ranks, taken outside the timed steps.
"""

import gc
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

from ..runner import free_port
from . import layers
from .measure import caching_malloc


def parse(plan):
    kv = dict(x.split("=") for x in plan.split(","))
    return int(kv.get("tp", 1)), int(kv.get("pp", 1)), int(kv.get("dp", 1)), int(kv.get("mbs", 1))


def flags(plan):
    """The plan's other keys: sequence parallelism, full recomputation, FSDP."""
    kv = dict(x.split("=") for x in plan.split(","))
    for k in kv:
        if k not in ("tp", "pp", "dp", "mbs", "sp", "recompute", "fsdp", "ep", "etp"):
            raise SystemExit("runs.py: plan %r: key %s is not run here" % (plan, k))
    if kv.get("recompute", "none") not in ("none", "full"):
        raise SystemExit("runs.py: plan %r: recompute=%s is not run here (none or full)" % (plan, kv["recompute"]))
    return kv.get("sp") == "on", kv.get("recompute") == "full", kv.get("fsdp") == "on"


def expert_degrees(plan):
    """The plan's expert-parallel and expert-tensor-parallel degrees: ep
    (default 1) and etp (default the tensor degree, as placer and
    Megatron-Core's expert_tensor_parallel_size default it)."""
    kv = dict(x.split("=") for x in plan.split(","))
    return int(kv.get("ep", 1)), int(kv.get("etp", kv.get("tp", 1)))


def expert_mesh(n, E, X):
    """Megatron-Core's experts' mesh over one stage's n = T x D ranks
    (each by its index t + T d in the stage; core_v0.16.0,
    megatron/core/parallel_state.py: expert-tensor innermost, then
    expert, then expert-data-parallel): the expert-tensor groups (X
    consecutive ranks), the expert-parallel groups (E ranks striding X)
    and the expert-data-parallel groups (n / (E X) ranks striding E X),
    each a list of the stage's indices."""
    ex = E * X
    etp = [list(range(f, f + X)) for f in range(0, n, X)]
    ep = [list(range(f + j, f + ex, X)) for f in range(0, n, ex) for j in range(X)]
    edp = [list(range(j, n, ex)) for j in range(ex)]
    return etp, ep, edp


def order(p, P, M):
    warm = min(P - 1 - p, M)
    out = [("F", i) for i in range(warm)]
    f, b = warm, 0
    while f < M:
        out += [("F", f), ("B", b)]
        f, b = f + 1, b + 1
    return out + [("B", i) for i in range(b, M)]


_GROUPS = {}


def group_of(ranks):
    """The process group of ranks, made once (every process asks for the
    same groups in the same order, as new_group needs)."""
    key = tuple(ranks)
    if key not in _GROUPS:
        _GROUPS[key] = dist.new_group(list(ranks))
    return _GROUPS[key]


class Rank:
    def __init__(self, plan, c, rank, world):
        T, P, D, mbs = parse(plan)
        sp, self.full, fsdp = flags(plan)
        E, X = expert_degrees(plan) if c.get("experts") else (1, 1)
        assert T * P * D == world, plan
        assert (T * D) % (E * X) == 0 and (E * X == 1 or not fsdp), plan
        self.T, self.P, self.D, self.mbs = T, P, D, mbs
        self.sp = sp and T > 1
        t, d, p = rank % T, (rank // T) % D, rank // (T * D)
        self.t, self.d, self.p = t, d, p
        glob = lambda t_, d_, p_: t_ + T * (d_ + D * p_)  # noqa: E731
        self.tg = self.dg = None
        for pp in range(P):  # every rank creates every group, in one order
            for dd in range(D):
                g = group_of([glob(x, dd, pp) for x in range(T)]) if T > 1 else None
                if (pp, dd) == (p, d):
                    self.tg = g
            for tt in range(T):
                g = group_of([glob(tt, x, pp) for x in range(D)]) if D > 1 else None
                if (pp, tt) == (p, t):
                    self.dg = g
        # The experts' groups: expert-tensor (xg), expert-parallel (eg)
        # and expert-data-parallel (edg, the replicas of the same expert
        # shards, over which their gradients are reduced), each stage's
        # T x D ranks laid out as Megatron-Core's expert mesh.
        self.xg = self.eg = self.edg = None
        mine = t + T * d
        for pp in range(P):
            for kind, groups in zip(("xg", "eg", "edg"), expert_mesh(T * D, E, X)):
                for local in groups:
                    g = group_of([x + T * D * pp for x in local]) if len(local) > 1 else None
                    if pp == p and mine in local:
                        setattr(self, kind, g)
        self.prev = glob(t, d, p - 1) if p > 0 else None
        self.next = glob(t, d, p + 1) if p < P - 1 else None
        torch.manual_seed(1 + rank)
        shard = layers.Shard(T, t, self.tg, self.sp)
        L = c["layers"]
        # Experts whose replicas are not the dense weights' (expert or
        # expert-tensor parallelism, or tensor parallelism: at etp 1 an
        # expert is whole on each of the tensor group's ranks).
        self.experts = bool(c.get("experts")) and (E * X > 1 or T > 1)
        self.blocks = torch.nn.ModuleList(self.block(c, shard, i, E, X) for i in range(p * L // P, (p + 1) * L // P))
        self.emb = layers.Embedding(c, shard) if p == 0 else None
        self.loss = layers.Loss(c, shard) if p == P - 1 else None
        self.model = torch.nn.ModuleList([m for m in (self.emb, self.blocks, self.loss) if m is not None])
        self.fsdp = fsdp and D > 1
        if self.fsdp:
            # FSDP2 (torch.distributed.fsdp.fully_shard) over the
            # data-parallel group, the embedding, each block and the loss
            # a unit, as torchtitan shards: every micro-batch its weights
            # all-gathered before its forward and again before its
            # backward, its gradients reduce-scattered after it (FSDP2's
            # default, which torchtitan keeps), as placer's fsdp=on. On a
            # CPU the weights are FP32, gathered as FP32.
            from torch.distributed.device_mesh import DeviceMesh
            from torch.distributed.fsdp import fully_shard
            mesh = DeviceMesh("cpu", dist.get_process_group_ranks(self.dg))
            self.units = [m for m in (self.emb, *self.blocks, self.loss) if m is not None]
            for m in self.units:
                fully_shard(m, mesh=mesh)
        # DDP where every weight is replicated over the data-parallel
        # group; where the experts' replicas are others (self.experts)
        # their gradients are reduced over their expert-data-parallel
        # group, the rest over the data-parallel one, after the step's
        # backwards.
        self.ddp = DDP(self.model, process_group=self.dg) if D > 1 and P == 1 and not self.fsdp and not self.experts else None
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, foreach=True)
        self.c = c
        self.M = c["batch"] // D // mbs
        self.cos, self.sin = layers.rope_for(c)
        g = torch.Generator().manual_seed(7 + d)
        self.ids = torch.randint(0, c["vocab"], (self.M, mbs, c["seq"]), generator=g)

    def block(self, c, shard, i, E, X):
        """Layer i: a dense layer where it is one of the model's first
        dense_layers (DeepSeek's first_k_dense_replace: the MLP of ffn),
        else the model's own (its experts over this rank's groups)."""
        if c.get("experts") and i < c.get("dense_layers", 0):
            return layers.Block(layers.dense_config(c), shard)
        return layers.Block(c, shard, E, self.eg, X, self.xg)

    def forward(self, i, x):
        if self.emb is not None:
            x = self.emb(self.ids[i])
        for b in self.blocks:
            if self.full:
                x = checkpoint(b, x, self.cos, self.sin, use_reentrant=False)
            else:
                x = b(x, self.cos, self.sin)
        if self.loss is not None:
            return self.loss(x, self.ids[i]) / self.M
        return x

    def step(self, record=False):
        """One training step; with record, the step's loss (the sum of its
        micro-batches' losses over M, on the last stage) is kept in
        self.step_loss (None on other stages)."""
        c, M = self.c, self.M
        self.step_loss = 0.0 if record and self.loss is not None else None
        shape = (c["seq"] // self.T if self.sp else c["seq"], self.mbs, c["hidden"])
        saved, works = {}, []
        for n, (kind, i) in enumerate(order(self.p, self.P, M)):
            last_b = kind == "B" and i == M - 1
            if kind == "F":
                x = None
                if self.prev is not None:
                    w = torch.empty(shape, dtype=layers.WIRE)
                    dist.recv(w, self.prev)
                    x = w.float().requires_grad_()
                if self.ddp is not None and i < M - 1:
                    with self.ddp.no_sync():
                        out = self.forward(i, x)
                else:
                    out = self.forward(i, x)
                if self.next is not None:
                    y = out.detach().to(layers.WIRE)
                    works.append((dist.isend(y, self.next), y))
                elif self.step_loss is not None:
                    self.step_loss += out.item()
                saved[i] = (x, out)
            else:
                x, out = saved.pop(i)
                if self.next is None:
                    grad = None
                else:
                    w = torch.empty(shape, dtype=layers.WIRE)
                    dist.recv(w, self.next)
                    grad = w.float()
                if self.ddp is not None and not last_b:
                    with self.ddp.no_sync():
                        out.backward(grad)
                else:
                    out.backward(grad)
                if self.prev is not None:
                    gx = x.grad.to(layers.WIRE)
                    works.append((dist.isend(gx, self.prev), gx))
        for w, _ in works:
            w.wait()
        if self.ddp is None and not self.fsdp:
            experts = {id(q) for b in self.blocks if b.moe is not None for q in (b.moe.w1, b.moe.w2)} if self.experts else set()
            for ids, g in ((False, self.dg), (True, self.edg)):
                gs = [q.grad for q in self.model.parameters() if q.grad is not None and (id(q) in experts) == ids]
                if g is not None and gs:
                    # One flat all-reduce, the sums copied back (as
                    # DDP's bucket is: its gradients not views of it).
                    flat = torch.cat([x.reshape(-1) for x in gs])
                    dist.all_reduce(flat, group=g)
                    for x, y in zip(gs, flat.split([x.numel() for x in gs])):
                        x.copy_(y.view_as(x))
        self.opt.step()
        self.opt.zero_grad(set_to_none=False)


def worker(rank, world, port, req):
    torch.set_num_threads(req["threads"])
    caching_malloc()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    times = {plan: [] for plan in req["plans"]}
    losses = {}
    for k in range(req["rounds"]):
        for plan in req["plans"]:
            # Each plan built for its turn and dropped after it, as a
            # user's launch holds one plan: with all eight resident, the
            # tensor-parallel plan's step was 392.6 ms against 352 alone
            # (docs/history.md). The process groups are made once.
            r = Rank(plan, req["model"], rank, world)
            r.step(record=k == 0)  # warm-up
            if k == 0:
                # The loss, mean over the last stage's ranks (outside the
                # timed steps).
                v = torch.tensor([r.step_loss or 0.0, float(r.step_loss is not None)], dtype=torch.float64)
                dist.all_reduce(v)
                losses[plan] = (v[0] / v[1]).item()
            for _ in range(req["steps"]):
                dist.barrier()
                t0 = time.perf_counter()
                r.step()
                dist.barrier()
                times[plan].append(time.perf_counter() - t0)
            del r
            gc.collect()
    if rank == 0:
        for plan in req["plans"]:
            print(json.dumps({"plan": plan, "step_s": statistics.median(times[plan]), "steps": times[plan],
                              "loss": losses[plan]}), flush=True)
    dist.destroy_process_group()


def main():
    req = json.loads(sys.argv[1])
    mp.spawn(worker, args=(req["procs"], free_port(), req), nprocs=req["procs"])


if __name__ == "__main__":
    main()
