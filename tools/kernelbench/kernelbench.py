#!/usr/bin/env python3
"""kernelbench: the kernels placer's cluster-scale model prices, timed one by
one on a GPU, one JSON object a line (issue 44 items 1 and 2, issue 45's FP8
and grouped expert GEMMs).

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
  memory   copy bandwidth by bytes, LayerNorm and RMSNorm-like, softmax;
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

  python3 tools/kernelbench/kernelbench.py --json > kernels.jsonl
  python3 tools/kernelbench/kernelbench.py --device cpu --quick --json
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "layerbench"))
import layerbench  # noqa: E402  (the rows and the block)

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

        def rowwise():
            ra = (a16.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / 448.0)
            rb = (bt16.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / 448.0)
            qa = (a16.float() / ra).to(FP8)
            qb = (bt16.float() / rb).to(FP8).t()
            s = bench(lambda: torch._scaled_mm(qa, qb, scale_a=ra, scale_b=rb.t(), out_dtype=torch.bfloat16,
                                               use_fast_accum=True))
            return {"seconds": s, "tflops": 2 * M * K * N / s / 1e12}
        guarded("fp8", "%s.%s.rowwise" % (row, op), recipe="rowwise", **base)(rowwise)

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


SECTIONS = {"gemm": sec_gemm, "fp8": sec_fp8, "grouped": sec_grouped, "memory": sec_memory, "between": sec_between}


def main(argv=None):
    global DEVICE, WARMUP, RUNS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", help="sections, comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--quick", action="store_true", help="tiny shapes: the plumbing, not figures")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true", help="(the only output: one JSON object a line)")
    args = ap.parse_args(argv)
    DEVICE, WARMUP, RUNS = args.device, args.warmup, args.runs
    if torch.device(DEVICE).type == "cuda":
        if not torch.cuda.is_available():
            ap.error("--device %s: no CUDA device" % DEVICE)
        META["device"] = torch.cuda.get_device_name(torch.device(DEVICE))
    else:
        META["device"] = "cpu"
    META["torch"] = torch.__version__
    names = args.only.split(",") if args.only else list(SECTIONS)
    for n in names:
        if n not in SECTIONS:
            ap.error("--only %s: unknown section (want %s)" % (n, ",".join(SECTIONS)))
    for n in names:
        t0 = time.time()
        SECTIONS[n](args)
        print("kernelbench: %s %.1f s" % (n, time.time() - t0), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
