"""Megatron-Core's TransformerLayer as placer profile --framework megatron
times it (frameworks.py; docs/profile.md, "Another framework's layer").

The layer is the one Megatron-Core's GPTModel stacks, built from its own
layer spec (megatron-core 0.16.1, megatron/core/models/gpt/
gpt_layer_specs.py): get_gpt_layer_with_transformer_engine_spec where
transformer_engine imports ("TE spec"), else get_gpt_layer_local_spec
("megatron-core local spec": its ColumnParallelLinear and
RowParallelLinear, DotProductAttention, torch's RMSNorm; with experts
its MoELayer with SequentialMLP's local experts). Its TransformerConfig
is the one Megatron-LM builds for the model and plan: the shard's
tensor degree (its tensor-parallel group passed in a
ProcessGroupCollection, as GPTModel's pg_collection), sequence
parallelism, the model's widths, heads, query groups, head width, FFN,
SwiGLU (gated_linear_unit, silu), RMSNorm, no biases, QK norm; with
experts their number, top k, FFN and the alltoall token dispatcher.

On a CPU (gloo) the config leaves out every fused CUDA path
(gradient_accumulation_fusion, masked_softmax_fusion,
bias_activation_fusion, bias_dropout_fusion, persist_layer_norm,
apply_rope_fusion all False, use_cpu_initialization True), the RNG
tracker is Megatron-Core's inference one (tensor_parallel/random.py,
initialize_rng_tracker(inference_rng_tracker=True): its fork is a
no-op, where the training tracker keeps CUDA generator states; dropout
is 0), the causal mask is passed in (transformer/utils.py's
get_default_causal_mask builds it on "cuda") and torch.cuda.current_device
answers "cpu": Megatron-Core 0.16.1 allocates its scratch tensors on it
whatever the inputs' device (utils.py GlobalMemoryBuffer.get_tensor for
the attention's baddbmm input and sequence parallelism's all-gather,
tensor_parallel/mappings.py _gather_along_first_dim,
transformer/moe/router.py), so on a CPU they are the CPU's.
"""

import warnings

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

LOCAL, TE = "megatron-core local spec", "TE spec"

# megatron-core 0.16.1 warns at import, once per module, that Apex and
# Transformer Engine are not installed and it falls back to torch's
# norm and its own kernels: the profile's software.layer says which
# spec ran, so the warnings are kept off the progress lines.
warnings.filterwarnings("ignore", message=".*(Apex|Transformer Engine).*not installed", category=UserWarning)
warnings.filterwarnings("ignore", message="full scope is deprecated", category=UserWarning)  # 0.16.1's own default

_GROUPS = {}


def have_te():
    try:
        import transformer_engine.pytorch  # noqa: F401
    except Exception:  # ImportError, or a build that fails to load its library
        return False
    return True


def spec_name():
    """Which of Megatron-Core's layer specs is built here."""
    return TE if have_te() else LOCAL


def config(c, T, sp, cuda, alone=1):
    """Megatron-Core's TransformerConfig of c's layer at tensor degree T
    (sequence parallelism sp), as Megatron-LM's
    core_transformer_config_from_args builds it for a Llama (SwiGLU,
    RMSNorm, no biases, rotary) or its Mixtral/Qwen3-MoE. alone > 1:
    one rank's kernels of degree alone without its collectives, built
    at degree 1 with a rank's heads, query groups and FFN (what
    ColumnParallelLinear and RowParallelLinear hold on each rank: their
    widths over the degree; the experts whole at expert-tensor degree
    1)."""
    from megatron.core.transformer.transformer_config import TransformerConfig
    kw = dict(num_layers=max(1, c.get("layers", 1)), hidden_size=c["hidden"], num_attention_heads=c["heads"] // alone,
              num_query_groups=c["kv_heads"] // alone, kv_channels=c.get("head_dim") or c["hidden"] // c["heads"],
              ffn_hidden_size=c["ffn"] // alone, gated_linear_unit=True, activation_func=F.silu, normalization="RMSNorm",
              layernorm_epsilon=1e-5, add_bias_linear=False, add_qkv_bias=False, qk_layernorm=bool(c.get("qk_norm")),
              attention_dropout=0.0, hidden_dropout=0.0, tensor_model_parallel_size=T, sequence_parallel=sp and T > 1,
              use_cpu_initialization=not cuda)
    if not cuda:
        kw.update(gradient_accumulation_fusion=False, masked_softmax_fusion=False, bias_activation_fusion=False,
                  bias_dropout_fusion=False, persist_layer_norm=False, apply_rope_fusion=False)
    if c.get("experts"):
        kw.update(num_moe_experts=c["experts"], moe_router_topk=c["topk"], moe_ffn_hidden_size=c["expert_ffn"],
                  moe_token_dispatcher_type="alltoall" if cuda else "allgather", moe_router_load_balancing_type="none",
                  moe_grouped_gemm=cuda and have_te(), expert_model_parallel_size=1, expert_tensor_parallel_size=1)
    return TransformerConfig(**kw)


def spec(c, cfg):
    from megatron.core.models.gpt import gpt_layer_specs as s
    kw = dict(num_experts=c.get("experts") or None, moe_grouped_gemm=cfg.moe_grouped_gemm,
              qk_layernorm=cfg.qk_layernorm)
    if have_te():
        return s.get_gpt_layer_with_transformer_engine_spec(**kw)
    return s.get_gpt_layer_local_spec(normalization="RMSNorm", **kw)


def cpu_shims():
    """What lets Megatron-Core's local spec run on a CPU (the module's
    docstring): its scratch tensors on the CPU, its RNG tracker the one
    without CUDA generator states."""
    torch.cuda.current_device = lambda: "cpu"
    from megatron.core.tensor_parallel import random
    random.initialize_rng_tracker(inference_rng_tracker=True, force_reset=True)


def one_rank_group():
    """A process group of this process alone (made once; only its rank
    takes part, so a process timing a shape alone can make it)."""
    if not dist.is_initialized():
        # A single process: Megatron-Core's layers ask their groups for
        # their size and rank.
        dist.init_process_group("nccl" if torch.cuda.is_initialized() else "gloo", store=dist.HashStore(), rank=0,
                                world_size=1)
    r = dist.get_rank()
    if r not in _GROUPS:
        _GROUPS[r] = dist.new_group([r], use_local_synchronization=True)
    return _GROUPS[r]


def groups(shard):
    """The ProcessGroupCollection the layer runs over: the shard's
    tensor-parallel group (None: none), every other degree this process
    alone: at expert and expert-tensor degree 1 that includes tp_ep,
    the expert-tensor x expert group (parallel_state.py
    get_expert_tensor_and_model_parallel_group), whatever the tensor
    degree."""
    from megatron.core import parallel_state
    from megatron.core.process_groups_config import ProcessGroupCollection
    one = one_rank_group()
    if parallel_state._GLOBAL_MEMORY_BUFFER is None:
        # The scratch buffer initialize_model_parallel makes (its groups
        # are passed here instead: a profile times several degrees).
        parallel_state._set_global_memory_buffer()
    tp = shard.group if shard is not None and shard.T > 1 else one
    return ProcessGroupCollection(tp=tp, cp=one, pp=one, tp_cp=tp, ep=one, expt_tp=one, tp_ep=one, expt_dp=one,
                                  dp=one, dp_cp=one, tp_dp_cp=tp)


class MCoreLayer(nn.Module):
    """Megatron-Core's TransformerLayer as measure.time_part calls a
    layer: x is [seq (/T with sequence parallelism), batch, hidden], as
    GPTModel passes its layers; the causal mask and the rotary table
    (its RotaryEmbedding, base 500000 as layers.py's) made once per
    sequence outside the timed loop, as GPTModel makes them once a step."""

    batch_first = False

    def __init__(self, layer, cfg, T, sp, repeat=False):
        super().__init__()
        from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding
        self.layer = layer
        self.rotary = [RotaryEmbedding(kv_channels=cfg.kv_channels, rotary_percent=1.0, rotary_base=500000,
                                       use_cpu_initialization=cfg.use_cpu_initialization)]
        self.rows = T if sp and T > 1 else 1
        self.repeat = T if repeat else 1
        self.pe = {}
        self.recompute_core = False

    def forward(self, x, cos=None, sin=None):
        seq = x.shape[0] * self.rows
        rows = x.shape[0]
        if self.repeat > 1:
            x = x.repeat(self.repeat, 1, 1)
        key = (seq, x.device)
        if key not in self.pe:
            with torch.no_grad():
                mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=x.device), diagonal=1)[None, None]
                self.pe[key] = (mask, self.rotary[0](seq).to(x.device))
        mask, emb = self.pe[key]
        y = self.layer(x, attention_mask=mask, rotary_pos_emb=emb)
        y = y[0] if isinstance(y, tuple) else y
        return y[:rows] if self.repeat > 1 else y


def no_te_shims():
    """megatron-core 0.16.1 without Transformer Engine: its router's
    gating linear (transformer/moe/moe_utils.py,
    RouterGatingLinearFunction.forward) tests te_general_gemm, a name
    bound only where transformer_engine imports (a NameError otherwise);
    None is what it means there, torch's matmul."""
    from megatron.core.transformer.moe import moe_utils
    if not hasattr(moe_utils, "te_general_gemm"):
        moe_utils.te_general_gemm = None


def refuses(shape):
    """Why the layer at shape (a profile request's) is not built here,
    else None: sequence parallelism in the local spec, whose norm
    without Apex (torch_norm.py, WrappedTorchNorm) asserts it off."""
    if shape.get("sp") and shape.get("tp", 1) > 1 and not have_te():
        return ("Megatron-Core's local spec without Apex refuses sequence parallelism "
                "(megatron/core/transformer/torch_norm.py WrappedTorchNorm)")
    return None


def layer(c, shard, ep=1, ep_group=None, etp=1, etp_group=None, layer=0):
    """Megatron-Core's layer of c at shard (frameworks.plan's maker):
    over the shard's group where it has one, else one rank's kernels
    (config's alone) with sequence parallelism's gathered input written
    by repeating it T times along the sequence and its scattered output
    cut to the rank's part (the norms then run on the whole sequence)."""
    from megatron.core.transformer.spec_utils import build_module
    if ep != 1 or etp != 1:
        raise ValueError("--framework megatron: expert degrees above 1 are not built")
    # CUDA where the profile runs on it (measure.py has set its device
    # and made tensors there before any layer), else the CPU's path,
    # even on a host with a GPU (--device cpu).
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    if not have_te():
        no_te_shims()
    if not cuda:
        cpu_shims()
    else:
        from megatron.core.tensor_parallel import random
        random.model_parallel_cuda_manual_seed(1234, tp_rank=shard.t, ep_rank=0, etp_rank=0, force_reset_rng=True)
    whole = shard.T == 1 or shard.group is not None
    cfg = config(c, shard.T, shard.sp, cuda) if whole else config(c, 1, False, cuda, alone=shard.T)
    mod = build_module(spec(c, cfg), config=cfg, layer_number=layer + 1, pg_collection=groups(shard if whole else None))
    return MCoreLayer(mod, cfg, shard.T, shard.sp, repeat=not whole and shard.sp)
