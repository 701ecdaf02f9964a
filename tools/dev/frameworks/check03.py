"""placer's torchtitan 0.3 exports read by torchtitan 0.3.0's own code
(make test-frameworks-03).

    python check03.py CASES.json RESULTS.json

CASES.json is a list of cases (test_exports_03.py writes them): each an
exported module (--to torchtitan@0.3: base_config, apply_plan,
placer_plan, OVERRIDES), checked in this process with torchtitan 0.3.0
(FRAMEWORKS03_DIR on PYTHONPATH, on the virtualenv's torch; each
module imported by name, as torchtitan's --module does, so its folder and
RESULTS.json's, where the wrappers are written, on PYTHONPATH too); RESULTS.json
gets one object per case: {"name", "ok", "error" (the framework's words),
"facts" (what was established)}.

For each case:
  - the module through ConfigManager().parse_args(["--module", M,
    "--config", F]), torchtitan.train's own parser (tyro over the
    function's Trainer.Config, its __post_init__ checks included), with
    Python warnings as errors: F is placer_plan where the module names
    torchtitan's model (base_config: llama3 8B, 70B or 405B), else a
    function of a wrapper module, apply_plan on a stand-in (torchtitan's
    llama3_debugmodel with the plan's layers, or its debug model for a
    graph), whose base_config must say NotImplementedError;
  - OVERRIDES on the same base through the same parser: the same
    training, parallelism, compile and activation_checkpoint settings;
  - ParallelDims.from_config at the plan's world size, its mesh built on
    a rank of torch's fake process group (as check.py does for 0.2), on
    a rank of every pipeline stage; the trainer's checks (trainer.py
    Trainer.__init__: seq_len a multiple of tp (with sequence
    parallelism) x 2 cp, the global batch a multiple of the local batch x
    the batch mesh); with a model, the multi-axis backend's
    validate_config (distributed/full_dtensor.py: context parallelism
    needs FlexAttention);
  - a case's "args" (more overrides, to show torchtitan's own refusals)
    go to both parses;
  - with a pipeline: torchtitan's split (_pipeline_module_split) of the
    model on the meta device (the module's model_spec, or torchtitan's
    llama3 with the plan's layers, or the exporter's module tree for a
    graph) on every pipeline rank, and its schedule
    (_build_pipeline_schedule: torch's schedule class); the stages'
    modules against the plan's.
"""

import importlib
import json
import os
import sys
import traceback
import warnings

from check import check_parts, fake_world, paths_in, stand_in, transformer_parts

WRAPPER = '''from torchtitan.models.llama3.config_registry import llama3_debugmodel
import {module} as plan


def stand_in():
    config = llama3_debugmodel()
    layers = config.model_spec.model.layers
    while len(layers) < {layers}:
        layers.append(layers[-1])
    del layers[{layers}:]
    return config


def planned():
    return plan.apply_plan(stand_in())
'''


def parse(module, function, args=()):
    from torchtitan.config import ConfigManager

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return ConfigManager().parse_args(["--module", module, "--config", function] + list(args))


def settings(cfg):
    return {k: getattr(cfg, k) for k in ("training", "parallelism", "compile", "activation_checkpoint")}


def case_03(case, workdir, n):
    import torch
    import torch.distributed as dist
    from torchtitan.distributed import ParallelDims
    from torchtitan.distributed.full_dtensor import validate_config
    from torchtitan.distributed.pipeline_parallel import _build_pipeline_schedule, _pipeline_module_split

    facts = {}
    module = os.path.basename(case["path"])[:-3]
    plan = importlib.import_module(module)
    facts["header"] = open(case["path"]).readline().rstrip("\n")
    try:
        plan.base_config()
        own = True
    except NotImplementedError:
        own = False
    facts["own_model"] = own
    # The case's args before the activation-checkpoint subcommand, which
    # tyro reads last.
    extra = case.get("args", [])
    over = list(plan.OVERRIDES)
    over = over[:-1] + extra + over[-1:] if over and over[-1].startswith("activation-checkpoint:") else over + extra
    if own:
        cfg = parse(module, "placer_plan", extra)
        base = parse(module, "base_config", over)
    else:
        wrapper = "placer_check03_%d" % n
        with open(os.path.join(workdir, wrapper + ".py"), "w") as f:
            f.write(WRAPPER.format(module=module, layers=case.get("layers") or 6))
        cfg = parse(wrapper, "planned", extra)
        base = parse(wrapper, "stand_in", over)
    a, b = settings(cfg), settings(base)
    for k in a:
        if a[k] != b[k]:
            raise AssertionError("OVERRIDES' %s differs from apply_plan's: %s against %s" % (k, b[k], a[k]))
    p, world = cfg.parallelism, case["world"]
    mc = cfg.model_spec.model
    facts["model"] = dict(flavor=cfg.model_spec.flavor, dim=mc.dim, layers=len(mc.layers), vocab=mc.vocab_size)
    model = None
    if case["kind"] == "transformer":
        with torch.device("meta"):
            model = mc.build()
        blk = model.layers["0"]
        facts["model"].update(heads=blk.attention.n_heads, kv_heads=getattr(blk.attention, "n_kv_heads", None) or blk.attention.n_heads,
                              ffn=blk.feed_forward.w1.weight.shape[0])
        if case.get("any"):
            facts["model"]["tied"] = model.lm_head.weight is model.tok_embeddings.weight
    pp = p.pipeline_parallel_degree
    split = None
    if pp > 1:
        split = model if case["kind"] == "transformer" else stand_in(case["modules"])
    parts = {}
    for r in range(pp):
        fake_world(world, r * (world // pp))  # pp is the mesh's outermost dimension
        pd = ParallelDims.from_config(p, world)
        pd.build_mesh()
        div = (pd.tp if p.enable_sequence_parallel else 1) * (2 * pd.cp if pd.cp > 1 else 1)
        assert cfg.training.seq_len % div == 0, "Training sequence length (%d) must be divisible by %d" % (cfg.training.seq_len, div)
        batch_degree = pd.get_mesh("batch").size() if pd.dp_enabled else 1
        local, glob = cfg.training.local_batch_size, cfg.training.global_batch_size
        if glob < 0:
            glob = local * batch_degree
        assert glob % (local * batch_degree) == 0, "global batch size must be multiple of local batch size times data-parallel degree (%d %% (%d * %d) != 0)" % (glob, local, batch_degree)
        facts["accumulation"] = glob // (local * batch_degree)
        if model is not None and p.spmd_backend in ("full_dtensor", "spmd_types"):
            validate_config(pd, model)
        if split is not None:
            stages, chunks = _pipeline_module_split(split, pd.get_mesh("pp"), p.pipeline_parallel_schedule, torch.device("cpu"), p.module_fqns_per_model_part)
            sched = _build_pipeline_schedule(parallelism=p, local_batch_size=local, stages=stages, loss_fn=lambda out, target: (out.sum(), None))
            facts["schedule"], facts["microbatches"] = type(sched).__name__, sched._n_microbatches
            for st, chunk in zip(stages, chunks):
                parts[st.stage_index] = (r, chunk)
    facts["world"] = world
    facts["dims"] = dict(dp_replicate=pd.dp_replicate, dp_shard=pd.dp_shard, cp=pd.cp, tp=pd.tp, pp=pd.pp, ep=pd.ep)
    facts["sp"] = p.enable_sequence_parallel
    facts["ac"] = type(cfg.activation_checkpoint).__qualname__ if cfg.activation_checkpoint is not None else None
    facts["async_tp"], facts["compile"] = cfg.compile.enable_async_tensor_parallel, cfg.compile.enable
    facts["local"], facts["global"], facts["seq"] = cfg.training.local_batch_size, cfg.training.global_batch_size, cfg.training.seq_len
    dist.destroy_process_group()
    if split is None:
        return facts
    n = len(p.module_fqns_per_model_part)
    assert sorted(parts) == list(range(n)), "stages built: %s of %d" % (sorted(parts), n)
    facts["parts"] = n
    if case["kind"] == "transformer":
        order, per_rank = transformer_parts(parts, n, pp, "lm_head")
        assert order == list(range(len(mc.layers))), "the parts' layers in order: %s" % order
        facts["rank_layers"] = per_rank
    else:
        check_parts([paths_in(parts[i][1]) for i in range(n)], case["stages"])
    return facts


def main():
    path, results = sys.argv[1:3]
    with open(path) as f:
        cases = json.load(f)
    workdir = os.path.dirname(os.path.abspath(results))
    out = []
    for n, case in enumerate(cases):
        try:
            out.append({"name": case["name"], "ok": True, "facts": case_03(case, workdir, n)})
        except (Exception, SystemExit) as e:  # the framework's refusal is the result
            out.append({"name": case["name"], "ok": False, "error": "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else ""),
                        "trace": traceback.format_exc(limit=-3)})
    with open(results + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(results + ".tmp", results)


if __name__ == "__main__":
    main()
