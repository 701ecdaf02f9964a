#!/usr/bin/env python3
"""kernelbench: the kernels placer's cluster-scale model prices, timed one by
one on a GPU, one JSON object a line (docs/hardware.md, "make gpu"; the
FP8 and grouped expert GEMMs: docs/hardware.md, "FP8 and grouped GEMMs on
H100").

Sections (--only picks some):

  gemm     BF16 GEMMs at every Megatron H100 row's tensor-parallel shard
           shapes (QKV, output projection, fc1, fc2; forward, data-gradient
           and weight-gradient orientations) and a square sweep;
  fp8      torch._scaled_mm on float8_e4m3fn at the same shapes: tensorwise
           scales (fast accumulation on and off), rowwise scales, and
           DeepSeek-V3's blockwise 1x128 / 128x128 where this torch and
           cuBLAS take them; beside each, the cast that current scaling adds
           (amax, scale, cast to FP8) on the activation;
  grouped  torch._grouped_mm (BF16) and torch._scaled_grouped_mm (FP8,
           rowwise) over the local experts of MoE presets, beside one dense
           GEMM of the same FLOPs;
  attention causal fused attention (torch's flash and cuDNN SDPA kernels)
           at the Megatron rows' shards, Llama 3 (GQA) and DeepSeek-V3's MLA
           shapes, and a sweep of head dimension by sequence;
  ringsplit the GEMMs a ring-exchange all-gather splits into TP chunks of
           M/TP rows, against the whole GEMM;
  sustained a GEMM and a block run back to back for --sustain seconds each,
           one throughput a second (not in the default sections);
  moe      around the expert GEMMs: router, permute and unpermute
           (forward and backward), the dispatcher's host synchronization;
  host     the host: CPU time to issue one op by kind, a device-to-host
           sync idle and behind a queued kernel, a CUDA graph replay (not
           in the default sections);
  tpe      grouped expert GEMMs by tokens per expert (not default);
  conv     the zoo's convolutions by shape (not default);
  lstm     cuDNN LSTMs by shape (not default);
  moehost  a whole eager MoE layer (router, the dispatcher's host sync,
           permute, the local experts one GEMM each or grouped, unpermute;
           forward and backward) at Megatron-Bridge's H100 rows' tokens a
           GPU: its wall time with the host against its kernels' busy time
           from torch.profiler (is the layer host-bound?; not in the
           default sections);
  longattn fused attention at Llama 3 8B's heads, causal at 32K to 128K
           tokens, and a context-parallel ring's blocks (a chunk against a
           chunk, causal and full) at 2K to 32K (not default);
  window   sliding-window attention at GPT-OSS 120B's heads (window 128)
           as the profile's windowed layers run it (FlexAttention on
           CUDA), as an explicit mask, and causal over the whole
           sequence, at 4K to 64K tokens (not default);
  hflayer  transformers' decoder layers (Llama 3.2 1B, Llama 3 8B,
           Qwen3-30B-A3B's MoE), forward and backward: wall time and the
           GPU's busy time (not default);
  memory   copy bandwidth by bytes; LayerNorm, RMSNorm, SwiGLU and
           dropout-add (forward and backward) by hidden size; add and
           softmax by bytes; cross-entropy by vocabulary;
  between  what a step has besides its blocks, for the 1.7B and 7.1B rows:
           the output layer with cross-entropy (forward and backward), the
           embedding (forward and backward), Adam (fused and foreach) on a
           distributed optimizer's shard, and a whole step of the row's
           layers on one GPU (embedding, blocks, output layer, 4 micro-
           batches accumulated) against the sum of its parts.

A backward is timed with its forward (fwd_bwd_seconds) and bwd_seconds is
that less the forward's median: for a tiny kernel, where the noise is
larger than it, it can come out at or below 0. Every time is the median of
--runs CUDA-event timings after --warmup, with a
sleep kernel queued first so the host's launches run ahead; on CPU (plumbing
only) time.perf_counter. A case that fails writes {"error": ...} and the run
goes on. Each line has the device's name and torch's version.

  python3 tools/measure/kernelbench/kernelbench.py --json > kernels.jsonl
  python3 tools/measure/kernelbench/kernelbench.py --device cpu --quick --json
"""

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_layerbench():
    """tools/measure/layerbench/layerbench.py (the rows and the block), loaded
    from its file: kernelbench runs as a script from a checkout, where
    layerbench is no installed module."""
    path = os.path.join(os.path.dirname(HERE), "layerbench", "layerbench.py")
    spec = importlib.util.spec_from_file_location("layerbench", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["layerbench"] = module
    spec.loader.exec_module(module)
    return module


layerbench = _load_layerbench()

DEVICE = "cuda"
WARMUP, RUNS = 3, 10
META = {}


def emit(rec):
    rec = dict(rec)
    rec.update(META)
    print(json.dumps(rec), flush=True)


def bench(fn, inner=1):
    """Median seconds of one fn() call."""
    cuda = torch.device(DEVICE).type == "cuda"
    times = []
    for i in range(WARMUP + RUNS):
        if cuda:
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(200000)
            e0.record()
            for _ in range(inner):
                fn()
            e1.record()
            torch.cuda.synchronize()
            t = e0.elapsed_time(e1) / 1e3 / inner
        else:
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            t = (time.perf_counter() - t0) / inner
        if i >= WARMUP:
            times.append(t)
    return statistics.median(times)


def guarded(kind, name, **fields):
    """A decorator-free guard: runs the measurement closure, emits its
    result or its error."""
    def run(fn):
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - every failure is data here
            emit(dict(kind=kind, name=name, error="%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]), **fields))
            if torch.device(DEVICE).type == "cuda":
                torch.cuda.empty_cache()
            return None
        rec = dict(kind=kind, name=name, **fields)
        rec.update(out)
        emit(rec)
        return out
    return run


def row_shapes(quick):
    """(row, op, M, K, N) of each Megatron row's TP shard GEMMs, forward:
    M tokens (mbs 1, seq 4096), K in, N out."""
    out = []
    rows = layerbench.MEGATRON_ROWS[:1] if quick else layerbench.MEGATRON_ROWS
    seq = 256 if quick else 4096
    for name, heads, hidden, layers, tp, pp, gpus, gbs in rows:
        if quick:
            hidden, heads = 256, 4
        d = hidden // heads
        ffn = 4 * hidden
        out += [
            (name, "qkv", seq, hidden, 3 * heads * d // tp),
            (name, "proj", seq, heads * d // tp, hidden),
            (name, "fc1", seq, hidden, ffn // tp),
            (name, "fc2", seq, ffn // tp, hidden),
        ]
    return out


def orientations(M, K, N):
    """The three GEMMs of a linear layer y = x W^T: forward [M,K]x[K,N],
    data gradient [M,N]x[N,K], weight gradient [N,M]x[M,K]."""
    return [("fwd", M, K, N), ("dgrad", M, N, K), ("wgrad", N, M, K)]


def sec_gemm(args):
    dt = torch.bfloat16 if torch.device(DEVICE).type == "cuda" else torch.float32
    for row, op, M0, K0, N0 in row_shapes(args.quick):
        for orient, M, K, N in orientations(M0, K0, N0):
            def f(M=M, K=K, N=N):
                a = torch.randn(M, K, device=DEVICE, dtype=dt)
                b = torch.randn(K, N, device=DEVICE, dtype=dt)
                s = bench(lambda: torch.mm(a, b))
                return {"seconds": s, "tflops": 2 * M * K * N / s / 1e12}
            guarded("gemm", "%s.%s.%s" % (row, op, orient), dtype=str(dt).split(".")[1], m=M, k=K, n=N)(f)
    sizes = [256, 512] if args.quick else [1024, 2048, 4096, 8192, 16384]
    for n in sizes:
        def f(n=n):
            a = torch.randn(n, n, device=DEVICE, dtype=dt)
            b = torch.randn(n, n, device=DEVICE, dtype=dt)
            s = bench(lambda: torch.mm(a, b))
            return {"seconds": s, "tflops": 2 * n ** 3 / s / 1e12}
        guarded("gemm", "square.%d" % n, dtype=str(dt).split(".")[1], m=n, k=n, n=n)(f)


# Attention shapes beyond the Megatron rows (whose heads and TP come from
# layerbench.MEGATRON_ROWS, seq 4096, heads = kv heads): name, query heads,
# kv heads, qk head dim, v head dim, seq, the GPU's share (tensor
# parallel). Llama 3 (GQA, 8 KV heads, seq 8192 as Megatron-Bridge's rows;
# 70B at TP 4, 405B at TP 8) and DeepSeek-V3's MLA (128 heads, q/k 192 = 128
# + 64 rotary, v 128, no TP, seq 4096).
ATTN_MODELS = [
    ("llama3-8b", 32, 8, 128, 128, 8192, 1),
    ("llama3-70b", 64, 8, 128, 128, 8192, 4),
    ("llama3-405b", 128, 8, 128, 128, 8192, 8),
    ("dsv3-mla", 128, 128, 192, 128, 4096, 1),
]


def attention_cases(quick):
    """(name, batch, q heads, kv heads, qk dim, v dim, seq) of every case:
    the Megatron rows' shards, the models above, and a sweep of head
    dimension by sequence at 16 heads and about 16K tokens."""
    if quick:
        return [("quick", 1, 4, 2, 32, 32, 128)]
    out = []
    for name, heads, hidden, layers, tp, pp, gpus, gbs in layerbench.MEGATRON_ROWS:
        out.append(("megatron-%s" % name, 1, heads // tp, heads // tp, hidden // heads, hidden // heads, 4096))
    for name, q, kv, dqk, dv, seq, tp in ATTN_MODELS:
        out.append((name, 1, q // tp, max(1, kv // tp), dqk, dv, seq))
    for d in (64, 128, 256):
        for seq in (1024, 2048, 4096, 8192, 16384):
            out.append(("sweep.d%d.s%d" % (d, seq), max(1, 16384 // seq), 16, 16, d, d, seq))
    return out


def attention_flops(b, h, dqk, dv, s):
    """Causal attention's forward FLOPs as the attention benchmarks count
    them (FlashAttention's): the causal half of Q K^T and P V, 2 b h s^2
    (dqk + dv) / 2. The backward is 2.5 times that (five GEMMs, not two)."""
    return b * h * s * s * (dqk + dv)


def sec_attention(args):
    """Causal fused attention forward and backward by backend (torch's
    flash and cuDNN SDPA kernels; cuDNN's is what Transformer Engine runs on
    H100), head dimension and sequence."""
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)] if cuda else [("math", SDPBackend.MATH)]
    except ImportError:  # torch 1.13: whatever SDPA picks, or none
        sdpa_kernel, backends = None, [("default", None)]
    for name, b, hq, hkv, dqk, dv, seq in attention_cases(args.quick):
        for bname, backend in backends:
            def f(b=b, hq=hq, hkv=hkv, dqk=dqk, dv=dv, seq=seq, backend=backend):
                q = torch.randn(b, hq, seq, dqk, device=DEVICE, dtype=dt, requires_grad=True)
                k = torch.randn(b, hkv, seq, dqk, device=DEVICE, dtype=dt, requires_grad=True)
                v = torch.randn(b, hkv, seq, dv, device=DEVICE, dtype=dt, requires_grad=True)
                if hkv != hq:  # GQA: the keys and values of each group, as the kernels read them
                    k = k.detach().repeat_interleave(hq // hkv, dim=1).requires_grad_()
                    v = v.detach().repeat_interleave(hq // hkv, dim=1).requires_grad_()
                g = torch.randn(b, hq, seq, dv, device=DEVICE, dtype=dt)
                # GQA's keys and values are repeated per query head here (the
                # FLOPs are the same; the kernel reads more K and V).
                ctx = sdpa_kernel(backend) if backend is not None else _null()
                with ctx:
                    fn = getattr(F, "scaled_dot_product_attention", None)
                    if fn is None:
                        raise RuntimeError("this torch has no scaled_dot_product_attention")
                    fwd = bench(lambda: fn(q, k, v, is_causal=True))
                    both = bench(lambda: torch.autograd.grad(fn(q, k, v, is_causal=True), (q, k, v), g))
                fl = attention_flops(b, hq, dqk, dv, seq)
                bwd = both - fwd
                return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": bwd,
                        "fwd_flops": fl, "fwd_tflops": fl / fwd / 1e12,
                        "bwd_tflops": 2.5 * fl / bwd / 1e12 if bwd > 0 else None}
            guarded("attention", "%s.%s" % (name, bname), backend=bname, batch=b, heads=hq, kv_heads=hkv,
                    head_dim=dqk, v_head_dim=dv, seq=seq, causal=True)(f)
        if cuda:
            torch.cuda.empty_cache()


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


FP8 = getattr(torch, "float8_e4m3fn", None)


def _fp8_operands(M, K, N):
    a = torch.randn(M, K, device=DEVICE, dtype=torch.bfloat16)
    bt = torch.randn(N, K, device=DEVICE, dtype=torch.bfloat16)
    return a, bt


def quantize_tensorwise(x):
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = 448.0 / amax
    return (x.float() * scale).to(FP8), (1.0 / scale)


def sec_fp8(args):
    if FP8 is None or not hasattr(torch, "_scaled_mm"):
        emit(dict(kind="fp8", name="unsupported", error="this torch has no float8_e4m3fn or _scaled_mm"))
        return
    shapes = [(r, o, M, K, N) for r, o, M, K, N in row_shapes(args.quick)]
    sq = [256] if args.quick else [4096, 8192, 16384]
    shapes += [("square", str(n), n, n, n) for n in sq]
    for row, op, M, K, N in shapes:
        base = dict(m=M, k=K, n=N)
        a16, bt16 = _fp8_operands(M, K, N)
        a8, sa = quantize_tensorwise(a16)
        bt8, sb = quantize_tensorwise(bt16)
        b8 = bt8.t()  # column-major [K, N]
        for fast in (True, False):
            def f(fast=fast):
                s = bench(lambda: torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                                   use_fast_accum=fast))
                return {"seconds": s, "tflops": 2 * M * K * N / s / 1e12}
            guarded("fp8", "%s.%s.tensorwise%s" % (row, op, ".fastaccum" if fast else ""), recipe="tensorwise",
                    fast_accum=fast, **base)(f)

        # Rowwise with fast accumulation (torchao's output GEMM) and
        # without (its two gradient GEMMs: Float8LinearConfig's
        # gemm_config_grad_input and _grad_weight); the first line keeps
        # the name and fields of earlier files, whose rowwise lines are
        # the fast ones.
        for fast in (True, False):
            def rowwise(fast=fast):
                ra = (a16.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / 448.0)
                rb = (bt16.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / 448.0)
                qa = (a16.float() / ra).to(FP8)
                qb = (bt16.float() / rb).to(FP8).t()
                s = bench(lambda: torch._scaled_mm(qa, qb, scale_a=ra, scale_b=rb.t(), out_dtype=torch.bfloat16,
                                                   use_fast_accum=fast))
                return {"seconds": s, "tflops": 2 * M * K * N / s / 1e12}
            if fast:
                guarded("fp8", "%s.%s.rowwise" % (row, op), recipe="rowwise", **base)(rowwise)
            else:
                guarded("fp8", "%s.%s.rowwise.slowaccum" % (row, op), recipe="rowwise", fast_accum=False, **base)(rowwise)

        if K % 128 == 0 and N % 128 == 0:
            def blockwise(layout):
                # activations 1x128 (per row, per 128 of K), weights 128x128.
                ga = a16.float().view(M, K // 128, 128)
                sa_ = ga.abs().amax(dim=2).clamp(min=1e-12) / 448.0  # [M, K/128]
                qa = (ga / sa_.unsqueeze(2)).view(M, K).to(FP8)
                gb = bt16.float().view(N // 128, 128, K // 128, 128)
                sb_ = gb.abs().amax(dim=(1, 3)).clamp(min=1e-12) / 448.0  # [N/128, K/128]
                qb = (gb / sb_[:, None, :, None]).view(N, K).to(FP8).t()
                # Where each scale's first dimension is the fast one
                # ("outer": stride 1 along M or K/128) or the slow one.
                if layout[0] == "outer":
                    sa_ = sa_.t().contiguous().t()
                if layout[1] == "outer":
                    sbk = sb_.contiguous().t()  # [K/128, N/128], stride 1 along K/128
                else:
                    sbk = sb_.t().contiguous()  # [K/128, N/128], row-major
                s = bench(lambda: torch._scaled_mm(qa, qb, scale_a=sa_, scale_b=sbk, out_dtype=torch.bfloat16))
                return {"seconds": s, "tflops": 2 * M * K * N / s / 1e12}
            for layout in (("outer", "outer"), ("outer", "row"), ("row", "outer"), ("row", "row")):
                r = guarded("fp8", "%s.%s.blockwise" % (row, op), recipe="blockwise", layout="a:%s,b:%s" % layout,
                            **base)(lambda layout=layout: blockwise(layout))
                if r is not None:
                    break

        # The cast current scaling adds on the activation: amax, scale, cast.
        def cast():
            s = bench(lambda: quantize_tensorwise(a16))
            return {"seconds": s, "gbps": (M * K * 2 * 2 + M * K) / s / 1e9}
        guarded("fp8cast", "%s.%s.activation" % (row, op), m=M, k=K)(cast)
        del a16, bt16, a8, bt8, b8


# MoE presets (graph/transformer): name, hidden, expert ffn, experts, topk,
# expert-parallel size a user would run at; the local experts are
# experts / ep, and each GPU's tokens are the micro-batch's tokens * topk
# spread evenly over all experts (then the local share).
MOE = [
    ("mixtral-8x7b", 4096, 14336, 8, 2, 8),
    ("qwen3-30b-a3b", 2048, 768, 128, 8, 8),
    ("qwen3-235b-a22b", 4096, 1536, 128, 8, 8),
    ("gpt-oss-120b", 2880, 2880, 128, 4, 8),
    ("deepseek-v3", 7168, 2048, 256, 8, 64),
]


def sec_grouped(args):
    gm = getattr(torch, "_grouped_mm", None) or getattr(F, "grouped_mm", None)
    sgm = getattr(torch, "_scaled_grouped_mm", None)
    tokens = 512 if args.quick else 8192  # routed token-copies arriving at the EP group per micro-batch slice
    for name, h, ffn, experts, topk, ep in MOE:
        if args.quick:
            h, ffn = 256, 128
        local = experts // ep
        per = max(16, (tokens * topk // experts) // 16 * 16)  # each local expert's tokens, 16-aligned
        total = per * local
        flops = 2 * total * h * ffn
        base = dict(model=name, hidden=h, ffn=ffn, local_experts=local, tokens_per_expert=per, m=total)
        offs = torch.arange(1, local + 1, device=DEVICE, dtype=torch.int32) * per
        a = torch.randn(total, h, device=DEVICE, dtype=torch.bfloat16)
        if gm is not None:
            for layout in ("nk-transposed", "kn"):
                def f(layout=layout):
                    if layout == "kn":
                        b = torch.randn(local, h, ffn, device=DEVICE, dtype=torch.bfloat16)
                    else:
                        b = torch.randn(local, ffn, h, device=DEVICE, dtype=torch.bfloat16).transpose(-2, -1)
                    s = bench(lambda: gm(a, b, offs=offs, out_dtype=torch.bfloat16))
                    return {"seconds": s, "tflops": flops / s / 1e12}
                r = guarded("grouped", "%s.bf16" % name, layout=layout, **base)(f)
                if r is not None:
                    break
        else:
            emit(dict(kind="grouped", name="%s.bf16" % name, error="this torch has no _grouped_mm", **base))

        def loop():  # what a plain PyTorch MoE does: one GEMM per expert
            ws = [torch.randn(h, ffn, device=DEVICE, dtype=torch.bfloat16) for _ in range(local)]
            xs = list(a.split(per))
            s = bench(lambda: [torch.mm(x, w) for x, w in zip(xs, ws)])
            return {"seconds": s, "tflops": flops / s / 1e12}
        guarded("grouped", "%s.bf16.loop" % name, **base)(loop)

        def loop_streams():
            # Transformer Engine's grouped GEMM as v2.8 runs it without
            # NVTE_USE_CUTLASS_GROUPED_GEMM (common/gemm/cublaslt_gemm.cu
            # multi_stream_cublas_gemm): the main stream's event waited on
            # by four compute streams, GEMM i on stream i % 4, the main
            # stream waiting on each stream's event. seconds: the GEMMs'
            # GPU time, queued behind a busy GPU (CUDA events), so the
            # host's issue is hidden (bench's head start is not: its .loop
            # above is host-bound at few rows an expert); host_seconds: the
            # host's time to issue them from Python (an upper bound on TE's
            # C++ loop), per GEMM. On a CPU one stream, the same loop.
            ws = [torch.randn(h, ffn, device=DEVICE, dtype=torch.bfloat16) for _ in range(local)]
            xs = list(a.split(per))
            cuda = torch.device(DEVICE).type == "cuda"
            streams = [torch.cuda.Stream() for _ in range(min(4, local))] if cuda else []

            def issue():
                if not streams:
                    return [torch.mm(x, w) for x, w in zip(xs, ws)]
                main = torch.cuda.current_stream()
                start = main.record_event()
                for st in streams:
                    st.wait_event(start)
                out = []
                for i, (x, w) in enumerate(zip(xs, ws)):
                    with torch.cuda.stream(streams[i % len(streams)]):
                        out.append(torch.mm(x, w))
                for st in streams:
                    main.wait_event(st.record_event())
                return out
            gpu, host = [], []
            for i in range(WARMUP + RUNS):
                if cuda:
                    torch.cuda.synchronize()
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    _gpu_busy(30000000)
                    e0.record()
                t0 = time.perf_counter()
                issue()
                t1 = time.perf_counter()
                if cuda:
                    e1.record()
                    torch.cuda.synchronize()
                if i >= WARMUP:
                    host.append((t1 - t0) / local)
                    gpu.append(e0.elapsed_time(e1) / 1e3 if cuda else t1 - t0)
            s = statistics.median(gpu)
            return {"seconds": s, "host_seconds": statistics.median(host), "streams": max(1, len(streams)),
                    "tflops": flops / s / 1e12}
        guarded("grouped", "%s.bf16.loop-streams" % name, **base)(loop_streams)

        def dense():
            b = torch.randn(h, ffn * local, device=DEVICE, dtype=torch.bfloat16)
            x = a[:per]
            s = bench(lambda: torch.mm(x, b))
            return {"seconds": s, "tflops": flops / s / 1e12}
        guarded("grouped", "%s.bf16.dense-equivalent" % name, **base)(dense)

        if sgm is not None and FP8 is not None:
            def f8():
                qa = a.to(FP8)
                qb = torch.randn(local, ffn, h, device=DEVICE, dtype=torch.bfloat16).to(FP8).transpose(-2, -1)
                sa = torch.ones(total, device=DEVICE, dtype=torch.float32)
                sb = torch.ones(local, ffn, device=DEVICE, dtype=torch.float32)
                s = bench(lambda: sgm(qa, qb, sa, sb, offs=offs, out_dtype=torch.bfloat16))
                return {"seconds": s, "tflops": flops / s / 1e12}
            guarded("grouped", "%s.fp8.rowwise" % name, **base)(f8)
        del a


def sec_moe(args):
    """What an MoE layer runs around its expert GEMMs, for each preset at
    4096 tokens (one micro-batch of seq 4096 on one GPU): the router (a GEMM
    to the experts' scores, softmax, top-k), the permutation of each token's
    top-k copies into expert order (argsort and a gather, as Megatron-Core's
    moe_permute without fusion) and the unpermutation (the weighted sum of
    each token's copies: index_add), forward and backward; and what the
    layer's dispatcher costs in host-device synchronizations (the tokens per
    expert copied to the host, as the all-to-all dispatcher's .cpu() does)."""
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    n = 256 if args.quick else 4096
    for name, h, ffn, experts, topk, ep in MOE:
        if args.quick:
            h = 256
        base = dict(model=name, hidden=h, experts=experts, topk=topk, tokens=n)
        x = torch.randn(n, h, device=DEVICE, dtype=dt, requires_grad=True)
        w = torch.randn(experts, h, device=DEVICE, dtype=dt, requires_grad=True)

        def route():
            scores = torch.softmax((x @ w.t()).float(), dim=-1)
            return torch.topk(scores, topk, dim=-1)

        def router():
            fwd = bench(route)
            both = bench(lambda: route()[0].sum().backward())
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd}
        guarded("moe", "%s.router" % name, **base)(router)

        with torch.no_grad():
            probs, idx = route()
        flat = idx.reshape(-1)

        def permute_fn():
            order = torch.argsort(flat, stable=True)
            return x.index_select(0, order // topk), order

        def permute():
            fwd = bench(permute_fn)
            g = torch.randn(n * topk, h, device=DEVICE, dtype=dt)
            both = bench(lambda: permute_fn()[0].backward(g))
            moved = 2 * n * topk * h * x.element_size()
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                    "bytes": moved, "fwd_gbps": moved / fwd / 1e9}
        guarded("moe", "%s.permute" % name, **base)(permute)

        with torch.no_grad():
            order = torch.argsort(flat, stable=True)
        y = torch.randn(n * topk, h, device=DEVICE, dtype=dt, requires_grad=True)
        pw = probs.reshape(-1)[order].to(dt).detach().requires_grad_()

        def unpermute_fn():
            out = torch.zeros(n, h, device=DEVICE, dtype=dt)
            return out.index_add(0, order // topk, y * pw.unsqueeze(-1))

        def unpermute():
            fwd = bench(unpermute_fn)
            g = torch.randn(n, h, device=DEVICE, dtype=dt)
            both = bench(lambda: unpermute_fn().backward(g))
            moved = 2 * n * topk * h * y.element_size() + n * h * y.element_size()
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                    "bytes": moved, "fwd_gbps": moved / fwd / 1e9}
        guarded("moe", "%s.unpermute" % name, **base)(unpermute)

        def sync():
            # The tokens per expert to the host: a bincount and a blocking
            # copy, what a dispatcher that sizes its all-to-all on the host
            # waits for once per layer and direction.
            fn = (lambda: torch.bincount(flat, minlength=experts).cpu())
            return {"seconds": bench(fn)}
        guarded("moe", "%s.host_sync" % name, **base)(sync)
        del x, w, y
        if cuda:
            torch.cuda.empty_cache()


# Megatron-Bridge's H100 MoE rows as one GPU sees a micro-batch:
# name, hidden, expert FFN, experts, top-k, EP, tokens a GPU (micro-batch x
# sequence / TP with sequence parallelism). Qwen3-30B-A3B: MBS 2, EP 8;
# GPT-OSS 120B: MBS 4, EP 8; Qwen3-235B-A22B: MBS 1, TP 2, EP 32.
MOEHOST = [
    ("qwen3-30b-a3b", 2048, 768, 128, 8, 8, 8192),
    ("gpt-oss-120b", 2880, 2880, 128, 4, 8, 16384),
    ("qwen3-235b-a22b", 4096, 1536, 128, 8, 32, 2048),
]


def moe_layer(x, wr, w13, w2, topk, mode, gm=None):
    """One eager MoE layer on one rank with a balanced all-to-all emulated:
    the router over every expert, each token's top-k copies sent to this
    rank's experts (expert id modulo the local experts: a rank of EP
    receives as many copies as it sends when routing is balanced), the
    tokens per expert copied to the host (the all-to-all dispatcher sizes
    its exchange and its GEMMs there), argsort and gather into expert
    order, SwiGLU experts (one GEMM pair each, or torch's grouped GEMM),
    and the weighted unpermutation."""
    local = w2.shape[0]
    probs = torch.softmax((x @ wr.t()).float(), dim=-1)
    topv, topi = torch.topk(probs, topk, dim=-1)
    flat = (topi % local).reshape(-1)
    counts = torch.bincount(flat, minlength=local).cpu()  # the host sync
    order = torch.argsort(flat, stable=True)
    src = order // topk
    xp = x.index_select(0, src)
    if mode == "grouped":
        offs = counts.cumsum(0).to(device=x.device, dtype=torch.int32)
        gu = gm(xp, w13, offs=offs, out_dtype=x.dtype)
        g, u = gu.chunk(2, dim=-1)
        yp = gm(F.silu(g) * u, w2, offs=offs, out_dtype=x.dtype)
    else:
        outs = []
        for e, xe in enumerate(xp.split(counts.tolist())):
            g, u = (xe @ w13[e]).chunk(2, dim=-1)
            outs.append((F.silu(g) * u) @ w2[e])
        yp = torch.cat(outs)
    wts = topv.reshape(-1)[order].to(x.dtype).unsqueeze(-1)
    return torch.zeros_like(x).index_add(0, src, yp * wts)


def kernel_time(fn):
    """The GPU's busy time of one fn() call and its kernels, from
    torch.profiler's device events (None on a CPU)."""
    from torch.profiler import ProfilerActivity, profile
    if torch.device(DEVICE).type != "cuda":
        return None, None
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    busy, n = 0.0, 0
    by = {}
    for e in prof.events():
        # Device-side events (kernels, copies, sets) are events of their
        # own with the device's type; their time range is the kernel's.
        if str(getattr(e, "device_type", "")).endswith("CUDA"):
            us = e.time_range.elapsed_us()
            busy += us
            n += 1
            t, c = by.get(e.name, (0.0, 0))
            by[e.name] = (t + us, c + 1)
    global LAST_KERNELS
    LAST_KERNELS = [[name[:160], t / 1e6, c] for name, (t, c) in sorted(by.items(), key=lambda kv: -kv[1][0])]
    return busy / 1e6, n


# The kernels of kernel_time's last call by name, the longest first:
# [name, seconds, calls].
LAST_KERNELS = []


def wall(fn):
    """Median wall seconds of one fn() call, the host included (the GPU
    drained before and after)."""
    cuda = torch.device(DEVICE).type == "cuda"
    times = []
    for i in range(WARMUP + RUNS):
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if cuda:
            torch.cuda.synchronize()
        if i >= WARMUP:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def sec_moehost(args):
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    gm = getattr(torch, "_grouped_mm", None)
    for name, h, ffn, experts, topk, ep, n in MOEHOST:
        if args.quick:
            h, ffn, experts, n = 64, 32, 16, 256
        local = experts // ep if not args.quick else 4
        base = dict(model=name, hidden=h, ffn=ffn, experts=experts, topk=topk, ep=ep, local_experts=local, tokens=n)
        flops = 3 * (2 * n * h * experts + 2 * n * topk * h * 3 * ffn)  # router and experts, forward and backward
        x = torch.randn(n, h, device=DEVICE, dtype=dt, requires_grad=True)
        wr = (torch.randn(experts, h, device=DEVICE, dtype=dt) / math.sqrt(h)).requires_grad_()
        w13 = (torch.randn(local, h, 2 * ffn, device=DEVICE, dtype=dt) / math.sqrt(h)).requires_grad_()
        w2 = (torch.randn(local, ffn, h, device=DEVICE, dtype=dt) / math.sqrt(ffn)).requires_grad_()
        gy = torch.randn(n, h, device=DEVICE, dtype=dt)
        for mode in ("loop", "grouped"):
            if mode == "grouped" and (gm is None or not cuda):
                emit(dict(kind="moehost", name="%s.%s" % (name, mode), error="needs torch._grouped_mm on a GPU", **base))
                continue

            def measure(mode=mode):
                fwd = lambda: moe_layer(x, wr, w13, w2, topk, mode, gm)  # noqa: E731
                both = lambda: fwd().backward(gy)  # noqa: E731
                out = {"wall_fwd_seconds": wall(fwd), "wall_seconds": wall(both)}
                busy, kernels = kernel_time(both)
                if busy:
                    out.update(kernel_seconds=busy, kernels=kernels, busy_share=busy / out["wall_seconds"],
                               by_kernel=LAST_KERNELS[:25])
                out["tflops_wall"] = flops / out["wall_seconds"] / 1e12
                return out
            guarded("moehost", "%s.%s" % (name, mode), **base)(measure)
        del x, wr, w13, w2, gy
        if cuda:
            torch.cuda.empty_cache()


def sec_ringsplit(args):
    """The GEMMs Transformer Engine overlaps with a ring-exchange
    all-gather (the column-parallel layers' forward, QKV and fc1, and the
    row-parallel layers' data gradient, proj and fc2) run as TP GEMMs of
    M/TP rows each, one a ring step: their time against the whole GEMM's,
    at each Megatron row's shard shapes (TP > 1)."""
    dt = torch.bfloat16 if torch.device(DEVICE).type == "cuda" else torch.float32
    rows = {r[0]: r[4] for r in layerbench.MEGATRON_ROWS}
    for row, op, M, K, N in row_shapes(args.quick):
        tp = 2 if args.quick else rows[row]
        if tp <= 1:
            continue
        cases = []
        if op in ("qkv", "fc1"):
            cases.append(("fwd", M, K, N))
        else:  # the data gradient of a row-parallel layer: [M, hidden] x [hidden, K]
            cases.append(("dgrad", M, N, K))
        for orient, m, k, n in cases:
            def f(m=m, k=k, n=n, tp=tp):
                a = torch.randn(m, k, device=DEVICE, dtype=dt)
                b = torch.randn(k, n, device=DEVICE, dtype=dt)
                chunks = list(a.chunk(tp, dim=0))
                out = torch.empty(m, n, device=DEVICE, dtype=dt)
                outs = list(out.chunk(tp, dim=0))
                whole = bench(lambda: torch.mm(a, b))

                def split():
                    for x, y in zip(chunks, outs):
                        torch.mm(x, b, out=y)
                s = bench(split)
                return {"whole_seconds": whole, "split_seconds": s, "ratio": s / whole,
                        "whole_tflops": 2 * m * k * n / whole / 1e12}
            guarded("ringsplit", "%s.%s.%s" % (row, op, orient), tp=tp, m=m, k=k, n=n)(f)


def sec_sustained(args):
    """Throughput held for --sustain seconds, not a burst: a BF16 GEMM at
    the 1.7B row's fc1 shape, then each --sustain-rows row's block (its
    tensor-parallel shard, forward and backward), each run back to back
    with one timing a second (CUDA events over the second's iterations),
    beside the block's burst time as layerbench takes it (medians of short
    timings after a sleep kernel, the GPU rested): what a GPU under
    sustained load (power and clocks: run nvidia-smi beside it) keeps of
    the few-second medians the other sections take. With --idle, the
    blocks again with the GPU left idle for each share of the time (a
    step's bubbles and exposed communication)."""
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    seconds = 2 if args.quick else args.sustain
    row, op, M, K, N = [r for r in row_shapes(args.quick) if r[1] == "fc1"][0]
    a = torch.randn(M, K, device=DEVICE, dtype=dt)
    b = torch.randn(K, N, device=DEVICE, dtype=dt)

    def loop(name, fn, flops=None, idle=0.0, **extra):
        """fn back to back for the section's seconds, one record a second:
        each batch of 8 timed alone (CUDA events), then, with idle > 0, the
        GPU left idle for idle / (1 - idle) of the batch's time (the host
        sleeps), so that idle is the share of the time the GPU waits."""
        t_end = time.time() + seconds
        second = 0
        while time.time() < t_end:
            n, busy, t0 = 0, 0.0, time.time()
            while time.time() - t0 < 1.0:
                if cuda:
                    torch.cuda.synchronize()
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    for _ in range(8):
                        fn()
                    e1.record()
                    torch.cuda.synchronize()
                    el = e0.elapsed_time(e1) / 1e3
                else:
                    b0 = time.perf_counter()
                    for _ in range(8):
                        fn()
                    el = time.perf_counter() - b0
                n, busy = n + 8, busy + el
                if idle > 0:
                    time.sleep(el * idle / (1 - idle))
            rec = {"second": second, "wall": time.time(), "iterations": n, "seconds_per_iteration": busy / n,
                   "idle_share": idle}
            if flops:
                rec["tflops"] = flops * n / busy / 1e12
            rec.update(extra)
            emit(dict(kind="sustained", name=name, **rec))
            second += 1

    def guard(name, f):
        try:
            f()
        except Exception as e:  # noqa: BLE001
            emit(dict(kind="sustained", name=name, error="%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])))

    guard("%s.gemm" % row, lambda: loop("%s.gemm" % row, lambda: torch.mm(a, b), flops=2 * M * K * N))
    del a, b
    want = (args.sustain_rows or "1.7B").split(",")
    idles = [float(u) for u in (args.idle or "0").split(",")]
    if any(not 0 <= u < 1 for u in idles):
        raise SystemExit("kernelbench: --idle %s: want shares in [0, 1)" % args.idle)
    for name, heads, hidden, layers, tp, pp, gpus, gbs in layerbench.MEGATRON_ROWS:
        if name not in want and not (args.quick and name == layerbench.MEGATRON_ROWS[0][0]):
            continue
        if args.quick:
            hidden, heads, tp = 256, 4, 1
        seq = 256 if args.quick else 4096
        sh = layerbench.Shard("gpt", 1, seq, hidden, heads // tp, heads // tp, hidden // heads, 4 * hidden // tp,
                              sp=tp if tp > 1 else 1)

        def one(sh=sh, name=name):
            blk = layerbench.Block(sh, device=DEVICE, dtype=dt)
            f, bw = layerbench.time_block(blk, DEVICE, dt, warmup=WARMUP, runs=RUNS)[:2]
            x = torch.randn(sh.tokens // sh.sp, sh.hidden, device=DEVICE, dtype=dt, requires_grad=True)
            g = torch.randn(sh.tokens // sh.sp, sh.hidden, device=DEVICE, dtype=dt)

            def step():
                for p in blk.parameters():
                    p.grad = None
                blk(x).backward(g)
            for u in idles:
                loop("%s.block" % name if u == 0 else "%s.block.idle%d" % (name, round(100 * u)), step,
                     idle=u, burst_seconds=f + bw)
        guard("%s.block" % name, one)
        if cuda:
            torch.cuda.empty_cache()


def sec_memory(args):
    sizes = [1 << 20, 1 << 24] if args.quick else [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30]
    for nbytes in sizes:
        def copy(nbytes=nbytes):
            x = torch.empty(nbytes // 2, device=DEVICE, dtype=torch.bfloat16).normal_()
            y = torch.empty_like(x)
            s = bench(lambda: y.copy_(x))
            return {"seconds": s, "gbps": 2 * nbytes / s / 1e9}
        guarded("memory", "copy.%dMiB" % (nbytes >> 20), bytes=nbytes)(copy)
    dt = torch.bfloat16 if torch.device(DEVICE).type == "cuda" else torch.float32
    seq = 256 if args.quick else 4096
    for h in ([256] if args.quick else [2048, 4096, 8192, 16384]):
        def ln(h=h):
            x = torch.randn(seq, h, device=DEVICE, dtype=dt, requires_grad=True)
            m = torch.nn.LayerNorm(h, device=DEVICE, dtype=dt)
            g = torch.randn(seq, h, device=DEVICE, dtype=dt)
            fwd = bench(lambda: m(x))
            both = bench(lambda: m(x).backward(g))
            nbytes = seq * h * x.element_size()
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd, "fwd_gbps": 2 * nbytes / fwd / 1e9}
        guarded("memory", "layernorm.%d" % h, tokens=seq, hidden=h)(ln)

        def gelu(h=h):
            x = torch.randn(seq, 4 * h, device=DEVICE, dtype=dt)
            s = bench(lambda: F.gelu(x, approximate="tanh"))
            return {"seconds": s, "gbps": 2 * x.numel() * x.element_size() / s / 1e9}
        guarded("memory", "gelu.%d" % (4 * h), tokens=seq, hidden=4 * h)(gelu)

        def rms(h=h):
            x = torch.randn(seq, h, device=DEVICE, dtype=dt, requires_grad=True)
            w = torch.ones(h, device=DEVICE, dtype=dt, requires_grad=True)
            g = torch.randn(seq, h, device=DEVICE, dtype=dt)
            norm = getattr(F, "rms_norm", None)
            if norm is None:  # torch < 2.4: what a model writes by hand
                def norm(x, shape, w):
                    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w
            fwd = bench(lambda: norm(x, (h,), w))
            both = bench(lambda: norm(x, (h,), w).backward(g))
            nbytes = seq * h * x.element_size()
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                    "bytes": 2 * nbytes, "fwd_gbps": 2 * nbytes / fwd / 1e9}
        guarded("memory", "rmsnorm.%d" % h, tokens=seq, hidden=h)(rms)

        def swiglu(h=h):
            # Llama's MLP activation on fc1's two halves (8h/3 each, rounded
            # to 256 as Llama does): silu(a) * b, forward and backward.
            f = (8 * h // 3 + 255) // 256 * 256
            ab = torch.randn(seq, 2 * f, device=DEVICE, dtype=dt, requires_grad=True)
            g = torch.randn(seq, f, device=DEVICE, dtype=dt)

            def fn():
                a, b = ab.chunk(2, dim=-1)
                return F.silu(a) * b
            fwd = bench(fn)
            both = bench(lambda: fn().backward(g))
            nbytes = seq * 3 * f * ab.element_size()
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                    "bytes": nbytes, "fwd_gbps": nbytes / fwd / 1e9}
        guarded("memory", "swiglu.%d" % h, tokens=seq, hidden=h)(swiglu)

        def dropadd(h=h):
            # Megatron's bias-dropout-add after attention and the MLP:
            # residual + dropout(x), p 0.1, in training.
            x = torch.randn(seq, h, device=DEVICE, dtype=dt, requires_grad=True)
            r = torch.randn(seq, h, device=DEVICE, dtype=dt, requires_grad=True)
            g = torch.randn(seq, h, device=DEVICE, dtype=dt)
            fwd = bench(lambda: r + F.dropout(x, 0.1, True))
            both = bench(lambda: (r + F.dropout(x, 0.1, True)).backward(g))
            nbytes = 3 * seq * h * x.element_size()
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                    "bytes": nbytes, "fwd_gbps": nbytes / fwd / 1e9}
        guarded("memory", "dropout_add.%d" % h, tokens=seq, hidden=h)(dropadd)
    # Memory-bound kernels by bytes: an elementwise add (two reads, one
    # write) and a softmax over rows of 4096 (one read, one write), from 2
    # MiB to 2 GiB moved: the rate by size that small kernels fall from.
    for nbytes in ([1 << 21, 1 << 24] if args.quick else [1 << 21, 1 << 23, 1 << 25, 1 << 27, 1 << 29, 1 << 31]):
        def add(nbytes=nbytes):
            n = nbytes // 3 // 2
            a = torch.randn(n, device=DEVICE, dtype=dt)
            b = torch.randn(n, device=DEVICE, dtype=dt)
            s = bench(lambda: a + b)
            moved = 3 * n * a.element_size()
            return {"seconds": s, "bytes": moved, "gbps": moved / s / 1e9}
        guarded("memory", "add.%dMiB" % (nbytes >> 20), bytes=nbytes)(add)

        def softmax(nbytes=nbytes):
            n = max(1, nbytes // 2 // 2 // 4096)
            x = torch.randn(n, 4096, device=DEVICE, dtype=dt)
            s = bench(lambda: torch.softmax(x, dim=-1))
            moved = 2 * x.numel() * x.element_size()
            return {"seconds": s, "bytes": moved, "gbps": moved / s / 1e9}
        guarded("memory", "softmax.%dMiB" % (nbytes >> 20), bytes=nbytes)(softmax)
    # Cross-entropy on the logits of the vocabularies the presets use
    # (GPT-2's padded 51200, Llama 3's 128256, Qwen3's 151936, DeepSeek-V3's
    # 129280), 4096 tokens, forward and backward (the logits' gradient).
    for vocab in ([1000] if args.quick else [51200, 128256, 129280, 151936]):
        def ce(vocab=vocab):
            n = 256 if args.quick else 4096
            x = torch.randn(n, vocab, device=DEVICE, dtype=dt, requires_grad=True)
            y = torch.randint(0, vocab, (n,), device=DEVICE)
            fwd = bench(lambda: F.cross_entropy(x.float(), y))
            both = bench(lambda: F.cross_entropy(x.float(), y).backward())
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                    "bytes": x.numel() * x.element_size(), "tokens": n}
        guarded("memory", "cross_entropy.%d" % vocab, vocab=vocab)(ce)


def sec_between(args):
    dt = torch.bfloat16 if torch.device(DEVICE).type == "cuda" else torch.float32
    rows = layerbench.MEGATRON_ROWS[:2]
    vocab = 131072
    seq = 4096
    if args.quick:
        rows, vocab, seq = [("tiny", 4, 256, 2, 1, 1, 48, 192)], 4096, 256
    for name, heads, hidden, layers, tp, pp, gpus, gbs in rows:
        dp = gpus // (tp * pp)
        mb = gbs // dp  # micro-batches a data-parallel rank accumulates
        v = vocab // tp
        base = dict(row=name, hidden=hidden, vocab_shard=v, tokens=seq, tp=tp)

        def head():
            x = torch.randn(seq, hidden, device=DEVICE, dtype=dt, requires_grad=True)
            w = torch.randn(v, hidden, device=DEVICE, dtype=dt, requires_grad=True)
            t = torch.randint(0, v, (seq,), device=DEVICE)
            fwd = bench(lambda: F.cross_entropy(F.linear(x, w).float(), t))
            both = bench(lambda: F.cross_entropy(F.linear(x, w).float(), t).backward())
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd, "gemm_flops": 2 * seq * hidden * v}
        guarded("between", "%s.output-layer+cross-entropy" % name, **base)(head)

        def embed():
            w = torch.randn(v, hidden, device=DEVICE, dtype=dt, requires_grad=True)
            t = torch.randint(0, v, (seq,), device=DEVICE)
            g = torch.randn(seq, hidden, device=DEVICE, dtype=dt)
            fwd = bench(lambda: F.embedding(t, w))
            both = bench(lambda: F.embedding(t, w).backward(g))
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd}
        guarded("between", "%s.embedding" % name, **base)(embed)

        # Parameters on one GPU: the row's layers / pp at its TP shard,
        # plus embedding and output layer (each vocab/tp x hidden).
        sh = layerbench.Shard("gpt", 1, seq, hidden, heads // tp, heads // tp, hidden // heads, 4 * hidden // tp,
                              sp=tp if tp > 1 else 1)
        blk_params = sum(p.numel() for p in layerbench.Block(sh, device="meta").parameters())
        per_gpu = blk_params * layers // pp + 2 * v * hidden
        shard = per_gpu // dp  # the distributed optimizer's shard
        for impl in ("fused", "foreach"):
            def adam(impl=impl, n=shard):
                # FP32 master weights in 64 tensors, as a bucketed shard holds them.
                k = 64
                ps = [torch.zeros(n // k, device=DEVICE, dtype=torch.float32, requires_grad=True) for _ in range(k)]
                for p in ps:
                    p.grad = torch.randn_like(p)
                kw = {impl: True} if torch.device(DEVICE).type == "cuda" else {}
                opt = torch.optim.Adam(ps, lr=1e-4, **kw)
                s = bench(opt.step)
                return {"seconds": s, "params": n, "gbps": n * 4 * 7 / s / 1e9}
            guarded("between", "%s.adam.%s" % (name, impl), dp=dp, params_per_gpu=per_gpu, **base)(adam)

        # A whole step of the row on one GPU, its layers at their TP shard
        # (collectives stood in for as layerbench does), mb micro-batches.
        def step():
            torch.manual_seed(0)
            blocks = torch.nn.ModuleList(layerbench.Block(sh, device=DEVICE, dtype=dt) for _ in range(layers // pp))
            emb = torch.nn.Embedding(v, hidden, device=DEVICE, dtype=dt)
            out = torch.nn.Linear(hidden, v, bias=False, device=DEVICE, dtype=dt)
            rows_local = seq // sh.sp
            t = torch.randint(0, v, (rows_local,), device=DEVICE)
            tgt = torch.randint(0, v, (seq,), device=DEVICE)

            def one(n):
                for _ in range(n):
                    x = emb(t)
                    for b in blocks:
                        x = b(x)
                    if sh.sp > 1:  # the all-gather before the output layer: a stand-in
                        x = x.repeat(sh.sp, 1)
                    F.cross_entropy(out(x).float(), tgt).backward()

            mbs_run = 1 if args.quick else min(mb, 4)
            s = bench(lambda: one(mbs_run))
            one_block = layerbench.time_block(blocks[0], DEVICE, dt, warmup=WARMUP, runs=RUNS)
            host0 = time.perf_counter()
            one(1)
            host = time.perf_counter() - host0
            res = {"seconds": s, "micro_batches": mbs_run, "layers": layers // pp,
                   "block_fwd_seconds": one_block[0], "block_bwd_seconds": one_block[1],
                   "blocks_seconds": mbs_run * (layers // pp) * (one_block[0] + one_block[1]),
                   "host_seconds_one_micro_batch": host}
            del blocks, emb, out
            return res
        guarded("between", "%s.step" % name, **base)(step)
        if torch.device(DEVICE).type == "cuda":
            torch.cuda.empty_cache()


# --- The host (docs/performance-model.md, "The host's rate, measured"):
# what eager PyTorch's CPU thread costs per
# kernel it issues, a device-to-host synchronization, and CUDA graphs.

def _gpu_busy(cycles=2000000):
    """Queues a sleep kernel (about 1 ms on an H100) so that the host's
    launches after it run ahead of the GPU: the host's own time is then
    what it costs to issue them."""
    if torch.device(DEVICE).type == "cuda":
        torch.cuda._sleep(cycles)


def issue_costs(op, n):
    """(host seconds to issue one op, GPU seconds per op back to back,
    wall seconds per op from an idle GPU) over n calls, each the median of
    RUNS after WARMUP. Host: the loop's time with the GPU busy ahead, so
    the launches never wait (n stays under CUDA's launch queue of about a
    thousand). GPU: CUDA events around the n ops queued behind the busy
    GPU. Wall: synchronize, the loop, synchronize."""
    cuda = torch.device(DEVICE).type == "cuda"
    host, gpu, walls = [], [], []
    for i in range(WARMUP + RUNS):
        if cuda:
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            _gpu_busy(30000000)  # about 15 ms: longer than the host takes to issue the n ops
            e0.record()
        t0 = time.perf_counter()
        for _ in range(n):
            op()
        t1 = time.perf_counter()
        if cuda:
            e1.record()
            torch.cuda.synchronize()
        w0 = time.perf_counter()
        for _ in range(n):
            op()
        if cuda:
            torch.cuda.synchronize()
        w1 = time.perf_counter()
        if i >= WARMUP:
            host.append((t1 - t0) / n)
            walls.append((w1 - w0) / n)
            if cuda:
                gpu.append(e0.elapsed_time(e1) / 1e3 / n)
    return statistics.median(host), (statistics.median(gpu) if gpu else None), statistics.median(walls)


def sec_host(args):
    """Per-op host costs of eager PyTorch: the CPU time to issue one
    kernel by op kind (an in-place add, an allocating add, a small cuBLAS
    GEMM, a module call, an op recorded for autograd, a backward node),
    against the GPU time of the same ops back to back; a device-to-host
    synchronization from an idle GPU and behind a queued kernel (what the
    dispatcher's token counts cost); and a CUDA graph's replay of the same
    kernels (host time per replay, GPU time per kernel)."""
    cuda = torch.device(DEVICE).type == "cuda"
    n = 50 if args.quick else 500
    dt = torch.bfloat16 if cuda else torch.float32
    x = torch.randn(1024, device=DEVICE)
    a = torch.randn(64, 64, device=DEVICE, dtype=dt)

    class AddOne(torch.nn.Module):
        """issue.add_ inside a module call: the difference is what an
        nn.Module's __call__ costs the host (placer's host model issues
        ATen ops only)."""

        def forward(self, t):
            return t.add_(1)
    add_one = AddOne()
    lin = torch.nn.Linear(64, 64, device=DEVICE, dtype=dt)
    ln = torch.nn.LayerNorm(64, device=DEVICE, dtype=dt)
    ops = [
        ("add_", "an in-place add on 1,024 floats: one elementwise kernel", lambda: x.add_(1)),
        ("module_add_", "the same add_ as an nn.Module's forward, called as a module", lambda: add_one(x)),
        ("add", "an add that allocates its output (the caching allocator)", lambda: x + 1),
        ("mm64", "a 64x64x64 GEMM: one cuBLAS launch", lambda: torch.mm(a, a)),
        ("linear", "nn.Linear(64, 64) called as a module: GEMM and bias", lambda: lin(a)),
        ("layernorm", "nn.LayerNorm(64) called as a module", lambda: ln(a)),
    ]
    for name, what, op in ops:
        def f(op=op):
            with torch.no_grad():
                host, gpu, w = issue_costs(op, n)
            out = {"host_seconds": host, "wall_seconds": w}
            if gpu is not None:
                out.update(gpu_seconds=gpu, host_bound=host > gpu)
            return out
        guarded("host", "issue.%s" % name, what=what, ops=n)(f)

    def autograd_fwd():
        # Each op recorded for autograd (a node and its saved tensors).
        xr = torch.randn(1024, device=DEVICE, requires_grad=True)
        host, gpu, w = issue_costs(lambda: xr * 1.0001, n)
        out = {"host_seconds": host, "wall_seconds": w}
        if gpu is not None:
            out.update(gpu_seconds=gpu)
        return out
    guarded("host", "issue.mul_autograd", what="a multiply recorded for autograd", ops=n)(autograd_fwd)

    # What placer's host model (roofline.Launches, MeasuredLaunch) takes
    # from the kinds above and has not measured: an op that launches
    # nothing (a view), and cuDNN's convolutions and batch norm in FP32
    # (PyTorch's defaults: TF32 for cuDNN; several launches each, and
    # cuDNN's own host work), forward under autograd and backward.
    conv = torch.nn.Conv2d(16, 16, 3, padding=1, device=DEVICE)
    bn = torch.nn.BatchNorm2d(16, device=DEVICE)
    img = torch.randn(2, 16, 8, 8, device=DEVICE, requires_grad=True)
    for name, what, op in [
            ("view_autograd", "a view recorded for autograd: no kernel", lambda: img.view(2, 16, 64)),
            ("conv2d_autograd", "nn.Conv2d(16, 16, 3) on 2x16x8x8 FP32, recorded for autograd", lambda: conv(img)),
            ("batchnorm_autograd", "nn.BatchNorm2d(16) in training on 2x16x8x8 FP32, recorded for autograd",
             lambda: bn(img))]:
        def g(op=op):
            host, gpu, w = issue_costs(op, n)
            out = {"host_seconds": host, "wall_seconds": w}
            if gpu is not None:
                out.update(gpu_seconds=gpu)
            return out
        guarded("host", "issue.%s" % name, what=what, ops=n)(g)

    # The same under torch.autocast(bfloat16), as an AMP training step's
    # forward runs: an op outside autocast's lists passes its Autocast
    # dispatch key through (the multiply); a convolution on its
    # low-precision list casts its FP32 input each call (one _to_copy
    # kernel) and its FP32 weight once per autocast region (torch's
    # autocast weight cache: the timing loop is one region), then runs in
    # BF16. Against issue.mul_autograd and issue.conv2d_autograd: what
    # autocast adds to an op's host time beyond the casts' own issue.
    xm = torch.randn(1024, device=DEVICE, requires_grad=True)
    for name, what, op in [
            ("mul_autograd_autocast", "a multiply recorded for autograd under torch.autocast(bfloat16)",
             lambda: xm * 1.0001),
            ("conv2d_autograd_autocast", "nn.Conv2d(16, 16, 3) on 2x16x8x8 FP32 under torch.autocast(bfloat16): "
             "the input's cast each call, the weight's cached", lambda: conv(img))]:
        def h(op=op):
            with torch.autocast(torch.device(DEVICE).type, dtype=torch.bfloat16):
                host, gpu, w = issue_costs(op, n)
            out = {"host_seconds": host, "wall_seconds": w}
            if gpu is not None:
                out.update(gpu_seconds=gpu)
            return out
        guarded("host", "issue.%s" % name, what=what, ops=n)(h)

    def conv_backward():
        # n convolutions in a chain, then backward: the engine's host time
        # per convolution's backward node (cuDNN's data and weight
        # gradients and their layout transposes), the GPU busy ahead.
        host = []
        for i in range(WARMUP + RUNS):
            y = img
            for _ in range(n // 10 or 1):
                y = conv(y)
            s = y.sum()
            if cuda:
                torch.cuda.synchronize()
                _gpu_busy(30000000)
            t0 = time.perf_counter()
            s.backward()
            t1 = time.perf_counter()
            if cuda:
                torch.cuda.synchronize()
            if i >= WARMUP:
                host.append((t1 - t0) / (n // 10 or 1))
        return {"host_seconds": statistics.median(host)}
    guarded("host", "issue.conv2d_backward", what="one convolution's backward node in a chain of nn.Conv2d(16, 16, 3)",
            ops=n // 10 or 1)(conv_backward)

    def backward_nodes():
        # A chain of n multiplies, then backward: the autograd engine's
        # host time per node (each one or two kernels), with the GPU busy
        # ahead so the engine never waits on it.
        host, walls = [], []
        for i in range(WARMUP + RUNS):
            xr = torch.randn(1024, device=DEVICE, requires_grad=True)
            y = xr
            for _ in range(n):
                y = y * 1.0001
            s = y.sum()
            if cuda:
                torch.cuda.synchronize()
                _gpu_busy(30000000)
            t0 = time.perf_counter()
            s.backward()
            t1 = time.perf_counter()
            if cuda:
                torch.cuda.synchronize()
            t2 = time.perf_counter()
            if i >= WARMUP:
                host.append((t1 - t0) / n)
                walls.append(t2 - t0)
        return {"host_seconds": statistics.median(host), "wall_total_seconds": statistics.median(walls)}
    guarded("host", "issue.backward_node", what="one node of a backward chain of multiplies", ops=n)(backward_nodes)

    counts = torch.randint(0, 128, (8192,), device=DEVICE)

    def sync_idle():
        # The tokens per expert to the host, from an idle GPU: bincount
        # and a blocking copy (the all-to-all dispatcher's .cpu()).
        walls = []
        for i in range(WARMUP + RUNS):
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            torch.bincount(counts, minlength=128).cpu()
            walls.append(time.perf_counter() - t0)
        return {"seconds": statistics.median(walls[WARMUP:])}
    guarded("host", "sync.idle", what="bincount of 8,192 ids and .cpu() from an idle GPU")(sync_idle)

    def sync_behind():
        # The same behind a queued kernel of measured length: the wall
        # less that kernel is what the synchronization adds once the GPU
        # drains (the host waits for all of it).
        if not cuda:
            return {"seconds": None}
        walls, sleeps = [], []
        for i in range(WARMUP + RUNS):
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            e0.record()
            _gpu_busy()
            e1.record()
            torch.bincount(counts, minlength=128).cpu()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            if i >= WARMUP:
                walls.append(t1 - t0)
                sleeps.append(e0.elapsed_time(e1) / 1e3)
        w, s = statistics.median(walls), statistics.median(sleeps)
        return {"wall_seconds": w, "queued_kernel_seconds": s, "added_seconds": w - s}
    guarded("host", "sync.behind_kernel", what="the same behind a queued kernel of about 1 ms")(sync_behind)

    def graph_replay():
        if not cuda:
            return {"host_seconds": None}
        y = torch.zeros(1024, device=DEVICE)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                y.add_(1)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                y.add_(1)
        host, gpu = [], []
        for i in range(WARMUP + RUNS):
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            _gpu_busy()
            e0.record()
            t0 = time.perf_counter()
            g.replay()
            t1 = time.perf_counter()
            e1.record()
            torch.cuda.synchronize()
            if i >= WARMUP:
                host.append(t1 - t0)
                gpu.append(e0.elapsed_time(e1) / 1e3 / n)
        return {"host_seconds_per_replay": statistics.median(host), "gpu_seconds_per_kernel": statistics.median(gpu)}
    guarded("host", "graph.add_", what="a CUDA graph of the in-place adds, replayed", ops=n)(graph_replay)


# --- Kernels by shape.

TPE = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]


def sec_tpe(args):
    """Grouped expert GEMMs by tokens per expert, at each MoE preset's
    local experts (EP 8; DeepSeek-V3 EP 64): the up-and-gate projection
    forward ([T, h] x [E, h, 2f]), the down projection forward ([T, f] x
    [E, f, h]) and the up projection's weight gradient ([h, T] x [T, 2f]
    grouped along T), and one GEMM per expert for the first: how far a
    grouped GEMM falls from the dense rate when each expert gets few
    tokens."""
    gm = getattr(torch, "_grouped_mm", None)
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    tpes = [8, 64] if args.quick else TPE
    for name, h, ffn, experts, topk, ep in MOE:
        local = experts // ep
        if args.quick:
            h, ffn, local = 64, 32, 4
        for tpe in tpes:
            total = tpe * local
            base = dict(model=name, hidden=h, ffn=ffn, local_experts=local, tokens_per_expert=tpe, m=total)
            offs = torch.arange(1, local + 1, device=DEVICE, dtype=torch.int32) * tpe
            x = torch.randn(total, h, device=DEVICE, dtype=dt)
            w13 = torch.randn(local, h, 2 * ffn, device=DEVICE, dtype=dt)
            if gm is not None and cuda:
                def up():
                    s = bench(lambda: gm(x, w13, offs=offs, out_dtype=dt))
                    return {"seconds": s, "tflops": 2 * total * h * 2 * ffn / s / 1e12}
                guarded("tpe", "%s.fc1.grouped" % name, **base)(up)

                def down():
                    y = torch.randn(total, ffn, device=DEVICE, dtype=dt)
                    w2 = torch.randn(local, ffn, h, device=DEVICE, dtype=dt)
                    s = bench(lambda: gm(y, w2, offs=offs, out_dtype=dt))
                    return {"seconds": s, "tflops": 2 * total * ffn * h / s / 1e12}
                guarded("tpe", "%s.fc2.grouped" % name, **base)(down)

                def wgrad():
                    xt = x.t().contiguous().t()  # [T, h] viewed as the K-grouped operand's transpose
                    g = torch.randn(total, 2 * ffn, device=DEVICE, dtype=dt)
                    s = bench(lambda: gm(xt.t(), g, offs=offs, out_dtype=dt))
                    return {"seconds": s, "tflops": 2 * total * h * 2 * ffn / s / 1e12}
                guarded("tpe", "%s.fc1.wgrad.grouped" % name, **base)(wgrad)

            def loop():
                xs = list(x.split(tpe))
                s = bench(lambda: [torch.mm(xe, w13[e]) for e, xe in enumerate(xs)])
                return {"seconds": s, "tflops": 2 * total * h * 2 * ffn / s / 1e12}
            guarded("tpe", "%s.fc1.loop" % name, **base)(loop)
            del x, w13
        if cuda:
            torch.cuda.empty_cache()


# Convolutions as the zoo's vision models run them, batch 32 at 224 px:
# name, input channels, spatial size, output channels, kernel, stride,
# groups. Depthwise (groups = channels) from EfficientNet-B0 and
# MobileNetV3; RegNetY-1.6GF's grouped 3x3 (group width 24); pointwise
# 1x1; ResNet's dense 3x3 and the stems.
CONVS = [
    ("dw3.32x112", 32, 112, 32, 3, 1, 32),
    ("dw3.96x112s2", 96, 112, 96, 3, 2, 96),
    ("dw3.144x56", 144, 56, 144, 3, 1, 144),
    ("dw5.240x28", 240, 28, 240, 5, 1, 240),
    ("dw3.480x14", 480, 14, 480, 3, 1, 480),
    ("dw5.672x14", 672, 14, 672, 5, 1, 672),
    ("dw5.1152x7", 1152, 7, 1152, 5, 1, 1152),
    ("g24.48x56", 48, 56, 48, 3, 1, 2),
    ("g24.120x28", 120, 28, 120, 3, 1, 5),
    ("g24.336x14", 336, 14, 336, 3, 1, 14),
    ("g24.888x7", 888, 7, 888, 3, 1, 37),
    # Other group widths, where the roofline has no measured rate yet
    # (docs/history.md, "host-bound steps from first principles, kernels
    # by shape"): ResNeXt-50 32x4d's cardinality 32 (group width 4
    # to 32 over its four stages), RegNetX/Y's widths 8, 16, 48 and 64,
    # the same 3x3 kernel at the stages' sizes.
    ("g4.128x56", 128, 56, 128, 3, 1, 32),
    ("g8.256x28", 256, 28, 256, 3, 1, 32),
    ("g16.512x14", 512, 14, 512, 3, 1, 32),
    ("g32.1024x7", 1024, 7, 1024, 3, 1, 32),
    ("g8.64x56", 64, 56, 64, 3, 1, 8),
    ("g16.128x28", 128, 28, 128, 3, 1, 8),
    ("g48.384x14", 384, 14, 384, 3, 1, 8),
    ("g64.512x7", 512, 7, 512, 3, 1, 8),
    ("pw.32-16x112", 32, 112, 16, 1, 1, 1),
    ("pw.96-24x56", 96, 56, 24, 1, 1, 1),
    ("pw.240-40x28", 240, 28, 40, 1, 1, 1),
    ("pw.480-80x14", 480, 14, 80, 1, 1, 1),
    ("pw.1152-192x7", 1152, 7, 192, 1, 1, 1),
    ("pw.256-64x56", 256, 56, 64, 1, 1, 1),
    ("pw.1024-256x14", 1024, 14, 256, 1, 1, 1),
    ("c3.64x56", 64, 56, 64, 3, 1, 1),
    ("c3.128x28", 128, 28, 128, 3, 1, 1),
    ("c3.256x14", 256, 14, 256, 3, 1, 1),
    ("c3.512x7", 512, 7, 512, 3, 1, 1),
    ("stem7.3-64x224s2", 3, 224, 64, 7, 2, 1),
    ("stem3.3-32x224s2", 3, 224, 32, 3, 2, 1),
]


def conv_flops(n, cin, hw, cout, k, stride, groups):
    """Forward multiply-adds x 2 of a padded (same) convolution."""
    out = (hw + stride - 1) // stride
    return 2 * n * out * out * cout * (cin // groups) * k * k


def sec_conv(args):
    """Each convolution of CONVS forward and forward plus backward (input
    and weight gradients, into fresh .grad tensors), in FP32 as PyTorch runs it by default (cuDNN
    with TF32) and in BF16, NCHW: the achieved rate by shape, where a
    roofline of peak FLOP/s and bandwidth is furthest off (depthwise and
    narrow grouped convolutions are bound by neither)."""
    cuda = torch.device(DEVICE).type == "cuda"
    n = 2 if args.quick else 32
    dts = [("fp32", torch.float32)] + ([("bf16", torch.bfloat16)] if cuda else [])
    convs = CONVS[:3] if args.quick else CONVS
    for name, cin, hw, cout, k, stride, groups in convs:
        if args.quick:
            hw = min(hw, 16)
        flops = conv_flops(n, cin, hw, cout, k, stride, groups)
        for dname, dt in dts:
            base = dict(batch=n, cin=cin, hw=hw, cout=cout, kernel=k, stride=stride, groups=groups, dtype=dname,
                        flops=flops)

            def f(dt=dt):
                x = torch.randn(n, cin, hw, hw, device=DEVICE, dtype=dt, requires_grad=True)
                c = torch.nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False, device=DEVICE, dtype=dt)
                y = c(x)
                g = torch.randn_like(y)
                fwd = bench(lambda: c(x))

                def step():
                    # .grad dropped first: each backward's gradients are
                    # new tensors, as in a training step, not added into
                    # the last call's (an accumulation kernel over the
                    # input's and the weight's bytes that the files of
                    # 2026-11-26 include in bwd_seconds).
                    x.grad, c.weight.grad = None, None
                    c(x).backward(g)
                both = bench(step)
                nbytes = (x.numel() + y.numel() + c.weight.numel()) * x.element_size()
                return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                        "fwd_tflops": flops / fwd / 1e12, "fwd_gbps": nbytes / fwd / 1e9}
            guarded("conv", "%s.%s" % (name, dname), **base)(f)
        if cuda:
            torch.cuda.empty_cache()


# Small GEMMs (M, N, K) of the op graphs placer costs at op level: a
# transformer's projections and MLP at a few hundred to two thousand
# tokens (BERT-base and GPT-2 small at batches 2 to 16), their weight
# gradients (K the tokens), a classifier head, and the smallest shapes
# where a kernel's fixed time rules.
SMALLMM = [(64, 64, 64), (256, 256, 256), (512, 768, 768), (512, 3072, 768), (512, 768, 3072), (768, 768, 512),
           (2048, 768, 768), (2048, 3072, 768), (768, 3072, 2048), (32, 1000, 1280), (1280, 1000, 32)]


def sec_smallmm(args):
    """torch.mm by shape in FP32 as PyTorch runs it by default (no TF32 for
    matmuls), FP32 on TF32 and BF16: the achieved rate of the small GEMMs
    where a roofline of peak FLOP/s is furthest off (the measured files
    held none of them)."""
    cuda = torch.device(DEVICE).type == "cuda"
    cases = SMALLMM[:2] if args.quick else SMALLMM
    precs = [("fp32", torch.float32, False)] + ([("tf32", torch.float32, True), ("bf16", torch.bfloat16, False)] if cuda else [])
    for m, n, k in cases:
        for pname, dt, tf32 in precs:
            def f(m=m, n=n, k=k, dt=dt, tf32=tf32):
                old = torch.backends.cuda.matmul.allow_tf32
                torch.backends.cuda.matmul.allow_tf32 = tf32
                try:
                    a = torch.randn(m, k, device=DEVICE, dtype=dt)
                    b = torch.randn(k, n, device=DEVICE, dtype=dt)
                    t = bench(lambda: torch.mm(a, b), inner=10)
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = old
                return {"seconds": t, "tflops": 2 * m * n * k / t / 1e12}
            guarded("smallmm", "mm.%dx%dx%d.%s" % (m, n, k, pname), m=m, n=n, k=k, precision=pname,
                    flops=2 * m * n * k)(f)


# LSTMs as a language model runs them (cuDNN's fused LSTM): seq, batch,
# input, hidden, layers.
LSTMS = [(35, 20, 650, 650, 2), (35, 64, 1024, 1024, 2), (64, 32, 512, 512, 2), (128, 64, 1024, 1024, 1)]


def sec_lstm(args):
    """nn.LSTM forward and forward plus backward in FP32, by shape: the
    recurrence's seq x layers dependent steps of small GEMMs."""
    cuda = torch.device(DEVICE).type == "cuda"
    cases = [(8, 4, 32, 32, 2)] if args.quick else LSTMS
    for seq, b, inp, hid, layers in cases:
        flops = 2 * seq * b * layers * 4 * hid * (inp + hid)  # forward, input and recurrent GEMMs (approximate for layer > 1)
        base = dict(seq=seq, batch=b, input=inp, hidden=hid, layers=layers, flops=flops)

        def f():
            m = torch.nn.LSTM(inp, hid, layers, device=DEVICE)
            x = torch.randn(seq, b, inp, device=DEVICE, requires_grad=True)
            y, _ = m(x)
            g = torch.randn_like(y)
            fwd = bench(lambda: m(x))
            both = bench(lambda: m(x)[0].backward(g))
            return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd,
                    "fwd_tflops": flops / fwd / 1e12}
        guarded("lstm", "lstm.%dx%dx%dx%dx%d" % (seq, b, inp, hid, layers), **base)(f)
        if cuda:
            torch.cuda.empty_cache()



# Long sequences (context parallelism's regime): Llama 3 8B's heads (32
# query, 8 key-value, head 128) causal on one GPU at 32K to 128K tokens,
# and the blocks a ring of context parallelism runs per step: a query
# chunk against a key-value chunk of the same length, causal (the
# diagonal block) and full (a block off the diagonal), 2K to 32K tokens.
LONG_CAUSAL = (32768, 65536, 131072)
RING_CHUNKS = (2048, 4096, 8192, 16384, 32768)


def sec_longattn(args):
    """Fused attention at long sequences and at a context-parallel ring's
    chunk sizes, forward and backward, by backend (torch's flash and cuDNN
    SDPA kernels): the kernel's rate where placer's attention is furthest
    off (sequence sweeps to 1M tokens)."""
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)] if cuda else [("math", SDPBackend.MATH)]
    except ImportError:
        sdpa_kernel, backends = None, [("default", None)]
    hq, hkv, d = (32, 8, 128) if not args.quick else (4, 2, 32)
    cases = [("causal.s%d" % s, s, True) for s in ((256,) if args.quick else LONG_CAUSAL)]
    for c in ((128,) if args.quick else RING_CHUNKS):
        cases += [("ring.diag.c%d" % c, c, True), ("ring.full.c%d" % c, c, False)]
    old = (globals()["WARMUP"], globals()["RUNS"])
    for name, seq, causal in cases:
        if seq >= 65536:  # a second a step: fewer samples
            globals()["WARMUP"], globals()["RUNS"] = 1, 3
        for bname, backend in backends:
            def f(seq=seq, causal=causal, backend=backend):
                q = torch.randn(1, hq, seq, d, device=DEVICE, dtype=dt, requires_grad=True)
                k = torch.randn(1, hkv, seq, d, device=DEVICE, dtype=dt).repeat_interleave(hq // hkv, dim=1).requires_grad_()
                v = torch.randn(1, hkv, seq, d, device=DEVICE, dtype=dt).repeat_interleave(hq // hkv, dim=1).requires_grad_()
                g = torch.randn(1, hq, seq, d, device=DEVICE, dtype=dt)
                ctx = sdpa_kernel(backend) if backend is not None else _null()
                with ctx:
                    fn = F.scaled_dot_product_attention
                    fwd = bench(lambda: fn(q, k, v, is_causal=causal))
                    both = bench(lambda: torch.autograd.grad(fn(q, k, v, is_causal=causal), (q, k, v), g))
                fl = attention_flops(1, hq, d, d, seq) * (1 if causal else 2)
                bwd = both - fwd
                return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": bwd,
                        "fwd_flops": fl, "fwd_tflops": fl / fwd / 1e12,
                        "bwd_tflops": 2.5 * fl / bwd / 1e12 if bwd > 0 else None}
            guarded("longattn", "%s.%s" % (name, bname), backend=bname, batch=1, heads=hq, kv_heads=hkv,
                    head_dim=d, v_head_dim=d, seq=seq, causal=causal)(f)
            if cuda:
                torch.cuda.empty_cache()
        globals()["WARMUP"], globals()["RUNS"] = old
    ring_lb_calls(args, dt, backends, sdpa_kernel, hq, hkv, d)


# torch's load-balanced ring (torch/distributed/tensor/experimental/
# _attention.py, _templated_ring_attention and its backward, as of torch
# 1963fc8, December 2024: each rank holds chunks r and 2C-1-r of 2C) runs
# one SDPA call a step after step 0, is_causal=False, on views of its
# contiguous Q, K and V: at i <= rank both query chunks against the first
# key chunk (key.chunk(2, dim=2)[0]), at i > rank the second query chunk
# (query.chunk(2, dim=2)[1], and the output, its gradient and the LSE's
# half backward) against both key chunks. These are those two calls at
# chunks of 8K and 16K tokens (16K: torchtitan's 8B rows at 32K tokens a
# GPU), with the views as the ring passes them.
RING_LB_CHUNKS = (8192, 16384)


def ring_lb_calls(args, dt, backends, sdpa_kernel, hq, hkv, d):
    cuda = torch.device(DEVICE).type == "cuda"
    for c in ((128,) if args.quick else RING_LB_CHUNKS):
        for name, sq, sk in (("ring.lbq.c%d" % c, 2 * c, c), ("ring.lbk.c%d" % c, c, 2 * c)):
            for bname, backend in backends:
                def f(c=c, sq=sq, sk=sk, backend=backend):
                    def rand(h):
                        return torch.randn(1, h, 2 * c, d, device=DEVICE, dtype=dt)
                    q, k, v = rand(hq), rand(hkv).repeat_interleave(hq // hkv, dim=1), rand(hkv).repeat_interleave(hq // hkv, dim=1)
                    if sq == c:  # i > rank: the second query chunk, every key
                        q = q.chunk(2, dim=2)[1]
                    else:  # i <= rank: every query, the first key chunk
                        k, v = k.chunk(2, dim=2)[0], v.chunk(2, dim=2)[0]
                    q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
                    g = torch.randn(1, hq, sq, d, device=DEVICE, dtype=dt)
                    ctx = sdpa_kernel(backend) if backend is not None else _null()
                    with ctx:
                        fn = F.scaled_dot_product_attention
                        fwd = bench(lambda: fn(q, k, v, is_causal=False))
                        both = bench(lambda: torch.autograd.grad(fn(q, k, v, is_causal=False), (q, k, v), g))
                    fl = 2 * hq * sq * sk * 2 * d  # every score: Q K^T and P V
                    bwd = both - fwd
                    return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": bwd,
                            "fwd_flops": fl, "fwd_tflops": fl / fwd / 1e12,
                            "bwd_tflops": 2.5 * fl / bwd / 1e12 if bwd > 0 else None}
                guarded("longattn", "%s.%s" % (name, bname), backend=bname, batch=1, heads=hq, kv_heads=hkv,
                        head_dim=d, v_head_dim=d, seq=sq, seq_k=sk, causal=False)(f)
                if cuda:
                    torch.cuda.empty_cache()


# The layer a user's framework builds (Hugging Face transformers' decoder
# layers), forward and backward in BF16 at one micro-batch: what placer's
# own layer (placer profile) times differently. Llama 3.2 1B's and Llama 3
# 8B's layers at 4K and 8K tokens, and Qwen3-30B-A3B's MoE layer (128
# experts, top 8) at 4K tokens, as transformers runs it (its own expert
# loop), with the kernels' busy time beside the wall time.
HF_LAYERS = [
    ("llama3.2-1b.s4096", "llama", dict(hidden_size=2048, intermediate_size=8192, num_attention_heads=32, num_key_value_heads=8), 4096),
    ("llama3-8b.s8192", "llama", dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8), 8192),
    ("qwen3-30b-a3b.s4096", "qwen3_moe", dict(hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768, num_experts=128,
                                             num_experts_per_tok=8, num_attention_heads=32, num_key_value_heads=4, head_dim=128), 4096),
]


def sec_hflayer(args):
    """transformers' decoder layers (Llama, Qwen3-MoE) built from their
    configs with random weights, forward and backward in BF16 (FP32 on a
    CPU) with SDPA attention: wall time, and with torch.profiler the GPU's
    busy time and the kernel count."""
    try:
        import transformers
        from transformers.models.llama.modeling_llama import LlamaConfig, LlamaDecoderLayer, LlamaRotaryEmbedding
    except Exception as e:  # noqa: BLE001
        emit(dict(kind="hflayer", name="unsupported", error="transformers: %s" % e))
        return
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    for name, family, cfg, seq in (HF_LAYERS if not args.quick else [("quick", "llama", dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2), 32)]):
        def f(family=family, cfg=cfg, seq=seq):
            if family == "llama":
                c = LlamaConfig(num_hidden_layers=1, attn_implementation="sdpa", **cfg)
                layer_cls, rot_cls = LlamaDecoderLayer, LlamaRotaryEmbedding
            else:
                from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeConfig, Qwen3MoeDecoderLayer, Qwen3MoeRotaryEmbedding
                c = Qwen3MoeConfig(num_hidden_layers=1, attn_implementation="sdpa", **cfg)
                layer_cls, rot_cls = Qwen3MoeDecoderLayer, Qwen3MoeRotaryEmbedding
            c._attn_implementation = "sdpa"
            layer = layer_cls(c, 0).to(device=DEVICE, dtype=dt)
            rot = rot_cls(config=c).to(DEVICE)
            x = torch.randn(1, seq, c.hidden_size, device=DEVICE, dtype=dt, requires_grad=True)
            pos = torch.arange(seq, device=DEVICE).unsqueeze(0)
            pe = rot(x, pos)
            g = torch.randn_like(x)

            def step():
                out = layer(x, position_embeddings=pe, position_ids=pos, attention_mask=None)
                out = out[0] if isinstance(out, tuple) else out
                out.backward(g)
            wall = bench(step)
            busy, kernels = None, None
            if cuda:
                from torch.profiler import profile, ProfilerActivity
                step()
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    step()
                    torch.cuda.synchronize()
                evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
                busy = sum(e.device_time for e in evs) / 1e6
                kernels = len(evs)
            return {"seconds": wall, "gpu_busy_seconds": busy, "kernels": kernels,
                    "transformers": transformers.__version__, "params": sum(p.numel() for p in layer.parameters())}
        guarded("hflayer", name, family=family, seq=seq, batch=1, **cfg)(f)
        if cuda:
            torch.cuda.empty_cache()

# Sliding-window attention at GPT-OSS 120B's heads
# (graph/transformer/testdata/hf/gpt-oss-120b.json: 64 query heads, 8
# key-value heads, head_dim 64, sliding_window 128), micro-batch 1, at its
# training sequence (initial_context_length 4096) and longer: the window
# through placer_torch.profile.layers.windowed_attention, the path the
# profile's windowed layers take (FlexAttention with the window's block
# mask on CUDA, SDPA with the window as a boolean mask elsewhere), the
# same window as SDPA's boolean mask (every key block computed; to
# WINDOW_MASK_MAX tokens: past it the [S, S] mask alone is 4 GB and the
# whole square is computed), and causal SDPA over the whole sequence (a
# full layer's attention).
WINDOW_SHAPE = (64, 8, 64, 128)  # query heads, key-value heads, head width, window
WINDOW_SEQS = (4096, 16384, 65536)
WINDOW_MASK_MAX = 16384


def window_keys(S, W):
    """The keys all S queries of a causal window of W attend: query i
    (0 first) its min(i + 1, W) latest."""
    if S <= W:
        return S * (S + 1) // 2
    return W * (W + 1) // 2 + (S - W) * W


def _profile_layers():
    """placer_torch.profile.layers, installed or on PYTHONPATH (make gpu's
    window-attn step and make test put this checkout's
    python/placer_torch there)."""
    try:
        from placer_torch.profile import layers
    except ImportError as e:
        raise SystemExit("kernelbench --only window: placer_torch is not importable (%s); run with "
                         "PYTHONPATH=python/placer_torch from the checkout's root" % e)
    return layers


def sec_window(args):
    """Sliding-window attention, forward and backward, as the profile's
    windowed layers run it, beside the same window as an explicit mask
    and causal attention over the whole sequence."""
    cuda = torch.device(DEVICE).type == "cuda"
    dt = torch.bfloat16 if cuda else torch.float32
    layers = _profile_layers()
    hq, hkv, d, W = (4, 2, 32, 16) if args.quick else WINDOW_SHAPE
    fn = getattr(F, "scaled_dot_product_attention", None)
    for S in ((128,) if args.quick else WINDOW_SEQS):
        path = "flex" if cuda and layers._flex_available() else "sdpa-mask"
        cases = [("window.profile", W, path, lambda q, k, v: layers.windowed_attention(q, k, v, True, W)),
                 ("window.sdpa-mask", W, "sdpa-mask",
                  lambda q, k, v: fn(q, k, v, attn_mask=layers.window_mask(S, W, q.device), enable_gqa=True)),
                 ("causal", 0, "sdpa", lambda q, k, v: fn(q, k, v, is_causal=True, enable_gqa=True))]
        if S > WINDOW_MASK_MAX:
            cases = [c for c in cases if c[0] != "window.sdpa-mask"]
        for name, w, kernel, attn in cases:
            def f(attn=attn, w=w):
                if fn is None:
                    raise RuntimeError("this torch has no scaled_dot_product_attention")
                q = torch.randn(1, hq, S, d, device=DEVICE, dtype=dt, requires_grad=True)
                k = torch.randn(1, hkv, S, d, device=DEVICE, dtype=dt, requires_grad=True)
                v = torch.randn(1, hkv, S, d, device=DEVICE, dtype=dt, requires_grad=True)
                g = torch.randn(1, hq, S, d, device=DEVICE, dtype=dt)
                fwd = bench(lambda: attn(q, k, v))
                both = bench(lambda: torch.autograd.grad(attn(q, k, v), (q, k, v), g))
                # Q K^T and P V over the keys each query attends: 2 FLOPs
                # a multiply-add, d each (the causal case's exact s(s+1)/2
                # keys, not attention_flops' s^2/2).
                fl = 2 * hq * 2 * d * (window_keys(S, w) if w else S * (S + 1) // 2)
                return {"fwd_seconds": fwd, "fwd_bwd_seconds": both, "bwd_seconds": both - fwd, "fwd_flops": fl,
                        "fwd_tflops": fl / fwd / 1e12}
            guarded("window", "%s.s%d" % (name, S), kernel=kernel, batch=1, heads=hq, kv_heads=hkv, head_dim=d,
                    seq=S, window=w)(f)
            if cuda:
                torch.cuda.empty_cache()


SECTIONS = {"gemm": sec_gemm, "attention": sec_attention, "fp8": sec_fp8, "grouped": sec_grouped, "moe": sec_moe, "moehost": sec_moehost, "ringsplit": sec_ringsplit, "sustained": sec_sustained, "memory": sec_memory, "between": sec_between,
            "host": sec_host, "tpe": sec_tpe, "conv": sec_conv, "lstm": sec_lstm, "smallmm": sec_smallmm,
            "longattn": sec_longattn, "hflayer": sec_hflayer, "window": sec_window}


# Sections only --only runs (make gpu runs each as a step of its own).
NOT_DEFAULT = ("sustained", "moehost", "host", "tpe", "conv", "lstm", "smallmm", "longattn", "hflayer", "window")


def main(argv=None):
    global DEVICE, WARMUP, RUNS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", help="sections, comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--quick", action="store_true", help="tiny shapes: the plumbing, not figures")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true", help="(the only output: one JSON object a line)")
    ap.add_argument("--sustain", type=float, default=40, help="seconds each sustained case runs (section sustained)")
    ap.add_argument("--idle", help="shares of idle time between the sustained blocks' batches, comma-separated "
                    "(default 0: back to back), e.g. 0,0.1,0.25,0.5: what a GPU that waits keeps of its clock")
    ap.add_argument("--sustain-rows", help="Megatron rows whose blocks the sustained section runs (default 1.7B)")
    ap.add_argument("--attention", default="any", choices=["any"] + sorted(layerbench.ATTENTION_BACKENDS),
                    help="scaled_dot_product_attention's backend for the blocks of the between section "
                         "(default any: PyTorch's choice; the attention section times each backend itself)")
    args = ap.parse_args(argv)
    DEVICE, WARMUP, RUNS = args.device, args.warmup, args.runs
    if torch.device(DEVICE).type == "cuda":
        if not torch.cuda.is_available():
            ap.error("--device %s: no CUDA device" % DEVICE)
        META["device"] = torch.cuda.get_device_name(torch.device(DEVICE))
    else:
        META["device"] = "cpu"
    META["torch"] = torch.__version__
    names = args.only.split(",") if args.only else [n for n in SECTIONS if n not in NOT_DEFAULT]
    for n in names:
        if n not in SECTIONS:
            ap.error("--only %s: unknown section (want %s)" % (n, ",".join(SECTIONS)))
    META["attention"] = args.attention
    for n in names:
        t0 = time.time()
        if n == "attention":
            SECTIONS[n](args)
        else:
            with layerbench.attention_backend(args.attention):
                SECTIONS[n](args)
        print("kernelbench: %s %.1f s" % (n, time.time() - t0), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
