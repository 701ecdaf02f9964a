"""The runner's overhead per training step against the same strategy
written by hand with PyTorch's own wrappers (make bench-runner;
docs/torch-plan.md#overhead), on CPU processes with gloo:

- ddp: R replicas; by hand torch.nn.parallel.DistributedDataParallel;
- fsdp: R replicas, FSDP2; by hand fully_shard on each block, then the root;
- 1f1b: S stages, M micro-batches; by hand torch.distributed.pipelining
  (PipelineStage of each half of the nn.Sequential, Schedule1F1B).

Same model (a sequential MLP; --model gpt2: transformers' GPT-2 for ddp
and fsdp), same batch; a step is the forwards, the
backwards and the gradient reduction (no optimizer step, the same in
both). Paired: each repeat times `steps` steps of the runner then
`steps` of the hand-written one (the order alternating), on rank 0 between
barriers; printed: the median over repeats of each's time per step and
the median of the paired ratios (runner / hand).

    python3 tools/dev/torchplan/bench_overhead.py [--world 2] [--repeats 7] [--steps 10]
    python3 tools/dev/torchplan/bench_overhead.py --model gpt2 --width 128 --depth 4 --batch 16

The models are the runner tests' (tiny_models): PYTHONPATH names their
folder, python/placer_torch/tests/runner (make bench-runner sets it).
"""

import argparse
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import tiny_models as TM
from placer_torch import apply_plan, launch


def model_fn(a):
    if a.model == "gpt2":
        return TM.gpt2(n_layer=a.depth, n_embd=a.width, n_head=4, vocab_size=512, n_positions=64)
    return TM.mlp(width=a.width, depth=a.depth, classes=10, inp=a.width)


def blocks(model, a):
    """The modules FSDP shards one by one (by hand and in the plan)."""
    if a.model == "gpt2":
        return ["transformer.h.%d" % i for i in range(a.depth)]
    return [str(i) for i in range(len(model)) if any(True for _ in model[i].parameters())]


def runner_plan(kind, world, depth, a):
    if a.model == "gpt2":
        mods = ["transformer.wte", "transformer.wpe"] + ["transformer.h.%d" % i for i in range(depth)] + \
            ["transformer.ln_f", "lm_head"]
        return {"format": "placer-torch-plan", "version": 1, "replicas": world, "micro_batches": 1,
                "schedule": "1f1b", "shard": "fsdp" if kind == "fsdp" else "",
                "stages": [{"stage": 0, "device": 0, "modules": mods}]}
    n = 2 * depth - 1  # Linear, ReLU, ..., Linear
    mods = [str(i) for i in range(n)]
    if kind == "1f1b":
        half = (n // 2) | 1  # cut after a ReLU
        stages = [mods[:half + 1], mods[half + 1:]]
        R, M = world // 2, 4
    else:
        stages, R, M = [mods], world, 1
    return {"format": "placer-torch-plan", "version": 1, "replicas": R, "micro_batches": M, "schedule": "1f1b",
            "shard": "fsdp" if kind == "fsdp" else "",
            "stages": [{"stage": i, "device": i, "modules": m} for i, m in enumerate(stages)]}


def make_runner(kind, rank, world, a, x, y):
    torch.manual_seed(0)
    model = model_fn(a)
    placed = apply_plan(model, runner_plan(kind, world, a.depth, a), loss_of(a), example_inputs=(x,),
                        rank=rank, world=world)
    params = placed.stage_parameters()

    def step():
        for p in params:
            p.grad = None
        placed.schedule.step(x, target=y)
    return step


def loss_of(a):
    return TM.lm_loss if a.model == "gpt2" else F.cross_entropy


def make_hand(kind, rank, world, a, x, y):
    torch.manual_seed(0)
    model = model_fn(a)
    loss_fn = loss_of(a)
    if kind == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        ddp = DistributedDataParallel(model)

        def step():
            ddp.zero_grad(set_to_none=True)
            loss_fn(ddp(x), y).backward()
        return step
    if kind == "fsdp":
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cpu", (world,))
        mods = dict(model.named_modules())
        for name in blocks(model, a):
            fully_shard(mods[name], mesh=mesh)
        fully_shard(model, mesh=mesh)
        for m in [model] + [mods[n] for n in blocks(model, a)]:
            if hasattr(m, "set_force_sum_reduction_for_comms"):
                m.set_force_sum_reduction_for_comms(True)

        def step():
            model.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
        return step
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B
    n = len(model)
    half = (n // 2) | 1
    part = model[:half + 1] if rank == 0 else model[half + 1:]
    stage = PipelineStage(part, rank, 2, torch.device("cpu"))
    sched = Schedule1F1B(stage, 4, loss_fn=F.cross_entropy)

    def step():
        part.zero_grad(set_to_none=True)
        if rank == 0:
            sched.step(x)
        else:
            sched.step(target=y)
    return step


def timed(step, steps):
    dist.barrier()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    return (time.perf_counter() - t) / steps


def _rank(rank, world, a, out):
    g = torch.Generator().manual_seed(1)
    if a.model == "gpt2":
        x = torch.randint(0, 512, (a.batch, 64), generator=g)
        y = torch.randint(0, 512, (a.batch, 64), generator=g)
    else:
        x = torch.randn(a.batch, a.width, generator=g)
        y = torch.randint(0, 10, (a.batch,), generator=g)
    rows = []
    for kind in a.strategies:
        if kind == "1f1b" and (world != 2 or a.model != "mlp"):
            continue
        bx, by = (x, y) if kind == "1f1b" else (x.chunk(world)[rank], y.chunk(world)[rank])
        mine = make_runner(kind, rank, world, a, bx, by)
        hand = make_hand(kind, rank, world, a, bx, by)
        for _ in range(a.warmup):
            mine()
            hand()
        tm, th, ratio = [], [], []
        for r in range(a.repeats):
            if r % 2:
                h = timed(hand, a.steps)
                m = timed(mine, a.steps)
            else:
                m = timed(mine, a.steps)
                h = timed(hand, a.steps)
            tm.append(m)
            th.append(h)
            ratio.append(m / h)
        rows.append((kind, statistics.median(tm), statistics.median(th), statistics.median(ratio), min(ratio),
                     max(ratio)))
    if rank == 0:
        for kind, m, h, r, lo, hi in rows:
            print("%-5s runner %7.2f ms/step, by hand %7.2f ms/step, ratio %.3f (median of %d paired repeats; "
                  "range %.3f-%.3f)" % (kind, m * 1e3, h * 1e3, r, a.repeats, lo, hi), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world", type=int, default=2, help="processes (1f1b: 2 stages, so world 2 only)")
    ap.add_argument("--strategies", default="ddp,fsdp,1f1b")
    ap.add_argument("--model", choices=("mlp", "gpt2"), default="mlp",
                    help="mlp: a sequential MLP (every strategy); gpt2: transformers' GPT-2 (ddp and fsdp: its "
                         "embeddings, blocks, final norm and tied head as units, the glue between them replayed)")
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10)
    a = ap.parse_args(argv)
    a.strategies = a.strategies.split(",")
    print("bench_overhead: %d gloo processes, torch %s, %s width %d depth %d, batch %d, %d steps x %d repeats"
          % (a.world, torch.__version__, a.model, a.width, a.depth, a.batch, a.steps, a.repeats), flush=True)
    launch(a.world, _rank, (a, None), backend="gloo")


if __name__ == "__main__":
    main()
