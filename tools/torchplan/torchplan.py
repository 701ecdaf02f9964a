"""Run a placer torch plan: pipeline stages x data-parallel replicas with
torch.distributed (docs/torch-plan.md).

`placer export --to torch-plan` writes which modules run in which stage,
the data-parallel degree R, the micro-batches M and the schedule (gpipe or
1f1b). This runner starts R x S processes (S stages; rank = r * S + s),
each builds the whole model from the same seed, traces it with torch.fx
and keeps its stage: torch.fx.passes.split_module cuts the traced graph
where the plan's stages change. A stage runs its micro-batches in the
schedule's order, sends activations to the next stage and gradients back
with send/recv, accumulates gradients, then all-reduces them over its
data-parallel group (the R ranks holding the same stage): DDP's gradients.

The loss is the mean over the global batch: each micro-batch's loss (a
mean over its samples) is scaled by its share of the global batch, b / B,
and the scaled losses and gradients are summed (all-reduce SUM) over the
micro-batches and replicas. With equal micro-batches that is DDP's
average of per-replica means.

Library use: run_plan(...) in every rank once torch.distributed is
initialised, or launch(...) to start the processes on one machine. Command
line:

    python3 tools/torchplan/torchplan.py --plan plan.json --model torchvision.models:resnet18 \\
        --input 3,224,224 --classes 1000
"""

import argparse
import importlib
import json
import operator
import os
import pickle
import sys

import torch
import torch.distributed as dist
import torch.fx
from torch.fx.passes.split_module import split_module

PLAN_FORMAT = "placer-torch-plan"  # a module placement (version 1); megatron.py runs TRANSFORMER_FORMAT
TRANSFORMER_FORMAT = "placer-transformer-plan"


class PlanError(ValueError):
    """A plan that cannot run on this model: one line, naming what."""


def load_plan(plan):
    """Reads a plan (a path or a dict) and checks its fields."""
    where = plan if isinstance(plan, str) else "plan"
    if isinstance(plan, str):
        try:
            with open(plan) as f:
                plan = json.load(f)
        except (OSError, ValueError) as e:
            raise PlanError("%s: %s" % (where, str(e).splitlines()[0]))
    if plan.get("format") != PLAN_FORMAT:
        raise PlanError("%s: format %r, want %r (placer export --to torch-plan)" % (where, plan.get("format"), PLAN_FORMAT))
    if plan.get("version") != 1:
        raise PlanError("%s: version %r, this runner reads version 1" % (where, plan.get("version")))
    if plan.get("schedule") not in ("gpipe", "1f1b"):
        raise PlanError("%s: schedule %r, want gpipe or 1f1b" % (where, plan.get("schedule")))
    if plan.get("shard"):
        raise PlanError("%s: shard %r: this runner runs DDP replicas only (wrap each stage in "
                        "torch.distributed.fsdp for sharding)" % (where, plan["shard"]))
    if not plan.get("stages"):
        raise PlanError("%s: no stages" % where)
    for k in ("replicas", "micro_batches"):
        if not isinstance(plan.get(k), int) or plan[k] < 1:
            raise PlanError("%s: %s %r, want a positive integer" % (where, k, plan.get(k)))
    return plan


def module_stages(plan):
    """Module path -> stage index."""
    return {m: s["stage"] for s in plan["stages"] for m in s["modules"]}


def _plan_stage(path, stages):
    """The stage of the call of module path: its own; else the first of the
    modules under it (a module torch.fx does not enter, such as
    nn.TransformerEncoderLayer, runs where the first of its modules does);
    else its nearest ancestor's; else None."""
    if path in stages:
        return stages[path]
    below = [s for m, s in stages.items() if m.startswith(path + ".")]
    if below:
        return min(below)
    while "." in path:
        path = path.rsplit(".", 1)[0]
        if path in stages:
            return stages[path]
    return None


def assign_stages(traced, plan):
    """Stage of each node of the traced graph (placeholders and get_attr
    nodes: None, every rank has them). A module call takes the plan's stage
    of its module; any other node the latest stage among its inputs; and
    no node runs before one of its inputs, so that data flows forward only."""
    stages = module_stages(plan)
    of = {}
    for node in traced.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            of[node] = None
            continue
        inputs = [of[n] for n in node.all_input_nodes if of.get(n) is not None]
        s = max(inputs) if inputs else 0
        if node.op == "call_module":
            p = _plan_stage(node.target, stages)
            if p is not None:
                s = max(s, p)
        of[node] = s
    return of


class Stage:
    """One rank's share of the model: the split graph's nodes that run in
    stage `index`, and what crosses each stage boundary."""

    def __init__(self, model, plan, index, tracer=None):
        self.plan = plan
        self.index = index
        self.n = len(plan["stages"])
        try:
            graph = (tracer or torch.fx.Tracer()).trace(model)
        except Exception as e:  # torch.fx's errors are many
            raise PlanError("torch.fx cannot trace %s: %s (make its forward traceable, e.g. torch.fx.wrap "
                            "the offending call)" % (type(model).__name__, str(e).splitlines()[0]))
        traced = torch.fx.GraphModule(model, graph)
        of = assign_stages(traced, plan)
        self.split = split_module(traced, model, lambda node: of[node])
        top = list(self.split.graph.nodes)
        self.top = top
        self.stage_of = {}
        for node in top:
            if node.op == "call_module" and node.target.startswith("submod_"):
                self.stage_of[node] = int(node.target[len("submod_"):])
            elif node.op == "call_function" and node.target is operator.getitem:
                self.stage_of[node] = self.stage_of[node.args[0]]
            elif node.op == "output":
                self.stage_of[node] = self.n - 1
            elif node.op in ("placeholder", "get_attr"):
                self.stage_of[node] = None
            else:
                raise PlanError("split graph: unexpected node %s (%s)" % (node.name, node.op))
        # boundary[b]: values made by stages <= b that stages > b read.
        self.boundary = []
        for b in range(self.n - 1):
            vals = [node for node in top if self.stage_of[node] is not None and self.stage_of[node] <= b and
                    node.op != "output" and any(self.stage_of[u] > b for u in node.users)]
            self.boundary.append(vals)
        # Parameters: the stage's submodule's, and those it reads through
        # get_attr; one read by two stages (tied weights) cannot be split.
        names = {id(p): n for n, p in model.named_parameters()}
        owner = {}
        for node in top:
            s = self.stage_of[node]
            if node.op == "call_module":
                for p in getattr(self.split, node.target).parameters():
                    owner.setdefault(id(p), set()).add(s)
                for a in node.all_input_nodes:
                    if a.op == "get_attr":
                        v = _attr(self.split, a.target)
                        if isinstance(v, torch.nn.Parameter):
                            owner.setdefault(id(v), set()).add(s)
        for pid, ss in owner.items():
            if len(ss) > 1:
                raise PlanError("parameter %s is read by stages %s (tied weights): put its readers in one stage"
                                % (names.get(pid, "?"), sorted(ss)))
        self.params = sorted((names[pid], p) for pid, p in ((id(p), p) for p in model.parameters())
                             if index in owner.get(pid, ()))
        self.sub = getattr(self.split, "submod_%d" % index, None)

    def forward(self, env, inputs):
        """Runs this stage's nodes; env holds the values received. Returns
        the values of the model's output node when this is the last stage."""
        ph = iter(inputs)
        for node in self.top:
            s = self.stage_of[node]
            if node.op == "placeholder":
                env[node] = next(ph)
            elif node.op == "get_attr":
                env[node] = _attr(self.split, node.target)
            elif s != self.index:
                continue
            elif node.op == "call_module":
                env[node] = getattr(self.split, node.target)(*torch.fx.graph.map_arg(node.args, env.__getitem__))
            elif node.op == "call_function":
                env[node] = node.target(*torch.fx.graph.map_arg(node.args, env.__getitem__))
            elif node.op == "output":
                return torch.fx.graph.map_arg(node.args[0], env.__getitem__)
        return None


def _attr(mod, target):
    for atom in target.split("."):
        mod = getattr(mod, atom)
    return mod


# Point-to-point: a pickled header (shapes, dtypes, which tensors need
# gradients, and any non-tensor values), then the tensors.

def _send(values, dst, device, works):
    head, tensors = [], []
    for v in values:
        if isinstance(v, torch.Tensor):
            head.append(("t", tuple(v.shape), v.dtype, bool(v.requires_grad)))
            tensors.append(v.detach().contiguous())
        else:
            head.append(("v", v))
    data = pickle.dumps(head)
    for t in [torch.tensor([len(data)], dtype=torch.int64, device=device),
              torch.tensor(list(data), dtype=torch.uint8, device=device)] + tensors:
        works.append((dist.isend(t, dst), t))


def _recv(src, device):
    n = torch.zeros(1, dtype=torch.int64, device=device)
    dist.recv(n, src)
    data = torch.zeros(int(n.item()), dtype=torch.uint8, device=device)
    dist.recv(data, src)
    out = []
    for h in pickle.loads(bytes(data.cpu().tolist())):
        if h[0] == "v":
            out.append(h[1])
            continue
        t = torch.empty(h[1], dtype=h[2], device=device)
        dist.recv(t, src)
        out.append(t.requires_grad_(h[3]))
    return out


def schedule(kind, stage, stages, m):
    """The order of a stage's forwards and backwards: [("F", i), ("B", i)].
    gpipe: every forward, then every backward. 1f1b: S - 1 - stage forwards
    to fill the pipeline, then one forward and one backward in turn, then
    the remaining backwards."""
    if kind == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    warm = min(stages - 1 - stage, m)
    out = [("F", i) for i in range(warm)]
    f, b = warm, 0
    while f < m:
        out += [("F", f), ("B", b)]
        f, b = f + 1, b + 1
    out += [("B", i) for i in range(b, m)]
    return out


def split_batch(batch, parts):
    """Splits each tensor of a (nested) batch along dimension 0 into parts
    (torch.tensor_split: sizes differ by at most one); returns the parts
    and their sizes."""
    sizes = None
    flat = []
    for v in batch:
        if isinstance(v, torch.Tensor) and v.dim() > 0:
            pieces = torch.tensor_split(v, parts)
            sizes = [p.shape[0] for p in pieces]
            flat.append(pieces)
        else:
            flat.append([v] * parts)
    if sizes is None:
        raise PlanError("the batch has no tensor to split")
    return [tuple(f[i] for f in flat) for i in range(parts)], sizes


def run_plan(model_fn, plan, inputs, target, loss_fn, rank=None, world=None, seed=0, device=None, mode="train",
             tracer=None, groups=None):
    """Runs one training step of the plan in this rank (torch.distributed
    must be initialised, with R x S ranks; rank = replica * S + stage).

    model_fn() builds the model (called after torch.manual_seed(seed), so
    that every rank builds the same weights); inputs is the tuple of the
    model's forward arguments for the global batch, target what loss_fn
    (output, target) compares with; mode "train" or "eval" (eval: dropout
    off, BatchNorm on its running statistics). Returns a dict: "loss" (the
    global batch's, on every rank), "grads" {parameter name: gradient} of
    this rank's stage after the all-reduce, "stage", "replica", "model"."""
    plan = load_plan(plan)
    rank = dist.get_rank() if rank is None else rank
    world = dist.get_world_size() if world is None else world
    S, R, M = len(plan["stages"]), plan["replicas"], plan["micro_batches"]
    if world != R * S:
        raise PlanError("the plan needs %d x %d = %d processes, not %d" % (R, S, R * S, world))
    replica, s = divmod(rank, S)
    if device is None:
        device = torch.device("cpu")
    if groups is None:
        groups = data_parallel_groups(R, S)
    torch.manual_seed(seed)
    model = model_fn()
    model.train(mode == "train")
    stage = Stage(model, plan, s, tracer=tracer)
    stage.split.to(device)
    # The global batch: replica r takes its part, cut into M micro-batches.
    B = target.shape[0]
    if R * M > B:
        raise PlanError("%d replicas x %d micro-batches is more than the batch of %d" % (R, M, B))
    parts, _ = split_batch(tuple(inputs) + (target,), R)
    micro, sizes = split_batch(parts[replica], M)
    works, saved, loss_sum = [], {}, torch.zeros((), device=device)
    prev, nxt = (rank - 1 if s > 0 else None), (rank + 1 if s < S - 1 else None)
    for kind, i in schedule(plan["schedule"], s, S, M):
        mb = tuple(v.to(device) if isinstance(v, torch.Tensor) else v for v in micro[i])
        if kind == "F":
            env = {}
            received = []
            if prev is not None:
                received = _recv(prev, device)
                received = [v.detach().requires_grad_(v.requires_grad) if isinstance(v, torch.Tensor) else v
                            for v in received]
                for node, v in zip(stage.boundary[s - 1], received):
                    env[node] = v
            out = stage.forward(env, mb[:-1])
            if nxt is not None:
                sent = [env[node] for node in stage.boundary[s]]
                _send(sent, nxt, device, works)
                saved[i] = (received, sent)
            else:
                loss = loss_fn(out, mb[-1]) * (sizes[i] / B)
                loss_sum += loss.detach()
                saved[i] = (received, loss)
        else:
            received, sent = saved.pop(i)
            if nxt is None:
                sent.backward()
            else:
                want = [v for v in sent if isinstance(v, torch.Tensor) and v.requires_grad]
                grads = _recv(nxt, device)
                if want:
                    torch.autograd.backward(want, grads)
            if prev is not None:
                back = [v.grad if v.grad is not None else torch.zeros_like(v) for v in received
                        if isinstance(v, torch.Tensor) and v.requires_grad]
                _send(back, prev, device, works)
    for w, _ in works:
        w.wait()
    # DDP: sum the stage's gradients over its replicas (one flat tensor).
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for _, p in stage.params]
    if R > 1 and grads:
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat, group=groups[s])
        off = 0
        for g in grads:
            g.copy_(flat[off:off + g.numel()].view_as(g))
            off += g.numel()
    for (_, p), g in zip(stage.params, grads):
        p.grad = g
    # The loss: summed over the last stage's replicas, then sent to all.
    if s == S - 1 and R > 1:
        dist.all_reduce(loss_sum, group=groups[s])
    loss_all = loss_sum.clone()
    dist.broadcast(loss_all, src=S - 1)
    return {"loss": float(loss_all.item()), "grads": {n: p.grad.detach().cpu() for n, p in stage.params},
            "stage": s, "replica": replica, "model": model}


def data_parallel_groups(R, S):
    """One group per stage: the R ranks r * S + s (every rank must create
    every group, in the same order)."""
    groups = []
    for s in range(S):
        ranks = [r * S + s for r in range(R)]
        groups.append(dist.new_group(ranks) if R > 1 else None)
    return groups


def _worker(rank, world, port, backend, fn, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group(backend, rank=rank, world_size=world)
    try:
        fn(rank, world, *args)
    finally:
        dist.barrier()
        dist.destroy_process_group()


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(world, fn, args=(), backend=None):
    """Starts world processes on this machine (torch.multiprocessing,
    spawn) and runs fn(rank, world, *args) in each with torch.distributed
    initialised: gloo, or nccl when CUDA is there."""
    import torch.multiprocessing as mp
    backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    mp.spawn(_worker, args=(world, free_port(), backend, fn, args), nprocs=world, join=True)


# The command line: a model from "module:callable", random inputs.

def _load(spec):
    mod, _, name = spec.partition(":")
    obj = importlib.import_module(mod)
    for atom in name.split("."):
        obj = getattr(obj, atom)
    return obj


def _cli_rank(rank, world, a):
    plan = load_plan(a.plan)
    S = len(plan["stages"])
    device = torch.device("cpu")
    if torch.cuda.is_available():
        replica, s = divmod(rank, S)
        gpu = replica * plan["devices"] + plan["stages"][s]["device"]
        device = torch.device("cuda", gpu % torch.cuda.device_count())
        torch.cuda.set_device(device)
    g = torch.Generator().manual_seed(a.seed + 1)
    B = a.batch or plan["batch"]
    if a.tokens:
        vocab, seq = (int(x) for x in a.tokens.split(","))
        x = torch.randint(0, vocab, (B, seq), generator=g)
        y = torch.randint(0, vocab, (B, seq), generator=g)

        def loss_fn(out, t):
            return torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), t.reshape(-1))
    else:
        shape = tuple(int(x) for x in a.input.split(","))
        x = torch.randn((B,) + shape, generator=g)
        y = torch.randint(0, a.classes, (B,), generator=g)
        loss_fn = torch.nn.functional.cross_entropy
    model_fn = _load(a.model)
    res = run_plan(model_fn, plan, (x,), y, loss_fn, rank=rank, world=world, seed=a.seed, device=device, mode=a.mode)
    print("rank %d (replica %d, stage %d): loss %.6f, %d parameters' gradients" %
          (rank, res["replica"], res["stage"], res["loss"], len(res["grads"])), flush=True)


def _megatron_plan(path):
    """Whether path is a plan of a transformer (megatron.py runs it): a
    placer-transformer-plan, or one written before that format had a name
    of its own (placer-torch-plan version 2)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, TypeError, ValueError):
        return False
    return isinstance(doc, dict) and "transformer" in doc and (
        doc.get("format") == TRANSFORMER_FORMAT or doc.get("version") == 2)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run one training step of a placer torch plan (docs/torch-plan.md).")
    ap.add_argument("--plan", required=True, help="the plan (placer export --to torch-plan)")
    ap.add_argument("--model", required=True, help="module:callable that builds the model, e.g. torchvision.models:resnet18")
    ap.add_argument("--input", default="3,224,224", help="one sample's input shape (image models)")
    ap.add_argument("--classes", type=int, default=1000, help="classes of the random targets")
    ap.add_argument("--tokens", default="", help="VOCAB,SEQ: token inputs and targets (language models)")
    ap.add_argument("--batch", type=int, default=0, help="global batch (default: the plan's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=("train", "eval"), default="train")
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plan")
    if _megatron_plan(pre.parse_known_args(argv)[0].plan):  # a transformer in 3D parallelism
        import megatron
        return megatron.main(argv)
    a = ap.parse_args(argv)
    try:
        plan = load_plan(a.plan)
        if not (a.batch or plan["batch"]):
            raise PlanError("%s: the plan has no batch; give --batch" % a.plan)
        world = plan["replicas"] * len(plan["stages"])
        if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun
            dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
            _cli_rank(dist.get_rank(), dist.get_world_size(), a)
            dist.destroy_process_group()
        else:
            launch(world, _cli_rank, (a,))
    except PlanError as e:
        print("torchplan: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
