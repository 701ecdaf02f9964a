"""placer's `--to megatron` export read by Megatron-Core's own configuration
classes (make test-megatron; docs/cluster-scale.md, "Running a plan").

    python megatron_check.py [--gpus N] [FILE]      # FILE: the export (default: standard input)
    python megatron_check.py --gpus N -- ARGS...    # pretrain_gpt.py's arguments themselves

prints one line, "ok: ..." (what Megatron-Core built) or "refused: ..."
(who refused and their words), and exits 0 or 1.

megatron-core 0.16.1 (PyPI; make venv-megatron installs it with --no-deps
beside the torch virtualenv, PYTHONPATH names it) carries megatron/core
but not megatron/training, so what Megatron-LM's pretrain_gpt.py does
between its command line and megatron/core is done here, each step as
Megatron-LM's release core_v0.16.1 does it (the tag's
megatron/training/arguments.py, training.py and gpt_builders.py, read
for this file):

  1. the export's bash array is read by bash itself (`source FILE`), so a
     value bash cannot read is a refusal;
  2. the arguments are parsed by Megatron-LM's parser, rebuilt from
     workloads/export/plans/testdata/megatron-lm-core_v0.16.1-args.txt: every
     flag of that release's pretrain_gpt.py with its destination, action,
     type and default; a flag not there is refused as argparse refuses
     it, and so is a value outside a flag's choices;
  3. validate_args's steps on what the export can set (the world size
     the export names, the virtual pipeline size it computes, the
     interleaved schedule's pipeline size, the overlapped parameter
     gather, Megatron-FSDP's checkpoint format, parameter dtype and the
     gradients' reduction in FP32, FFN and head width defaults, context
     parallelism's sequence, sequence parallelism off at TP 1 and the TP
     overlap's need of it, the experts' divisibility, delayed weight
     gradients' Transformer Engine); its steps on data, checkpoints,
     logging, RL and inference are not: the export leaves those to the
     user;
  4. core_transformer_config_from_args: every TransformerConfig field
     whose name is an argument's destination copied, then its overrides
     (pipeline_dtype from the parameters' dtype, batch_p2p_comm, experts,
     uneven first and last stages, SwiGLU, query groups, ...), and the
     config built: TransformerConfig.__post_init__ and
     ModelParallelConfig.__post_init__ check their combinations
     ("When using pipeline parallelism, pipeline_dtype must be
     specified", "num_layers_in_first_pipeline_stage ... must be
     divisible by virtual pipeline parallel degree", ...);
  5. training.get_model's DistributedDataParallelConfig, the same way;
  6. the number of micro-batches (megatron.core's
     ConstantNumMicroBatchesCalculator: the global batch a multiple of
     micro-batch x data-parallel size) and, with virtual stages, the
     interleaved schedule's rules on them
     (pipeline_parallel/schedules.py); each pipeline rank's layers
     counted by megatron.core's get_num_layers_to_build.

Transformer Engine is not installed (nor needed by these classes): where
a check asks for its version, it answers as TE ASSUMED_TE (megatron-core
0.16.1's own extra asks for transformer-engine >= 2.9.0a0, < 2.12.0),
and its fused RoPE kernel counts as present (apply_rope_fusion is
Megatron-LM's default), as on a cluster with TE. Checks of the machine
(the GPU's compute capability for grouped GEMMs,
CUDA_DEVICE_MAX_CONNECTIONS) are the launch's, not the plan's, and are
not made.
"""

import argparse
import dataclasses
import importlib.util
import json
import os
import re
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RELEASE = "core_v0.16.1"
ARGS_TABLE = os.path.join(ROOT, "workloads", "export", "plans", "testdata", "megatron-lm-%s-args.txt" % RELEASE)
ASSUMED_TE = "2.11.0"


class Refused(Exception):
    """A refusal: who (the parser, validate_args, TransformerConfig, ...)
    and their words."""

    def __init__(self, who, words):
        super().__init__("%s: %s" % (who, " ".join(str(words).split())))
        self.who, self.words = who, words


# --- 1. the export, read by bash -------------------------------------------

def read_export(text):
    """The export's PLACER_ARGS as bash reads them (source), and the GPUs
    its header names ("... on N GPUs")."""
    p = subprocess.run(["bash", "-c", 'set -e; source /dev/stdin; printf "%s\\0" "${PLACER_ARGS[@]}"'],
                       input=text, capture_output=True, text=True)
    if p.returncode != 0 or p.stderr.strip():
        raise Refused("bash (source the export)", p.stderr.strip().splitlines()[0] if p.stderr.strip() else "exit %d" % p.returncode)
    argv = p.stdout.split("\0")[:-1]
    m = re.search(r" on (\d+) GPUs$", text.splitlines()[0]) if text else None
    return argv, int(m.group(1)) if m else None


# --- 2. Megatron-LM's parser, from the table --------------------------------

def load_table(path=ARGS_TABLE):
    """flag -> {flag, dest, action, type, nargs, default, choices} from the
    test data (# lines are its header)."""
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            flag, dest, action, typ, nargs, default, choices = line.rstrip("\n").split("\t")
            rows[flag] = {"flag": flag, "dest": dest, "action": action, "type": typ, "nargs": nargs,
                          "default": json.loads(default), "choices": None if choices == "-" else json.loads(choices)}
    return rows


def _eval_pattern(pattern):
    # megatron/training/arguments.py _eval_pattern: digits, commas, brackets, + and * only.
    if re.search(r"[^,\d\[\]\(\)\+\*]", pattern):
        raise ValueError("Invalid pattern: %s" % pattern)
    return eval(pattern)


def _freq_type(x):
    # moe_freq_type (and its siblings): N, "N", or a list expression.
    return _eval_pattern(x) if "[" in x else int(x)


TYPES = {"int": int, "float": float, "str": str, "moe_freq_type": _freq_type, "no_rope_freq_type": _freq_type,
         "la_freq_type": _freq_type, "tuple_type": lambda x: tuple(int(i) for i in x.strip("()").split(","))}


class _ParserError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _ParserError(message)


def parse_args(argv, table):
    """Megatron-LM's parser (argparse, allow_abbrev=False) rebuilt from the
    table: every destination at its default, the flags of argv applied."""
    p = _Parser(prog="pretrain_gpt.py", allow_abbrev=False, add_help=False)
    enums = {}
    for r in table.values():
        if r["action"] == "help":
            continue
        kw = {"dest": r["dest"], "default": argparse.SUPPRESS}
        if r["action"] in ("store_true", "store_false"):
            kw["action"] = r["action"]
        elif r["action"] == "optional_bool":
            kw["action"] = "store_const"
            kw["const"] = not r["flag"].startswith("--no-")
        else:
            t = r["type"]
            if t in ("AttnBackend", "CudaGraphScope", "Signals", "lambda", "bool"):
                enums[r["dest"]] = t
                kw["type"] = str
            elif t != "-":
                kw["type"] = TYPES[t]
            if r["nargs"] != "1":
                kw["nargs"] = int(r["nargs"]) if r["nargs"].isdigit() else r["nargs"]
            if r["choices"] is not None:
                kw["choices"] = r["choices"]
        p.add_argument(r["flag"], **kw)
    try:
        given = p.parse_args(argv)
    except _ParserError as e:
        raise Refused("pretrain_gpt.py's parser", e)
    args = argparse.Namespace()
    for r in table.values():
        if r["action"] != "help" and not hasattr(args, r["dest"]):
            setattr(args, r["dest"], r["default"])
    for k, v in vars(given).items():
        setattr(args, k, v)
    from megatron.core.transformer.enums import AttnBackend

    args.attention_backend = AttnBackend[args.attention_backend]
    if args.cuda_graph_scope != table_default(table, "cuda_graph_scope"):
        # arguments.py: type=lambda x: CudaGraphScope[x], nargs='+'.
        from megatron.core.transformer.enums import CudaGraphScope

        try:
            args.cuda_graph_scope = [CudaGraphScope[x] for x in args.cuda_graph_scope]
        except KeyError as e:
            raise Refused("pretrain_gpt.py's parser", "--cuda-graph-scope: invalid choice: %s" % e)
    for dest, t in enums.items():
        if dest not in ("attention_backend", "cuda_graph_scope") and getattr(args, dest) != table_default(table, dest):
            raise Refused("megatron_check", "--%s: a value of type %s is not read here" % (dest.replace("_", "-"), t))
    return args


def table_default(table, dest):
    for r in table.values():
        if r["dest"] == dest:
            return r["default"]
    raise KeyError(dest)


# --- 3. validate_args, on what the export sets -------------------------------

def _need(cond, words):
    if not cond:
        raise Refused("validate_args", words)


def validate_args(args, world_size):
    """megatron/training/arguments.py validate_args (core_v0.16.1), in its
    order, on what the export can set; each step names its source."""
    import torch

    args.rank, args.world_size = 0, world_size
    args.use_dist_ckpt = args.ckpt_format != "torch"  # training/utils.py update_use_dist_ckpt
    total = args.tensor_model_parallel_size * args.pipeline_model_parallel_size * args.context_parallel_size
    _need(world_size % total == 0, "world size (%d) is not divisible by total_model_size (total_model_size=%d)" % (world_size, total))
    args.transformer_pipeline_model_parallel_size = args.pipeline_model_parallel_size
    args.data_parallel_size = world_size // total
    if args.expert_tensor_parallel_size is None:
        args.expert_tensor_parallel_size = args.tensor_model_parallel_size
    if args.recompute_activations:
        args.recompute_granularity = "selective"
    _need(args.micro_batch_size is not None and args.micro_batch_size > 0, "micro_batch_size > 0")
    if args.global_batch_size is None:
        args.global_batch_size = args.micro_batch_size * args.data_parallel_size
    _need(args.global_batch_size > 0, "global_batch_size > 0")

    # Uneven virtual pipeline parallelism.
    n = sum(x is not None for x in (args.num_layers_per_virtual_pipeline_stage, args.num_virtual_stages_per_pipeline_rank,
                                     args.pipeline_model_parallel_layout))
    _need(n <= 1, "No more than one of the following arguments can be set at the same time: --num-layers-per-virtual-pipeline-stage, "
                  "--num-virtual-stages-per-pipeline-rank,--pipeline-model-parallel-layout.")
    if args.pipeline_model_parallel_layout is not None:
        raise Refused("megatron_check", "--pipeline-model-parallel-layout is not read here")
    units = int(bool(args.account_for_embedding_in_pipeline_split)) + int(bool(args.account_for_loss_in_pipeline_split))
    if args.num_layers_per_virtual_pipeline_stage is not None or args.num_virtual_stages_per_pipeline_rank is not None:
        if args.num_virtual_stages_per_pipeline_rank is None:
            _need(args.decoder_first_pipeline_num_layers is None and args.decoder_last_pipeline_num_layers is None,
                  "please use --num-virtual-stages-per-pipeline-rank to specify virtual pipeline parallel degree when enable uneven pipeline parallelism")
            layers = args.num_layers + units
            _need(layers % args.transformer_pipeline_model_parallel_size == 0,
                  "number of layers of the model must be divisible pipeline model parallel size")
            per_stage = layers // args.transformer_pipeline_model_parallel_size
            _need(per_stage % args.num_layers_per_virtual_pipeline_stage == 0,
                  "number of layers per pipeline stage must be divisible number of layers per virtual pipeline stage")
            args.virtual_pipeline_model_parallel_size = per_stage // args.num_layers_per_virtual_pipeline_stage
        else:
            args.virtual_pipeline_model_parallel_size = args.num_virtual_stages_per_pipeline_rank
        if args.virtual_pipeline_model_parallel_size == 1:
            args.virtual_pipeline_model_parallel_size = None
    else:
        args.virtual_pipeline_model_parallel_size = None
        if args.decoder_first_pipeline_num_layers is None and args.decoder_last_pipeline_num_layers is None:
            _need((args.num_layers + units) % args.transformer_pipeline_model_parallel_size == 0,
                  "Number of layers should be divisible by the pipeline-model-parallel size")
    if args.virtual_pipeline_model_parallel_size is not None:
        if args.overlap_p2p_comm:
            _need(args.pipeline_model_parallel_size > 1,
                  "When interleaved schedule is used, pipeline-model-parallel size should be greater than 1")
        else:
            _need(args.pipeline_model_parallel_size > 2,
                  "When interleaved schedule is used and p2p communication overlap is disabled, pipeline-model-parallel size should be greater than 2")
    else:
        args.overlap_p2p_comm = False
        args.align_param_gather = False

    if args.overlap_param_gather:
        _need(args.use_distributed_optimizer or args.use_megatron_fsdp,
              "--overlap-param-gather only supported with distributed optimizer or megatron fsdp")
        _need(args.overlap_grad_reduce, "Must use --overlap-param-gather with --overlap-grad-reduce")
    if args.use_torch_fsdp2:
        raise Refused("megatron_check", "--use-torch-fsdp2 is not read here")

    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "fp8": torch.uint8}
    for k in ("main_grads_dtype", "main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype"):
        v = getattr(args, k)
        setattr(args, k, v if isinstance(v, torch.dtype) else dtypes[v])
    if args.fp8_param_gather:
        _need(args.use_distributed_optimizer or args.use_megatron_fsdp,
              "--fp8-param-gather only supported with distributed optimizer, torch fsdp2, megatron fsdp, or inference mode")
    if args.fp4 and args.fp8:
        raise Refused("validate_args", "--fp4-format and --fp8-format cannot be used simultaneously. Please choose one.")
    if args.use_megatron_fsdp:
        args.use_custom_fsdp = True
        if args.data_parallel_sharding_strategy == "optim_grads_params":
            _need(args.check_weight_hash_across_dp_replicas_interval is None,
                  "check_weight_hash_across_dp_replicas_interval is not supported with optim_grads_params")
        _need(args.ckpt_format == "fsdp_dtensor", "Megatron FSDP only supports fsdp_dtensor checkpoint format")

    # Parameters' dtype; BF16's gradients reduced in FP32 unless --grad-reduce-in-bf16.
    args.params_dtype = torch.float
    if args.fp16:
        _need(not args.bf16, "not (fp16 and bf16)")
        args.params_dtype = torch.half
    if args.bf16:
        args.params_dtype = torch.bfloat16
        if args.accumulate_allreduce_grads_in_fp32:
            _need(args.main_grads_dtype == torch.float32,
                  "--main-grads-dtype can only be fp32 when --accumulate-allreduce-grads-in-fp32 is set")
        if args.grad_reduce_in_bf16:
            args.accumulate_allreduce_grads_in_fp32 = False
        elif not args.accumulate_allreduce_grads_in_fp32 and args.main_grads_dtype == torch.float32:
            args.accumulate_allreduce_grads_in_fp32 = True
    if args.dataloader_type is None:
        args.dataloader_type = "single"
    args.variable_seq_lengths = False

    if args.num_layers is not None:
        _need(args.encoder_num_layers is None, "cannot have both num-layers and encoder-num-layers specified")
        args.encoder_num_layers = args.num_layers
    for req in ("num_layers", "hidden_size", "num_attention_heads", "max_position_embeddings"):
        _need(getattr(args, req) is not None, "%s argument is None" % req)
    if args.ffn_hidden_size is None:
        args.ffn_hidden_size = int((4 * args.hidden_size * 2 / 3) / 64) * 64 if args.swiglu else 4 * args.hidden_size
    if args.kv_channels is None:
        _need(args.hidden_size % args.num_attention_heads == 0, "hidden_size % num_attention_heads == 0")
        args.kv_channels = args.hidden_size // args.num_attention_heads
    if args.seq_length is not None and args.context_parallel_size > 1:
        _need(args.seq_length % (args.context_parallel_size * 2) == 0,
              "seq-length should be a multiple of 2 * context-parallel-size if context-parallel-size > 1.")
    if args.seq_length is not None:
        args.encoder_seq_length = args.seq_length
        _need(args.max_position_embeddings >= args.seq_length,
              "max_position_embeddings (%d) must be greater than or equal to seq_length (%d)." % (args.max_position_embeddings, args.seq_length))
    if args.fp32_residual_connection:
        _need(args.fp16 or args.bf16, "residual connection in fp32 only supported when using fp16 or bf16.")
    if args.weight_decay_incr_style == "constant":
        args.start_weight_decay = args.end_weight_decay = args.weight_decay

    if args.distribute_saved_activations:
        _need(args.tensor_model_parallel_size > 1 and args.recompute_granularity == "full" and args.recompute_method is not None,
              "distribute_saved_activations needs TP > 1 and full recomputation with a method")
    if args.recompute_granularity == "selective":
        _need(args.recompute_method is None, "recompute method is not yet supported for selective recomputing granularity")
    if args.tensor_model_parallel_size == 1:
        args.sequence_parallel = False  # "Disabling sequence parallelism because tensor model parallelism is disabled"
    if args.tp_comm_overlap:
        _need(args.sequence_parallel, "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is enabled")
    if not args.add_bias_linear:
        args.bias_gelu_fusion = False
    if args.add_bias_linear:
        args.add_qkv_bias = True
    if args.use_rotary_position_embeddings:
        args.position_embedding_type = "rope"
    if args.position_embedding_type != "rope":
        args.apply_rope_fusion = False

    if args.num_experts == 0:
        args.num_experts = None
    if args.num_experts is not None and args.moe_ffn_hidden_size is None:
        args.moe_ffn_hidden_size = args.ffn_hidden_size
    if args.expert_model_parallel_size > 1:
        _need(args.num_experts is not None, "num_experts must be non None to use expert model parallelism")
        _need(args.num_experts % args.expert_model_parallel_size == 0,
              "Number of experts should be a multiple of expert model parallel_size.")
    for k in ("moe_router_load_balancing_type", "moe_aux_loss_coeff"):
        v = getattr(args, k)
        if isinstance(v, list) and len(v) == 1:
            setattr(args, k, v[0])
    if args.ckpt_format == "fsdp_dtensor":
        _need(args.use_megatron_fsdp, "--ckpt-format fsdp_dtensor is only tested with Megatron FSDP.")
    if not args.enable_gloo_process_groups and args.use_distributed_optimizer:
        _need(args.use_dist_ckpt, "distributed optimizer without Gloo needs distributed checkpointing")
    if "muon" in args.optimizer:
        raise Refused("megatron_check", "--optimizer %s is not read here" % args.optimizer)
    if args.delay_wgrad_compute:
        from megatron.core.utils import is_te_min_version

        _need(args.transformer_impl == "transformer_engine",
              "Delaying wgrad compute is only supported with transformer_engine implementation")
        if args.overlap_grad_reduce:
            _need(is_te_min_version("2.8.0"), "overlap_grad_reduce is only supported with TE >= 2.8.0 when enabling delay_wgrad_compute")
        if not args.gradient_accumulation_fusion:
            _need(is_te_min_version("2.7.0"),
                  "disabling gradient_accumulation_fusion is only supported with TE >= 2.7.0 when enabling delay_wgrad_compute")
    if args.mtp_num_layers:
        _need(args.position_embedding_type in ("rope", "none"), "Multi-Token Prediction (MTP) needs rope or none position embeddings")
    if args.cpu_offloading_num_layers > 0:
        args.cpu_offloading = True
    if args.multi_latent_attention:
        _need(not args.group_query_attention, "Group query attention is mutually exclusive with multi latent attention.")
    if args.moe_latent_size is not None:
        _need(args.moe_latent_size > 0 and args.num_experts is not None, "MoE latent projections are applicable only for MoE models.")
    return args


# --- 4. and 5. the configs ---------------------------------------------------

def transformer_config(args):
    """core_transformer_config_from_args (megatron/training/arguments.py)."""
    import torch.nn.functional as F
    from megatron.core.activations import squared_relu
    from megatron.core.fusions.fused_bias_geglu import quick_gelu
    from megatron.core.transformer import MLATransformerConfig, TransformerConfig

    cls = MLATransformerConfig if args.multi_latent_attention else TransformerConfig
    if args.heterogeneous_layers_config_path is not None:
        raise Refused("megatron_check", "--heterogeneous-layers-config-path is not read here")
    kw = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
    kw["persist_layer_norm"] = not args.no_persist_layer_norm
    kw["deallocate_pipeline_outputs"] = True
    kw["pipeline_dtype"] = args.params_dtype
    kw["batch_p2p_comm"] = not args.overlap_p2p_comm
    kw["num_moe_experts"] = args.num_experts
    kw["rotary_interleaved"] = args.rotary_interleaved
    kw["num_layers_in_first_pipeline_stage"] = args.decoder_first_pipeline_num_layers
    kw["num_layers_in_last_pipeline_stage"] = args.decoder_last_pipeline_num_layers
    kw["fp8_param"] = args.fp8_param_gather
    if args.swiglu:
        kw["activation_func"] = F.silu
        kw["gated_linear_unit"] = True
        kw["bias_activation_fusion"] = args.bias_swiglu_fusion
    else:
        kw["bias_activation_fusion"] = args.bias_gelu_fusion
    if args.squared_relu:
        kw["activation_func"] = squared_relu
    elif args.quick_geglu:
        kw["gated_linear_unit"] = True
        kw["activation_func"] = quick_gelu
    if args.init_method_xavier_uniform:
        import torch

        kw["init_method"] = kw["scaled_init_method"] = torch.nn.init.xavier_uniform_
    kw["num_query_groups"] = args.num_query_groups if args.group_query_attention else None
    kw["config_logger_dir"] = args.config_logger_dir
    if args.rope_type is None:
        kw.pop("rope_type", None)
    if len(args.cp_comm_type) == 1:
        kw["cp_comm_type"] = args.cp_comm_type[0]
    if args.is_hybrid_model:
        kw["is_hybrid_model"] = args.is_hybrid_model
    kw["inference_sampling_seed"] = args.seed
    kw["moe_latent_size"] = args.moe_latent_size
    if args.te_precision_config_file:
        raise Refused("megatron_check", "--te-precision-config-file is not read here")
    return _build(cls, kw)


def ddp_config(args):
    """training.py get_model's DistributedDataParallelConfig (not FSDP2)."""
    from megatron.core.distributed import DistributedDataParallelConfig

    kw = {f.name: getattr(args, f.name) for f in dataclasses.fields(DistributedDataParallelConfig) if hasattr(args, f.name)}
    kw["grad_reduce_in_fp32"] = args.accumulate_allreduce_grads_in_fp32
    kw["check_for_nan_in_grad"] = args.check_for_nan_in_loss_and_grad
    kw["check_for_large_grads"] = args.check_for_large_grads
    if args.ddp_num_buckets is not None:
        raise Refused("megatron_check", "--ddp-num-buckets is not read here")
    kw["bucket_size"] = args.ddp_bucket_size
    kw["pad_buckets_for_high_nccl_busbw"] = args.ddp_pad_buckets_for_high_nccl_busbw
    kw["reduce_scatter_with_fp32_accumulation"] = args.ddp_reduce_scatter_with_fp32_accumulation
    kw["average_in_collective"] = args.ddp_average_in_collective
    return _build(DistributedDataParallelConfig, kw)


def _build(cls, kw):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cls(**kw)
    except (ValueError, AssertionError, TypeError) as e:
        raise Refused(cls.__name__, e)


# --- 6. micro-batches, the schedule, the layers per rank ---------------------

def schedule(args, config):
    """The number of micro-batches and, with virtual stages, the
    interleaved schedule's rules on it; each pipeline rank's layers (a
    list per rank of its model chunks' layers)."""
    from megatron.core.num_microbatches_calculator import ConstantNumMicroBatchesCalculator
    from megatron.core.transformer.transformer_block import get_num_layers_to_build

    try:
        m = ConstantNumMicroBatchesCalculator(args.global_batch_size, args.micro_batch_size, args.data_parallel_size,
                                              args.decrease_batch_size_if_needed, 0).get()
    except AssertionError as e:
        raise Refused("ConstantNumMicroBatchesCalculator", e)
    P = config.pipeline_model_parallel_size
    if config.virtual_pipeline_model_parallel_size is not None:
        # pipeline_parallel/schedules.py forward_backward_pipelining_with_interleaving
        g = config.microbatch_group_size_per_vp_stage
        if g > m or g < P:
            raise Refused("the interleaved schedule", "The number of contiguous micro-batches in a virtual pipeline stage "
                                                      "should range in [PP=%d , M=%d]" % (P, m))
        if 0 < m % g < P:
            raise Refused("the interleaved schedule", "The remainder of M (the total micro-batches) divided by N (number of "
                                                      "contiguous micro-batches in a virtual pipeline stage) should be 0, or larger "
                                                      "than or equal to the pipeline-parallel size, but it is %d." % (m % g))
    V = config.virtual_pipeline_model_parallel_size or 1
    try:
        layers = [[get_num_layers_to_build(config, vp_stage=v if V > 1 else None, pp_rank=r) for v in range(V)] for r in range(P)]
    except AssertionError as e:
        raise Refused("get_num_layers_to_build", e)
    if sum(map(sum, layers)) != config.num_layers:
        raise Refused("get_num_layers_to_build", "%d layers built of %d" % (sum(map(sum, layers)), config.num_layers))
    return m, layers


# --- the whole check ---------------------------------------------------------

def stand_in_transformer_engine():
    """Where TE is not installed: its version as ASSUMED_TE to
    is_te_min_version, and its fused RoPE and permutation present."""
    if importlib.util.find_spec("transformer_engine") is not None:
        return
    from packaging.version import Version
    import megatron.core.utils as mu
    from megatron.core.models.common.embeddings import rope_utils

    mu._te_version = Version(ASSUMED_TE)
    if rope_utils.fused_apply_rotary_pos_emb is None:
        rope_utils.fused_apply_rotary_pos_emb = lambda *a, **k: None  # the kernel's place, never called here
    # TE's fused permutation kernels, which TransformerConfig asks
    # moe_utils for when moe_permute_fusion is on (moe_utils binds them
    # only where TE imports): their places, never called here.
    from megatron.core.transformer.moe import moe_utils

    for name in ("fused_permute", "fused_permute_with_probs", "fused_sort_chunks_by_index",
                 "fused_sort_chunks_by_index_with_probs", "fused_unpermute"):
        if getattr(moe_utils, name, None) is None:
            setattr(moe_utils, name, lambda *a, **k: None)


def check(argv, world_size, table=None):
    """Megatron-Core's view of pretrain_gpt.py's arguments argv on
    world_size GPUs: a dict of what was built (Refused otherwise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import megatron.core  # noqa: F401 (its import warns without TE and Apex)
    stand_in_transformer_engine()
    args = validate_args(parse_args(argv, table or load_table()), world_size)
    config = transformer_config(args)
    ddp = ddp_config(args)
    micro_batches, layers = schedule(args, config)
    return {"args": args, "config": config, "ddp": ddp, "micro_batches": micro_batches, "layers": layers}


def summary(r):
    c, d = r["config"], r["ddp"]
    dp = r["args"].data_parallel_size
    stages = [sum(x) for x in r["layers"]]
    parts = ["layers %d, hidden %d, heads %d (%d groups of %d), ffn %d" % (c.num_layers, c.hidden_size, c.num_attention_heads,
                                                                         c.num_query_groups, c.kv_channels, c.ffn_hidden_size)]
    if c.num_moe_experts:
        parts.append("experts %d top %d of %d, %s dispatcher%s" % (c.num_moe_experts, c.moe_router_topk, c.moe_ffn_hidden_size,
                                                                   c.moe_token_dispatcher_type, ", grouped GEMM" if c.moe_grouped_gemm else ""))
    parts.append("TP %d, CP %d, PP %d, VP %s, DP %d, EP %d, ETP %d%s" % (
        c.tensor_model_parallel_size, c.context_parallel_size, c.pipeline_model_parallel_size,
        c.virtual_pipeline_model_parallel_size or "-", dp, c.expert_model_parallel_size, c.expert_tensor_parallel_size,
        ", SP" if c.sequence_parallel else ""))
    parts.append("stages %s" % ",".join(map(str, stages)) if len(stages) > 1 else "one stage")
    parts.append("%d micro-batches of %d" % (r["micro_batches"], r["args"].micro_batch_size))
    if c.recompute_granularity:
        parts.append("recompute %s%s" % (c.recompute_granularity, " %s %d" % (c.recompute_method, c.recompute_num_layers)
                                         if c.recompute_method else " " + "+".join(c.recompute_modules)))
    if c.fp8:
        parts.append("fp8 %s %s" % (c.fp8, getattr(c.fp8_recipe, "value", c.fp8_recipe)))
    parts.append("pipeline_dtype %s" % str(c.pipeline_dtype).replace("torch.", "") if c.pipeline_dtype else "params %s" % c.params_dtype)
    parts.append("grads in %s" % ("fp32" if d.grad_reduce_in_fp32 else "bf16"))
    parts.append("megatron-fsdp %s" % d.data_parallel_sharding_strategy if d.use_megatron_fsdp
                 else "distributed optimizer" if d.use_distributed_optimizer else "DDP")
    return "; ".join(parts)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    raw = None
    if "--" in argv:
        i = argv.index("--")
        argv, raw = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpus", type=int, help="the world size (default: the export's header)")
    ap.add_argument("--table", default=ARGS_TABLE, help="Megatron-LM's flags (default: %(default)s)")
    ap.add_argument("file", nargs="?", help="the export (default: standard input); or -- and pretrain_gpt.py's arguments")
    a = ap.parse_args(argv)
    try:
        if raw is not None:
            args, gpus = raw, a.gpus
        else:
            text = open(a.file).read() if a.file and a.file != "-" else sys.stdin.read()
            args, gpus = read_export(text)
            gpus = a.gpus or gpus
        if not gpus:
            raise Refused("megatron_check", "the world size: no --gpus and no 'on N GPUs' in the export's header")
        r = check(args, gpus, load_table(a.table))
    except Refused as e:
        print("refused: %s" % e)
        return 1
    print("ok: megatron-core %s: %s" % (_version(), summary(r)))
    return 0


def _version():
    import megatron.core

    return getattr(megatron.core, "__version__", "?")


if __name__ == "__main__":
    sys.exit(main())
