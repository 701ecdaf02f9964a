"""The layer a user's framework builds, in place of layers.Block
(placer profile --framework; docs/profile.md, "Another framework's
layer").

Each maker returns a module that measure.time_part times as it times
layers.Block: forward(x, cos, sin) -> y, with batch_first set (x is
[batch, seq (/T with sequence parallelism), hidden], the layout both
frameworks' layers take; layers.Block's is sequence first). cos and sin
are layers.py's tables and go unused: each wrapper computes its
framework's own rotary tables once per sequence (outside the timed
loop, as the framework's model computes them once a step for every
layer).

- hf: transformers' own decoder layer, built from a config with random
  weights and attn_implementation "sdpa": LlamaDecoderLayer (a Llama),
  Qwen3DecoderLayer (QK norm), MixtralDecoderLayer (experts) or
  Qwen3MoeDecoderLayer (experts and QK norm). Tensor degree 1 only:
  transformers' own tensor parallelism (from_pretrained's tp_plan)
  shards a whole pretrained model, not one layer, so none is timed.
- torchtitan: torchtitan 0.2.2's Llama 3 TransformerBlock
  (torchtitan/models/llama3/model/model.py). At tensor degree T > 1 in
  place (its group given): the whole block parallelized by torch's
  DTensor with torchtitan's own plan (torchtitan/models/llama3/infra/
  parallelize.py, apply_tp: SequenceParallel norms, PrepareModuleInput
  to Replicate, ColwiseParallel wq, wk, wv, w1, w3, RowwiseParallel wo
  and w2 to Shard(1)); without sequence parallelism the same plan less
  its sequence sharding (norms replicated, RowwiseParallel to
  Replicate: torch's own tensor-parallel plan for a Llama, which
  torchtitan does not run). Its kernels alone (no group): the block with
  its linears at a rank's widths, what parallelize_module leaves on
  each rank, its attention's input repeated T times along the sequence
  (what the all-gather writes) and its output cut to the rank's part
  (what the reduce-scatter leaves) with sequence parallelism.
"""

import importlib.metadata

import torch
from torch import nn

FRAMEWORKS = ("hf", "torchtitan", "megatron")


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def plan(name, c):
    """(software keys, maker, error): what ran the layers (the profile's
    software.framework, framework_version and layer: the class timed),
    the maker of its layer for config c, or one line saying why it
    cannot run here."""
    if name == "hf":
        try:
            cls, _ = hf_classes(c)
        except ImportError as e:
            return None, None, "--framework hf: transformers does not import here (%s; make venv-test installs it)" % e
        return ({"framework": "transformers", "framework_version": version("transformers"),
                 "layer": cls.__module__ + "." + cls.__qualname__}, hf_layer, None)
    if name == "torchtitan":
        try:
            from torchtitan.models.llama3.model.model import TransformerBlock
        except ImportError as e:
            return None, None, ("--framework torchtitan: torchtitan does not import here (%s; make venv-frameworks "
                                "installs torchtitan 0.2.2, PLACER_FRAMEWORKS names its folder)" % e)
        return ({"framework": "torchtitan", "framework_version": version("torchtitan"),
                 "layer": TransformerBlock.__module__ + "." + TransformerBlock.__qualname__}, titan_layer, None)
    if name == "megatron":
        try:
            from . import mcore
            from megatron.core.transformer.transformer_layer import TransformerLayer
        except ImportError as e:
            return None, None, ("--framework megatron: megatron-core does not import here (%s; make venv-megatron "
                                "installs megatron-core 0.16.1, PLACER_MEGATRON names its folder)" % e)
        return ({"framework": "megatron-core", "framework_version": version("megatron-core"),
                 "layer": "%s.%s (%s)" % (TransformerLayer.__module__, TransformerLayer.__qualname__, mcore.spec_name())},
                mcore.layer, None)
    return None, None, "--framework %r: want hf, torchtitan or megatron" % name


def refuses(name, shape):
    """Why framework name's layer at shape (a request's layer shape) is
    not built here, else None (the profile leaves the shape out)."""
    if name == "megatron":
        from . import mcore
        return mcore.refuses(shape)
    return None


# transformers

def hf_classes(c):
    """transformers' (decoder layer class, config class) for config c."""
    if c.get("experts"):
        if c.get("qk_norm"):
            from transformers import Qwen3MoeConfig
            from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeDecoderLayer
            return Qwen3MoeDecoderLayer, Qwen3MoeConfig
        from transformers import MixtralConfig
        from transformers.models.mixtral.modeling_mixtral import MixtralDecoderLayer
        return MixtralDecoderLayer, MixtralConfig
    if c.get("qk_norm"):
        from transformers import Qwen3Config
        from transformers.models.qwen3.modeling_qwen3 import Qwen3DecoderLayer
        return Qwen3DecoderLayer, Qwen3Config
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer
    return LlamaDecoderLayer, LlamaConfig


def hf_config(c):
    """transformers' config of c's layer: its widths, heads, key/value
    heads, head width, FFN (experts: their number, top k and FFN), RMS
    norm epsilon 1e-5 and rotary base 500000 as layers.py's, SDPA."""
    _, cfg = hf_classes(c)
    kw = dict(hidden_size=c["hidden"], num_attention_heads=c["heads"], num_key_value_heads=c["kv_heads"],
              head_dim=c.get("head_dim") or c["hidden"] // c["heads"], intermediate_size=c["ffn"],
              vocab_size=c["vocab"], max_position_embeddings=max(c["seq"], 1), rms_norm_eps=1e-5,
              attention_bias=bool(c.get("qkv_bias")), attn_implementation="sdpa")
    if c.get("experts"):
        kw.update(num_experts_per_tok=c["topk"])
        if cfg.__name__ == "MixtralConfig":
            kw.update(num_local_experts=c["experts"], intermediate_size=c["expert_ffn"])
        else:
            kw.update(num_experts=c["experts"], moe_intermediate_size=c["expert_ffn"], decoder_sparse_step=1,
                      mlp_only_layers=[], norm_topk_prob=True)
    config = cfg(**kw)
    if c.get("experts"):
        # What a model built from this config runs by default:
        # transformers 5.24.0's get_correct_experts_implementation
        # (modeling_utils.py) picks grouped_mm where none is asked for.
        config._experts_implementation = "grouped_mm"
    config.rope_parameters = {"rope_type": "default", "rope_theta": 500000.0}
    return config


class HFLayer(nn.Module):
    """A transformers decoder layer as measure.time_part calls a layer."""

    batch_first = True

    def __init__(self, layer, rotary):
        super().__init__()
        self.layer = layer
        self.rotary = [rotary]  # not a submodule: its buffers are not the layer's
        self.pe = {}
        self.recompute_core = False

    def forward(self, x, cos=None, sin=None):
        key = (x.shape[0], x.shape[1], x.device)
        if key not in self.pe:
            with torch.no_grad():
                pos = torch.arange(x.shape[1], device=x.device).unsqueeze(0).expand(x.shape[0], -1)
                self.pe[key] = self.rotary[0].to(x.device)(x, pos)
        y = self.layer(x, position_embeddings=self.pe[key])
        return y[0] if isinstance(y, tuple) else y


def hf_layer(c, shard, ep=1, ep_group=None, etp=1, etp_group=None, layer=0):
    assert shard.T == 1 and ep == 1 and etp == 1, "transformers' layer is timed at tensor and expert degree 1 only"
    cls, _ = hf_classes(c)
    config = hf_config(c)
    mod = __import__(cls.__module__, fromlist=["_"])
    rotary = [getattr(mod, n) for n in dir(mod) if n.endswith("RotaryEmbedding")][0](config)
    return HFLayer(cls(config, layer), rotary)


# torchtitan

def titan_args(c):
    """torchtitan's TransformerModelArgs of c's layer: its FFN exactly
    (torchtitan's FeedForward rounds int(2/3 x 4 dim) times
    ffn_dim_multiplier up to multiple_of: multiple_of = ffn and the
    multiplier ffn over int(8 dim / 3) give ffn), rope_theta 500000,
    SDPA."""
    from torchtitan.models.llama3.model.args import TransformerModelArgs
    base = int(2 * 4 * c["hidden"] / 3)
    return TransformerModelArgs(dim=c["hidden"], n_layers=c.get("layers", 1), n_heads=c["heads"], n_kv_heads=c["kv_heads"],
                                vocab_size=c["vocab"], multiple_of=c["ffn"], ffn_dim_multiplier=c["ffn"] / base,
                                norm_eps=1e-5, rope_theta=500000.0, max_seq_len=c["seq"], attn_type="sdpa")


class TitanLayer(nn.Module):
    """torchtitan's TransformerBlock as measure.time_part calls a layer."""

    batch_first = True

    def __init__(self, block, args, seq):
        super().__init__()
        from torchtitan.models.llama3.model.model import precompute_freqs_cis
        self.block = block
        self.register_buffer("freqs_cis", precompute_freqs_cis(args.dim // args.n_heads, seq, args.rope_theta,
                                                               args.rope_scaling_args), persistent=False)
        self.recompute_core = False

    def forward(self, x, cos=None, sin=None):
        return self.block(x, self.freqs_cis, None)


def titan_layer(c, shard, ep=1, ep_group=None, etp=1, etp_group=None, layer=0):
    from torchtitan.models.llama3.model.model import TransformerBlock
    assert ep == 1 and etp == 1, "torchtitan's Llama block has no experts"
    args = titan_args(c)
    block = TransformerBlock(layer, args)
    with torch.no_grad():
        block.init_weights()
    T = shard.T
    if T > 1 and shard.group is not None:
        titan_tp(block, shard)
    elif T > 1:
        titan_shard(block, T, shard.sp)
    return TitanLayer(block, args, c["seq"])


def titan_tp(block, shard):
    """block parallelized over shard's group by DTensor, torchtitan's
    plan (apply_tp's layer_plan); without sequence parallelism its
    sequence sharding left out."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    mesh = DeviceMesh.from_group(shard.group, "cpu" if next(block.parameters()).device.type == "cpu" else "cuda")
    if shard.sp:
        plan = {
            "attention_norm": SequenceParallel(),
            "attention": PrepareModuleInput(input_layouts=(Shard(1), None, None, None),
                                            desired_input_layouts=(Replicate(), None, None, None)),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "ffn_norm": SequenceParallel(),
            "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
        }
    else:
        plan = {"attention.wo": RowwiseParallel(), "feed_forward.w2": RowwiseParallel()}
    for name in ("attention.wq", "attention.wk", "attention.wv", "feed_forward.w1", "feed_forward.w3"):
        plan[name] = ColwiseParallel()
    parallelize_module(block, mesh, plan)


def titan_shard(block, T, sp):
    """block's linears cut to one rank's widths of T (columns of wq, wk,
    wv, w1, w3; rows of wo, w2), no communication; with sequence
    parallelism the attention's and MLP's input repeated T times along
    the sequence (what the all-gather writes) and their output cut to
    the rank's part (what the reduce-scatter leaves)."""
    for parent, names, col in ((block.attention, ("wq", "wk", "wv"), True), (block.attention, ("wo",), False),
                               (block.feed_forward, ("w1", "w3"), True), (block.feed_forward, ("w2",), False)):
        for n in names:
            w = getattr(parent, n).weight
            out, inp = (w.shape[0] // T, w.shape[1]) if col else (w.shape[0], w.shape[1] // T)
            lin = nn.Linear(inp, out, bias=False)
            with torch.no_grad():
                lin.weight.copy_(w[:out, :inp])
            setattr(parent, n, lin)
    if sp:
        for m in (block.attention, block.feed_forward):
            m.register_forward_pre_hook(lambda _m, args: (args[0].repeat(1, T, 1),) + tuple(args[1:]))
            m.register_forward_hook(lambda _m, _args, y: y[:, : y.shape[1] // T])
