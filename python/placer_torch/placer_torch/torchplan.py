"""The torch-plan command (docs/torch-plan.md): run a placer torch plan,
pipeline stages x data-parallel replicas, with torch.distributed.

    python3 -m placer_torch.torchplan --plan plan.json --model transformers:GPT2LMHeadModel \\
        --config n_layer=4,n_embd=32,n_head=2,vocab_size=64 --input input_ids=8:int:64 --target 8:int:64 --check

(placer_torch installed, pip install -e python/placer_torch, or
python/placer_torch on PYTHONPATH); tools/dev/torchplan/torchplan.py is the
same command from a checkout.

main parses the flags; run(a) starts the plan's R x S processes on this
machine (gloo, or nccl with CUDA), builds the model in each from the same
seed, places it with placer_torch.apply_plan and runs one step of a
random batch; --check also runs the unsplit model's step and compares the
loss and every gradient (exit 1 beyond rtol 1e-5, atol 1e-6). A
placer-transformer-plan goes to placer_torch.transformer, or with experts
to placer_torch.experts, before these flags are parsed.
"""

import argparse
import json
import os
import sys
import tempfile

import torch
import torch.distributed as dist

from .check import check, replica_batch, run_step
from .loader import LoadError, attribute, import_spec
from .plan import PLAN_FORMAT, PlanError, is_experts_plan, is_transformer_plan, load_plan as _load_plan
from .plan import module_stages  # noqa: F401 (the tests')
from .runner import Analysis, check_torch, launch, schedule_order, split_batch
from .semantics import plan_lines


def load_plan(plan):
    """Reads a plan (a path or a dict) and checks its fields."""
    return _load_plan(plan)


def schedule(kind, stage, stages, m):
    """The order of a stage's forwards and backwards: [("F", i), ("B", i)]
    (placer_torch.schedule_order without virtual stages)."""
    return [(k, i) for k, i, _ in schedule_order(kind, stage, stages, m)]


def run_plan(model_fn, plan, inputs, target, loss_fn, rank=None, world=None, seed=0, device=None, mode="train",
             kwargs=None):
    """One training step of the plan in this rank (torch.distributed
    initialised with R x S ranks): the model from model_fn() after
    torch.manual_seed(seed), inputs and target the global batch. Returns
    "loss" (the global batch's, on every rank), "grads" {name: gradient}
    that this rank holds, "stage", "replica", "placed"."""
    plan = load_plan(plan)
    rank = dist.get_rank() if rank is None else rank
    world = dist.get_world_size() if world is None else world
    placed, loss = run_step(model_fn, plan, tuple(inputs), dict(kwargs or {}), target, loss_fn, rank, world, seed,
                            mode, device)
    return {"loss": loss, "grads": placed.gradients(), "stage": placed.pos, "replica": placed.replica,
            "placed": placed}


# The command line: a model from "module:callable" (and --config), random
# inputs from shape specs, a loss by name or "module:callable".

def _value(v):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(v.lower(), v)


def parse_config(text):
    """"a=1,b=x" -> {"a": 1, "b": "x"}."""
    out = {}
    for item in filter(None, (text or "").split(",")):
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise PlanError("--config %r: want key=value,..." % text)
        out[k.strip()] = _value(v.strip())
    return out


def _import(spec, flag):
    """(MODULE, NAME, the object or None where MODULE has no NAME) of flag's
    'MODULE:NAME', found as tools/dev/torchexport's --model is
    (placer_torch.loader: a module on the import path with the current
    directory on it, or a file.py by its path)."""
    try:
        module, mod, name = import_spec(spec, flag, "module:callable (or file.py:callable)")
    except LoadError as e:
        raise PlanError(str(e)) from None
    return mod, name, attribute(module, name)


def model_builder(spec, config):
    """A function building the model: a transformers model class (built
    from its config class with --config), a timm model name (timm:NAME,
    timm.create_model(NAME, pretrained=False, **config)), or any
    callable(**config)."""
    mod, name, obj = _import(spec, "--model")
    if obj is None and mod == "timm":
        import timm
        if name not in timm.list_models():
            raise PlanError("--model %r: timm has no model %r" % (spec, name))
        return lambda: timm.create_model(name, pretrained=False, **config)
    if obj is None:
        raise PlanError("--model %r: %s has no %r" % (spec, mod, name))
    if isinstance(obj, type) and hasattr(obj, "config_class") and getattr(obj, "config_class") is not None:
        return lambda: obj(obj.config_class(**config))
    return lambda: obj(**config)


def parse_spec(text, flag):
    """"[name=]D1,D2[:int:HIGH|:float]" -> (name or None, dims, kind, high):
    one sample's shape (the batch is added in front)."""
    name, sep, rest = text.partition("=")
    if not sep:
        name, rest = None, text
    parts = rest.split(":")
    try:
        dims = tuple(int(x) for x in parts[0].split(",") if x != "")
        kind = parts[1] if len(parts) > 1 else "float"
        high = int(parts[2]) if kind == "int" else None
    except (ValueError, IndexError):
        raise PlanError("%s %r: want [name=]D1,D2,...[:float|:int:HIGH]" % (flag, text))
    if kind not in ("float", "int"):
        raise PlanError("%s %r: kind %r, want float or int:HIGH" % (flag, text, kind))
    return name, dims, kind, high


def _draw(spec, B, g):
    _, dims, kind, high = spec
    if kind == "int":
        return torch.randint(0, high, (B,) + dims, generator=g)
    return torch.randn((B,) + dims, generator=g)


def _logits(out):
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, dict) and "logits" in out:
        return out["logits"]
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    raise TypeError("no logits in %s" % type(out).__name__)


def cross_entropy(out, target):
    """Cross-entropy of the output's logits (a tensor, .logits, ["logits"]
    or [0]) against class targets of any shape (a token per position)."""
    logits = _logits(out)
    if target.dim() == logits.dim() - 1 and target.dim() > 1:
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
    return torch.nn.functional.cross_entropy(logits, target)


def mse(out, target):
    """Mean squared error of the output (or its logits) against the target."""
    return torch.nn.functional.mse_loss(_logits(out), target)


def loss_function(spec):
    if spec in ("cross-entropy", "ce"):
        return cross_entropy
    if spec == "mse":
        return mse
    _, _, obj = _import(spec, "--loss")
    if obj is None or not callable(obj):
        raise PlanError("--loss %r: want cross-entropy, mse or module:callable" % spec)
    return obj


class Job:
    """Everything a rank needs, picklable: the arguments and the batch."""

    def __init__(self, a, plan):
        self.a, self.plan = a, plan
        B = a.batch or plan.get("batch") or 0
        if not B:
            raise PlanError("%s: the plan has no batch; give --batch" % a.plan)
        specs = [parse_spec(s, "--input") for s in a.input]
        if a.tokens:
            try:
                vocab, seq = (int(x) for x in a.tokens.split(","))
            except ValueError:
                raise PlanError("--tokens %r: want VOCAB,SEQ" % a.tokens)
            specs = [(None, (seq,), "int", vocab)]
            tspec = (None, (seq,), "int", vocab)
        elif a.target:
            tspec = parse_spec(a.target, "--target")
        else:
            tspec = (None, (), "int", a.classes)
        if not specs:
            specs = [parse_spec("3,224,224", "--input")]
        g = torch.Generator().manual_seed(a.seed + 1)
        self.inputs, self.kwargs = [], {}
        for s in specs:
            v = _draw(s, B, g)
            if s[0]:
                self.kwargs[s[0]] = v
            else:
                self.inputs.append(v)
        self.target = _draw(tspec, B, g)
        self.config = parse_config(a.config)
        self.dtype = {"float32": None, "float64": torch.float64}[a.dtype]
        if self.dtype is not None:  # floating inputs and targets in the step's precision; tokens and labels stay
            cast = lambda v: v.to(self.dtype) if v.is_floating_point() else v  # noqa: E731
            self.inputs = [cast(v) for v in self.inputs]
            self.kwargs = {k: cast(v) for k, v in self.kwargs.items()}
            self.target = cast(self.target)

    def model_fn(self):
        m = model_builder(self.a.model, self.config)()
        return m if self.dtype is None else m.to(self.dtype)

    def loss_fn(self):
        return loss_function(self.a.loss)

    def validate(self):
        """The plan against the model, in this process (one line, before
        any process starts): module names, stages, the loss."""
        check_torch(self.plan, self.a.plan)
        torch.manual_seed(self.a.seed)
        try:
            model = self.model_fn()
        except PlanError:
            raise
        except Exception as e:
            raise PlanError("--model %r: %s" % (self.a.model, (str(e).splitlines() or [type(e).__name__])[0]))
        model.train(self.a.mode == "train")
        a, k, t = replica_batch(self.plan, 0, self.inputs, self.kwargs, self.target)
        parts, _ = split_batch(list(a) + list(k.values()) + [t], self.plan["micro_batches"], "a replica's batch")
        p = parts[0]
        an = Analysis(model, self.plan, p[:len(a)], dict(zip(k, p[len(a):-1])), where=self.a.plan,
                      loss_fn=self.loss_fn(), target=p[-1])
        return an.effects if self.a.mode == "train" else []


def _cli_rank(rank, world, job, out_dir):
    a, plan = job.a, job.plan
    device = None
    if torch.cuda.is_available() and dist.get_backend() == "nccl":
        S = len(plan["stages"]) // plan["virtual"]
        replica, s = divmod(rank, S)
        gpu = replica * plan.get("devices", S) + plan["stages"][s].get("device", s)
        device = torch.device("cuda", gpu % torch.cuda.device_count())
        torch.cuda.set_device(device)
    if a.check:
        res = check(job.model_fn, plan, job.inputs, job.kwargs, job.target, job.loss_fn(), rank, world, a.seed,
                    a.mode)
        if rank == 0 and out_dir:
            with open(os.path.join(out_dir, "check.json"), "w") as f:
                json.dump(res, f)
        return
    placed, loss = run_step(job.model_fn, plan, job.inputs, job.kwargs, job.target, job.loss_fn(), rank, world,
                            a.seed, a.mode, device)
    print("rank %d (replica %d, stage %d): loss %.6f, %d parameters' gradients" %
          (rank, placed.replica, placed.pos, loss, len(placed.gradients())), flush=True)


def check_lines(res):
    """--check's lines from check()'s result: modules compared in eval
    mode (one line: which and why), then the comparison."""
    lines = []
    ev = res.get("eval_modules") or []
    if ev and res.get("eval_why") == "own generator":
        lines.append("check: %s compared in eval mode: %s from a torch.Generator of %s own, whose state is each "
                     "rank's, so no seed aligns the plan's draws with the unsplit model's" % (
                         ", ".join(ev), "it draws" if len(ev) == 1 else "they draw", "its" if len(ev) == 1 else
                         "their"))
    elif ev:
        t, odd = res["train_mode"], res.get("random_state") or ev
        cls = {e["module"]: e["class"] for e in res.get("effects") or []}
        names = ", ".join("%s (%s)" % (m, cls[m]) if m in cls else m for m in odd)
        lines.append("check: %s draw%s random numbers the runner cannot align (a random state of %s own: Python's "
                     "or NumPy's random, a torch.Generator): in train mode the step differs (loss %.8g, unsplit "
                     "%.8g, %.3g of the tolerance); with %s in eval mode it matches" % (
                         names, "s" if len(odd) == 1 else "", "its" if len(odd) == 1 else "their", t["loss"],
                         t["want_loss"], max(t["worst"], t["loss_worst"]), "it" if len(odd) == 1 else "them"))
    if res.get("whole_loss") is not None:
        unsplit = "unsplit %.8g, as the plan computes it: per micro-batch, its random streams; in one step on the " \
                  "whole batch %.8g" % (res["want_loss"], res["whole_loss"])
    else:
        unsplit = "unsplit %.8g" % res["want_loss"]
    lines.append("check: loss %.8g (%s); gradients of %d parameters: max abs difference %.3g, max rel "
                 "difference %.3g (elements >= 1e-6), %.3g of the tolerance (rtol 1e-5, atol 1e-6)%s: %s" % (
                     res["loss"], unsplit, res["compared"], res["max_abs"], res["max_rel"],
                     max(res["worst"], res["loss_worst"]),
                     "; no gradient of " + ", ".join(res["missing"][:3]) if res["missing"] else "",
                     "ok" if res["ok"] else "FAILED"))
    return lines


def run(a):
    """The command line's step, its flags parsed (a: an argparse.Namespace of
    main's flags) and the plan a module placement. Returns the exit status: a bad plan, model or flag is one line on stderr
    and 1."""
    try:
        if not a.model:
            raise PlanError("--model: required with a %s" % PLAN_FORMAT)
        plan = load_plan(a.plan)
        job = Job(a, plan)
        effects = job.validate()
        for line in plan_lines(effects, plan["replicas"], plan["micro_batches"], job.target.shape[0]):
            print(line)
        world = plan["replicas"] * (len(plan["stages"]) // plan["virtual"])
        if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun
            if a.check:
                raise PlanError("--check under torchrun: run it without torchrun (it starts its processes)")
            dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
            _cli_rank(dist.get_rank(), dist.get_world_size(), job, None)
            dist.destroy_process_group()
            return 0
        out_dir = tempfile.mkdtemp(prefix="torchplan-")
        try:
            launch(world, _cli_rank, (job, out_dir))
        except Exception as e:  # a rank failed: its last line
            lines = [l for l in str(e).strip().splitlines() if l.strip()]
            raise PlanError("a process failed: %s" % (lines[-1].strip() if lines else type(e).__name__))
        if a.check:
            with open(os.path.join(out_dir, "check.json")) as f:
                res = json.load(f)
            for line in check_lines(res):
                print(line)
            print("held: parameter bytes per rank %s, buffer bytes %s" % (
                " ".join(map(str, res["param_bytes_per_rank"])), " ".join(map(str, res["buffer_bytes_per_rank"]))))
            if not res["ok"]:
                return 1
    except PlanError as e:
        print("torchplan: %s" % e, file=sys.stderr)
        return 1
    return 0


def transformer_flags(argv, description):
    """A transformer plan runner's flags: --plan, --check, --seed; the
    module plan's options are ignored."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--plan", required=True, help="the plan (placer export --to torch-plan)")
    ap.add_argument("--check", action="store_true", help="compare loss and gradients with the unsplit model")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_known_args(argv)[0]


def main(argv=None):
    """The command line: a placer-torch-plan's flags parsed, then run; a
    placer-transformer-plan goes to placer_torch.transformer, or with
    experts to placer_torch.experts, with transformer_flags. Returns the
    exit status."""
    ap = argparse.ArgumentParser(description="Run one training step of a placer torch plan (docs/torch-plan.md).")
    ap.add_argument("--plan", required=True, help="the plan (placer export --to torch-plan)")
    ap.add_argument("--model", help="module:callable that builds the model (torchvision.models:resnet18, "
                    "transformers:GPT2LMHeadModel, timm:vit_tiny_patch16_224)")
    ap.add_argument("--config", default="", help="key=value,... passed to the model's builder (or its config class)")
    ap.add_argument("--input", action="append", default=[],
                    help="[name=]D1,D2,...[:float|:int:HIGH]: one sample's shape of a forward input (repeat; "
                         "name=: a keyword argument); default 3,224,224")
    ap.add_argument("--target", default="", help="the target's spec, as --input (default: --classes labels)")
    ap.add_argument("--classes", type=int, default=1000, help="classes of the random targets")
    ap.add_argument("--tokens", default="", help="VOCAB,SEQ: token inputs and targets (language models)")
    ap.add_argument("--loss", default="cross-entropy", help="cross-entropy, mse or module:callable(output, target)")
    ap.add_argument("--batch", type=int, default=0, help="global batch (default: the plan's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=("train", "eval"), default="train")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                    help="the step's precision: float64 tells a split that is wrong from float32 rounding (a model "
                         "with random weights whose activations grow through it: the zoo's inception_v3)")
    ap.add_argument("--check", action="store_true",
                    help="compare the loss and every gradient with the unsplit model's step (exit 1 beyond rtol "
                         "1e-5, atol 1e-6)")
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plan")
    plan_path = pre.parse_known_args(argv)[0].plan
    if is_transformer_plan(plan_path):  # a transformer in 3D parallelism
        with open(plan_path) as f:
            has_experts = is_experts_plan(json.load(f))
        if has_experts:  # with experts: data x expert parallel
            from . import experts
            a = transformer_flags(argv, "Run one training step of a placer transformer plan with experts "
                                        "(data x expert parallel; docs/torch-plan.md).")
            return experts.run(a.plan, a.check, a.seed)
        from . import transformer
        a = transformer_flags(argv, "Run one training step of a placer transformer plan "
                                    "(tensor x pipeline x data parallel GPT; docs/torch-plan.md).")
        return transformer.run(a.plan, a.check, a.seed)
    return run(ap.parse_args(argv))



if __name__ == "__main__":
    # Run as python -m placer_torch.torchplan: the module's own import, not
    # this __main__ copy, so that the ranks it spawns unpickle what it
    # defines (the rank's function, the job) by its name,
    # placer_torch.torchplan.
    from placer_torch import torchplan
    sys.exit(torchplan.main())
