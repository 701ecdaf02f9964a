"""A plan's step against the unsplit model's (torchplan.py --check, the
tests): the loss and every parameter's gradient, on every rank.

The reference is the plan's own semantics (docs/torch-plan.md, "Train
mode under a plan"): the unsplit model run micro-batch by micro-batch,
replica by replica, each micro-batch's loss scaled by its share of the
global batch and the gradients accumulated, so that BatchNorm normalizes
each micro-batch with its own statistics as the plan's stages do, and
with the plan's random streams (placer_torch.runner.UnitStreams: the same
seeds at the same unit boundaries), so that dropout and stochastic depth
draw what the plan's ranks draw. Without batch statistics and random
draws (eval mode, or a model with neither) that is the unsplit step on
the whole batch up to rounding."""

import gc

import torch
import torch.distributed as dist

from .plan import load_plan
from .runner import Analysis, UnitStreams, apply_plan, split_batch
from .semantics import OWN_GENERATOR, RANDOM, TORCH_RNG_CLASSES, changed_by_plan

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


def _eval(model, names):
    """The named modules in eval mode, each alone (not its children): what
    draws in its own forward (a DropPath, an attention's functional
    dropout) stops; its children's draws are theirs."""
    for n in names:
        model.get_submodule(n).training = False


def plan_reference_step(model_fn, plan, inputs, kwargs, target, loss_fn, seed=0, mode="train", rng_seed=0, step=0,
                        eval_modules=None, whole=False):
    """The unsplit model's step as the plan computes it (the module's
    doc), with the random streams of the plan's step number step from base
    rng_seed. eval_modules: modules put in eval mode (None: those drawing
    from a torch.Generator of their own, which no seed aligns). Returns a
    dict of loss, grads ({name: gradient}), effects (the modules whose
    train-mode result the plan changes, placer_torch.semantics: in eval
    mode none), eval_modules, and whole_loss: with whole and such modules,
    the unsplit model's loss on the whole batch in one forward (no
    gradients), else None."""
    plan = load_plan(plan)
    torch.manual_seed(seed)
    model = model_fn()
    model.train(mode == "train")
    B = target.shape[0]
    R, M = plan["replicas"], plan["micro_batches"]
    keys = list(kwargs)
    batches = []
    for r in range(R):
        a, k, t = replica_batch(plan, r, inputs, kwargs, target)
        parts, sizes = split_batch(list(a) + [k[n] for n in keys] + [t], M, "a replica's batch")
        batches.append([(p[:len(a)], dict(zip(keys, p[len(a):-1])), p[-1], b) for p, b in zip(parts, sizes)])
    a0, k0, _, _ = batches[0][0]
    an = Analysis(model, plan, a0, k0)
    effects = an.effects if mode == "train" else []
    if eval_modules is None:
        eval_modules = [e["module"] for e in effects if e["effect"] == OWN_GENERATOR]
    _eval(model, eval_modules)
    streams = UnitStreams(model, an, rng_seed)
    loss_sum = torch.zeros((), dtype=torch.float64)
    try:
        for r, mbs in enumerate(batches):
            for i, (a, k, t, b) in enumerate(mbs):
                streams.begin(step, r, i)
                try:
                    loss = loss_fn(model(*a, **k), t) * (b / B)
                finally:
                    streams.end()
                loss.backward()
                loss_sum += loss.detach().double()
    finally:
        streams.remove()
    out = {"loss": float(loss_sum), "effects": effects, "eval_modules": list(eval_modules), "whole_loss": None,
           "grads": {n: (p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p))
                     for n, p in model.named_parameters()}}
    if whole and changed_by_plan(effects, R, M):
        torch.manual_seed(seed)
        with torch.no_grad():
            out["whole_loss"] = float(loss_fn(model(*inputs, **kwargs), target))
    return out


def replica_batch(plan, replica, inputs, kwargs, target):
    """Replica r's part of the global batch (torch.tensor_split)."""
    keys = list(kwargs)
    vals = list(inputs) + [kwargs[k] for k in keys] + [target]
    parts, _ = split_batch(vals, plan["replicas"], "the global batch")
    p = parts[replica]
    return p[:len(inputs)], dict(zip(keys, p[len(inputs):-1])), p[-1]


def run_step(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed=0, mode="train", device=None,
             analysis=None, steps=1, eval_modules=(), rng_seed=None):
    """Builds the model (seed), places it and runs one step of the global
    batch (steps > 1: that many, the gradients set to None between them,
    no optimizer step); returns (placed, the last loss). eval_modules:
    modules put in eval mode; rng_seed: the plan's random streams' base
    (apply_plan's), default seed."""
    plan = load_plan(plan)
    S = len(plan["stages"]) // plan["virtual"]
    torch.manual_seed(seed)
    model = model_fn()
    model.train(mode == "train")
    _eval(model, eval_modules)
    a, k, t = replica_batch(plan, rank // S, inputs, kwargs, target)
    placed = apply_plan(model, plan, loss_fn, example_inputs=a, example_kwargs=k, rank=rank, world=world,
                        device=device, analysis=analysis, rng_seed=seed if rng_seed is None else rng_seed)
    if plan["shard"] == "zero2":
        placed.optimizer(torch.optim.SGD, lr=0.0)
    for i in range(steps):
        if i:
            for p in placed.stage_parameters():
                p.grad = None
        loss = placed.schedule.step(*a, target=t, batch=target.shape[0], **k)
    return placed, loss


def check(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed=0, mode="train", steps=1):
    """Runs the plan's step on every rank and its reference on rank 0 (the
    unsplit model as the plan computes it: the module's doc; its loss and
    gradients sent to every rank); returns the same dict on every rank:
    loss, want_loss, max_abs, max_rel (over elements with |want| >= 1e-6),
    worst (max |got - want| / (atol + rtol |want|): above 1 fails),
    compared (parameters), missing (parameters no rank holds a gradient
    of), param_bytes_per_rank and buffer_bytes_per_rank (held_bytes after
    the step), effects (the modules whose train-mode result the plan
    changes, placer_torch.semantics), whole_loss (the unsplit step's on
    the whole batch, when effects), eval_modules and eval_why (modules
    compared in eval mode: ones drawing from a generator of their own,
    which the runner cannot align, from the start: "own generator"; or
    "random state", see below), random_state, ok.

    A step that differs while some modules draw random numbers is run
    again with some in eval mode (each module alone, not its children):
    those not of torch's, timm's or torchvision's dropout classes
    (semantics.TORCH_RNG_CLASSES), one at a time (up to 4) then together,
    then every random module. If that matches, the plan computes the model right and only
    those modules' draws differ (a random state the runner cannot align:
    Python's or NumPy's random, a generator of their own): random_state
    names them, train_mode has the first run's figures, ok is true."""
    plan = load_plan(plan)
    first = _check(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed, mode, steps, None)
    rnd = [e for e in first["effects"] if e["effect"] in (RANDOM, OWN_GENERATOR)
           and e["module"] not in first["eval_modules"]]
    if first["ok"] or not rnd:
        return first
    # Which draws differ: those of modules that are not torch's, timm's or
    # torchvision's own dropouts (which draw from torch's generator, as
    # the streams seed it) first, then every random module's.
    odd = [e["module"] for e in rnd if e["class"] not in TORCH_RNG_CLASSES]
    tries = [[m] for m in odd] if 1 < len(odd) <= 4 else []
    if odd and len(odd) < len(rnd):
        tries.append(odd)
    tries.append([e["module"] for e in rnd])
    for ev in tries:
        gc.collect()
        again = _check(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed, mode, steps,
                       sorted(set(first["eval_modules"]) | set(ev)))
        if again["ok"]:
            again["eval_why"] = "random state"
            again["random_state"] = sorted(ev)
            again["train_mode"] = {k: first[k] for k in ("loss", "want_loss", "max_abs", "worst", "loss_worst")}
            again["whole_loss"] = first["whole_loss"]
            return again
    return first


def _check(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed, mode, steps, eval_modules):
    # The reference first, on rank 0 only, its model freed before the
    # plan's is built, and its loss and gradients sent to the others: no
    # rank holds a second model with the whole batch's activations beside
    # the plan's (GPT-2 small on 4 gloo ranks was killed for memory when
    # every rank ran it after its plan's step). eval_modules None: those
    # drawing from a generator of their own (which no seed aligns), as the
    # reference's Analysis finds them.
    ref = [None]
    if rank == 0:
        r = plan_reference_step(model_fn, plan, inputs, kwargs, target, loss_fn, seed, mode, seed, steps - 1,
                                eval_modules, whole=eval_modules is None)
        ref = [(r["loss"], r["grads"], r["effects"], r["eval_modules"], r["whole_loss"])]
        del r
        gc.collect()
    dist.broadcast_object_list(ref, src=0)
    want_loss, want, effects, eval_modules, whole = ref[0]
    del ref
    placed, loss = run_step(model_fn, plan, inputs, kwargs, target, loss_fn, rank, world, seed, mode, steps=steps,
                            eval_modules=eval_modules)
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
            "effects": effects, "whole_loss": whole, "eval_modules": eval_modules,
            "eval_why": "own generator" if eval_modules else None, "random_state": [], "train_mode": None,
            "ok": worst <= 1.0 and lw <= 1.0 and not missing}


def held_bytes(model):
    """(parameter bytes, buffer bytes) this rank holds of model: each
    tensor once, those on the meta device (another stage's) not counted."""
    def size(ts):
        ts = [t.to_local() if hasattr(t, "to_local") else t for t in ts]  # FSDP's: this rank's shard
        return sum(t.numel() * t.element_size() for t in ts if t.device.type != "meta")
    return size(model.parameters()), size(model.buffers())
