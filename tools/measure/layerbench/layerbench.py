#!/usr/bin/env python3
"""layerbench: one transformer block's per-GPU shard timed on a GPU, against
placer's prediction of it (layer_forward_s, layer_backward_s of `placer eval
--workload gpt:... --cluster ... --strategy ... --json`).

The block is what placer costs (planner/evaluate.go, coster.layer):
one GPU's tensor-parallel shard of one transformer block for one micro-batch,
its kernels alone, no communication:

    LayerNorm(hidden) -> QKV linear hidden -> (heads/tp + 2 kv_heads/tp) * d
    -> causal flash attention over heads/tp heads -> output projection
    heads/tp * d -> hidden -> residual add -> LayerNorm -> fc1 hidden -> ffn/tp
    -> GeLU (tanh) -> fc2 ffn/tp -> hidden -> residual add

with biases (GPT), or RMSNorm, SwiGLU (gate and up, each ffn/tp) and no
biases (llama). With sequence parallelism (sp=on, tp > 1) the norms and the
residual adds run on the GPU's 1/tp of the tokens, as in Megatron-LM; the
all-gather before the QKV and fc1 GEMMs and the reduce-scatter after the
output projection and fc2 are stand-ins that move no data (their outputs are
preallocated buffers, their gradients views): the GEMMs see the shapes they
see in Megatron, and no collective's local copy is timed. With
recompute=full the backward runs the forward again (torch.utils.checkpoint
around the block); with recompute=selective the attention core is
recomputed (checkpoint around it).

The cases are the nine rows of Megatron-LM's weak-scaling table
(MEGATRON_ROWS below, copied from planner/published/megatron.go, MegatronTable;
a test checks them against `placer report megatron --json`), or any
`--case gpt:...,STRATEGY`. See README.md in this folder.
"""

import argparse
import contextlib
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

# Megatron-LM's weak-scaling table on H100s (Megatron-Core r0.8.0), as
# planner/published/megatron.go's MegatronTable states it: name, heads, hidden,
# layers, tp, pp, gpus, global batch. Every row: seq 4096, vocab 131072,
# untied output layer, mbs 1, sp on when tp > 1, distributed optimizer,
# data-parallel size gpus / (tp pp) = 48.
MEGATRON_ROWS = [
    ("1.7B", 16, 2048, 24, 1, 1, 48, 192),
    ("7.1B", 32, 4096, 30, 2, 1, 96, 192),
    ("16B", 48, 6144, 32, 4, 1, 192, 192),
    ("32B", 56, 7168, 48, 8, 1, 384, 192),
    ("70B", 64, 8192, 84, 8, 2, 768, 384),
    ("119B", 80, 10240, 92, 8, 4, 1536, 768),
    ("177B", 96, 12288, 96, 8, 6, 2304, 1152),
    ("314B", 128, 16384, 96, 8, 8, 3072, 1536),
    ("462B", 144, 18432, 112, 8, 16, 6144, 3072),
]

STRATEGY_KEYS = ("tp", "pp", "dp", "vp", "mbs", "sp", "tpoverlap", "distopt", "recompute")
GPUS_PER_NODE = 8  # dgx-h100


class Case:
    """One block to measure: its name, placer's workload and strategy
    strings, the cluster to evaluate it on, and the parsed fields."""

    def __init__(self, name, workload, strategy, cluster=None):
        self.name, self.workload, self.strategy = name, workload, strategy
        family, _, rest = workload.partition(":")
        if family not in ("gpt", "llama") or not rest:
            raise ValueError("workload %r: want gpt:... or llama:..." % workload)
        self.family = family
        m = dict(kv.split("=", 1) for kv in rest.split(","))
        s = dict(kv.split("=", 1) for kv in strategy.split(",")) if strategy else {}
        for k in s:
            if k not in STRATEGY_KEYS:
                raise ValueError("strategy %r: unknown key %r" % (strategy, k))
        self.layers = int(m.get("layers", 1))
        self.hidden, self.heads = int(m["hidden"]), int(m["heads"])
        self.kv_heads = int(m.get("kv_heads", self.heads))
        if family == "gpt":
            default_ffn = 4 * self.hidden
        else:  # placer's llama default (graph/transformer): 8h/3 rounded up to 256
            default_ffn = ((8 * self.hidden // 3) + 255) // 256 * 256
        self.ffn = int(m.get("ffn", default_ffn))
        self.seq = int(m["seq"])
        self.tp, self.pp = int(s.get("tp", 1)), int(s.get("pp", 1))
        self.dp = int(s["dp"]) if "dp" in s else None
        self.mbs = int(s.get("mbs", 1))
        self.sp = s.get("sp", "off") == "on" and self.tp > 1
        self.recompute = s.get("recompute", "none")
        if self.recompute not in ("none", "selective", "full"):
            raise ValueError("recompute=%s: want none, selective or full" % self.recompute)
        if cluster is None:
            gpus = self.tp * self.pp * (self.dp or 1)
            cluster = "dgx-h100:%d" % max(1, -(-gpus // GPUS_PER_NODE))
        self.cluster = cluster
        for what, n in (("heads", self.heads), ("kv_heads", self.kv_heads), ("ffn", self.ffn)):
            if n % self.tp:
                raise ValueError("%s: %s=%d is not a multiple of tp=%d" % (name, what, n, self.tp))
        if self.hidden % self.heads:
            raise ValueError("%s: hidden %d is not a multiple of heads %d" % (name, self.hidden, self.heads))
        if self.sp and (self.mbs * self.seq) % self.tp:
            raise ValueError("%s: sp=on needs mbs*seq a multiple of tp" % name)

    @property
    def shard(self):
        return Shard(self.family, self.mbs, self.seq, self.hidden, self.heads // self.tp,
                     self.kv_heads // self.tp, self.hidden // self.heads, self.ffn // self.tp,
                     self.tp if self.sp else 1, self.recompute)


def megatron_cases(names=None):
    """The rows of MEGATRON_ROWS (all, or those named, in table order)."""
    out = []
    known = [r[0] for r in MEGATRON_ROWS]
    for n in names or []:
        if n not in known:
            raise ValueError("row %r: not one of %s" % (n, ",".join(known)))
    for name, heads, hidden, layers, tp, pp, gpus, batch in MEGATRON_ROWS:
        if names and name not in names:
            continue
        workload = "gpt:layers=%d,hidden=%d,heads=%d,seq=4096,vocab=131072,batch=%d,tied=false" % (
            layers, hidden, heads, batch)
        strategy = "tp=%d,pp=%d,dp=%d,mbs=1%s,distopt=on" % (tp, pp, gpus // (tp * pp), ",sp=on,tpoverlap=on" if tp > 1 else "")
        out.append(Case(name, workload, strategy, "dgx-h100:%d" % (gpus // GPUS_PER_NODE)))
    return out


def parse_case(text, cluster=None):
    """`gpt:layers=..,hidden=..,...,tp=8,mbs=1,sp=on`: the workload's keys
    and the strategy's keys (STRATEGY_KEYS) in one comma list."""
    family, _, rest = text.partition(":")
    wl, st = [], []
    for kv in rest.split(","):
        if not kv:
            continue
        (st if kv.split("=", 1)[0] in STRATEGY_KEYS else wl).append(kv)
    return Case(text, family + ":" + ",".join(wl), ",".join(st), cluster)


class Shard:
    """One GPU's shard of a block: tokens = mbs*seq, hidden in and out,
    heads and kv_heads on this GPU, head_dim, ffn on this GPU, sp = the
    sequence-parallel split (1: none), recompute."""

    def __init__(self, family, mbs, seq, hidden, heads, kv_heads, head_dim, ffn, sp=1, recompute="none"):
        self.family, self.mbs, self.seq, self.hidden = family, mbs, seq, hidden
        self.heads, self.kv_heads, self.head_dim, self.ffn = heads, kv_heads, head_dim, ffn
        self.sp, self.recompute = sp, recompute

    @property
    def tokens(self):
        return self.mbs * self.seq

    @property
    def llama(self):
        return self.family == "llama"

    def describe(self):
        s = "tok=%d h=%d heads=%d kv=%d d=%d ffn=%d" % (self.tokens, self.hidden, self.heads, self.kv_heads,
                                                        self.head_dim, self.ffn)
        if self.sp > 1:
            s += " sp/%d" % self.sp
        if self.recompute != "none":
            s += " rc=" + self.recompute
        return s

    def flops(self):
        """Forward FLOPs of the GEMMs and of causal attention (half of QK^T
        and PV), the way placer counts them."""
        n, h, d = self.tokens, self.hidden, self.head_dim
        qkv = (self.heads + 2 * self.kv_heads) * d
        fc1 = 2 * self.ffn if self.llama else self.ffn
        gemm = 2 * n * h * qkv + 2 * n * self.heads * d * h + 2 * n * h * fc1 + 2 * n * self.ffn * h
        attn = 2 * 2 * n * self.seq * self.heads * d / 2
        return gemm + attn


# --- sequence-parallel stand-ins: the collectives' shapes, no data moved.

class _GatherStandIn(torch.autograd.Function):
    """The all-gather [n/sp, h] -> [n, h]: returns a preallocated [n, h]
    buffer; its backward (a reduce-scatter) returns the gradient's first
    n/sp rows, a view."""

    @staticmethod
    def forward(ctx, local, buf):
        ctx.rows = local.shape[0]
        return buf.detach()

    @staticmethod
    def backward(ctx, grad):
        return grad.narrow(0, 0, ctx.rows), None


class _ScatterStandIn(torch.autograd.Function):
    """The reduce-scatter [n, h] -> [n/sp, h]: returns the first n/sp rows,
    a view; its backward (an all-gather) returns a preallocated [n, h]
    buffer."""

    @staticmethod
    def forward(ctx, full, rows, buf):
        ctx.buf = buf
        return full.narrow(0, 0, rows).detach()

    @staticmethod
    def backward(ctx, grad):
        return ctx.buf.detach(), None, None


_SDPA = getattr(F, "scaled_dot_product_attention", None)
_SDPA_GQA = None  # whether _SDPA takes enable_gqa (torch 2.5 and later)


def causal_attention(q, k, v):
    """q [b, heads, s, d], k and v [b, kv_heads, s, d] -> [b, heads, s, d].
    PyTorch's scaled_dot_product_attention (flash attention for BF16 on
    CUDA) where it exists; explicit softmax attention on torch 1.13."""
    global _SDPA_GQA
    heads, kv = q.shape[1], k.shape[1]
    if _SDPA is not None:
        if heads != kv:
            if _SDPA_GQA is None:  # enable_gqa: torch 2.5 and later
                try:
                    out = _SDPA(q, k, v, is_causal=True, enable_gqa=True)
                    _SDPA_GQA = True
                    return out
                except TypeError:
                    _SDPA_GQA = False
            if _SDPA_GQA:
                return _SDPA(q, k, v, is_causal=True, enable_gqa=True)
            k = k.repeat_interleave(heads // kv, dim=1)
            v = v.repeat_interleave(heads // kv, dim=1)
        return _SDPA(q, k, v, is_causal=True)
    if heads != kv:
        k = k.repeat_interleave(heads // kv, dim=1)
        v = v.repeat_interleave(heads // kv, dim=1)
    s = q.shape[2]
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


class RMSNorm(nn.Module):
    def __init__(self, n, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        rms = getattr(F, "rms_norm", None)
        if rms is not None:
            return rms(x, (x.shape[-1],), self.weight, self.eps)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    """One GPU's shard of one transformer block (Shard). Input and output
    [tokens/sp, hidden], tokens in batch-major order (row b*seq + t)."""

    def __init__(self, shard, device=None, dtype=None):
        super().__init__()
        self.shard = sh = shard
        kw = {"device": device, "dtype": dtype}
        h, d = sh.hidden, sh.head_dim
        bias = not sh.llama
        norm = (lambda: RMSNorm(h).to(**kw)) if sh.llama else (lambda: nn.LayerNorm(h, **kw))
        self.norm1 = norm()
        self.qkv = nn.Linear(h, (sh.heads + 2 * sh.kv_heads) * d, bias=bias, **kw)
        self.proj = nn.Linear(sh.heads * d, h, bias=bias, **kw)
        self.norm2 = norm()
        self.fc1 = nn.Linear(h, (2 if sh.llama else 1) * sh.ffn, bias=bias, **kw)
        self.fc2 = nn.Linear(sh.ffn, h, bias=bias, **kw)
        self._bufs = None
        if sh.sp > 1:  # the stand-ins' buffers: gathered inputs, gathered gradients
            shape = (sh.tokens, h)
            self._bufs = [torch.randn(shape, **kw) for _ in range(4)]

    def attention_core(self, qkv):
        sh = self.shard
        b, s, d, hq, hk = sh.mbs, sh.seq, sh.head_dim, sh.heads, sh.kv_heads
        q, k, v = qkv.split([hq * d, hk * d, hk * d], dim=-1)
        q = q.view(b, s, hq, d).transpose(1, 2)
        k = k.view(b, s, hk, d).transpose(1, 2)
        v = v.view(b, s, hk, d).transpose(1, 2)
        o = causal_attention(q, k, v)
        return o.transpose(1, 2).reshape(b * s, hq * d)

    def _gather(self, x, i):
        if self._bufs is None:
            return x
        return _GatherStandIn.apply(x, self._bufs[i])

    def _scatter(self, y, i):
        if self._bufs is None:
            return y
        return _ScatterStandIn.apply(y, self.shard.tokens // self.shard.sp, self._bufs[i])

    def _forward(self, x):
        qkv = self.qkv(self._gather(self.norm1(x), 0))
        if self.shard.recompute == "selective":
            o = checkpoint(self.attention_core, qkv)
        else:
            o = self.attention_core(qkv)
        x = x + self._scatter(self.proj(o), 1)
        a = self.fc1(self._gather(self.norm2(x), 2))
        if self.shard.llama:
            gate, up = a.chunk(2, dim=-1)
            a = F.silu(gate) * up
        else:
            a = F.gelu(a, approximate="tanh")
        return x + self._scatter(self.fc2(a), 3)

    def forward(self, x):
        if self.shard.recompute == "full":
            return checkpoint(self._forward, x)
        return self._forward(x)


def checkpoint(fn, *args):
    import torch.utils.checkpoint as cp
    return cp.checkpoint(fn, *args, use_reentrant=False)


ATTENTION_BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                      "math": "MATH"}


def attention_backend(name):
    """A context in which scaled_dot_product_attention uses only the named
    backend (torch.nn.attention.sdpa_kernel, torch 2.3 and later); "any"
    leaves PyTorch's choice."""
    if name == "any":
        return contextlib.nullcontext() if hasattr(contextlib, "nullcontext") else contextlib.suppress()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        raise ValueError("--attention %s: this torch (%s) has no torch.nn.attention.sdpa_kernel; use --attention any"
                         % (name, torch.__version__))
    return sdpa_kernel([getattr(SDPBackend, ATTENTION_BACKENDS[name])])


def param_count(block):
    return sum(p.numel() for p in block.parameters())


def _oom_error():
    return getattr(torch.cuda, "OutOfMemoryError", None) or getattr(torch, "OutOfMemoryError", None)


def _is_cuda(device):
    return torch.device(device).type == "cuda"


def time_block(block, device, dtype, warmup=5, runs=20):
    """Times the block's forward and backward separately: after warmup
    iterations, runs iterations; returns the medians in seconds and every
    run's (forward, backward). On CUDA the times come from CUDA events (the
    GPU's time between them); a sleep kernel queued first keeps the CPU's
    launches ahead of the GPU. On CPU, time.perf_counter."""
    sh = block.shard
    x = torch.randn(sh.tokens // sh.sp, sh.hidden, device=device, dtype=dtype, requires_grad=True)
    gout = torch.randn(sh.tokens // sh.sp, sh.hidden, device=device, dtype=dtype)
    cuda = _is_cuda(device)
    fwds, bwds = [], []
    for i in range(warmup + runs):
        x.grad = None
        for p in block.parameters():
            p.grad = None
        if cuda:
            torch.cuda.synchronize()
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
            if hasattr(torch.cuda, "_sleep"):
                torch.cuda._sleep(1000000)  # ~0.5 ms: the launches below queue behind it
            ev[0].record()
            out = block(x)
            ev[1].record()
            out.backward(gout)
            ev[2].record()
            torch.cuda.synchronize()
            f, b = ev[0].elapsed_time(ev[1]) / 1e3, ev[1].elapsed_time(ev[2]) / 1e3
        else:
            t0 = time.perf_counter()
            out = block(x)
            t1 = time.perf_counter()
            out.backward(gout)
            t2 = time.perf_counter()
            f, b = t1 - t0, t2 - t1
        del out
        if i >= warmup:
            fwds.append(f)
            bwds.append(b)
    return statistics.median(fwds), statistics.median(bwds), list(zip(fwds, bwds))


def placer_binary(arg=None):
    return arg or os.environ.get("PLACER") or os.path.join(ROOT, "bin", "placer")


def predict(placer, case):
    """placer's layer_forward_s and layer_backward_s for the case (and the
    whole JSON object), from `placer eval ... --json`."""
    cmd = [placer, "eval", "--workload", case.workload, "--cluster", case.cluster, "--json"]
    if case.strategy:
        cmd += ["--strategy", case.strategy]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), (p.stderr or p.stdout).strip()))
    r = json.loads(p.stdout)
    return r["layer_forward_s"], r["layer_backward_s"], r


def matmul_flags():
    """The CUDA matmul settings in effect (left at PyTorch's defaults:
    allow_tf32 False, allow_bf16_reduced_precision_reduction True on torch
    2; torch 1.13 has no such flag: None)."""
    b = torch.backends.cuda.matmul
    out = {}
    for k in ("allow_tf32", "allow_bf16_reduced_precision_reduction"):
        try:
            out[k] = getattr(b, k)
        except (AttributeError, AssertionError):  # torch 1.13 asserts on unknown names
            out[k] = None
    return out


def run_case(case, args, placer):
    """Measures one case and asks placer for its prediction: a dict."""
    sh = case.shard
    dtype = getattr(torch, args.dtype)
    r = {"row": case.name, "workload": case.workload, "strategy": case.strategy, "cluster": case.cluster,
         "shard": sh.describe(), "tokens": sh.tokens, "hidden": sh.hidden, "heads": sh.heads,
         "kv_heads": sh.kv_heads, "head_dim": sh.head_dim, "ffn": sh.ffn, "sp": sh.sp,
         "recompute": sh.recompute, "device": args.device, "dtype": args.dtype}
    if args.device.startswith("cuda"):
        r["gpu"] = torch.cuda.get_device_name(torch.device(args.device))
    try:
        pf, pb, _ = predict(placer, case)
        r["predicted_forward_ms"], r["predicted_backward_ms"] = pf * 1e3, pb * 1e3
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        r["predict_error"] = str(e)
        pf = pb = None
    oom = _oom_error()
    block = None
    try:
        torch.manual_seed(0)
        block = Block(sh, device=args.device, dtype=dtype)
        r["params"] = param_count(block)
        with attention_backend(getattr(args, "attention", "any")):
            f, b, _ = time_block(block, args.device, dtype, args.warmup, args.runs)
        r["attention"] = getattr(args, "attention", "any")
        r["measured_forward_ms"], r["measured_backward_ms"] = f * 1e3, b * 1e3
        r["forward_tflops"] = sh.flops() / f / 1e12
        if pf is not None:
            r["ratio_forward"], r["ratio_backward"] = pf / f, pb / b
    except Exception as e:  # out of memory: report, go on
        if (oom is not None and isinstance(e, oom)) or "out of memory" in str(e):
            r["error"] = "does not fit in the device's memory: " + str(e).split("\n")[0]
        else:
            raise
    finally:
        del block
        gc.collect()
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    return r


def _ms(r, k):
    v = r.get(k)
    return "-" if v is None else "%.3f" % v


def _ratio(r, k):
    v = r.get(k)
    return "-" if v is None else "%.3g" % v


def print_table(rows, out=None):
    out = out or sys.stdout
    head = ("row", "shard", "meas fwd ms", "meas bwd ms", "pred fwd ms", "pred bwd ms", "pred/meas fwd",
            "pred/meas bwd")
    lines = [head]
    for r in rows:
        lines.append((r["row"], r["shard"], _ms(r, "measured_forward_ms"), _ms(r, "measured_backward_ms"),
                      _ms(r, "predicted_forward_ms"), _ms(r, "predicted_backward_ms"),
                      _ratio(r, "ratio_forward"), _ratio(r, "ratio_backward")))
    w = [max(len(l[i]) for l in lines) for i in range(len(head))]
    for l in lines:
        out.write("  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i]) for i, c in enumerate(l)).rstrip() + "\n")
    for r in rows:
        for k in ("error", "predict_error"):
            if k in r:
                out.write("%s: %s: %s\n" % (r["row"], k, r[k]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    ap.add_argument("--dtype", default="bfloat16", help="bfloat16 (default) or float32 (for --device cpu)")
    ap.add_argument("--rows", help="Megatron rows to run, comma-separated (default: all nine)")
    ap.add_argument("--case", action="append", default=[],
                    help="gpt:...,STRATEGY (workload keys and tp,pp,dp,vp,mbs,sp,distopt,recompute); repeatable")
    ap.add_argument("--cluster", help="placer's --cluster for --case (default: dgx-h100 nodes for tp*pp*dp GPUs)")
    ap.add_argument("--attention", choices=["any"] + sorted(ATTENTION_BACKENDS),
                    help="scaled_dot_product_attention's backend (default: flash on CUDA, any on CPU)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20, help="timed runs; the median is reported")
    ap.add_argument("--placer", help="the placer binary (default: $PLACER, else bin/placer)")
    ap.add_argument("--json", action="store_true", help="one JSON object per case, one a line")
    ap.add_argument("--table", metavar="FILE", help="print the table of a --json output FILE (- for stdin) and exit")
    args = ap.parse_args(argv)
    if args.table:
        f = sys.stdin if args.table == "-" else open(args.table)
        with f:
            print_table([json.loads(l) for l in f if l.strip()])
        return 0
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error("--device %s: no CUDA device (use --device cpu --dtype float32)" % args.device)
    if args.attention is None:
        args.attention = "flash" if args.device.startswith("cuda") else "any"
    try:
        attention_backend(args.attention)
    except ValueError as e:
        ap.error(str(e))
    try:
        cases = [parse_case(c, args.cluster) for c in args.case]
        if args.rows or not cases:
            cases = megatron_cases(args.rows.split(",") if args.rows else None) + cases
    except KeyError as e:
        ap.error("a case lacks the workload key %s" % e)
    except ValueError as e:
        ap.error(str(e))
    placer = placer_binary(args.placer)
    flags = matmul_flags()
    if not args.json:
        print("torch %s, device %s, dtype %s, attention %s, %s; median of %d runs after %d warm-up" % (
            torch.__version__, args.device, args.dtype, args.attention,
            ", ".join("%s=%s" % kv for kv in flags.items()), args.runs, args.warmup))
    rows = []
    for c in cases:
        r = run_case(c, args, placer)
        r["torch"] = torch.__version__
        r.update(flags)
        rows.append(r)
        if args.json:
            print(json.dumps(r), flush=True)
    if not args.json:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
