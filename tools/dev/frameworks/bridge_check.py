"""Megatron-Bridge 0.5.0's own override machinery reading placer's
`--to megatron-bridge` exports (make test-bridge; test_bridge.py).

What runs is Bridge's code, installed by make venv-bridge (pip --target,
no dependencies resolved: megatron-bridge 0.5.0, megatron-core 0.18.0,
omegaconf 2.3.0, hydra-core 1.3.2 and what their config modules import):

  - src/megatron/bridge/training/config.py's ConfigContainer and the
    dataclasses it holds (TrainingConfig, OptimizerConfig,
    DistributedDataParallelConfig, CheckpointConfig, GPTDatasetConfig,
    FinetuningDatasetConfig with PackedSequenceSpecs), the model as
    src/megatron/bridge/models/gpt_provider.py's GPTModelProvider (a
    Megatron-Core 0.18.0 TransformerConfig), the LoRA of
    src/megatron/bridge/peft/lora.py;
  - training/utils/omegaconf_utils.py's process_config_with_overrides,
    what scripts/training/run_recipe.py calls with its command line's
    overrides: the container turned into OmegaConf in struct mode,
    Hydra's override parser applied (a key the container lacks is an
    error), the result applied back onto the dataclasses;
  - training/mixed_precision.py's get_mixed_precision_config for the
    recipe name written;
  - GPTModelProvider.finalize(), Megatron-Core's TransformerConfig checks
    of the settings (TP dividing the heads, the pipeline's split, the
    recomputation and MoE settings).

What is not Bridge's code, and why:

  - the container is built here with Bridge's classes and the values
    recipes/common.py's _pretrain_common, _sft_common and _peft_common
    give them where placer does not write them; recipes/common.py itself
    cannot be imported on this machine (it imports the vision-language
    data providers, which need megatron.energon), nor can a model's
    recipe (llama3_8b_pretrain_config asks Hugging Face for the model's
    config.json);
  - megatron.bridge's and megatron.bridge.models' __init__.py are not
    run (they import every model family, diffusion's included, which
    need transformers < 5.9, diffusers, ...): the modules above are
    imported from their files, GPTModelProvider and T5ModelProvider put
    where mixed_precision.py looks for them;
  - Transformer Engine is absent (CPU only): peft/lora.py imports
    transformer_engine.pytorch for its layer classes, so a module of
    three empty stand-ins (Linear, LayerNormLinear, ops.Sequential) is
    put in its place after Megatron-Core is imported; no LoRA layer is
    built, only LoRA's dataclass reads the overrides;
  - Python 3.11 runs Bridge 0.5.0 (which asks 3.12): megatron-core
    0.18.0's training/models/hybrid.py imports typing.override (3.12),
    given here from typing_extensions.
"""

import dataclasses
import os
import re
import shlex
import sys
import types

_loaded = None


def load(folder):
    """Imports Bridge's modules from folder (make venv-bridge's)."""
    global _loaded
    if _loaded:
        return _loaded
    import typing

    import typing_extensions

    if not hasattr(typing, "override"):
        typing.override = typing_extensions.override
    root = os.path.join(folder, "megatron", "bridge")

    def bare(name, path):
        m = types.ModuleType(name)
        m.__path__ = [path]
        sys.modules[name] = m
        return m

    import megatron.core.transformer.transformer_config  # noqa: F401 (before the stand-in below)

    bare("megatron.bridge", root)
    models = bare("megatron.bridge.models", os.path.join(root, "models"))
    from megatron.bridge.models.gpt_provider import GPTModelProvider
    from megatron.bridge.models.t5_provider import T5ModelProvider

    models.GPTModelProvider, models.T5ModelProvider = GPTModelProvider, T5ModelProvider
    # A hybrid's provider (Nemotron-H, Nemotron 3: models/mamba/mamba_provider.py),
    # its package's __init__.py not run either.
    bare("megatron.bridge.models.mamba", os.path.join(root, "models", "mamba"))
    from megatron.bridge.models.mamba.mamba_provider import MambaModelProvider
    from megatron.bridge.data.datasets.packed_sequence import PackedSequenceSpecs
    from megatron.bridge.training import config as C
    from megatron.bridge.training import mixed_precision as mp
    from megatron.bridge.training.utils.omegaconf_utils import process_config_with_overrides

    te = types.ModuleType("transformer_engine")
    tep = types.ModuleType("transformer_engine.pytorch")
    tep.Linear = type("Linear", (), {})
    tep.LayerNormLinear = type("LayerNormLinear", (), {})
    tep.ops = types.SimpleNamespace(Sequential=object)
    te.pytorch = tep
    sys.modules.setdefault("transformer_engine", te)
    sys.modules.setdefault("transformer_engine.pytorch", tep)
    from megatron.bridge.peft.lora import LoRA

    _loaded = types.SimpleNamespace(
        C=C, GPTModelProvider=GPTModelProvider, MambaModelProvider=MambaModelProvider, PackedSequenceSpecs=PackedSequenceSpecs, LoRA=LoRA, mp=mp, apply=process_config_with_overrides
    )
    return _loaded


def container(b, kind, model=None, provider=None):
    """A ConfigContainer as recipes/common.py's _pretrain_common
    (kind "pretrain"), _sft_common ("sft") or _peft_common ("peft")
    builds it: mock GPT data, or SQuAD packed to the sequence, and the
    LoRA of _peft_common; its model a one-layer GPTModelProvider (or the
    provider class given: a hybrid's MambaModelProvider) the overrides
    reshape, with the fields model gives (a family's provider's own,
    which no override writes: LlamaBridge's SwiGLU)."""
    C = b.C
    if kind == "pretrain":
        ds = C.GPTDatasetConfig(random_seed=1234, reset_attention_mask=False, reset_position_ids=False, eod_mask_loss=False, seq_length=4096)
    else:
        ds = C.FinetuningDatasetConfig(seq_length=2048, packed_sequence_specs=b.PackedSequenceSpecs(packed_sequence_size=2048))
    peft = None
    if kind == "peft":
        peft = b.LoRA(target_modules=["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"], dim=32, alpha=32)
    return C.ConfigContainer(
        model=(provider or b.GPTModelProvider)(num_layers=1, hidden_size=64, num_attention_heads=4, **(model or {})),
        train=C.TrainingConfig(global_batch_size=32, micro_batch_size=2),
        optimizer=C.OptimizerConfig(use_distributed_optimizer=True),
        scheduler=C.SchedulerConfig(),
        ddp=C.DistributedDataParallelConfig(
            grad_reduce_in_fp32=True, overlap_grad_reduce=True, overlap_param_gather=True, data_parallel_sharding_strategy="optim_grads_params", use_distributed_optimizer=True
        ),
        dataset=ds,
        logger=C.LoggerConfig(),
        tokenizer=C.TokenizerConfig(),
        checkpoint=C.CheckpointConfig(),
        mixed_precision="bf16_mixed",
        peft=peft,
    )


def read_export(text):
    """The overrides of an export (its PLACER_OVERRIDES array, read as
    bash reads it) and the recipe kind its header names."""
    kind = re.search(r"--recipe \w+?_(pretrain|sft|peft)_config", text).group(1)
    body = text.split("PLACER_OVERRIDES=(\n", 1)[1].rsplit(")", 1)[0]
    return kind, shlex.split(body)


def literal(v):
    """An override's value as Hydra parses it, for the plain values
    placer writes."""
    if v == "null":
        return None
    if v in ("true", "false"):
        return v == "true"
    if v.startswith("["):
        return [x for x in v[1:-1].split(",") if x]
    for t in (int, float):
        try:
            return t(v)
        except ValueError:
            pass
    return v


def field(cfg, dotted):
    obj = cfg
    for part in dotted.lstrip("+").split("."):
        obj = getattr(obj, part)
    return obj


def check(b, kind, overrides, model=None, provider=None):
    """Applies the overrides with Bridge's machinery and returns the
    container; raises AssertionError where a value did not land as
    written, and Bridge's own errors where it refuses."""
    cfg = b.apply(container(b, kind, model, provider), cli_overrides=overrides)
    for o in overrides:
        k, v = o.split("=", 1)
        got, want = field(cfg, k), literal(v)
        if isinstance(got, tuple):
            got = list(got)
        assert got == want, f"{k}: Bridge holds {got!r}, the export wrote {want!r}"
    if kind == "peft":
        assert isinstance(cfg.peft, b.LoRA), f"peft is {type(cfg.peft).__name__}, not Bridge's LoRA"
    if getattr(cfg.dataset, "packed_sequence_specs", None) is not None:
        assert isinstance(cfg.dataset.packed_sequence_specs, b.PackedSequenceSpecs)
    # As Bridge's setup does before it builds the model: the recipe's
    # dtypes and FP8/FP4 settings onto the model, optimizer and DDP
    # configs (MixedPrecisionConfig.setup), then finalize.
    recipe = b.mp.get_mixed_precision_config(cfg.mixed_precision)
    recipe.setup(cfg.model, cfg.optimizer, cfg.ddp)
    cfg.model = finalize(cfg.model)
    return cfg, recipe


# Megatron-Core's checks that ask for Transformer Engine itself, by the
# words of their refusal, and the fields that call them: without TE
# those fields are turned off for finalize() only, on a copy, so that
# the rest of its checks run; FINALIZED_WITHOUT says which ran so.
TE_ONLY = {"fused permutation is not available": "moe_permute_fusion", "router fusion": "moe_router_fusion",
           "apply_rope_fusion is not available": "apply_rope_fusion"}
FINALIZED_WITHOUT = set()


def finalize(model):
    """GPTModelProvider.finalize() of the model as the overrides left it;
    on a copy without a field only Transformer Engine runs where
    finalize refuses it for TE's absence (TE_ONLY)."""
    import copy

    m = copy.deepcopy(model)
    for _ in TE_ONLY:
        try:
            m.finalize()
            return m
        except (ValueError, AssertionError) as e:
            off = [f for words, f in TE_ONLY.items() if words in str(e) and getattr(m, f)]
            if not off:
                raise
            setattr(m, off[0], False)
            FINALIZED_WITHOUT.add(off[0])
            m = copy.deepcopy(m)
    m.finalize()
    return m


def asdict(x):
    return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
