"""Export one PyTorch training step as a placer graph (docs/import.md).

The step is forward, loss, backward and one optimizer update, recorded at
ATen granularity: every ATen operator PyTorch dispatches becomes one op of
placer's native JSON graph (docs/graph-format.md) with its output shape and
dtype, FLOPs, bytes read and written, and the tensors that flow between
ops. Parameters are ops of type "Parameter" that hold the parameter and its
optimizer state as resident bytes; a module's parameters, buffers and
their update ops share one co-location group ("module:<path>"). Views (view, t, transpose, expand, ...)
are marked as aliases, and a reader of a view also reads its base, so that
the base stays allocated while the view is in use; an in-place op (relu_,
add_) writes a new value (counted twice while it runs), except that an update of a parameter or of optimizer state in place adds no memory. A second file (the "meta" file) keeps what the graph
format has no field for: each op's module path (fully qualified name), phase
and source ATen operator, and the parameter, gradient, optimizer-state and
buffer bytes; `placer export --to module-map` reads it.

How: the step runs under a TorchDispatchMode that records each ATen call,
normally on fake tensors (torch._subclasses.FakeTensorMode: shapes and
dtypes without data or arithmetic, so a ResNet-50 step records in seconds);
module forward hooks give each forward op its module, autograd node hooks
give each backward op the module whose forward created the node, and the
optimizer runs one parameter at a time so that each update op knows its
parameter. The same code runs on torch 1.13 and on newer torch; where
torch.utils.flop_counter exists its formulas count FLOPs, else this file's.

The batch (docs/graph-format.md, "Batch information"): the graph says
its batch B, the size of the example inputs' batch dimension (batch_dim,
0 by default), which dimension of each tensor holds it, and which parts
of each op's FLOPs and bytes do not scale with it. The step is recorded a
second time on the example inputs (and targets) concatenated with
themselves along that dimension (2B examples, the same ops): a tensor
whose shape changes carries the batch there (activations and their
gradients), one that keeps its shape does not (parameters, their
gradients, optimizer state); an op's costs c(B) and c(2B) give its fixed
part 2c(B) - c(2B) (a weight read, a weight gradient written, an
optimizer update) and the rest, which scales. batch_dim=None records
once and writes no batch information (format version 1), as does a step
whose second recording has other ops (a data-dependent model).

This module is the exporter's library; its command line is
tools/dev/torchexport/torchexport.py (placer_torch.torchexport runs it once
its flags are parsed), and placer_torch.profiling measures the ops it
records. Run on its own:
    python3 tools/dev/torchexport/torchexport.py --model resnet50 --batch 32 -o resnet50.json
    python3 tools/dev/torchexport/torchexport.py --model mypkg.models:build --input-shape 3,224,224 --batch 32 -o m.json
or from Python:
    from placer_torch.exporter import export_training_step
    export_training_step(build_model, make_inputs, loss_fn, torch.optim.Adam, {"lr": 1e-3}, "out.json")
"""

import contextlib
import json
import logging
import math
import os
import sys
import tempfile
import warnings

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

try:  # torch >= 1.13
    from torch._subclasses.fake_tensor import FakeTensorMode
except ImportError:  # pragma: no cover
    FakeTensorMode = None
try:  # fake tensors' refusals of ops whose result depends on the data
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException
    _DATA_DEPENDENT = (DataDependentOutputException, DynamicOutputShapeException)
except ImportError:  # pragma: no cover
    _DATA_DEPENDENT = ()

try:  # newer torch: the reference FLOP formulas
    from torch.utils import flop_counter as _flop_counter
except ImportError:
    _flop_counter = None

from .exportflags import ATTENTION, AUTOCAST_NAMES, COMPILE_MODES, LOSSES as _LOSSES, OPTIMIZER_IMPLS, UsageError
from .exportflags import check_zoo_name
from .semantics import aten_effect, effects_list

FORMAT_NAME = "placer-graph"
META_FORMAT = "placer-torch-meta"

_DTYPES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int32: "i32", torch.int64: "i64", torch.int8: "i8", torch.uint8: "i8", torch.bool: "bool",
}

# ATen ops whose outputs are views of their first input.
_VIEWS = {
    "view", "_unsafe_view", "_reshape_alias", "reshape", "t", "transpose", "permute", "expand", "as_strided",
    "unsqueeze", "squeeze", "slice", "select", "alias", "unfold", "narrow", "split", "split_with_sizes",
    "chunk", "unbind", "view_as", "expand_as", "flatten", "diagonal", "numpy_T", "_unsafe_view",
}
# Autograd bookkeeping: not computation; the output stands for the input.
_TRANSPARENT = {"detach", "lift_fresh", "lift_fresh_copy", "_local_scalar_dense"}
_MATMUL = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "dot", "mv", "addmv", "_grouped_mm"}
_CONV = {"convolution", "convolution_backward", "_convolution", "conv2d", "cudnn_convolution"}
_EMBEDDING = {"embedding", "embedding_dense_backward", "index_select", "gather", "scatter", "scatter_add",
              "index_add", "index", "index_put", "_index_put_impl_", "embedding_backward"}
_DATAMOVE = {"clone", "copy", "copy_", "cat", "stack", "contiguous", "zeros", "ones", "empty", "full", "zeros_like",
             "ones_like", "empty_like", "full_like", "new_zeros", "new_ones", "new_empty", "new_full",
             "scalar_tensor", "arange", "fill", "fill_", "zero_", "_to_copy", "constant_pad_nd", "repeat",
             "empty_strided", "new_empty_strided", "masked_fill", "masked_fill_", "where", "_unsafe_index"}
# Reductions and normalizations: FLOPs per element of their largest tensor.
_REDUCTIONS = {
    "sum": 1, "mean": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "var": 2, "std": 3, "var_mean": 3, "norm": 2,
    "_softmax": 5, "_safe_softmax": 5, "_log_softmax": 5, "_softmax_backward_data": 3, "_log_softmax_backward_data": 3,
    "native_layer_norm": 7, "native_layer_norm_backward": 10, "native_batch_norm": 7,
    "native_batch_norm_backward": 10, "_native_batch_norm_legit": 7, "_native_batch_norm_legit_functional": 7,
    "nll_loss_forward": 1, "nll_loss_backward": 1, "nll_loss2d_forward": 1, "nll_loss2d_backward": 1,
    "max_pool2d_with_indices": 1, "max_pool2d_with_indices_backward": 1, "avg_pool2d": 1,
    "avg_pool2d_backward": 1, "_adaptive_avg_pool2d": 1, "_adaptive_avg_pool2d_backward": 1,
    "mse_loss": 3, "mse_loss_backward": 3, "logsumexp": 3, "cumsum": 1, "topk": 1, "sort": 1, "argmax": 1,
}


def _group(module):
    """The co-location group of a module's parameters, buffers and their
    update ops: a module's state lives on one device, so that a module map
    ({module: device}) says exactly where placer put it."""
    return "module:" + module


def _op_name(func):
    """'aten.addmm.default' -> ('aten', 'addmm', 'default')."""
    s = str(func)
    parts = s.split(".")
    if len(parts) >= 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return parts[0], parts[1], "default"
    return "", s, "default"


def _tensors(x):
    """The tensors in a (nested) argument, in order."""
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from _tensors(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _tensors(y)


def _nbytes(t):
    return t.numel() * t.element_size()


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _prod(xs):
    n = 1
    for d in xs:
        n *= int(d)
    return n


def _flops_own(name, args, outs):
    """FLOPs of one ATen call by this file's formulas (a multiply-add is 2)."""
    ts = [t for t in _tensors(args)]
    os_ = [t for t in _tensors(outs)]
    if name in ("mm",):
        a, b = ts[0], ts[1]
        return 2 * a.shape[0] * a.shape[1] * b.shape[1]
    if name in ("addmm",):
        a, b = ts[1], ts[2]
        return 2 * a.shape[0] * a.shape[1] * b.shape[1]
    if name in ("bmm",):
        a, b = ts[0], ts[1]
        return 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    if name in ("baddbmm",):
        a, b = ts[1], ts[2]
        return 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    if name == "_grouped_mm":
        # Mixture-of-experts' grouped matmul (transformers' experts):
        # (M, K) x (G, K, N) -> (M, N), each row by its group's matrix;
        # (K, M) x (M, N) -> (G, K, N), M split into the groups (the
        # weights' gradient); 3-D batched. Each output element is a dot
        # over the contracted dimension: K, or for 2-D x 2-D M.
        a, out = ts[0], os_[0]
        if a.dim() == 2 and ts[1].dim() == 2:
            return 2 * (out.numel() // max(1, out.shape[0])) * a.shape[1]
        return 2 * out.numel() * a.shape[-1]
    if name == "convolution":
        x, w = ts[0], ts[1]
        transposed = bool(args[6]) if len(args) > 6 else False
        if transposed:
            return 2 * x.numel() * _prod(w.shape[1:])
        return 2 * os_[0].numel() * _prod(w.shape[1:])
    if name == "convolution_backward":
        grad_out, x, w = ts[0], ts[1], ts[2]
        transposed = bool(args[7])
        mask = list(args[10])
        fwd = 2 * (x.numel() if transposed else grad_out.numel()) * _prod(w.shape[1:])
        f = 0
        if mask[0]:
            f += fwd
        if mask[1]:
            f += fwd
        if mask[2]:
            f += grad_out.numel()
        return f
    if name in _REDUCTIONS:
        big = max([t.numel() for t in ts + os_] or [0])
        return _REDUCTIONS[name] * big
    if name in _DATAMOVE or name in _EMBEDDING or name in _VIEWS:
        if name == "embedding_dense_backward":
            return ts[0].numel()
        return 0
    # Elementwise: one per output element.
    return os_[0].numel() if os_ else 0


# PyTorch's multi_tensor_apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh):
# a foreach op's tensors go to the GPU in chunks of kChunkSize elements,
# one thread block a chunk, in launches of at most 320 blocks and of at
# most depth_to_max_tensors[depth - 1] tensors (depth: how many tensor
# lists the kernel reads and writes).
_MTA_CHUNK = 65536
_MTA_MAX_BLOCKS = 320
_MTA_MAX_TENSORS = (110, 64, 48, 36, 30)


def multi_tensor_launches(numels, depth):
    """The kernels multi_tensor_apply launches for tensors of these sizes
    and this depth, as its loop counts them: a launch whenever the
    tensors in flight reach the depth's limit at a tensor's last chunk or
    the blocks reach 320 (a tensor cut there carries on into the next
    launch), and one for what is left; empty tensors are skipped."""
    if not 1 <= depth <= len(_MTA_MAX_TENSORS):
        return None
    launches = blocks = tensors = 0
    for n in numels:
        if n <= 0:
            continue
        tensors += 1
        chunks = -(-n // _MTA_CHUNK)
        for c in range(chunks):
            blocks += 1
            if (tensors == _MTA_MAX_TENSORS[depth - 1] and c == chunks - 1) or blocks == _MTA_MAX_BLOCKS:
                launches += 1
                blocks = 0
                tensors = 0 if c == chunks - 1 else 1
    return launches + (1 if blocks else 0)


def foreach_launches(name, args, kwargs):
    """How many kernels a _foreach_ op launches on CUDA (the graph's
    launches; placer's host model issues each at its measured cost): the
    tensor lists among its arguments, and its output list unless it works
    in place, are its depth; their first list's sizes go through
    multi_tensor_apply's count. A list of 0-dimensional tensors alone is
    Adam's step counters, which live on the CPU unless capturable: no
    kernel (torch.optim's _multi_tensor_adam adds 1 to them on the CPU).
    None where the op is not a list op placer can count."""
    lists = [a for a in list(args) + list(kwargs.values())
             if isinstance(a, (list, tuple)) and a and all(isinstance(t, torch.Tensor) for t in a)]
    if not lists:
        return None
    first = lists[0]
    if all(t.dim() == 0 for t in first) and len(lists) == 1:
        return 0
    depth = len([l for l in lists if len(l) == len(first)]) + (0 if name.endswith("_") else 1)
    return multi_tensor_launches([t.numel() for t in first], depth)


def _flops(func, name, args, kwargs, outs):
    if name == "convolution_backward" and len(args) > 9 and isinstance(args[9], int) and args[9] > 1:
        # torch.utils.flop_counter's convolution_backward counts the
        # weight's gradient of a grouped convolution as if ungrouped: a
        # depthwise convolution of C channels C times over (torch 2.x,
        # conv_backward_flop transposes the shapes but not the groups;
        # 412,070,400 for a 5x5 depthwise layer of 72 channels at 2 x 28
        # x 28 whose two gradients are 11,289,600 and the bias's
        # 112,896). This file's formula holds the groups in the weight's
        # shape.
        return int(_flops_own(name, args, outs))
    if _flop_counter is not None and hasattr(_flop_counter, "flop_registry"):
        reg = _flop_counter.flop_registry
        key = getattr(func, "overloadpacket", func)
        if key in reg:
            try:
                return int(reg[key](*args, **(kwargs or {}), out_val=outs))
            except Exception:  # a formula that wants other arguments: ours
                pass
    return int(_flops_own(name, args, outs))


def _class(name):
    if name in _MATMUL:
        return "matmul"
    if name in _CONV:
        return "conv"
    if name in _EMBEDDING:
        return "embedding"
    if name in _VIEWS or name in _DATAMOVE:
        return "datamove"
    if name in _REDUCTIONS:
        return "reduction"
    return "elementwise"


# A fused optimizer kernel's FLOPs per parameter element: those of the
# for-loop implementation's elementwise ops (Adam: lerp_, mul_, addcmul_,
# sqrt, div, add_, addcdiv_; AdamW adds the decay's mul_; SGD with
# momentum: mul_, add_, add_).
_FUSED_OPT = {"_fused_adam_": 7, "_fused_adamw_": 8, "_fused_sgd_": 3}


def _mutated(func, name, args, kwargs):
    """The tensors an ATen op writes in place, by its schema's (a!)
    arguments. A fused Adam's gradients are marked so, but written only
    when it unscales them (grad_scale given)."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return []
    out = []
    for i, a in enumerate(schema.arguments):
        info = a.alias_info
        if info is None or not info.is_write:
            continue
        if name.startswith("_fused_") and a.name == "grads" and (kwargs or {}).get("grad_scale") is None:
            continue
        v = args[i] if i < len(args) else (kwargs or {}).get(a.name)
        out.extend(_tensors(v))
    return out


# Torch 1.13's fake tensors answer a value read (.item(), a branch on a
# tensor) with 0 instead of refusing it, as newer ones do: the recorder
# refuses it itself in forward and backward. (The optimizer's step count
# is such a read, of a constant.)
_FAKE_READS_ZERO = int(torch.__version__.split(".")[0]) < 2


class _ValueRead(Exception):
    """A forward or backward op read a fake tensor's value (torch 1.13)."""

    def __init__(self, func):
        super().__init__(str(func))
        self.func = func


class _Recorder(TorchDispatchMode):
    """Records ATen calls: for each, its inputs' producers and its outputs."""

    def __init__(self, exporter):
        super().__init__()
        self.x = exporter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ns, name, _ = _op_name(func)
        if _FAKE_READS_ZERO and self.x.fake and name == "_local_scalar_dense" and self.x.counting is None \
                and self.x.phase in ("forward", "backward"):
            raise _ValueRead(func)
        if ns == "aten" and name == "convolution_backward" and self.x.fake:
            # Fake tensors run this op's real kernel on zeros (no meta
            # kernel in torch 1.13): make the outputs' shapes instead.
            grad_out, x, w = args[0], args[1], args[2]
            mask = list(args[10])
            out = (x.new_empty(x.shape) if mask[0] else None,
                   w.new_empty(w.shape) if mask[1] else None,
                   grad_out.new_empty((w.shape[1] * args[9],) if args[7] else (w.shape[0],)) if mask[2] else None)
        else:
            try:
                out = func(*args, **kwargs)
            except Exception as e:
                out = self.x.real_op(func, args, kwargs, e)
                if out is _REFUSED:
                    raise
        if ns in ("prim", "profiler"):
            return out
        self.x.record(func, ns, name, args, kwargs, out)
        return out


_REFUSED = object()


def _functional(func):
    """Whether an ATen op writes none of its inputs and returns no view
    of one (its schema's alias annotations): what can run apart on real
    copies of its inputs."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return False
    return all(a.alias_info is None for a in list(schema.arguments) + list(schema.returns))


def _run_real(fm, func, args, kwargs):
    """func on real CPU zeros of its fake inputs' shapes, strides and
    dtypes (as fake tensors run an op that has no meta kernel); its
    outputs as fake tensors of fm."""
    from torch.utils._mode_utils import no_dispatch
    from torch.utils._pytree import tree_map
    from torch._subclasses.fake_tensor import FakeTensor

    def real(t):
        if isinstance(t, FakeTensor):
            return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="cpu").zero_()
        return t
    with no_dispatch():
        out = func(*tree_map(real, list(args)), **tree_map(real, dict(kwargs)))
    return tree_map(lambda t: fm.from_tensor(t) if isinstance(t, torch.Tensor) else t, out)


class _QuietFakeLog(logging.Filter):
    """Drops fake tensors' own log of a meta kernel's failure (a traceback
    on stderr): the exporter handles it (Exporter.real_op) or says it in
    one line."""

    def filter(self, record):
        return not str(record.msg).startswith("failed while attempting to run meta")


@contextlib.contextmanager
def _quiet_fake_log():
    log = logging.getLogger("torch._subclasses.fake_tensor")
    f = _QuietFakeLog()
    log.addFilter(f)
    try:
        yield
    finally:
        log.removeFilter(f)


class _ModuleGradFns(TorchFunctionMode):
    """Maps each autograd node created in forward to the current module."""

    def __init__(self, exporter):
        super().__init__()
        self.x = exporter

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in _tensors(out):
            fn = t.grad_fn
            if fn is not None and fn not in self.x.node_module:
                self.x.node_module[fn] = self.x.module_stack[-1]
        return out


# Autocast's op lists for CUDA, as torch.amp's documentation gives them
# ("Autocast Op Reference": CUDA ops that can autocast to float16, to
# float32, and that promote to the widest input type), by the name of the
# Python function or Tensor method the model calls, checked against the
# lists themselves in torch 2.14.1's aten/src/ATen/autocast_mode.h
# (AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32,
# AT_FORALL_FP32_SET_OPT_DTYPE, AT_FORALL_PROMOTE; the header the venv's
# torch ships): there rms_norm, logsumexp and the upsampling kernels
# (F.interpolate's modes but "area", an adaptive average pool) run in
# float32, linalg_vecdot in the low dtype, and linalg's vector and matrix
# norms take dtype float32. The exporter records
# on CPU (fake) tensors, where torch.autocast would apply the CPU's lists
# (or none: CUDA's autocast needs a GPU), so _Autocast applies CUDA's
# itself, above the dispatcher: the casts are ATen _to_copy ops that
# autograd differentiates, as under torch.autocast.
_AC_LOW = {
    "__matmul__", "__rmatmul__", "addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "chain_matmul", "multi_dot",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
    "gru_cell", "linear", "lstm_cell", "matmul", "mm", "mv", "prelu", "rnn_tanh_cell", "rnn_relu_cell",
    "scaled_dot_product_attention", "einsum", "linalg_vecdot",
}
_AC_FP32 = {
    "__pow__", "__rdiv__", "__rpow__", "__rtruediv__", "acos", "asin", "binary_cross_entropy_with_logits", "cosh",
    "cosine_embedding_loss", "cdist", "cosine_similarity", "cross_entropy", "dist", "erfinv", "exp", "expm1",
    "group_norm", "hinge_embedding_loss", "kl_div", "l1_loss", "layer_norm", "log", "log10", "log1p", "log2",
    "margin_ranking_loss", "mse_loss", "multilabel_margin_loss", "multi_margin_loss", "nll_loss", "norm", "normalize",
    "pdist", "poisson_nll_loss", "pow", "reciprocal", "rsqrt", "sinh", "smooth_l1_loss", "soft_margin_loss",
    "softplus", "renorm", "tan", "triplet_margin_loss", "huber_loss", "rms_norm", "logsumexp", "frobenius_norm",
    "nuclear_norm",
}
# float32 where they upsample (upsample_nearest*, _upsample_nearest_exact*,
# upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d,
# upsample_trilinear3d and the antialiased ones are on the float32 list);
# mode "area" is adaptive_avg_pool, on no list.
_AC_UPSAMPLE = {"interpolate", "upsample", "upsample_nearest", "upsample_bilinear"}
# float32 by their dtype argument (the input is not cast first).
_AC_FP32_DTYPE = {"softmax", "log_softmax", "softmin", "sum", "prod", "cumsum", "cumprod", "linalg_vector_norm",
                  "linalg_matrix_norm"}
_AC_PROMOTE = {"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sample", "index_put", "scatter_add",
               "tensordot"}
AUTOCAST = dict(zip(AUTOCAST_NAMES, (None, torch.bfloat16, torch.float16)))  # exportflags.AUTOCAST_NAMES


def _low(t):
    return isinstance(t, torch.Tensor) and t.dtype in (torch.float16, torch.bfloat16)


class _Autocast(TorchFunctionMode):
    """torch.autocast(device_type="cuda", dtype) as the recording sees it
    (see _AC_LOW): the listed ops' floating-point arguments cast to the low
    dtype or to float32, the rest run in the dtypes they get. As under
    autocast, a cast of a leaf that requires grad (a weight) is made once
    per forward and reused."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype
        self.cache = {}

    def cast(self, v, dtype):
        if isinstance(v, torch.Tensor):
            if not v.is_floating_point() or v.dtype in (dtype, torch.float64):
                return v
            leaf = v.is_leaf and v.requires_grad
            key = (id(v), dtype)
            if leaf and key in self.cache:
                return self.cache[key][1]
            c = v.to(dtype)
            if leaf:
                self.cache[key] = (v, c)  # v kept so that its id stays unique
            return c
        if isinstance(v, (list, tuple)):
            return type(v)(self.cast(y, dtype) for y in v)
        return v

    def cross_entropy(self, args, kwargs):
        """F.cross_entropy of low-precision logits against class indices,
        as CUDA's autocast runs it, or None where it does not apply.
        cross_entropy_loss is on none of autocast's lists: its composite
        calls log_softmax(self, class_dim, self.scalar_type()) (torch
        2.14.1 aten/src/ATen/native/LossNLL.cpp, cross_entropy_loss_symint),
        whose explicit dtype autocast's fp32_set_opt_dtype keeps (the
        logits' low dtype), then nll_loss, on the float32 list: the cast to
        float32 comes between the two. With probabilities as targets or
        label smoothing (other composites), None: the input is cast first
        (_AC_FP32)."""
        names = ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing")
        a = dict(zip(names, args))
        a.update(kwargs)
        x, target = a.get("input"), a.get("target")
        if (not _low(x) or not isinstance(target, torch.Tensor) or target.is_floating_point()
                or a.get("label_smoothing", 0.0) or a.get("size_average") is not None or a.get("reduce") is not None):
            return None
        lp = torch.log_softmax(x, 0 if x.dim() == 1 else 1, dtype=x.dtype)
        w = a.get("weight")
        return torch.nn.functional.nll_loss(lp.float(), target, weight=None if w is None else self.cast(w, torch.float32),
                                            ignore_index=a.get("ignore_index", -100), reduction=a.get("reduction", "mean"))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name == "cross_entropy":
            out = self.cross_entropy(args, kwargs)
            if out is not None:
                return out
        to = None
        if name in _AC_LOW:
            to = self.dtype
        elif name in _AC_FP32:
            to = torch.float32
        elif name in _AC_UPSAMPLE and kwargs.get("mode", args[3] if len(args) > 3 else "nearest") != "area":
            to = torch.float32
        elif name in _AC_PROMOTE:
            ts = [t for t in _tensors((args, kwargs)) if t.is_floating_point()]
            if ts and any(_low(t) for t in ts) and any(t.dtype == torch.float32 for t in ts):
                to = torch.float32
        elif name in _AC_FP32_DTYPE and kwargs.get("dtype") is None:
            first = next(iter(_tensors(args)), None)
            if _low(first):
                kwargs["dtype"] = torch.float32
        if to is not None:
            args = self.cast(tuple(args), to)
            kwargs = {k: self.cast(v, to) for k, v in kwargs.items()}
        return func(*args, **kwargs)


@contextlib.contextmanager
def _cpu_autocast(dtype):
    """torch.autocast on the CPU below _Autocast: it casts the matmuls and
    convolutions that Python functions of torch call themselves (the
    projections of nn.MultiheadAttention's multi_head_attention_forward),
    which _Autocast does not see, as CUDA's autocast would (the CPU's
    low-precision list has CUDA's matmuls and convolutions). What _Autocast
    casts reaches it in its dtype already. torch 1.13's CPU autocast has
    bfloat16 only: with float16 it stays off there (warning silenced)."""
    if dtype is None:
        yield
        return
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = torch.autocast("cpu", dtype=dtype)
        try:
            ctx.__enter__()
        except RuntimeError:  # torch 1.13: "AutocastCPU only support Bfloat16"
            ctx = None
    try:
        yield
    finally:
        if ctx is not None:
            ctx.__exit__(None, None, None)


class Exporter:
    """One training-step export. Use export_training_step."""

    def __init__(self, fake):
        self.fake = fake
        self.ops = []  # dicts: name, type, class, dtype, shape, flops, bytes_read, bytes_written, ...
        self.meta = []  # per op: module, phase, source, param
        self.producer = {}  # id(tensor) -> tensor index
        self.keep = []  # tensors kept alive so that ids stay unique
        self.tensors = []  # [producer op, [consumers], bytes]
        self.names = {}  # base name -> uses
        self.base_of = {}  # view tensor index -> the tensor index whose memory it shares
        self.phase = "forward"
        self.module_stack = [""]
        # call_stack[-1]: which call of module_stack[-1]'s module this is
        # in the forward (0-based; a module applied several times); calls
        # counts them per module.
        self.call_stack = [0]
        self.calls = {}
        self.node_module = {}
        self.pending_bwd = []
        self.current_param = None
        self.counting = None  # [flops] while a fused op's parts run
        self.autocast = None  # the _Autocast mode while the forward runs under autocast
        self.sdpa_cpu = False  # fused attention as a CPU runs it (execution device cpu)
        self.barrier = None  # the tensor optimizer.step()'s start writes (step_barrier)
        self.fm = None  # the FakeTensorMode the step records under
        self.real_ops = {}  # ops fake tensors refused, run on real zeros: {op: the refusal's first line}
        self.effects = {}  # {module: set of train-mode effects} (placer_torch.semantics)

    def real_op(self, func, args, kwargs, e):
        """An op that fake tensors refuse although it is no value read (a
        meta kernel stricter than the CPU's: torch._grouped_mm in FP32):
        run on real CPU zeros of its inputs (_run_real), its outputs made
        fake again, and noted in real_ops. _REFUSED when that cannot be:
        not recording on fake tensors, a data-dependent op, an op that
        writes or views its inputs, or one the real kernel refuses too."""
        if self.fm is None or isinstance(e, _ValueRead) or _data_dependent(e) is not None or not _functional(func):
            return _REFUSED
        try:
            out = _run_real(self.fm, func, args, kwargs)
        except Exception:
            return _REFUSED
        self.real_ops.setdefault(str(func), _first_line(e))
        return out

    # --- naming

    def _unique(self, base):
        n = self.names.get(base, 0)
        self.names[base] = n + 1
        return base if n == 0 else "%s#%d" % (base, n)

    # --- ops

    def add_op(self, name, typ, cls, dtype, shape, module, source, flops=0, read=0, written=0, param_bytes=0,
               coloc="", alias=False, param=None):
        op = {"name": name, "type": typ, "class": cls, "dtype": dtype, "shape": list(shape)}
        if flops:
            op["flops"] = int(flops)
        if read:
            op["bytes_read"] = int(read)
        if written:
            op["bytes_written"] = int(written)
        if param_bytes:
            op["param_bytes"] = int(param_bytes)
        if coloc:
            op["colocation"] = coloc
        if self.phase in ("backward", "optimizer"):
            op["backward"] = True
        if alias:
            op["alias"] = True
        self.ops.append(op)
        m = {"module": module, "phase": self.phase, "source": source}
        if self.phase == "forward" and module and module == self.module_stack[-1] and self.call_stack[-1] > 0:
            m["call"] = self.call_stack[-1]
        if param is not None:
            m["param"] = param
        self.meta.append(m)
        return len(self.ops) - 1

    def produce(self, op, t):
        """Op produces tensor t (a new graph tensor)."""
        self.tensors.append([op, [], _nbytes(t), list(t.shape)])
        self.producer[id(t)] = len(self.tensors) - 1
        self.keep.append(t)

    def consume(self, t, op):
        k = self.producer.get(id(t))
        if k is None:
            return False
        for j in (k, self.base_of.get(k)):
            # A reader of a view reads its base's memory too: the base
            # stays allocated until the view's readers are done (a view
            # holds no memory of its own in placer's model).
            if j is None:
                continue
            cons = self.tensors[j][1]
            if op not in cons and self.tensors[j][0] != op:
                cons.append(op)
        return True

    def record(self, func, ns, name, args, kwargs, out):
        if self.phase == "forward" and ns == "aten":
            e = aten_effect(func, name, args, kwargs)
            if e is not None:
                self.effects.setdefault(self.module_stack[-1], set()).add(e)
        if self.counting is not None:
            # Inside a fused op: its parts are not ops, only FLOPs.
            if name not in _VIEWS and name not in _TRANSPARENT:
                self.counting[0] += _flops(func, name, args, kwargs, out)
            return
        ins = [t for t in _tensors(args)] + [t for t in _tensors(kwargs)]
        outs = [t for t in _tensors(out)]
        if name in _TRANSPARENT:
            # The output stands for the input: same producer.
            if ins and outs:
                k = self.producer.get(id(ins[0]))
                if k is not None:
                    for t in outs:
                        self.producer[id(t)] = k
                        self.keep.append(t)
            return
        if self.phase == "optimizer":
            # A foreach or fused update's op covers its whole group: no module.
            module = self.module_of_param[self.current_param] if self.current_param is not None else ""
        elif self.phase == "backward":
            module = ""  # set when the autograd node's hook fires
        else:
            module = self.module_stack[-1]
        view = name in _VIEWS
        first = outs[0] if outs else None
        dtype = _DTYPES.get(first.dtype, "f32") if first is not None else "f32"
        shape = list(first.shape) if first is not None else []
        # An in-place multi-tensor op (_foreach_add_, _fused_adam_) returns
        # nothing: what it writes are its mutated arguments.
        mutated = _mutated(func, name, args, kwargs) if not outs and ns == "aten" else []
        read = 0 if view else sum(_nbytes(t) for t in ins)
        written = 0 if view else sum(_nbytes(t) for t in outs) + sum(_nbytes(t) for t in mutated)
        flops = 0 if view else _flops(func, name, args, kwargs, out)
        launches = None
        if name.startswith("_foreach_"):
            # Elementwise over a list: one per element written.
            flops = sum(t.numel() for t in outs + mutated)
            launches = foreach_launches(name, args, kwargs)
        elif name in _FUSED_OPT:
            # The for-loop's elementwise ops per element of the parameters.
            flops = _FUSED_OPT[name] * sum(t.numel() for t in _tensors(args[0]))
        if name in _EMBEDDING and name.startswith(("embedding", "index_select", "gather", "index")) and ins:
            # A gather reads the rows it picks (and the indices), not the table.
            read = written + sum(_nbytes(t) for t in ins[1:])
        if self.phase == "optimizer" and self.current_param is None:
            base = "optimizer/%s/%s" % (self.opt_name, name)
        elif self.phase == "optimizer":
            base = "%s/%s:%s/%s" % (module or "model", self.opt_name, self.current_param.rsplit(".", 1)[-1], name)
        elif self.phase == "backward":
            base = "bwd/%s" % name  # the module is put in front in _assemble
        else:
            base = "%s/%s" % (module or "model", name)
        coloc = _group(module) if self.phase == "optimizer" and self.current_param is not None else ""
        op = self.add_op(base, name, _class(name), dtype, shape, module, str(func), flops, read, written,
                         coloc=coloc, alias=view,
                         param=self.current_param if self.phase == "optimizer" else None)
        if launches is not None:
            self.ops[op]["launches"] = launches
        if self.phase == "optimizer" and self.barrier is not None:
            self._after_barrier(op, ins)
        for t in ins:
            self.consume(t, op)
        src = self.producer.get(id(ins[0])) if view and ins else None
        resident = self._resident_inplace(func, name, args, kwargs, outs) if self.phase == "optimizer" else ()
        for t in outs:
            self.produce(op, t)
            if src is not None:
                self.base_of[len(self.tensors) - 1] = self.base_of.get(src, src)
            if any(t is r for r in resident):
                # An in-place update of optimizer state or a parameter
                # (exp_avg_sq.mul_(beta2)): the new value lives in the
                # resident bytes the Parameter op holds, so it adds no
                # memory. Counted as a new tensor, it would be held from
                # the start of the step, since an op that reads only the
                # state is ready before the forward runs.
                self.tensors[-1][2] = 0
        for t in mutated:
            # The new value lives in the old one's memory: later readers
            # depend on this op, and no memory is added.
            self.produce(op, t)
            self.tensors[-1][2] = 0
        if self.phase == "backward":
            self.pending_bwd.append(op)

    def step_barrier(self, named):
        """Records optimizer.step()'s start: an op that reads every
        gradient the backward produced (a dependency, no bytes) and whose
        0-byte output every update op that reads nothing the update wrote
        (the first op of a parameter's for-loop update, a foreach op on
        the state) reads too. So no update starts before the backward has
        ended, as PyTorch runs `loss.backward(); opt.step()`: without it
        the simulator ran a parameter's update as soon as its gradient was
        ready, which freed the gradient early, and ran the ops that read
        only the state (exp_avg_sq.mul_) before the forward."""
        op = self.add_op("optimizer/step", "OptimizerStep", "datamove", "f32", [], "", "optimizer.step()")
        for _, p in named:
            k = self.producer.get(id(p.grad)) if p.grad is not None else None
            if k is not None and op not in self.tensors[k][1]:
                self.tensors[k][1].append(op)
        self.tensors.append([op, [], 0, []])
        self.barrier = len(self.tensors) - 1

    def _after_barrier(self, op, ins):
        """op (an update op) reads the step barrier's output unless one of
        its inputs comes from the update already."""
        start = self.optimizer_from
        for t in ins:
            k = self.producer.get(id(t))
            if k is not None and self.tensors[k][0] >= start:
                return
        self.tensors[self.barrier][1].append(op)

    def _resident_inplace(self, func, name, args, kwargs, outs):
        """The outputs of an in-place op (its schema's (a!) arguments,
        returned) whose written tensor is resident: a parameter, a buffer
        or optimizer state, or an earlier in-place update of one."""
        if not outs:
            return ()
        res = []
        for t in _mutated(func, name, args, kwargs):
            k = self.producer.get(id(t))
            if k is None:
                continue
            prod = self.ops[self.tensors[k][0]]
            if self.tensors[k][2] == 0 or prod["type"] in ("Parameter", "Buffer"):
                res.append(t)
        return res

    def record_fused(self, typ, cls, ins, outs, flops, source, temp=0):
        """Records one op that stands for several ATen calls (a fused
        kernel): it reads ins and writes outs, with the given FLOPs, and
        holds temp bytes of scratch memory while it runs."""
        if self.phase == "backward":
            module, base = "", "bwd/%s" % typ
        else:
            module = self.module_stack[-1]
            base = "%s/%s" % (module or "model", typ)
        first = outs[0]
        op = self.add_op(base, typ, cls, _DTYPES.get(first.dtype, "f32"), list(first.shape), module, source, flops,
                         sum(_nbytes(t) for t in ins), sum(_nbytes(t) for t in outs))
        if temp:
            self.ops[op]["temp_bytes"] = int(temp)
        for t in ins:
            self.consume(t, op)
        for t in outs:
            self.produce(op, t)
        if self.phase == "backward":
            self.pending_bwd.append(op)
        return op

    # --- autograd attribution

    def _hook_graph(self, root, param_module):
        # A node created below the modules' torch functions (the t() inside
        # linear) takes the module of the node that reached it first.
        seen = set()
        stack = [(root, "")]
        handles = []
        while stack:
            fn, parent = stack.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            module = self.node_module.get(fn)
            if module is None and hasattr(fn, "variable"):
                module = param_module.get(id(fn.variable), parent)
            if module is None:
                module = parent

            def hook(grad_inputs, grad_outputs, module=module):
                self.assign_bwd(module)

            handles.append(fn.register_hook(hook))
            for nxt, _ in fn.next_functions:
                stack.append((nxt, module))
        return handles

    def assign_bwd(self, module):
        for op in self.pending_bwd:
            self.meta[op]["module"] = module
        self.pending_bwd = []


# torch.nn.functional.scaled_dot_product_attention: torch 2.0 and later.
_SDPA = getattr(torch.nn.functional, "scaled_dot_product_attention", None)


def default_attention():
    """fused where torch has scaled_dot_product_attention (2.0 and later),
    math on torch 1.13, which has none: its nn.MultiheadAttention computes
    attention with bmm and softmax."""
    return "fused" if _SDPA is not None else "math"


def _math_only():
    """A context in which scaled_dot_product_attention takes its math path
    (bmm, softmax, dropout as separate ATen ops) on every device."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # torch >= 2.3
        return sdpa_kernel([SDPBackend.MATH])
    except ImportError:  # torch 2.0 to 2.2
        return torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False)


_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")


class _FusedSDPA(torch.autograd.Function):
    """scaled_dot_product_attention recorded as the GPU runs it: one fused
    kernel forward and one backward (FlashAttention-2 or xFormers'
    memory-efficient attention). Forward reads Q, K, V (and the mask) and
    writes the output and the log-sum-exp of each query's scores (B x H x
    S_q floats); backward reads the output's gradient, Q, K, V, the output
    and the log-sum-exp and writes the gradients of Q, K and V. So what
    stays allocated from forward to backward is Q, K, V, the output and the
    log-sum-exp, never the S_q x S_k scores or the dropout mask (the kernels
    recompute the scores and regenerate the mask from the RNG's seed). The
    FLOPs are the math path's (its ATen calls counted as the exporter counts
    them, forward and backward), computed here on the same inputs so that
    values and shapes are PyTorch's."""

    @staticmethod
    def forward(ctx, x, q, k, v, mask, kw):
        leaves = [t.detach().requires_grad_(t.requires_grad) for t in (q, k, v)]
        x.counting = [0]
        try:
            with torch.enable_grad(), _math_only():
                out_math = _SDPA(*leaves, attn_mask=mask, **kw)
            out = out_math.detach().clone()
            flops = x.counting[0]
        finally:
            x.counting = None
        fused = q.dtype in (torch.float16, torch.bfloat16) and mask is None and q.shape[-1] <= 256
        typ = "_scaled_dot_product_flash_attention" if fused else "_scaled_dot_product_efficient_attention"
        s_q = q.shape[-2]
        if x.sdpa_cpu:
            # A CPU's flash attention (any float dtype, no padding).
            typ = "_scaled_dot_product_flash_attention_for_cpu"
        elif not fused:
            s_q = -(-s_q // 32) * 32  # memory-efficient attention pads the log-sum-exp to 32 queries
        lse = q.new_empty(tuple(q.shape[:-2]) + (s_q,), dtype=torch.float32)
        ins = [q, k, v] + ([mask] if isinstance(mask, torch.Tensor) else [])
        x.record_fused(typ, "matmul", ins, [out, lse], flops, "aten.%s.default (fused attention)" % typ)
        ctx.x, ctx.typ, ctx.math, ctx.leaves = x, typ, out_math, leaves
        ctx.saved = (q, k, v, out, lse, mask)
        return out

    @staticmethod
    def backward(ctx, dout):
        x = ctx.x
        q, k, v, out, lse, mask = ctx.saved
        need = [t for t in ctx.leaves if t.requires_grad]
        x.counting = [0]
        try:
            with torch.enable_grad():
                grads = list(torch.autograd.grad(ctx.math, need, dout)) if need else []
            flops = x.counting[0]
        finally:
            x.counting = None
        full = [grads.pop(0) if t.requires_grad else None for t in ctx.leaves]
        outs = [g for g in full if g is not None]
        if outs:
            ins = [dout, q, k, v, out, lse] + ([mask] if isinstance(mask, torch.Tensor) else [])
            x.record_fused(ctx.typ + "_backward", "matmul", ins, outs, flops,
                           "aten.%s_backward.default (fused attention)" % ctx.typ)
        ctx.math = ctx.leaves = ctx.saved = None
        return (None,) + tuple(full) + (None, None)


def _fused_sdpa(x):
    """A stand-in for scaled_dot_product_attention that records it fused."""

    def sdpa(*args, **kwargs):
        kw = dict(zip(_SDPA_ARGS, args))
        kw.update(kwargs)
        q, k, v, mask = kw.pop("query"), kw.pop("key"), kw.pop("value"), kw.pop("attn_mask", None)
        if x.autocast is not None:  # in autocast's low-precision list
            q, k, v = (x.autocast.cast(t, x.autocast.dtype) for t in (q, k, v))
        if x.sdpa_cpu and kw.get("dropout_p"):
            # A CPU's fused kernel has no dropout: PyTorch takes the math
            # path (the S x S scores and the dropout mask saved).
            with _math_only():
                return _SDPA(q, k, v, attn_mask=mask, **kw)
        out = _FusedSDPA.apply(x, q, k, v, mask, kw)
        if out.grad_fn is not None and out.grad_fn not in x.node_module:
            x.node_module[out.grad_fn] = x.module_stack[-1]
        return out
    return sdpa


# cuDNN's RNNs (torchexport --cudnn-rnn): what PyTorch runs for nn.LSTM
# and nn.GRU on CUDA (aten::_cudnn_rnn and _cudnn_rnn_backward), in place
# of the per-gate, per-time-step ops a CPU records.
_RNN_GATES = {"lstm": 4, "gru": 3}


def cudnn_rnn_sizes(mode, layers, directions, seq, batch, hidden, elem):
    """(reserve, workspace) bytes of one cuDNN RNN call in training, as
    this exporter estimates them (cuDNN's own sizes,
    cudnnGetRNNTempSpaceSizes, depend on its version and algorithm; a GPU
    run shows the reserve as _cudnn_rnn's fourth output). The reserve is
    kept from forward to backward: per layer, direction, time step and
    example, the gates' activations (4 hidden-sized vectors for an LSTM, 3
    for a GRU) and the cell's state and its tanh (LSTM) or the recurrent
    candidate (GRU), plus the outputs of every layer but the last (the
    next layer's input). The workspace, held while one call runs, is one
    layer's input projection for every time step: directions x seq x
    batch x gates x hidden."""
    g = _RNN_GATES[mode]
    extra = 2 if mode == "lstm" else 1
    reserve = layers * directions * seq * batch * (g + extra) * hidden * elem
    reserve += (layers - 1) * seq * batch * directions * hidden * elem
    workspace = directions * seq * batch * g * hidden * elem
    return reserve, workspace


@contextlib.contextmanager
def _no_mkldnn():
    """oneDNN off (its flags warn about TF32 on Intel GPUs on torch 2.x)."""
    flags = getattr(torch.backends.mkldnn, "flags", None)
    if flags is None:
        yield
        return
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = flags(enabled=False)
        ctx.__enter__()
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ctx.__exit__(None, None, None)


class _CudnnRNN(torch.autograd.Function):
    """nn.LSTM / nn.GRU recorded as cuDNN runs them: one op forward
    (_cudnn_rnn: reads the input, the initial states and every weight;
    writes the output, the final states and the reserve) and one backward
    (_cudnn_rnn_backward: reads what forward read, the output, the
    gradients that reach it and the reserve; writes the gradients of the
    input, the initial states and the weights). What stays allocated from
    forward to backward is the input, the weights, the states, the output
    and the reserve (cudnn_rnn_sizes), never the per-step gate tensors of
    the per-gate recording. FLOPs are that recording's, counted on the
    same inputs."""

    @staticmethod
    def forward(ctx, x, mode, rest, inp, h0, c0, *weights):
        ctx.set_materialize_grads(False)
        orig = rest["orig"]
        leaves = [t.detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else None
                  for t in (inp, h0, c0) + weights]
        x.counting = [0]
        try:
            # The per-gate ops, not oneDNN's one op per layer (torch 2.x on
            # CPU), whose FLOPs the exporter cannot count.
            with torch.enable_grad(), _no_mkldnn():
                hx = (leaves[1], leaves[2]) if mode == "lstm" else leaves[1]
                math = orig(leaves[0], hx, leaves[3:], *rest["args"])
            outs = [t.detach().clone() for t in math]
            flops = x.counting[0]
            layers, bidir, batch_first = rest["layers"], rest["bidirectional"], rest["batch_first"]
            seq, batch = (inp.shape[1], inp.shape[0]) if batch_first and inp.dim() == 3 else (inp.shape[0], inp.shape[-2] if inp.dim() == 3 else 1)
            hidden = h0.shape[-1]
            reserve_b, work_b = cudnn_rnn_sizes(mode, layers, 2 if bidir else 1, seq, batch, hidden,
                                                inp.element_size())
            reserve = inp.new_empty((reserve_b,), dtype=torch.uint8)
        finally:
            x.counting = None
        ins = [t for t in (inp, h0, c0) + weights if isinstance(t, torch.Tensor)]
        x.record_fused("_cudnn_rnn", "matmul", ins, outs + [reserve], flops, "aten._cudnn_rnn.default (cuDNN RNN)",
                       temp=work_b)
        ctx.x, ctx.mode, ctx.math, ctx.leaves = x, mode, math, leaves
        ctx.saved = ins + outs[:1] + [reserve]
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        x = ctx.x
        need = [t for t in ctx.leaves if t is not None and t.requires_grad]
        pairs = [(m, g) for m, g in zip(ctx.math, grads) if g is not None]
        x.counting = [0]
        try:
            with torch.enable_grad(), _no_mkldnn():
                got = list(torch.autograd.grad([m for m, _ in pairs], need, [g for _, g in pairs],
                                               allow_unused=True)) if need and pairs else [None] * len(need)
            got = [g if g is not None else torch.zeros_like(t) for g, t in zip(got, need)]
            flops = x.counting[0]
        finally:
            x.counting = None
        full = [got.pop(0) if t is not None and t.requires_grad else None for t in ctx.leaves]
        outs = [g for g in full if g is not None]
        if outs:
            x.record_fused("_cudnn_rnn_backward", "matmul", [g for _, g in pairs] + ctx.saved, outs, flops,
                           "aten._cudnn_rnn_backward.default (cuDNN RNN)")
        ctx.math = ctx.leaves = ctx.saved = None
        return (None, None, None) + tuple(full)


class _CudnnVF:
    """torch._VF as nn.LSTM and nn.GRU see it while recording with cuDNN
    RNNs: lstm and gru (unpacked input) go through _CudnnRNN; everything
    else, and packed sequences, is torch._VF's."""

    def __init__(self, x, vf):
        self._x, self._vf = x, vf

    def __getattr__(self, name):
        return getattr(self._vf, name)

    def _rnn(self, mode, inp, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        x = self._x
        h0, c0 = (hx[0], hx[1]) if mode == "lstm" else (hx, None)
        weights = tuple(params)
        if x.autocast is not None:  # autocast casts cuDNN RNNs to the low dtype
            inp, h0, c0 = (x.autocast.cast(t, x.autocast.dtype) if t is not None else None for t in (inp, h0, c0))
            weights = tuple(x.autocast.cast(w, x.autocast.dtype) for w in weights)
        rest = {"orig": getattr(self._vf, mode), "args": (has_biases, num_layers, dropout, train, bidirectional,
                                                          batch_first),
                "layers": num_layers, "bidirectional": bidirectional, "batch_first": batch_first}
        outs = _CudnnRNN.apply(x, mode, rest, inp, h0, c0, *weights)
        fn = outs[0].grad_fn
        if fn is not None and fn not in x.node_module:
            x.node_module[fn] = x.module_stack[-1]
        return outs

    def lstm(self, *args, **kwargs):
        if len(args) == 9 and isinstance(args[1], (tuple, list)):
            return self._rnn("lstm", *args)
        return self._vf.lstm(*args, **kwargs)

    def gru(self, *args, **kwargs):
        if len(args) == 9 and isinstance(args[1], torch.Tensor) and not isinstance(args[2], torch.Tensor):
            return self._rnn("gru", *args)
        return self._vf.gru(*args, **kwargs)


class _PerGateVF:
    """torch._VF as nn.LSTM, nn.GRU and nn.RNN see it while recording
    without cuDNN RNNs: their calls run with oneDNN off, so that torch 2.x
    on a CPU records the per-gate ops (matmuls and elementwise, as torch
    1.13 and CUDA without cuDNN do) rather than oneDNN's one
    mkldnn_rnn_layer op a layer, whose work the exporter cannot count."""

    def __init__(self, vf):
        self._vf = vf

    def __getattr__(self, name):
        fn = getattr(self._vf, name)
        if name not in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
            return fn

        def call(*args, **kwargs):
            with _no_mkldnn():
                return fn(*args, **kwargs)
        return call


def _module_hooks(exporter, model):
    paths = {}
    for name, mod in model.named_modules():
        paths.setdefault(id(mod), name)

    def pre(mod, inputs):
        p = paths.get(id(mod))
        if p is None:
            exporter.module_stack.append(exporter.module_stack[-1])
            exporter.call_stack.append(exporter.call_stack[-1])
            return
        k = exporter.calls.get(p, 0)
        exporter.calls[p] = k + 1
        exporter.module_stack.append(p)
        exporter.call_stack.append(k)

    def post(mod, inputs, output):
        exporter.module_stack.pop()
        exporter.call_stack.pop()

    return [model.register_forward_pre_hook(pre)] + [m.register_forward_pre_hook(pre) for m in model.modules() if m is not model], \
        [m.register_forward_hook(post) for m in model.modules()]


def _optimizer_step(opt):
    step = type(opt).step
    # Skip the profiling wrapper (record_function) that fake tensors refuse.
    getattr(step, "__wrapped__", step)(opt)


def training_step(model, inputs, target, loss_fn, opts, named, device_type, autocast=None):
    """One real training step as a closure, what --profile and
    tools/measure/fidelity time: the forward (under torch.autocast(device_type,
    autocast) when autocast is a dtype) and the loss, its backward, every
    optimizer's step, and the gradients of named's parameters set to None.
    A model whose output has .logits or is a tuple gives the loss those
    or its first element. The output is not held past the loss, as in
    `loss_fn(model(x), y).backward()` and as the exported graph has it (its
    last reader is the loss): a loop that keeps it in a variable through
    backward holds one more output-sized tensor at the peak (gpt2_small at
    batch 2: its 0.38 GiB of logits, measured on a CPU)."""
    def loss_of():
        output = model(*inputs)
        if not isinstance(output, torch.Tensor) and hasattr(output, "logits"):
            output = output.logits
        if isinstance(output, tuple):
            output = output[0]
        return loss_fn(output, target)

    def step():
        with (torch.autocast(device_type, dtype=autocast) if autocast is not None else contextlib.nullcontext()):
            loss = loss_of()
        loss.backward()
        for o in opts:
            _optimizer_step(o)
        for _, p in named:
            p.grad = None
    return step


def export_training_step(build_model, make_inputs, loss_fn, optimizer_cls=torch.optim.Adam, optimizer_kwargs=None,
                         out=None, meta_out=None, name="model", fake=True, seed=0, batch_dim=0, attention=None,
                         data_dependent="follow", execution=None):
    """Records one training step and returns (graph, meta) as dicts.

    build_model() returns the nn.Module (called under fake tensors when
    fake is true, so that no weights are allocated); make_inputs() returns
    (inputs, target): inputs a tensor or a tuple of tensors for the model,
    target what loss_fn(output, target) takes. optimizer_cls is built once
    per parameter with optimizer_kwargs (foreach=False where it accepts
    it). batch_dim is the batch dimension of the inputs (and of the
    targets that share the first input's batch size): the graph marks the
    batch (see the module's doc; None: no batch information). When out is
    given, the graph is written there and the meta file to meta_out
    (default: out with .json replaced by .meta.json). attention says how
    torch.nn.functional.scaled_dot_product_attention is recorded (the
    attention of nn.MultiheadAttention and of Hugging Face-style models on
    torch 2.x): "fused" (the default where it exists: one op forward and
    one backward, as a GPU runs it, see _FusedSDPA) or "math" (bmm,
    softmax and dropout as separate ops, scores saved for backward; torch
    1.13's only path). data_dependent says what to do when the step reads
    a tensor's value (a branch on it, .item(), nonzero), which fake tensors
    cannot: "follow" records the step on real CPU tensors instead, along
    the path the example inputs take, with a warning on stderr; "fail"
    raises DataDependentError, one line naming the op and the source line.
    execution states how the user runs the step (execution_settings: the
    optimizer's implementation, autocast, TF32, cuDNN RNNs, CUDA graphs,
    torch.compile): the step is recorded so (a foreach or fused optimizer's
    multi-tensor ops, autocast's casts and dtypes) and the graph gets an
    "execution" object (docs/graph-format.md); None records it as before
    and writes none.
    """
    execution = execution_settings(**execution) if execution is not None else None
    impl = execution["optimizer_impl"] if execution else "for-loop"
    autocast = execution.get("autocast") if execution else None
    cudnn_rnn = bool(execution and execution.get("cudnn_rnn"))
    cpu = bool(execution and execution.get("device") == "cpu")
    attention = attention or default_attention()
    if attention not in ATTENTION:
        raise ValueError("attention %r: want one of %s" % (attention, ", ".join(ATTENTION)))
    if attention == "fused" and _SDPA is None:
        raise ValueError("attention 'fused' needs torch 2.0 or later: torch %s has no scaled_dot_product_attention "
                         "(its attention is the math path)" % torch.__version__)
    if data_dependent not in ("follow", "fail"):
        raise ValueError("data_dependent %r: want follow or fail" % data_dependent)
    refused = None
    try:
        x, params, buffers, model, batch = _record(build_model, make_inputs, loss_fn, optimizer_cls,
                                                   optimizer_kwargs, fake, seed, batch_dim, False, attention, impl,
                                                   autocast, cudnn_rnn, cpu)
    except Exception as e:
        where = _data_dependent(e) if fake else None
        refused = _refused(e) if fake and where is None else None
        if where is None and refused is None:
            raise
        if where is not None and data_dependent == "fail":
            raise DataDependentError("the step reads a tensor's value (%s): fake tensors cannot follow it; "
                                     "record it on real tensors along the example inputs' path (--real, or "
                                     "--data-dependent follow)" % where) from None
        if where is not None:
            print("torchexport: warning: the step reads a tensor's value (%s): recorded on real CPU tensors along "
                  "the path the example inputs take (other inputs may take another)" % where, file=sys.stderr)
        else:
            # An op fake tensors refuse that cannot run apart (it writes or
            # views its inputs, or its real kernel refuses zeros): the
            # whole step on real tensors, as --real records it.
            print("torchexport: warning: fake tensors refuse %s: recorded the step on real CPU tensors instead "
                  "(as --real does)" % refused, file=sys.stderr)
        fake = False
        try:
            x, params, buffers, model, batch = _record(build_model, make_inputs, loss_fn, optimizer_cls,
                                                       optimizer_kwargs, fake, seed, batch_dim, False, attention,
                                                       impl, autocast, cudnn_rnn, cpu)
        except Exception as e2:
            if refused is None:
                raise
            raise FakeRefusedError("fake tensors refuse %s, and on real CPU tensors the step fails too (%s): run "
                                   "it with --real to see where" % (refused, _first_line(e2))) from None
    for op, why in sorted(x.real_ops.items()):
        # Ops run apart on real zeros (Exporter.real_op), the rest on fake
        # tensors: what the graph records is the same.
        print("torchexport: warning: fake tensors refuse %s (%s): each call of it ran on real CPU zeros of its "
              "inputs' shapes, the rest of the step on fake tensors" % (op, why), file=sys.stderr)
    x2 = None
    if batch:
        x2 = _record(build_model, make_inputs, loss_fn, optimizer_cls, optimizer_kwargs, fake, seed, batch_dim,
                     True, attention, impl, autocast, cudnn_rnn, cpu)[0]
        if not _same_steps(x, x2):
            print("torchexport: the step at twice the batch has other ops (a data-dependent model): "
                  "the graph has no batch information", file=sys.stderr)
            x2 = None
    graph, meta = _assemble(x, name, params, buffers, model, batch if x2 is not None else 0, x2)
    if execution is not None:
        graph = _with_execution(graph, execution, x)
        meta["execution"] = dict(execution)  # every setting, stated or default
    meta["attention"] = attention
    meta["fake"] = bool(x.fake)
    if x.real_ops:
        meta["real_ops"] = sorted(x.real_ops)
    if refused is not None:
        meta["fake_refused"] = refused
    if out is not None:
        _write_json(out, graph)
        _write_json(meta_out or _meta_path(out), meta)
    return graph, meta


EXECUTION_VERSION = 1


def execution_settings(device=None, optimizer_impl=None, autocast=None, tf32_matmul=None, tf32_cudnn=None,
                       cudnn_rnn=None, cuda_graphs=False, compile=None):
    """The execution settings as the user states them, the rest filled
    with PyTorch's defaults: on CUDA (device "cuda") the foreach optimizer
    and cuDNN's RNNs, elsewhere (or unsaid) the for-loop optimizer and the
    RNN's per-gate ops; TF32 off for matmuls and on for cuDNN; no autocast,
    CUDA graphs or torch.compile. Raises ValueError on a value out of
    range."""
    if device not in (None, "cuda", "cpu"):
        raise ValueError("device %r: want cuda or cpu" % (device,))
    impl = optimizer_impl or ("foreach" if device == "cuda" else "for-loop")
    if impl not in OPTIMIZER_IMPLS:
        raise ValueError("optimizer implementation %r: want one of %s" % (impl, ", ".join(OPTIMIZER_IMPLS)))
    if (autocast or "off") not in AUTOCAST:
        raise ValueError("autocast %r: want one of %s" % (autocast, ", ".join(AUTOCAST)))
    if compile not in (None, "") + COMPILE_MODES:
        raise ValueError("compile mode %r: want one of %s" % (compile, ", ".join(COMPILE_MODES)))
    return {"device": device, "optimizer_impl": impl, "autocast": autocast or "off",
            "tf32_matmul": bool(tf32_matmul) if tf32_matmul is not None else False,
            "tf32_cudnn": bool(tf32_cudnn) if tf32_cudnn is not None else True,
            "cudnn_rnn": bool(cudnn_rnn) if cudnn_rnn is not None else device == "cuda",
            "cuda_graphs": bool(cuda_graphs), "compile": compile or None}


def _with_execution(graph, e, x):
    """graph with its "execution" object (docs/graph-format.md) before its
    ops, where placer writes it."""
    obj = {"version": EXECUTION_VERSION}
    if e["device"]:
        obj["device"] = e["device"]
    obj["optimizer"] = x.opt_name
    obj["optimizer_impl"] = e["optimizer_impl"]
    start = getattr(x, "optimizer_from", 0)
    if 0 < start < len(graph["ops"]):
        obj["optimizer_from"] = graph["ops"][start]["name"]
    obj["autocast"] = e["autocast"]
    for k in ("tf32_matmul", "tf32_cudnn", "cudnn_rnn", "cuda_graphs"):
        if e[k]:
            obj[k] = True
    if e["compile"]:
        obj["compile"] = e["compile"]
    out = {}
    for k, v in graph.items():
        if k == "ops":
            out["execution"] = obj
        out[k] = v
    return out


def _double(t, batch_dim, batch):
    """t twice along batch_dim when that dimension has the batch's size."""
    if isinstance(t, torch.Tensor) and t.dim() > batch_dim and t.shape[batch_dim] == batch:
        return torch.cat([t, t], dim=batch_dim)
    return t


def _map_tensors(x, f):
    if isinstance(x, torch.Tensor):
        return f(x)
    if isinstance(x, tuple):
        return tuple(_map_tensors(y, f) for y in x)
    if isinstance(x, list):
        return [_map_tensors(y, f) for y in x]
    if isinstance(x, dict):
        return {k: _map_tensors(v, f) for k, v in x.items()}
    return x


def _same_steps(a, b):
    """Whether two recordings have the same ops and tensors."""
    if len(a.ops) != len(b.ops) or len(a.tensors) != len(b.tensors):
        return False
    if any(p["type"] != q["type"] for p, q in zip(a.ops, b.ops)):
        return False
    return all(p[0] == q[0] and p[1] == q[1] and len(p[3]) == len(q[3]) for p, q in zip(a.tensors, b.tensors))




class SettingError(Exception):
    """An execution setting this torch cannot record: one line."""


def make_optimizers(named, optimizer_cls, optimizer_kwargs, impl="for-loop"):
    """{parameter name: its optimizer} for named [(name, parameter)]: one
    optimizer per parameter with foreach=False (for-loop: each update op
    knows its parameter), or one over all of them with foreach=True or
    fused=True (their multi-tensor kernels: a few ops, or one, per
    group)."""
    import inspect
    kwargs = dict(optimizer_kwargs or {})
    params = inspect.signature(optimizer_cls.__init__).parameters
    if impl == "for-loop":
        if "foreach" in params:
            kwargs.setdefault("foreach", False)
        return {n: optimizer_cls([p], **kwargs) for n, p in named}
    if impl not in OPTIMIZER_IMPLS:
        raise ValueError("optimizer implementation %r: want one of %s" % (impl, ", ".join(OPTIMIZER_IMPLS)))
    key = "foreach" if impl == "foreach" else "fused"
    if key not in params:
        raise SettingError("--optimizer-impl %s: torch %s's %s has no %s argument" % (
            impl, torch.__version__, optimizer_cls.__name__, key))
    kwargs[key] = True
    if impl == "fused":
        kwargs["foreach"] = False
    try:
        opt = optimizer_cls([p for _, p in named], **kwargs)
    except RuntimeError as e:  # torch before 2.4: fused on CUDA tensors only
        raise SettingError("--optimizer-impl fused: torch %s cannot record it on the CPU tensors the exporter uses "
                           "(%s); torch 2.4 or later can" % (torch.__version__, str(e).splitlines()[0])) from None
    return {n: opt for n, _ in named}


def _distinct(opts):
    seen, out = set(), []
    for o in opts.values():
        if id(o) not in seen:
            seen.add(id(o))
            out.append(o)
    return out


def _record(build_model, make_inputs, loss_fn, optimizer_cls, optimizer_kwargs, fake, seed, batch_dim, double,
            attention="math", impl="for-loop", autocast=None, cudnn_rnn=False, cpu=False):
    """One recording of the step; double: on the inputs twice over along
    batch_dim. Returns (exporter, params, buffers, model, batch), batch the
    example inputs' batch size (0 when batch_dim is None or the first input
    has no such dimension)."""
    torch.manual_seed(seed)
    x = Exporter(fake and FakeTensorMode is not None)
    x.sdpa_cpu = cpu
    fm = FakeTensorMode() if x.fake else None
    if fm is not None:
        # A module deep-copied in its constructor (nn.TransformerEncoder's
        # layers, _get_clones) copies its fake tensors' __dict__, fake_mode
        # included: copy.deepcopy builds a second FakeTensorMode, and the
        # step then stops at the first op mixing the two ("Mixing fake
        # modes NYI", at zeros_like of the gradients). The mode is the
        # recording's context, not the tensors' data: a copy keeps it.
        fm.__deepcopy__ = lambda memo: fm
    x.fm = fm
    quiet = _quiet_fake_log() if fm is not None else None
    if quiet is not None:
        quiet.__enter__()
    if fm is not None:
        fm.__enter__()
    # The attention path: math forces it for every device; fused puts a
    # recording stand-in where nn.MultiheadAttention and models look the
    # function up (torch.nn.functional's attribute, at call time).
    sdpa_ctx = _math_only() if _SDPA is not None and attention == "math" else None
    if sdpa_ctx is not None:
        sdpa_ctx.__enter__()
    if attention == "fused":
        torch.nn.functional.scaled_dot_product_attention = _fused_sdpa(x)
    import torch.nn.modules.rnn as _rnn_mod
    vf = _rnn_mod._VF
    if cudnn_rnn:
        _rnn_mod._VF = _CudnnVF(x, vf)
    else:
        _rnn_mod._VF = _PerGateVF(vf)
    try:
        try:
            with warnings.catch_warnings():
                # Tensor.__deepcopy__ asks a fake tensor for its data
                # pointer (0) to pick its copy path, which torch warns of.
                warnings.filterwarnings("ignore", message="Accessing the data pointer of FakeTensor")
                model = build_model()
        except Exception as e:
            where = _data_dependent(e) if fm is not None else None
            refused = _refused(e) if fm is not None and where is None else None
            if where is None and refused is None:
                raise
            # The constructor computes with tensor values (torchvision's
            # regnets size their blocks so), or runs an op fake tensors
            # refuse: build it on real CPU tensors, then record the step
            # on fake copies of its state.
            if not double:
                print("torchexport: the model's constructor %s: built on real CPU tensors, recorded on fake ones" % (
                    "reads tensor values (%s)" % where if where else "runs %s, which fake tensors refuse" % refused),
                    file=sys.stderr)
            fm.__exit__(None, None, None)
            try:
                model = build_model()
                _fakeify(model, fm)
            finally:
                fm.__enter__()
        model.train()
        inputs, target = make_inputs()
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        batch = 0
        if batch_dim is not None and inputs and inputs[0].dim() > batch_dim:
            batch = int(inputs[0].shape[batch_dim])
        if double:
            inputs = tuple(_double(t, batch_dim, batch) for t in inputs)
            target = _map_tensors(target, lambda t: _double(t, batch_dim, batch))
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        module_of = {n: n.rsplit(".", 1)[0] if "." in n else "" for n, _ in named}
        opts = make_optimizers(named, optimizer_cls, optimizer_kwargs, impl)
        for n, p in named:
            p.grad = torch.zeros_like(p)
        # One update on a zero gradient creates the optimizer state, so that
        # the recorded step is a steady-state one.
        for o in _distinct(opts):
            _optimizer_step(o)
        for n, p in named:
            p.grad = None
        x.opt_name = optimizer_cls.__name__.lower()
        x.module_of_param = module_of

        # Inputs, parameters and buffers.
        x.phase = "input"
        for i, t in enumerate(list(inputs) + list(_tensors(target))):
            op = x.add_op("input%d" % i, "Input", "datamove", _DTYPES.get(t.dtype, "f32"), t.shape, "", "input")
            x.produce(op, t)
        x.phase = "parameter"
        params = []
        for n, p in named:
            st = opts[n].state.get(p, {})
            state_bytes = sum(_nbytes(v) for v in st.values() if isinstance(v, torch.Tensor))
            slot_bytes = sum(_nbytes(v) for v in st.values() if isinstance(v, torch.Tensor) and v.shape == p.shape)
            op = x.add_op("param:" + n, "Parameter", "datamove", _DTYPES.get(p.dtype, "f32"), p.shape, module_of[n],
                          "parameter", param_bytes=_nbytes(p) + state_bytes, coloc=_group(module_of[n]), alias=True, param=n)
            x.produce(op, p)
            for v in st.values():
                if isinstance(v, torch.Tensor):
                    x.produce(op, v)
                    x.tensors[-1][2] = 0  # held in param_bytes
            params.append({"name": n, "module": module_of[n], "shape": list(p.shape), "dtype": _DTYPES.get(p.dtype, "f32"),
                           "bytes": _nbytes(p), "grad_bytes": _nbytes(p), "state_bytes": state_bytes,
                           "slot_bytes": slot_bytes, "op": x.ops[op]["name"]})
        buffers = []
        for n, b in model.named_buffers():
            mod = n.rsplit(".", 1)[0] if "." in n else ""
            op = x.add_op("buffer:" + n, "Buffer", "datamove", _DTYPES.get(b.dtype, "f32"), b.shape, mod, "buffer",
                          param_bytes=_nbytes(b), coloc=_group(mod), alias=True)
            x.produce(op, b)
            buffers.append({"name": n, "module": mod, "bytes": _nbytes(b)})

        # Forward and loss, with module attribution.
        pre, post = _module_hooks(x, model)
        param_module = {id(p): module_of[n] for n, p in named}
        x.phase = "forward"
        ac = AUTOCAST[autocast or "off"]
        with _ModuleGradFns(x):
            x.autocast = _Autocast(ac) if ac is not None else None
            with (x.autocast or contextlib.nullcontext()), _cpu_autocast(ac), _Recorder(x):
                output = model(*inputs)
                if not isinstance(output, torch.Tensor) and hasattr(output, "logits"):
                    output = output.logits
                if isinstance(output, tuple):
                    output = output[0]
                x.module_stack.append("")
                x.call_stack.append(0)
                loss = loss_fn(output, target)
                x.module_stack.pop()
                x.call_stack.pop()
            x.autocast = None
        for h in pre + post:
            h.remove()

        # Backward, each op attributed to the module of its autograd node.
        handles = x._hook_graph(loss.grad_fn, param_module)
        x.phase = "backward"
        with _Recorder(x):
            loss.backward()
        x.assign_bwd("")
        for h in handles:
            h.remove()

        # The optimizer update: one parameter at a time (for-loop), or one
        # group at a time (foreach, fused).
        x.phase = "optimizer"
        x.optimizer_from = len(x.ops)
        x.step_barrier(named)
        with _Recorder(x):
            if impl == "for-loop":
                for n, p in named:
                    x.current_param = n
                    _optimizer_step(opts[n])
            else:
                x.current_param = None
                for o in _distinct(opts):
                    _optimizer_step(o)
        x.current_param = None
    finally:
        _rnn_mod._VF = vf
        if _SDPA is not None:
            torch.nn.functional.scaled_dot_product_attention = _SDPA
        if sdpa_ctx is not None:
            sdpa_ctx.__exit__(None, None, None)
        if fm is not None:
            fm.__exit__(None, None, None)
        if quiet is not None:
            quiet.__exit__(None, None, None)

    return x, params, buffers, model, batch


class DataDependentError(Exception):
    """The step reads a tensor's value (a Python branch on it, .item(),
    .tolist(), an op whose output shape depends on the data), which fake
    tensors cannot: one line naming the op and the model's source line."""


def _data_dependent(e):
    """When e is fake tensors refusing a data-dependent op: 'aten.op at
    file:line' (the innermost frame outside torch and this file), else
    None."""
    op = None
    if isinstance(e, _ValueRead) or (_DATA_DEPENDENT and isinstance(e, _DATA_DEPENDENT)):
        op = str(getattr(e, "func", "") or type(e).__name__)
    elif isinstance(e, RuntimeError) and "is not supported for tensor subclasses" in str(e):
        op = str(e).split(" is not supported")[0].strip()  # '.tolist()' (torch 1.13)
    if op is None:
        return None
    import sysconfig
    import traceback
    here = os.path.abspath(__file__)
    skip = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,
            os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep)
    where = ""
    for f in traceback.extract_tb(e.__traceback__):
        path = os.path.abspath(f.filename)
        if path != here and not path.startswith(skip):
            rel = os.path.relpath(path)
            where = " at %s:%d" % (path if rel.startswith("..") else rel, f.lineno)
    return op + where


class FakeRefusedError(Exception):
    """Fake tensors refuse an op of the step and the step fails on real
    CPU tensors too: one line naming both, pointing to --real."""


def _first_line(e):
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    return "%s: %s" % (type(e).__name__, lines[0]) if lines else type(e).__name__


def _refused(e):
    """When e was raised while fake tensors ran an op (a meta kernel that
    refuses its inputs): 'aten.op (the error's first line)', else None."""
    op = None
    tb = e.__traceback__
    fake = os.path.join("_subclasses", "fake_tensor.py")
    while tb is not None:
        f = tb.tb_frame
        if f.f_code.co_filename.endswith(fake):
            func = f.f_locals.get("func")
            if func is not None and hasattr(func, "_schema"):
                op = str(func)
        tb = tb.tb_next
    return None if op is None else "%s (%s)" % (op, _first_line(e))


def _fakeify(model, fm):
    """Puts fake copies of a real model's parameters and buffers in their
    place (a model whose constructor read tensor values)."""
    for mod in model.modules():
        for n, p in list(mod._parameters.items()):
            if p is not None:
                mod._parameters[n] = torch.nn.Parameter(fm.from_tensor(p.data), requires_grad=p.requires_grad)
        for n, b in list(mod._buffers.items()):
            if b is not None:
                mod._buffers[n] = fm.from_tensor(b.data)


def _meta_path(out):
    return out[:-5] + ".meta.json" if out.endswith(".json") else out + ".meta.json"


def _fixed(c1, c2):
    """The part of a cost c1 at batch B that does not scale, from c2 at 2B."""
    return min(c1, max(0, 2 * c1 - c2))


def _mark_batch(ops, x, x2):
    """Gives ops their fixed parts from the second recording x2 (at twice
    the batch) and returns each tensor's batch dimension (None: none)."""
    for op, o2 in zip(ops, x2.ops):
        for k in ("flops", "bytes_read", "bytes_written"):
            f = _fixed(op.get(k, 0), o2.get(k, 0))
            if f:
                op["fixed_" + k] = int(f)
    dims = []
    for t1, t2 in zip(x.tensors, x2.tensors):
        d = None
        if t1[2] != t2[2]:
            d = next((i for i, (a, b) in enumerate(zip(t1[3], t2[3])) if a != b), None)
        dims.append(d)
    return dims


def _assemble(x, name, params, buffers, model, batch=0, x2=None):
    ops = x.ops
    dims = _mark_batch(ops, x, x2) if batch else None
    for op, m in zip(ops, x.meta):
        if m["phase"] == "backward":
            op["name"] = "%s/%s" % (m["module"] or "model", op["name"])
        op["name"] = x._unique(op["name"])
    tensors = []
    for k, (prod, cons, nbytes, _) in enumerate(x.tensors):
        if not cons:
            continue  # placer keeps only values someone reads
        t = {"producer": ops[prod]["name"], "consumers": [ops[c]["name"] for c in cons], "bytes": int(nbytes)}
        if dims is not None and dims[k] is not None:
            t["batch_dim"] = dims[k]
        tensors.append(t)
    graph = {"format": FORMAT_NAME, "version": 1, "name": name, "ops": ops, "tensors": tensors}
    if batch:
        graph = {"format": FORMAT_NAME, "version": 2, "name": name, "batch": batch, "ops": ops, "tensors": tensors}
    modules = []
    seen = set()
    for m in x.meta:
        if m["module"] not in seen:
            seen.add(m["module"])
    classes = {n: type(mod).__name__ for n, mod in model.named_modules()}
    for n in classes:
        modules.append({"path": n, "class": classes[n]})
    p_bytes = sum(p["bytes"] for p in params)
    meta = {
        "format": META_FORMAT, "version": 1, "graph": name, "torch": torch.__version__,
        "optimizer": x.opt_name,
        "param_bytes": p_bytes, "grad_bytes": sum(p["grad_bytes"] for p in params),
        "optimizer_state_bytes": sum(p["state_bytes"] for p in params),
        "optimizer_slot_bytes": sum(p["slot_bytes"] for p in params),
        "buffer_bytes": sum(b["bytes"] for b in buffers),
        "params": params, "buffers": buffers, "modules": modules,
        # The modules whose train-mode result a plan that splits the batch
        # or draws per stage changes (placer_torch.semantics).
        "train_mode": effects_list(x.effects, classes),
        "ops": [{"name": ops[i]["name"], **m} for i, m in enumerate(x.meta)],
    }
    return graph, meta


def _write_json(path, obj, indent=None):
    """obj as JSON at path, atomically (a temporary file beside it,
    renamed): compact, or indented by indent."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=indent, separators=None if indent else (",", ":"))
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


_INPUT_DTYPES = {"float32": torch.float32, "f32": torch.float32, "float16": torch.float16, "f16": torch.float16,
                 "bfloat16": torch.bfloat16, "bf16": torch.bfloat16, "float64": torch.float64, "f64": torch.float64,
                 "int64": torch.int64, "i64": torch.int64, "int32": torch.int32, "i32": torch.int32,
                 "bool": torch.bool}


def parse_input_shape(text):
    """'3,224,224' or '128:int64' -> (shape without the batch, dtype): one
    example's input; the batch dimension is put in front."""
    dims, _, dt = text.partition(":")
    try:
        shape = tuple(int(d) for d in dims.split(",") if d.strip() != "")
    except ValueError:
        raise UsageError("--input-shape %r: want sizes separated by commas, e.g. 3,224,224 or 128:int64" % text)
    if any(d <= 0 for d in shape):
        raise UsageError("--input-shape %r: sizes must be positive" % text)
    dtype = _INPUT_DTYPES.get(dt or "float32")
    if dtype is None:
        raise UsageError("--input-shape %r: unknown dtype %r (one of %s)" % (text, dt, ", ".join(sorted(_INPUT_DTYPES))))
    return shape, dtype


def _custom_loss(kind):
    """A loss for a model of the user's, whose targets it makes from the
    output: cross-entropy against class 0 over the last dimension, mean
    squared error against zeros, or the output's sum."""
    import torch.nn.functional as F

    def loss(output, target):
        if kind == "sum":
            return output.float().sum()
        if kind == "mse":
            return F.mse_loss(output, torch.zeros_like(output))
        flat = output.reshape(-1, output.shape[-1])
        return F.cross_entropy(flat, torch.zeros(flat.shape[0], dtype=torch.long, device=output.device))
    return loss


def load_factory(spec):
    """'package.module:factory' (or 'path/to/file.py:factory') -> the
    callable, found as placer_torch.loader finds every command's MODULE:NAME
    (the current directory on the import path, as with python -m)."""
    from .loader import LoadError, attribute, import_spec
    try:
        module, mod_name, attr = import_spec(spec, "--model", "a zoo model or package.module:factory")
    except LoadError as e:
        raise UsageError(str(e)) from None
    f = attribute(module, attr)
    if f is None:
        raise UsageError("--model %r: %s has no attribute %r" % (spec, mod_name, attr))
    if not callable(f):
        raise UsageError("--model %r: %s is not callable" % (spec, attr))
    return f


def model_spec(name, input_shapes, batch, loss, zoo_models):
    """(build, make_inputs, loss_fn, batch) for a zoo model or a factory."""
    if ":" not in name:
        check_zoo_name(name, zoo_models)
        if input_shapes:
            raise UsageError("--input-shape is for --model package.module:factory; zoo model %s has its own inputs" % name)
        spec = zoo_models[name]
        b = batch or spec.batch
        return spec.build, (lambda: spec.inputs(b)), spec.loss, b
    if not input_shapes:
        raise UsageError("--model %s needs --input-shape (one example's shape, without the batch; e.g. 3,224,224)" % name)
    factory = load_factory(name)
    shapes = [parse_input_shape(t) for t in input_shapes]
    b = batch or 1

    def build():
        m = factory()
        if not isinstance(m, torch.nn.Module):
            raise UsageError("--model %s: the factory returned %s, not a torch.nn.Module" % (name, type(m).__name__))
        return m

    def make_inputs():
        xs = tuple(torch.randn(b, *sh).to(dt) if dt.is_floating_point else torch.zeros((b,) + sh, dtype=dt)
                   for sh, dt in shapes)
        return xs, None
    return build, make_inputs, _custom_loss(loss), b
