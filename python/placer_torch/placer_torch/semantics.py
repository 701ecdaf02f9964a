"""What a plan changes in a model's train-mode step (docs/torch-plan.md,
"Train mode under a plan"): the modules whose result depends on how the
batch is split or on the random stream they draw from.

- Batch statistics: a batch normalization in train mode (or without
  running statistics) normalizes each micro-batch (of each replica) with
  that micro-batch's mean and variance, not the whole batch's; its result
  differs whenever the plan splits the batch (micro-batches > 1 or
  replicas > 1). SyncBatchNorm computes them over the replicas, so only
  micro-batches change it.
- Random: dropout, stochastic depth (timm's DropPath, torchvision's
  StochasticDepth), attention dropout, anything that draws random numbers
  in train mode. Under a plan each draws from a stream the runner seeds
  per (step, replica, micro-batch, unit boundary), the same on every rank
  (placer_torch.runner), so its draws differ from the unsplit model's but
  are the same on every rank and in --check's reference.
- Own generator: a random draw from a torch.Generator the module holds,
  whose state is each rank's own: the runner cannot align it (--check
  compares with that module in eval mode and says so).

Found at ATen level, so that functional calls count (F.dropout inside an
attention module): each op of the forward is attributed to the innermost
module running it. aten_effect classifies one ATen call; the exporter
(placer_torch.exporter: the meta file's "train_mode") and the runner
(placer_torch.runner.Analysis.effects) collect them per module.
"""

BATCH = "batch-statistics"
RANDOM = "random"
OWN_GENERATOR = "own-generator"

# The random modules of torch, timm and torchvision: they draw from torch's
# generator, which the runner's streams seed (what --check tries last when
# a step differs through random draws).
TORCH_RNG_CLASSES = {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
                     "DropPath", "DropBlock2d", "StochasticDepth", "RReLU"}

# Torch without op tags: the random ops by name.
_RANDOM_NAMES = {"bernoulli", "bernoulli_", "native_dropout", "rand", "rand_like", "randn", "randn_like", "randint",
                 "randint_like", "randperm", "normal", "normal_", "uniform_", "multinomial", "exponential_",
                 "geometric_", "cauchy_", "log_normal_", "poisson", "rrelu_with_noise", "random_", "fused_dropout",
                 "_fused_dropout"}


def _seeded(func):
    try:
        import torch
        tag = torch.Tag.nondeterministic_seeded
        return tag in func.tags
    except (AttributeError, ImportError):
        return None


def aten_effect(func, name, args, kwargs):
    """BATCH, RANDOM or OWN_GENERATOR for one ATen call of a forward, else
    None. name: the op's name without namespace and overload
    ('native_batch_norm')."""
    kwargs = kwargs or {}
    if "batch_norm" in name and "backward" not in name and "no_training" not in name \
            and "no_update" not in name and not name.startswith("batch_norm_elemt"):
        if name == "_batch_norm_with_update" or name.startswith("batch_norm_") or name == "batch_norm_stats":
            return BATCH
        training = _argument(func, args, kwargs, "training")
        return BATCH if training else None
    seeded = _seeded(func)
    if seeded is None:
        seeded = name in _RANDOM_NAMES
    if not seeded:
        return None
    # A draw with nothing to draw: dropout (or attention's) with p 0 or
    # not training, a Bernoulli of 0 or 1.
    p = _argument(func, args, kwargs, "dropout_p")
    if p is None:
        p = _argument(func, args, kwargs, "p")
    if isinstance(p, (int, float)) and (p == 0 or (name.startswith("bernoulli") and p == 1)):
        return None
    if _argument(func, args, kwargs, "train") is False or _argument(func, args, kwargs, "training") is False:
        return None
    if kwargs.get("generator") is not None or any(_is_generator(a) for a in args):
        return OWN_GENERATOR
    return RANDOM


def _is_generator(a):
    try:
        import torch
        return isinstance(a, torch.Generator)
    except ImportError:  # pragma: no cover
        return False


def _argument(func, args, kwargs, arg):
    schema = getattr(func, "_schema", None)
    if schema is None:
        return kwargs.get(arg)
    for i, a in enumerate(schema.arguments):
        if a.name == arg:
            if i < len(args) and not a.kwarg_only:
                return args[i]
            return kwargs.get(arg, getattr(a, "default_value", None))
    return None


def effects_list(by_module, classes):
    """[{"module", "class", "effect"}] sorted by kind then the modules'
    order in classes ({path: class name}, the model's named_modules order);
    by_module: {path: set of effects}. A module with an own-generator draw
    is that, not also random."""
    order = {p: i for i, p in enumerate(classes)}
    out = []
    for kind in (BATCH, RANDOM, OWN_GENERATOR):
        for path in sorted((p for p, es in by_module.items() if kind in es), key=lambda p: (order.get(p, 1 << 30), p)):
            if kind == RANDOM and OWN_GENERATOR in by_module[path]:
                continue
            out.append({"module": path, "class": classes.get(path, "?"), "effect": kind})
    return out


def _names(items, most=3):
    """'bn1, layer1.0.bn1, layer1.0.bn2, ...'"""
    names = [(e["module"] or "<root>") for e in items]
    return ", ".join(names) if len(names) <= most else "%s, ..." % ", ".join(names[:most])


def _count(items, verb):
    """'20 BatchNorm2d modules (bn1, ...) normalize' or '1 Dropout module
    (drop) draws': the verb in the plural form, made singular for one."""
    one = len(items) == 1
    if one:
        verb = verb[:-1] + "ies" if verb.endswith("y") else verb + "s"
    return "%d %s module%s (%s) %s" % (len(items), _classes(items), "" if one else "s", _names(items), verb)


def _classes(items):
    seen = []
    for e in items:
        if e["class"] not in seen:
            seen.append(e["class"])
    return "/".join(seen)


def changed_by_plan(effects, replicas, micro_batches):
    """The effects a plan of replicas x micro_batches changes: batch
    statistics only when it splits the batch (SyncBatchNorm only under
    micro-batches), random draws always."""
    out = []
    for e in effects:
        if e["effect"] == BATCH:
            if e["class"] == "SyncBatchNorm":
                if micro_batches <= 1:
                    continue
            elif replicas * micro_batches <= 1:
                continue
        out.append(e)
    return out


def plan_lines(effects, replicas, micro_batches, batch=None):
    """One line per kind of change a plan makes in train mode (empty when
    none): the modules (the first three and the count) and why."""
    effects = changed_by_plan(effects, replicas, micro_batches)
    lines = []
    bn = [e for e in effects if e["effect"] == BATCH]
    if bn:
        parts = replicas * micro_batches
        if batch:
            size = "micro-batches of %s samples, not of the batch of %d" % (_size(batch, parts), batch)
        else:
            size = "each of the %d micro-batches, not of the whole batch" % parts
        lines.append("train mode: %s with the statistics of %s (SyncBatchNorm over the replicas, or fewer "
                     "micro-batches, come closer to the whole batch's: docs/torch-plan.md)" % (
                         _count(bn, "normalize"), size))
    rnd = [e for e in effects if e["effect"] == RANDOM]
    if rnd:
        lines.append("train mode: %s random numbers: under the plan from a stream seeded per micro-batch and unit "
                     "boundary, the same on every rank, not the unsplit model's one stream" % _count(rnd, "draw"))
    own = [e for e in effects if e["effect"] == OWN_GENERATOR]
    if own:
        lines.append("train mode: %s from a torch.Generator of %s own, whose state is each rank's: the runner cannot "
                     "align %s draws with the unsplit model's" % (
                         _count(own, "draw"), "its" if len(own) == 1 else "their", "its" if len(own) == 1 else "their"))
    return lines


def _size(batch, parts):
    lo, hi = batch // parts, -(-batch // parts)
    return str(lo) if lo == hi else "%d or %d" % (lo, hi)


def export_line(effects):
    """The exporter's warning (one line, or None): the train-mode modules
    whose result a plan that splits the batch or draws per stage changes."""
    if not effects:
        return None
    parts = []
    bn = [e for e in effects if e["effect"] == BATCH]
    if bn:
        parts.append("%s with batch statistics, which a plan with micro-batches or replicas computes per "
                     "micro-batch" % _count(bn, "normalize"))
    rnd = [e for e in effects if e["effect"] in (RANDOM, OWN_GENERATOR)]
    if rnd:
        parts.append("%s random numbers, which a plan draws per micro-batch and stage" % _count(rnd, "draw"))
    return "train mode: %s (the meta file's train_mode lists them; docs/torch-plan.md, \"Train mode under a plan\")" \
        % "; ".join(parts)
