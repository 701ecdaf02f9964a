"""One Llama as plain PyTorch builds it, with Megatron-style tensor
shards: RMS norm, rotary embedding, grouped-query attention through
scaled_dot_product_attention (causal), SwiGLU, no biases, an untied
output layer with a vocabulary-parallel cross-entropy.

A tensor shard of degree T holds heads/T query heads, max(1,
kv_heads/T) key/value heads and ffn/T of the MLP; its column-parallel
inputs go through copy_in (identity forward, all-reduce backward) and
its row-parallel outputs through reduce_out (all-reduce forward,
identity backward), after Shoeybi et al. 2019 (Megatron-LM). With
sequence parallelism the layer's input holds seq/T tokens, gathered
before the column-parallel GEMMs and reduce-scattered after the
row-parallel ones (Korthikanti et al. 2022). Activations cross the
network as BF16, as in BF16 mixed precision, whatever the compute's
precision (placer counts them so). tg=None: no communication (what a
profile times: a shard's kernels alone).
"""

import math

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

WIRE = torch.bfloat16


def _all_reduce(x, g):
    y = x.to(WIRE)
    dist.all_reduce(y, group=g)
    return y.to(x.dtype)


def _gather_seq(x, g):
    n = dist.get_world_size(g)
    y = x.to(WIRE).contiguous()
    out = torch.empty((y.shape[0] * n,) + tuple(y.shape[1:]), dtype=WIRE)
    dist.all_gather_into_tensor(out, y, group=g)
    return out.to(x.dtype)


def _scatter_seq(x, g):
    n = dist.get_world_size(g)
    y = x.to(WIRE).contiguous()
    out = torch.empty((y.shape[0] // n,) + tuple(y.shape[1:]), dtype=WIRE)
    dist.reduce_scatter_tensor(out, y, group=g)
    return out.to(x.dtype)


class _CopyIn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g):
        ctx.g = g
        return x

    @staticmethod
    def backward(ctx, d):
        return _all_reduce(d, ctx.g), None


class _ReduceOut(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g):
        return _all_reduce(x, g)

    @staticmethod
    def backward(ctx, d):
        return d, None


class _GatherSeq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g):
        ctx.g = g
        return _gather_seq(x, g)

    @staticmethod
    def backward(ctx, d):
        return _scatter_seq(d, ctx.g), None


class _ScatterSeq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g):
        ctx.g = g
        return _scatter_seq(x, g)

    @staticmethod
    def backward(ctx, d):
        return _gather_seq(d, ctx.g), None


class Shard:
    """A tensor shard: degree T, rank t in it, its group (None: no
    communication), sequence parallelism."""

    def __init__(self, T=1, t=0, group=None, sp=False):
        self.T, self.t, self.group, self.sp = T, t, group, sp and T > 1

    def col_in(self, x):
        if self.T == 1:
            return x
        if self.sp:
            if self.group is None:
                return x.repeat(self.T, 1, 1)  # what the gather writes
            return _GatherSeq.apply(x, self.group)
        return x if self.group is None else _CopyIn.apply(x, self.group)

    def row_out(self, y):
        if self.T == 1:
            return y
        if self.sp:
            if self.group is None:
                return y[: y.shape[0] // self.T]
            return _ScatterSeq.apply(y, self.group)
        return y if self.group is None else _ReduceOut.apply(y, self.group)


class RMSNorm(nn.Module):
    def __init__(self, h, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary(seq, dim, base=500000.0):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    f = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
    return torch.cos(f), torch.sin(f)


def apply_rotary(x, cos, sin):
    # x: [batch, heads, seq, dim]
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)


class Block(nn.Module):
    """One Llama layer's shard; x is [seq (/T with sp), batch, hidden]."""

    def __init__(self, c, shard):
        super().__init__()
        T = shard.T
        self.shard = shard
        self.hd = c["hidden"] // c["heads"]
        self.nh = c["heads"] // T
        self.nkv = max(1, c["kv_heads"] // T)
        h = c["hidden"]
        self.norm1, self.norm2 = RMSNorm(h), RMSNorm(h)
        self.qkv = nn.Linear(h, (self.nh + 2 * self.nkv) * self.hd, bias=False)
        self.proj = nn.Linear(self.nh * self.hd, h, bias=False)
        self.gate_up = nn.Linear(h, 2 * (c["ffn"] // T), bias=False)
        self.down = nn.Linear(c["ffn"] // T, h, bias=False)

    def forward(self, x, cos, sin):
        s = self.shard
        y = s.col_in(self.norm1(x))
        S, B = y.shape[:2]
        q, k, v = self.qkv(y).split([self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], -1)
        q = q.reshape(S, B, self.nh, self.hd).permute(1, 2, 0, 3)
        k = k.reshape(S, B, self.nkv, self.hd).permute(1, 2, 0, 3)
        v = v.reshape(S, B, self.nkv, self.hd).permute(1, 2, 0, 3)
        q, k = apply_rotary(q, cos[:S], sin[:S]), apply_rotary(k, cos[:S], sin[:S])
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.nkv != self.nh)
        o = o.permute(2, 0, 1, 3).reshape(S, B, self.nh * self.hd)
        x = x + s.row_out(self.proj(o))
        g, u = self.gate_up(s.col_in(self.norm2(x))).chunk(2, -1)
        return x + s.row_out(self.down(F.silu(g) * u))


class Embedding(nn.Module):
    """Vocabulary-parallel token embedding: ids [batch, seq] -> [seq (/T), batch, hidden]."""

    def __init__(self, c, shard):
        super().__init__()
        self.shard = shard
        self.n = c["vocab"] // shard.T
        self.weight = nn.Parameter(torch.randn(self.n, c["hidden"]) * 0.02)

    def forward(self, ids):
        s = self.shard
        ids = ids.t()
        lo = s.t * self.n
        outside = (ids < lo) | (ids >= lo + self.n)
        h = F.embedding((ids - lo).masked_fill(outside, 0), self.weight).masked_fill(outside.unsqueeze(-1), 0.0)
        if s.T == 1 or s.group is None:
            return h[: h.shape[0] // s.T] if s.sp else h
        return _ScatterSeq.apply(h, s.group) if s.sp else _ReduceOut.apply(h, s.group)


class Loss(nn.Module):
    """Final norm, vocabulary-parallel output layer and cross-entropy
    (each rank its vocab/T logits; the max, the sum of exponentials and
    the target's logit reduced over the group): the mean loss."""

    def __init__(self, c, shard):
        super().__init__()
        self.shard = shard
        self.norm = RMSNorm(c["hidden"])
        self.n = c["vocab"] // shard.T
        self.out = nn.Linear(c["hidden"], self.n, bias=False)

    def forward(self, x, targets):
        s = self.shard
        logits = self.out(s.col_in(self.norm(x))).float()  # [seq, batch, vocab/T]
        t = targets.t()
        if s.T == 1:
            return F.cross_entropy(logits.reshape(-1, self.n), t.reshape(-1))
        m = logits.detach().amax(-1, keepdim=True)
        if s.group is not None:
            dist.all_reduce(m, op=dist.ReduceOp.MAX, group=s.group)
        e = (logits - m).exp().sum(-1)
        lo = s.t * self.n
        inside = (t >= lo) & (t < lo + self.n)
        tl = logits.gather(-1, (t - lo).clamp(0, self.n - 1).unsqueeze(-1)).squeeze(-1) * inside
        if s.group is not None:
            e, tl = _ReduceOut.apply(e, s.group), _ReduceOut.apply(tl, s.group)
        return (e.log() + m.squeeze(-1) - tl).mean()


def config(hidden, heads, kv_heads, ffn, vocab, seq):
    return {"hidden": hidden, "heads": heads, "kv_heads": kv_heads, "ffn": ffn, "vocab": vocab, "seq": seq}


def rope_for(c):
    return rotary(c["seq"], c["hidden"] // c["heads"])
