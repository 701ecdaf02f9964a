"""Reading and checking a placer-torch-plan (docs/torch-plan.md), and
telling it from a placer-transformer-plan (placer_torch.transformer and
placer_torch.experts read those)."""

import json

PLAN_FORMAT = "placer-torch-plan"  # a module placement (version 1); placer_torch.transformer runs TRANSFORMER_FORMAT
TRANSFORMER_FORMAT = "placer-transformer-plan"
SCHEDULES = ("gpipe", "1f1b", "interleaved")
SHARDS = ("", "ddp", "fsdp", "zero2")


class PlanError(ValueError):
    """A plan that cannot run on this model or this torch: one line, naming
    what and where."""


def read_json(plan, where):
    """plan itself, or the JSON of the file it names (a path): what every
    plan reader starts with. A file that cannot be read or parsed raises a
    one-line PlanError naming where."""
    if not isinstance(plan, str):
        return plan
    try:
        with open(plan) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise PlanError("%s: %s" % (where, str(e).splitlines()[0]))


def load_plan(plan, where=None):
    """Reads a plan (a path or a dict), checks its fields and returns the
    dict with the defaults filled in: virtual 1, shard "", checkpoint []."""
    where = where or (plan if isinstance(plan, str) else "plan")
    plan = read_json(plan, where)
    if not isinstance(plan, dict):
        raise PlanError("%s: not a JSON object" % where)
    plan = dict(plan)
    if plan.get("format") != PLAN_FORMAT:
        raise PlanError("%s: format %r, want %r (placer export --to torch-plan)" % (where, plan.get("format"), PLAN_FORMAT))
    if plan.get("version") != 1:
        raise PlanError("%s: version %r, this runner reads version 1" % (where, plan.get("version")))
    if plan.get("schedule") not in SCHEDULES:
        raise PlanError("%s: schedule %r, want one of %s" % (where, plan.get("schedule"), ", ".join(SCHEDULES)))
    plan["shard"] = plan.get("shard") or ""
    if plan["shard"] not in SHARDS:
        raise PlanError("%s: shard %r, want fsdp or zero2 (or none)" % (where, plan["shard"]))
    for k in ("replicas", "micro_batches"):
        if not isinstance(plan.get(k), int) or isinstance(plan.get(k), bool) or plan[k] < 1:
            raise PlanError("%s: %s %r, want a positive integer" % (where, k, plan.get(k)))
    v = plan.get("virtual", 1)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise PlanError("%s: virtual %r, want a positive integer" % (where, v))
    if v > 1 and plan["schedule"] != "interleaved":
        raise PlanError("%s: virtual %d needs schedule interleaved, not %s" % (where, v, plan["schedule"]))
    plan["virtual"] = v
    stages = plan.get("stages")
    if not isinstance(stages, list) or not stages:
        raise PlanError("%s: no stages" % where)
    if len(stages) % v:
        raise PlanError("%s: %d stages is not a multiple of virtual %d (S x V entries)" % (where, len(stages), v))
    for i, s in enumerate(stages):
        mods = s.get("modules") if isinstance(s, dict) else None
        if not isinstance(mods, list) or not mods or not all(isinstance(m, str) for m in mods):
            raise PlanError("%s: stages[%d]: want a non-empty list of module names in \"modules\"" % (where, i))
    seen = {}
    for i, s in enumerate(stages):
        for m in s["modules"]:
            if m in seen and seen[m] != i:
                raise PlanError("%s: module %r is in stages %d and %d" % (where, m, seen[m], i))
            seen[m] = i
    ck = plan.get("checkpoint") or []
    if not isinstance(ck, list) or not all(isinstance(m, str) for m in ck):
        raise PlanError("%s: checkpoint %r, want a list of module names" % (where, ck))
    plan["checkpoint"] = ck
    return plan


def module_stages(plan):
    """Plan entry (module path, or path#k for its k-th call) -> stage index
    (the position in "stages": with virtual stages, stage i runs on
    pipeline rank i % S)."""
    return {m: i for i, s in enumerate(plan["stages"]) for m in s["modules"]}


def split_entry(entry):
    """"layers.0#2" -> ("layers.0", 2); "layers.0" -> ("layers.0", None)."""
    name, sep, k = entry.partition("#")
    if sep:
        try:
            return name, int(k)
        except ValueError:
            raise PlanError("module entry %r: want name or name#call (a number)" % entry)
    return name, None


def is_transformer_plan(path):
    """Whether path is a plan of a transformer (placer_torch.transformer
    runs it): a placer-transformer-plan, or one written before that format
    had a name of its own (placer-torch-plan version 2)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, TypeError, ValueError):
        return False
    return isinstance(doc, dict) and "transformer" in doc and (
        doc.get("format") == TRANSFORMER_FORMAT or doc.get("version") == 2)


def is_experts_plan(doc):
    """Whether a transformer plan (a dict) has experts (placer_torch.experts
    runs it)."""
    return isinstance(doc, dict) and isinstance(doc.get("transformer"), dict) and bool(doc["transformer"].get("experts"))
