"""placer's exports read by the frameworks' own code (make test-frameworks).

    python check.py torchtitan|deepspeed CASES.json RESULTS.json

CASES.json is a list of cases (test_exports.py writes them); each is
checked in this process with the installed torchtitan or DeepSpeed
(make venv-frameworks pins them; PYTHONPATH names them), and RESULTS.json
gets one object per case: {"name", "ok", "error" (the framework's words),
"facts" (what was established)} (a file: DeepSpeed prints on standard
output).

The world is simulated in this one process: torch's "fake" process group
(torch.testing._internal.distributed.fake_pg) gives a rank of a world of
any size, on which torchtitan builds its device mesh, pipeline stages and
schedule, and DeepSpeed its PipelineModule and configuration; each
pipeline stage is built from a rank of it.

torchtitan 0.2 (a TOML job configuration):
  - ConfigManager().parse_args(["--job.config_file", path]) with Python
    warnings as errors (tyro warns where a value is not its field's type);
  - every model converter is registered (model.converters);
  - ParallelDims from [parallelism] at the plan's world size, its mesh
    built; train.py's batch check (global batch a multiple of the local
    batch x the data-parallel degree) and, for the transformer, llama3's
    (seq_len a multiple of seq_len_divisor; DDP only alone);
  - with a pipeline: pipeline_module_split on a stand-in of the model
    (torchtitan's llama3 Transformer with the plan's layers on the meta
    device, or the exporter's module tree for a graph) for every pipeline
    rank, then build_pipeline_schedule (torch's schedule class); the
    stages' modules against the plan's.

DeepSpeed 0.19 (a JSON configuration and, for a pipeline, a Python module):
  - without a pipeline, DeepSpeedConfig(path) at a world of the plan's
    replicas, as deepspeed.initialize builds it;
  - with one, the module imported, its stage_layers on a stand-in of the
    model, its pipeline_module built on a rank of every stage in a world
    of stages x replicas (DeepSpeed's PipelineModule: its topology and
    partition), and DeepSpeedConfig(path, module.mpu()), as
    deepspeed.initialize builds it for a PipelineModule;
  - a transformer at cluster scale (deepspeed_transformer):
    DeepSpeedConfig at the plan's world and, with experts, the module's
    DeepSpeed-MoE layer with its expert groups, or deepspeed.initialize
    of a model of it.
"""

import importlib.util
import json
import os
import sys
import traceback
import warnings


def fake_world(world, rank):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", rank=rank, world_size=world, store=FakeStore())


def stand_in(modules):
    """A module tree of the exporter's meta (path, class in named_modules
    order): nn.ModuleList and nn.ModuleDict where the model has them,
    nn.Sequential for a Sequential, a plain module otherwise; each
    module's _placer_path is its path in the model."""
    import torch.nn as nn

    made = {}
    for m in modules:
        path, cls = m["path"], m["class"]
        mod = {"ModuleList": nn.ModuleList, "ModuleDict": nn.ModuleDict, "Sequential": nn.Sequential}.get(cls, nn.Module)()
        mod._placer_path = path
        made[path] = mod
        if path == "":
            continue
        parent, _, name = path.rpartition(".")
        up = made[parent]
        if isinstance(up, nn.ModuleList):
            assert name == str(len(up)), path
            up.append(mod)
        elif isinstance(up, nn.ModuleDict):
            up[name] = mod
        else:
            up.add_module(name, mod)
    return made[""]


def paths_in(module):
    return {m._placer_path for m in module.modules() if hasattr(m, "_placer_path")}


def check_parts(kept, stages):
    """kept[i]: the model paths stage i's part holds; stages[i]: the plan's
    modules of stage i. Each stage holds its own modules and none of
    another's."""
    for i, want in enumerate(stages):
        want = {m.split("#")[0] for m in want}
        missing = sorted(want - kept[i])
        if missing:
            raise AssertionError("stage %d lacks %s" % (i, ", ".join(missing[:5])))
        for j, other in enumerate(stages):
            extra = sorted(kept[i] & {m.split("#")[0] for m in other}) if j != i else []
            if extra:
                raise AssertionError("stage %d holds stage %d's %s" % (i, j, ", ".join(extra[:5])))


def transformer_parts(parts, n, pp, head):
    """The layers of a transformer's n model parts (parts: part -> (its
    pipeline rank, its chunk)) in part order, and how many each of the pp
    ranks holds; asserts that the embedding is the first part's alone and
    the norm and the output layer (head: "output" in torchtitan 0.2,
    "lm_head" in 0.3) the last part's."""
    order, per_rank = [], [0] * pp
    for j in range(n):
        r, chunk = parts[j]
        layers = [int(k) for k in chunk.layers.keys()]
        order += layers
        per_rank[r] += len(layers)
        assert (chunk.tok_embeddings is not None) == (j == 0), "part %d: tok_embeddings" % j
        assert (chunk.norm is not None) == (j == n - 1) and (getattr(chunk, head) is not None) == (j == n - 1), \
            "part %d: norm, %s" % (j, head)
    return order, per_rank


def torchtitan_case(case):
    import torch
    import torch.distributed as dist
    from torchtitan.config import ConfigManager
    from torchtitan.distributed import ParallelDims
    from torchtitan.distributed.pipeline_parallel import build_pipeline_schedule, pipeline_module_split
    from torchtitan.protocols.model_converter import _registry_model_converter_cls

    facts = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = ConfigManager().parse_args(["--job.config_file", case["path"]] + case.get("args", []))
    for c in cfg.model.converters:
        if c not in _registry_model_converter_cls:
            raise ValueError("model converter %r is not registered (torchtitan has %s)" % (c, sorted(_registry_model_converter_cls)))
    if "quantize.linear.float8" in cfg.model.converters:
        f8 = cfg.quantize.linear.float8
        facts["float8"] = dict(recipe=f8.recipe_name, filter_fqns=list(f8.filter_fqns))
        facts["float8_all_gather"] = [f8.enable_fsdp_float8_all_gather, f8.precompute_float8_dynamic_scale_for_fsdp]
    p, world = cfg.parallelism, case["world"]
    pp = p.pipeline_parallel_degree

    def dims():
        return ParallelDims(dp_shard=p.data_parallel_shard_degree, dp_replicate=p.data_parallel_replicate_degree,
                            cp=p.context_parallel_degree, tp=p.tensor_parallel_degree, pp=pp,
                            ep=p.expert_parallel_degree, etp=p.expert_tensor_parallel_degree, world_size=world)

    model = None
    if pp > 1:
        if case["kind"] == "transformer":
            from torchtitan.models.llama3 import Transformer, TransformerModelArgs

            with torch.device("meta"):
                model = Transformer(TransformerModelArgs(dim=64, n_layers=case["layers"], n_heads=4, n_kv_heads=4, vocab_size=128))
        else:
            model = stand_in(case["modules"])
    parts = {}
    for r in range(pp):
        fake_world(world, r * (world // pp))  # pp is the mesh's outermost dimension
        pd = dims()
        pd.build_mesh()
        batch_degree = pd.dp_replicate * pd.dp_shard  # train.py's batch mesh
        local, glob = cfg.training.local_batch_size, cfg.training.global_batch_size
        if glob < 0:
            glob = local * batch_degree
        assert glob % (local * batch_degree) == 0, "global batch %d %% (local %d x data-parallel %d)" % (glob, local, batch_degree)
        facts["accumulation"] = glob // (local * batch_degree)
        if case["kind"] == "transformer":
            # models/llama3/infra/parallelize.py
            assert cfg.training.seq_len % pd.seq_len_divisor == 0, "seq_len %d %% %d" % (cfg.training.seq_len, pd.seq_len_divisor)
            if not pd.fsdp_enabled and pd.dp_replicate_enabled and pd.world_size != pd.get_mesh("dp_replicate").size():
                raise RuntimeError("DDP has not supported > 1D parallelism")
        if model is not None:
            stages, chunks = pipeline_module_split(model, pd.get_mesh("pp"), p.pipeline_parallel_schedule, torch.device("cpu"), p.module_fqns_per_model_part)
            sched = build_pipeline_schedule(cfg, stages, lambda out, target: out.sum())
            facts["schedule"], facts["microbatches"] = type(sched).__name__, sched._n_microbatches
            for st, chunk in zip(stages, chunks):
                parts[st.stage_index] = (r, chunk)
    facts["world"] = world
    facts["dims"] = dict(dp_replicate=pd.dp_replicate, dp_shard=pd.dp_shard, cp=pd.cp, tp=pd.tp, pp=pd.pp, ep=pd.ep)
    dist.destroy_process_group()
    if model is None:
        return facts
    n = len(p.module_fqns_per_model_part)
    assert sorted(parts) == list(range(n)), "stages built: %s of %d" % (sorted(parts), n)
    facts["parts"] = n
    if case["kind"] == "transformer":
        order, per_rank = transformer_parts(parts, n, pp, "output")
        assert order == list(range(case["layers"])), "the parts' layers in order: %s" % order
        assert per_rank == case["rank_layers"], "layers per pipeline rank %s, the plan's %s" % (per_rank, case["rank_layers"])
        facts["rank_layers"] = per_rank
    else:
        check_parts([paths_in(parts[i][1]) for i in range(n)], case["stages"])
    return facts


def deepspeed_case(case):
    import deepspeed
    from deepspeed.runtime.config import DeepSpeedConfig

    # DeepSpeed's CPU accelerator compiles a shared-memory all-reduce op at
    # start-up (30 s, cached in ~/.cache/torch_extensions); no collective
    # runs here. The module deepspeed.comm.torch (the attribute of that
    # name on deepspeed.comm is torch itself).
    sys.modules["deepspeed.comm.torch"].build_shm_op = lambda: None
    if case.get("kind") == "transformer":
        return deepspeed_transformer(case)
    facts = {}
    if not case.get("pipeline"):
        fake_world(case["replicas"], 0)
        deepspeed.init_distributed(dist_backend="gloo")
        cfg = DeepSpeedConfig(case["config"])
    else:
        spec = importlib.util.spec_from_file_location("placer_ds_pipeline", case["pipeline"])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        S, R = len(case["stages"]), case["replicas"]
        assert (mod.NUM_STAGES, mod.WORLD_SIZE) == (S, S * R), (mod.NUM_STAGES, mod.WORLD_SIZE)
        assert os.path.samefile(mod.config_path(), case["config"]), mod.config_path()
        os.environ.setdefault("LOCAL_RANK", "0")
        kept = []
        for s in range(S):
            fake_world(S * R, s * R)  # PipeDataParallelTopology: rank = stage x replicas + replica
            deepspeed.init_distributed(dist_backend="gloo")
            layers = mod.stage_layers(stand_in(case["modules"]))
            net = mod.pipeline_module(layers)
            assert net.stage_id == s and net.parts == list(range(S + 1)), (net.stage_id, net.parts)
            assert (net._local_start, net._local_stop) == (s, s + 1) and net.forward_funcs == [layers[s]]
            kept.append(paths_in(net.forward_funcs[0]))
            cfg = DeepSpeedConfig(case["config"], net.mpu())
            assert cfg.world_size == R, (cfg.world_size, R)
        check_parts(kept, case["stages"])
        facts["parts"] = net.parts
    facts.update(world_size=cfg.world_size, train_batch_size=cfg.train_batch_size, micro_batch=cfg.train_micro_batch_size_per_gpu,
                 accumulation=cfg.gradient_accumulation_steps, zero_stage=int(cfg.zero_optimization_stage))
    return facts


def deepspeed_transformer(case):
    """A transformer's plan at cluster scale: DeepSpeedConfig at the
    plan's world; with experts, the module's moe_layer() built (on the
    meta device) and its expert groups made by DeepSpeed-MoE's own
    set_deepspeed_parallelism, or with "engine", deepspeed.initialize on a
    model of that layer, the optimizer's groups split as DeepSpeed-MoE
    asks, with the configuration (zero_stage, if given, replacing its
    stage: DeepSpeed's own refusal of a stage placer refuses)."""
    import deepspeed
    import torch
    import torch.distributed as dist
    from deepspeed.runtime.config import DeepSpeedConfig
    from deepspeed.utils import groups

    importlib.reload(groups)  # its groups of the last case's world, anew
    os.environ.setdefault("LOCAL_RANK", "0")
    fake_world(case["world"], 0)
    deepspeed.init_distributed(dist_backend="gloo")
    config = case["config"]
    if case.get("zero_stage") is not None:
        with open(config) as f:
            cfg = json.load(f)
        cfg["zero_optimization"]["stage"] = case["zero_stage"]
        config = config[:-5] + "-zero%d.json" % case["zero_stage"]
        with open(config, "w") as f:
            json.dump(cfg, f)
    cfg = DeepSpeedConfig(config)
    facts = {"world_size": cfg.world_size, "train_batch_size": cfg.train_batch_size, "micro_batch": cfg.train_micro_batch_size_per_gpu,
             "accumulation": cfg.gradient_accumulation_steps, "zero_stage": int(cfg.zero_optimization_stage), "bf16": cfg.bfloat16_config.enabled}
    if not case.get("moe"):
        return facts
    spec = importlib.util.spec_from_file_location("placer_ds_moe", case["moe"])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.WORLD_SIZE == case["world"], (mod.WORLD_SIZE, case["world"])
    assert os.path.samefile(mod.config_path(), case["config"]), mod.config_path()
    if case.get("engine"):
        from deepspeed.moe.utils import split_params_into_different_moe_groups_for_optimizer

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.moe = mod.moe_layer()

            def forward(self, x):
                return self.moe(x)[0]

        net = Net()
        params = split_params_into_different_moe_groups_for_optimizer({"params": list(net.parameters()), "name": "params"})
        engine, _, _, _ = deepspeed.initialize(model=net, optimizer=torch.optim.AdamW(params), config=config)
        layer = net.moe
        facts["engine"] = type(engine).__name__
    else:
        with torch.device("meta"):
            layer = mod.moe_layer()
        layer.set_deepspeed_parallelism()
    name = layer.expert_group_name
    gate = layer.deepspeed_moe.gate
    expert = layer.deepspeed_moe.experts.deepspeed_experts[0]
    facts.update(ep=dist.get_world_size(groups._get_expert_parallel_group(name)),
                 edp=dist.get_world_size(groups._get_expert_data_parallel_group(name)),
                 local_experts=layer.num_local_experts, experts=layer.num_experts, k=gate.k, drop_tokens=gate.drop_tokens,
                 gate_shape=list(gate.wg.weight.shape), expert_params=sum(p.numel() for p in expert.parameters()))
    return facts


def main():
    which, path, results = sys.argv[1:4]
    with open(path) as f:
        cases = json.load(f)
    run = {"torchtitan": torchtitan_case, "deepspeed": deepspeed_case}[which]
    out = []
    for case in cases:
        try:
            out.append({"name": case["name"], "ok": True, "facts": run(case)})
        except Exception as e:  # the framework's refusal is the result
            out.append({"name": case["name"], "ok": False, "error": "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else ""),
                        "trace": traceback.format_exc(limit=-3)})
    with open(results + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(results + ".tmp", results)


if __name__ == "__main__":
    main()
