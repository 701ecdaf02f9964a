"""A plan's step against the unsplit model's (torchplan.py --check, the
tests): the loss and every parameter's gradient, on every rank."""

import gc

import torch
import torch.distributed as dist

from .plan import load_plan
from .runner import apply_plan, split_batch

RTOL, ATOL = 1e-5, 1e-6


def reference_step(model_fn, inputs, kwargs, target, loss_fn, seed=0, mode="train"):
    """The unsplit model's step on the whole batch: (loss, {name: grad})."""
    torch.manual_seed(seed)
    model = model_fn()
    model.train(mode == "train")
    loss = loss_fn(model(*inputs, **kwargs), target)
    loss.backward()
    return float(loss.detach()), {n: (p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p))
                         for n, p in model.named_parameters()}


def replica_batch(plan, replica, inputs, kwargs, target):
    """Replica r's part of the global batch (torch.tensor_split)."""
    keys = list(kwargs)
    vals = list(inputs) + [kwargs[k] for k in keys] + [target]
    parts, _ = split_batch(vals, plan["replicas"], "the global batch")
    p = parts[replica]
    return p[:len(inputs)], dict(zip(keys, p[len(inputs):-1])), p[-1]


def run_step(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed=0, mode="train", device=None,
             analysis=None, steps=1):
    """Builds the model (seed), places it and runs one step of the global
    batch (steps > 1: that many, the gradients set to None between them,
    no optimizer step); returns (placed, the last loss)."""
    plan = load_plan(plan)
    S = len(plan["stages"]) // plan["virtual"]
    torch.manual_seed(seed)
    model = model_fn()
    model.train(mode == "train")
    a, k, t = replica_batch(plan, rank // S, inputs, kwargs, target)
    placed = apply_plan(model, plan, loss_fn, example_inputs=a, example_kwargs=k, rank=rank, world=world,
                        device=device, analysis=analysis)
    if plan["shard"] == "zero2":
        placed.optimizer(torch.optim.SGD, lr=0.0)
    for i in range(steps):
        if i:
            for p in placed.stage_parameters():
                p.grad = None
        loss = placed.schedule.step(*a, target=t, batch=target.shape[0], **k)
    return placed, loss


def check(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed=0, mode="train", steps=1):
    """Runs the plan's step on every rank and the unsplit one on rank 0
    (its loss and gradients sent to every rank); returns the
    same dict on every rank: loss, want_loss, max_abs, max_rel (over
    elements with |want| >= 1e-6), worst (max |got - want| / (atol + rtol
    |want|): above 1 fails), compared (parameters), missing (parameters no
    rank holds a gradient of), param_bytes_per_rank and
    buffer_bytes_per_rank (held_bytes after the step), ok."""
    # The unsplit step first, on rank 0 only, its model freed before the
    # plan's is built, and its loss and gradients sent to the others: no
    # rank holds a second model with the whole batch's activations beside
    # the plan's (GPT-2 small on 4 gloo ranks was killed for memory when
    # every rank ran it after its plan's step).
    ref = [None, None]
    if rank == 0:
        ref = list(reference_step(model_fn, inputs, kwargs, target, loss_fn, seed, mode))
        gc.collect()
    dist.broadcast_object_list(ref, src=0)
    want_loss, want = ref
    del ref
    placed, loss = run_step(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed, mode, steps=steps)
    got = placed.gradients()
    abs_d = rel_d = worst = 0.0
    for n, g in got.items():
        w = want[n]
        d = (g.double() - w.double()).abs()
        abs_d = max(abs_d, float(d.max()) if d.numel() else 0.0)
        big = w.abs() >= 1e-6
        if bool(big.any()):
            rel_d = max(rel_d, float((d[big] / w.double().abs()[big]).max()))
        worst = max(worst, float((d / (ATOL + RTOL * w.double().abs())).max()) if d.numel() else 0.0)
    lw = abs(loss - want_loss) / (ATOL + RTOL * abs(want_loss))
    sharded = torch.tensor([sum(1 for p in placed.stage_parameters() if hasattr(p, "full_tensor"))])
    dist.all_reduce(sharded)
    names = [None] * world
    dist.all_gather_object(names, sorted(got))
    nbytes = [None] * world
    dist.all_gather_object(nbytes, held_bytes(placed.model))
    held = set().union(*map(set, names))
    missing = sorted(set(want) - held)
    t = torch.tensor([abs_d, rel_d, worst, lw], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    abs_d, rel_d, worst, lw = (float(x) for x in t)
    return {"loss": loss, "want_loss": want_loss, "max_abs": abs_d, "max_rel": rel_d, "worst": worst,
            "loss_worst": lw, "compared": len(held), "missing": missing, "held_per_rank": [len(n) for n in names],
            "sharded": int(sharded), "stages_per_parameter": max(len(r) for r in placed.an.readers.values()),
            "param_bytes_per_rank": [b[0] for b in nbytes], "buffer_bytes_per_rank": [b[1] for b in nbytes],
            "ok": worst <= 1.0 and lw <= 1.0 and not missing}


def held_bytes(model):
    """(parameter bytes, buffer bytes) this rank holds of model: each
    tensor once, those on the meta device (another stage's) not counted."""
    def size(ts):
        ts = [t.to_local() if hasattr(t, "to_local") else t for t in ts]  # FSDP's: this rank's shard
        return sum(t.numel() * t.element_size() for t in ts if t.device.type != "meta")
    return size(model.parameters()), size(model.buffers())
