"""One Llama as plain PyTorch builds it, with Megatron-style tensor
shards: RMS norm, rotary embedding, grouped-query attention through
scaled_dot_product_attention (causal; a sliding window in the layers
the model has one: window_of, windowed_attention), SwiGLU, no biases
unless the model has them (qkv_bias: Qwen2's; linear_bias: GPT-OSS's,
every linear's, a row-parallel one's added after the reduction), an
untied output layer with a vocabulary-parallel cross-entropy.

A tensor shard of degree T holds heads/T query heads, max(1,
kv_heads/T) key/value heads and ffn/T of the MLP; its column-parallel
inputs go through Shard.col_in (identity forward, all-reduce backward)
and its row-parallel outputs through Shard.row_out (all-reduce forward,
identity backward), after Shoeybi et al. 2019 (Megatron-LM): the
autograd functions of placer_torch.collectives, which the
transformer-plan runners call too. With
sequence parallelism the layer's input holds seq/T tokens, gathered
before the column-parallel GEMMs and reduce-scattered after the
row-parallel ones (Korthikanti et al. 2022). Activations cross the
network as BF16, as in BF16 mixed precision, whatever the compute's
precision (placer counts them so). tg=None: no communication (what a
profile times: a shard's kernels alone).
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from ..collectives import (AllToAll, Comm, CopyToTensorGroup, GatherFromSequence, ReduceFromTensorGroup,
                           ReduceScatterToSequence)

WIRE = torch.bfloat16


def comm(group, index=None):
    """group (None: no communication) as placer_torch.collectives takes it:
    activations on the wire as WIRE (read when the layer is built), the
    fused collectives NCCL runs."""
    if group is None:
        return None
    return Comm(group, dist.get_world_size(group), dist.get_rank(group) if index is None else index, wire=WIRE, fused=True)


class Shard:
    """A tensor shard: degree T, rank t in it, its group (None: no
    communication), sequence parallelism."""

    def __init__(self, T=1, t=0, group=None, sp=False):
        self.T, self.t, self.group, self.sp = T, t, group, sp and T > 1
        self.comm = comm(group, t) if T > 1 else None

    def col_in(self, x):
        if self.T == 1:
            return x
        if self.sp:
            if self.group is None:
                return x.repeat(self.T, 1, 1)  # what the gather writes
            return GatherFromSequence.apply(x, self.comm)
        return x if self.group is None else CopyToTensorGroup.apply(x, self.comm)

    def row_out(self, y):
        if self.T == 1:
            return y
        if self.sp:
            if self.group is None:
                return y[: y.shape[0] // self.T]
            return ReduceScatterToSequence.apply(y, self.comm)
        return y if self.group is None else ReduceFromTensorGroup.apply(y, self.comm)


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


class Experts(nn.Module):
    """A mixture of experts' MLP as plain PyTorch runs it (Mixtral's and
    Qwen3-MoE's layer, with Megatron-style expert parallelism): a router
    (a linear to the experts' scores, a softmax in FP32, the top-k), the
    token copies permuted into expert order, dispatched over the
    expert-parallel group by an all-to-all (ep ranks, experts/ep each),
    each local expert's SwiGLU as batched GEMMs over its tokens, the
    reverse all-to-all, the copies weighted and summed back; shared
    experts beside. Routing is forced balanced (Megatron-Core's
    moe_router_force_load_balancing, as the published MoE benchmarks
    run): token i's j-th copy goes to expert (i topk + j) mod experts,
    after the router's kernels ran (DeepSeek-V3's sigmoid, expert bias
    and group-limited top-k where c has them: route). group None: no communication, the
    rank's own copies standing in for those it would receive (the same
    count under forced balance).

    Under tensor parallelism (shard: the attention's, degree T > 1, with
    sequence parallelism) and expert tensor parallelism etp, as
    Megatron-Core's MoEAlltoAllTokenDispatcher runs them (core_v0.16.0,
    3bec9aa, megatron/core/transformer/moe/token_dispatcher.py: its
    workflow "A2A(EP)", then "AG(TP)" and back "RS(TP)", "A2A(EP)", its
    TP the expert-tensor group, pg_collection.expt_tp): the layer's
    input is the rank's seq/T tokens (MoELayer refuses tensor
    parallelism without sequence parallelism in training, moe_layer.py),
    each rank routes and permutes its own, the all-to-all over ep, then
    the received copies all-gathered over the etp group (etp_forward);
    each expert's SwiGLU is column-split (FC1) and row-split (FC2) over
    etp, its partial outputs reduce-scattered back (etp_back) before the
    reverse all-to-all. With etp 1 (at any T) an expert is whole on the
    rank and its tokens are the rank's own: nothing gathered. The
    shared experts are a tensor-parallel MLP over the attention's group
    (shared_experts.py: SharedExpertMLP on pg_collection.tp), their
    input gathered over the sequence and output reduce-scattered
    (Shard.col_in, row_out). etp_group None: no communication, the
    gather's and scatter's shapes as they would be."""

    def __init__(self, c, ep=1, group=None, etp=1, etp_group=None, shard=None):
        super().__init__()
        h, E, f = c["hidden"], c["experts"], c["expert_ffn"]
        self.E, self.k, self.ep, self.group = E, c["topk"], ep, group
        self.etp, self.etp_group = etp, etp_group
        self.ep_comm = comm(group) if ep > 1 else None
        self.etp_comm = comm(etp_group) if etp > 1 else None
        self.shard = shard if shard is not None else Shard()
        self.local = E // ep
        fe = f // etp  # an expert's FFN on one expert-tensor rank
        lb = bool(c.get("linear_bias"))
        self.router = nn.Linear(h, E, bias=lb)
        self.w1 = nn.Parameter(torch.randn(self.local, h, 2 * fe) * h ** -0.5)
        self.w2 = nn.Parameter(torch.randn(self.local, fe, h) * f ** -0.5)
        sh = c.get("shared", 0) * f
        T = self.shard.T
        self.shared = nn.ModuleList([nn.Linear(h, 2 * sh // T, bias=lb), nn.Linear(sh // T, h, bias=False)]) if sh else None
        # Biases on every linear (GPT-OSS's experts): FC1's column-split
        # over etp with its columns, FC2's (and the shared experts'
        # row-parallel linear's) added once after the reduction.
        self.w1_bias = nn.Parameter(torch.zeros(self.local, 1, 2 * fe)) if lb else None
        self.w2_bias = nn.Parameter(torch.zeros(self.local, 1, h)) if lb else None
        self.shared_bias = nn.Parameter(torch.zeros(h)) if lb and sh else None
        self.fp8_fc = None  # the experts' GEMMs under an FP8 recipe (fc)
        setup_routing(self, c)

    def forward(self, x):
        S, B, h = x.shape
        t = x.reshape(-1, h)
        n, k, E = t.shape[0], self.k, self.E
        if self.routing is None:
            w, _ = F.softmax(self.router(t).float(), -1).topk(k, -1)
        else:
            w, _ = route(self, t)
        idx = (torch.arange(n * k, device=x.device) % E).view(n, k)
        if self.tokens_per_expert is not None:
            # What the aux-loss-free balancing counts (Megatron-Core's
            # local_tokens_per_expert): the copies each expert is sent.
            with torch.no_grad():
                self.tokens_per_expert += torch.bincount(idx.reshape(-1), minlength=E).to(self.tokens_per_expert.dtype)
        order = idx.reshape(-1).argsort(stable=True)  # the copies in expert order
        perm = t.index_select(0, order // k)
        per = n * k // E  # tokens an expert gets from one rank
        if self.group is not None and self.ep > 1:
            # [dest rank, local expert, token] -> [source rank, local expert, token]
            recv = AllToAll.apply(perm, self.ep_comm, None, None)
            xs = recv.view(self.ep, self.local, per, h).transpose(0, 1).reshape(self.local, self.ep * per, h)
        else:
            xs = perm.view(self.local, self.ep * per, h)
        xs = self.etp_forward(xs)
        g, u = self.fc(1, xs).chunk(2, -1)
        ys = self.etp_back(self.fc(2, F.silu(g) * u))
        if self.w2_bias is not None:
            ys = ys + self.w2_bias
        if self.group is not None and self.ep > 1:
            back = AllToAll.apply(ys.view(self.local, self.ep, per, h).transpose(0, 1).reshape(-1, h), self.ep_comm, None, None)
        else:
            back = ys.reshape(-1, h)
        copies = torch.zeros_like(back).index_copy(0, order, back)
        y = (copies.view(n, k, h) * w.to(copies.dtype).unsqueeze(-1)).sum(1)
        if self.shared is not None:
            sd = self.shard
            a, b = self.shared[0](sd.col_in(x)).chunk(2, -1)
            z = sd.row_out(self.shared[1](F.silu(a) * b))
            if self.shared_bias is not None:
                z = z + self.shared_bias
            y = y + z.reshape(-1, h)
        return y.view(S, B, h)

    def fc(self, i, xs):
        """The local experts' FC1 (i 1, its bias added) or FC2 (i 2, its
        bias added after etp_back) over xs [local expert, copies, in]:
        batched GEMMs, or fp8_fc's where an FP8 recipe set it
        (placer_torch.profile.fp8)."""
        if self.fp8_fc is not None:
            return self.fp8_fc(i, xs)
        if i == 2:
            return torch.bmm(xs, self.w2)
        if self.w1_bias is None:
            return torch.bmm(xs, self.w1)
        return torch.baddbmm(self.w1_bias, xs, self.w1)

    def etp_forward(self, xs):
        """[local expert, copies, h] -> the same with the copies of the
        etp group's ranks (rank by rank) for each local expert."""
        if self.etp == 1:
            return xs
        L, R, h = xs.shape
        flat = xs.reshape(-1, h)
        if self.etp_group is None:
            flat = flat.repeat(self.etp, 1)  # what the gather writes
        else:
            flat = GatherFromSequence.apply(flat, self.etp_comm)
        return flat.view(self.etp, L, R, h).transpose(0, 1).reshape(L, self.etp * R, h)

    def etp_back(self, ys):
        """The experts' partial outputs [local expert, etp x copies, h]
        summed over the etp group, each rank its own copies back."""
        if self.etp == 1:
            return ys
        L, R, h = ys.shape[0], ys.shape[1] // self.etp, ys.shape[2]
        flat = ys.view(L, self.etp, R, h).transpose(0, 1).reshape(-1, h)
        if self.etp_group is None:
            flat = flat[: L * R]
        else:
            flat = ReduceScatterToSequence.apply(flat, self.etp_comm)
        return flat.view(L, R, h)


def _core_attention(q, k, v, gqa, window=0):
    if window and window < q.shape[-2]:
        return windowed_attention(q, k, v, gqa, window)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)


class LatentAttention(nn.Module):
    """Multi-head latent attention as DeepSeek-V2/V3 train it (DeepSeek-V2,
    arXiv:2405.04434 section 2.1), the layer placer costs
    (planner/cost_attention.go mlaBlock, transformer.Spec's
    AttentionParams): the queries through a latent of q_lora (a down
    projection, an RMS norm, an up projection to every head's query of
    head_dim + rope_dim), or one projection where q_lora is 0; the keys
    and values through one down projection to a latent of kv_lora and one
    rotary key of rope_dim shared by the heads, an RMS norm of the latent
    (not of the rotary key), an up projection to every head's key of
    head_dim (no position) and value of head_dim; the rotary embedding of
    the queries' and the key's rotary parts; causal SDPA with queries and
    keys of head_dim + rope_dim and values of head_dim (its scale
    1/sqrt(head_dim + rope_dim)); the output projection.

    Tensor parallelism as Megatron-Core's MLASelfAttention splits it
    (NVIDIA/Megatron-LM megatron/core/transformer/multi_latent_attention.py
    at 13f8f526bed803fd9ab8b8d4ce1ca14bc032bbbc): the down projections and
    the latents' norms whole on every rank of the group, on its sequence
    shard with sequence parallelism; the latents (the rotary key with the
    keys' and values' latent, one message here as placer costs it) then
    go through the shard's col_in (gathered over the sequence with
    sequence parallelism, else identity forward and all-reduce backward);
    the up projections column-parallel (heads/T heads a rank), the output
    projection row-parallel (the block's row_out). Its input y is the
    normed hidden state as the rank holds it ([seq (/T with sp), batch,
    hidden]); it returns the output projection's partial sum before
    row_out."""

    def __init__(self, c, shard):
        super().__init__()
        T = shard.T
        h, heads = c["hidden"], c["heads"]
        self.shard = shard
        self.d, self.r = c["head_dim"], c["rope_dim"]
        self.ql, self.kl = c.get("q_lora", 0), c["kv_lora"]
        self.nh = heads // T
        qw = self.nh * (self.d + self.r)
        if self.ql:
            self.q_down = nn.Linear(h, self.ql, bias=False)
            self.q_norm = RMSNorm(self.ql)
            self.q_up = nn.Linear(self.ql, qw, bias=False)
        else:
            self.q_proj = nn.Linear(h, qw, bias=False)
        self.kv_down = nn.Linear(h, self.kl + self.r, bias=False)
        self.kv_norm = RMSNorm(self.kl)
        self.kv_up = nn.Linear(self.kl, self.nh * 2 * self.d, bias=False)
        self.proj = nn.Linear(self.nh * self.d, h, bias=False)
        self.window = 0  # the sliding window (Block sets it; 0: causal over the whole sequence)

    def forward(self, y, cos, sin, recompute_core=False):
        s = self.shard
        if self.ql:
            q = self.q_up(s.col_in(self.q_norm(self.q_down(y))))
        else:
            q = self.q_proj(s.col_in(y))
        lat, kr = self.kv_down(y).split([self.kl, self.r], -1)
        lat, kr = s.col_in(torch.cat((self.kv_norm(lat), kr), -1)).split([self.kl, self.r], -1)
        S, B = q.shape[:2]
        nh, d, r = self.nh, self.d, self.r
        q = q.reshape(S, B, nh, d + r).permute(1, 2, 0, 3)
        qn, qr = q.split([d, r], -1)
        kv = self.kv_up(lat).reshape(S, B, nh, 2 * d).permute(1, 2, 0, 3)
        kn, v = kv.split([d, d], -1)
        cs, sn = cos[:S], sin[:S]
        qr = apply_rotary(qr, cs, sn)
        kr = apply_rotary(kr.reshape(S, B, 1, r).permute(1, 2, 0, 3), cs, sn)
        q = torch.cat((qn, qr), -1)
        k = torch.cat((kn, kr.expand(B, nh, S, r)), -1)
        if recompute_core:
            o = checkpoint(_core_attention, q, k, v, False, self.window, use_reentrant=False)
        else:
            o = _core_attention(q, k, v, False, self.window)
        return self.proj(o.permute(2, 0, 1, 3).reshape(S, B, nh * d))


class Block(nn.Module):
    """One Llama layer's shard; x is [seq (/T with sp), batch, hidden].
    With experts (c["experts"]) its MLP is Experts over ep (the
    expert-parallel degree and group) and etp (the expert-tensor degree
    and group), the attention's tensor parallelism with sequence
    parallelism."""

    def __init__(self, c, shard, ep=1, ep_group=None, etp=1, etp_group=None, layer=0):
        super().__init__()
        T = shard.T
        self.shard = shard
        self.hd = c.get("head_dim") or c["hidden"] // c["heads"]
        self.nh = c["heads"] // T
        self.nkv = max(1, c["kv_heads"] // T)
        h = c["hidden"]
        self.norm1, self.norm2 = RMSNorm(h), RMSNorm(h)
        # Qwen3's RMS norms of each head's queries and keys, before the
        # rotary embedding.
        self.recompute_core = False  # selective recomputation: set by the caller
        self.qk_norm = bool(c.get("qk_norm"))
        if self.qk_norm:
            self.q_norm, self.k_norm = RMSNorm(self.hd), RMSNorm(self.hd)
        # Latent attention (DeepSeek's) in place of the query, key and
        # value projection where the model has it.
        self.mla = LatentAttention(c, shard) if c.get("kv_lora") else None
        # The sliding window of this layer (layer: its place in the
        # model, 0 first; window_of).
        self.window = window_of(c, layer)
        if self.mla is not None:
            self.mla.window = self.window
        lb = bool(c.get("linear_bias"))
        if self.mla is None:
            # Qwen2's query, key and value biases, or every linear's
            # (GPT-OSS): column-parallel, each rank its heads' biases.
            self.qkv = nn.Linear(h, (self.nh + 2 * self.nkv) * self.hd, bias=lb or bool(c.get("qkv_bias")))
            self.proj = nn.Linear(self.nh * self.hd, h, bias=False)
        # A row-parallel linear's bias is added once, after the reduction
        # (Megatron-Core's RowParallelLinear): not on each rank's partial
        # sum.
        self.proj_bias = nn.Parameter(torch.zeros(h)) if lb else None
        self.moe = None
        if c.get("experts"):
            assert T == 1 or shard.sp, "experts at tensor parallelism above 1 need sequence parallelism"
            self.moe = Experts(c, ep, ep_group, etp, etp_group, shard)
        else:
            self.gate_up = nn.Linear(h, 2 * (c["ffn"] // T), bias=lb)
            self.down = nn.Linear(c["ffn"] // T, h, bias=False)
            self.down_bias = nn.Parameter(torch.zeros(h)) if lb else None

    def forward(self, x, cos, sin):
        s = self.shard
        if self.mla is not None:
            return self.mlp(x + self._bias(s.row_out(self.mla(self.norm1(x), cos, sin, self.recompute_core)), self.proj_bias))
        y = s.col_in(self.norm1(x))
        S, B = y.shape[:2]
        q, k, v = self.qkv(y).split([self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], -1)
        q = q.reshape(S, B, self.nh, self.hd).permute(1, 2, 0, 3)
        k = k.reshape(S, B, self.nkv, self.hd).permute(1, 2, 0, 3)
        v = v.reshape(S, B, self.nkv, self.hd).permute(1, 2, 0, 3)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rotary(q, cos[:S], sin[:S]), apply_rotary(k, cos[:S], sin[:S])
        if self.recompute_core:
            # Megatron-Core's selective recomputation (core_attn): the
            # attention core run again in the backward, its inputs kept.
            o = checkpoint(_core_attention, q, k, v, self.nkv != self.nh, self.window, use_reentrant=False)
        else:
            o = _core_attention(q, k, v, self.nkv != self.nh, self.window)
        o = o.permute(2, 0, 1, 3).reshape(S, B, self.nh * self.hd)
        x = x + self._bias(s.row_out(self.proj(o)), self.proj_bias)
        return self.mlp(x)

    @staticmethod
    def _bias(y, b):
        return y if b is None else y + b

    def mlp(self, x):
        """The block's second half: x plus its MLP (or experts) of x's norm."""
        s = self.shard
        if self.moe is not None:
            return x + self.moe(self.norm2(x))
        g, u = self.gate_up(s.col_in(self.norm2(x))).chunk(2, -1)
        return x + self._bias(s.row_out(self.down(F.silu(g) * u)), self.down_bias)


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
        return ReduceScatterToSequence.apply(h, s.comm) if s.sp else ReduceFromTensorGroup.apply(h, s.comm)


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
            e, tl = ReduceFromTensorGroup.apply(e, s.comm), ReduceFromTensorGroup.apply(tl, s.comm)
        return (e.log() + m.squeeze(-1) - tl).mean()


def config(hidden, heads, kv_heads, ffn, vocab, seq):
    return {"hidden": hidden, "heads": heads, "kv_heads": kv_heads, "ffn": ffn, "vocab": vocab, "seq": seq}


def rope_for(c):
    return rotary_for(c, c["seq"])


def rotary_for(c, seq):
    """The rotary tables a block of config c uses over seq positions: its
    rope_dim with latent attention, else its heads' width (head_dim where
    c has one: Qwen3's, GPT-OSS's)."""
    if c.get("kv_lora"):
        return rotary(seq, c["rope_dim"])
    return rotary(seq, c.get("head_dim") or c["hidden"] // c["heads"])


def dense_config(c):
    """The config of c's dense layers before the experts (DeepSeek's
    first_k_dense_replace): c with the dense MLP of ffn, no experts."""
    d = dict(c)
    for k in ("experts", "topk", "expert_ffn", "shared"):
        d.pop(k, None)
    return d


# Sliding windows (transformer.Spec's Window and WindowEvery).

def window_of(c, layer):
    """The sliding window, in tokens, of the layer at place `layer` (0
    first) of a model of config c, 0 for causal attention over the whole
    sequence: placer's transformer.Spec puts the window in every
    window_every-th layer from the first (every layer where window_every
    is 0 or 1: Mistral's; GPT-OSS's every other one, its first
    windowed)."""
    W = c.get("window", 0)
    if not W:
        return 0
    return W if layer % max(1, c.get("window_every", 0)) == 0 else 0


def window_mask(S, W, device=None):
    """[S, S] booleans: query i attends key j where i - W < j <= i (its W
    latest keys, itself included)."""
    i = torch.arange(S, device=device)
    back = i[:, None] - i[None, :]
    return (back >= 0) & (back < W)


# Which kernel runs a windowed layer's attention: "flex" (FlexAttention
# with the window's block mask, compiled: on a GPU it skips the key
# blocks outside the window, so its work is the window's keys, what
# placer's cost counts, transformer.CausalKeys), "sdpa" (SDPA with
# the window as an explicit boolean mask: every key block computed and
# masked), or "auto": flex on CUDA where torch has it, else sdpa.
WINDOW_KERNEL = "auto"
_FLEX = {}


def windowed_attention(q, k, v, gqa, W):
    """Causal attention with a sliding window of W keys (q, k, v:
    [batch, heads, seq, width])."""
    kind = WINDOW_KERNEL
    if kind == "auto":
        kind = "flex" if q.is_cuda and _flex_available() and q.shape[-1] == v.shape[-1] else "sdpa"
    if kind == "flex":
        return _flex_window(q, k, v, gqa, W)
    mask = window_mask(q.shape[-2], W, q.device)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)


def _flex_available():
    try:
        from torch.nn.attention import flex_attention  # noqa: F401
    except ImportError:
        return False
    return True


def _flex_window(q, k, v, gqa, W):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    S = q.shape[-2]
    key = (S, W, str(q.device))
    if key not in _FLEX:
        def inside(b, h, qi, ki):
            return (ki <= qi) & (qi - ki < W)
        _FLEX[key] = create_block_mask(inside, None, None, S, S, device=q.device)
    if "run" not in _FLEX:
        _FLEX["run"] = torch.compile(flex_attention) if q.is_cuda else flex_attention
    return _FLEX["run"](q, k, v, block_mask=_FLEX[key], enable_gqa=gqa)


# Group-limited and biased routing (DeepSeek-V3's).

def setup_routing(m, c):
    """An Experts m's routing beyond the softmax top-k, from config c:
    router_sigmoid (sigmoid scores, DeepSeek-V3's scoring_func),
    router_groups and router_group_k (n_group groups of experts, the
    token's experts from its router_group_k best groups: DeepSeek-V3's
    node-limited routing), expert_bias (the aux-loss-free balancing's
    bias, a buffer added to the scores for the selection only, and the
    copies each expert gets counted for its update). m.routing None:
    the softmax top-k alone, as before."""
    groups, gk = c.get("router_groups", 0), c.get("router_group_k", 0)
    m.sigmoid = bool(c.get("router_sigmoid"))
    m.groups = (groups, gk) if groups and gk else None
    m.routing = "grouped" if (m.sigmoid or m.groups or c.get("expert_bias")) else None
    if c.get("expert_bias"):
        m.register_buffer("expert_bias", torch.zeros(m.E))
        m.register_buffer("tokens_per_expert", torch.zeros(m.E))
    else:
        m.expert_bias, m.tokens_per_expert = None, None


def group_limited_topk(scores, k, groups, group_k):
    """The k experts each token may be routed to under group-limited
    routing: the experts in groups equal blocks of scores' columns, each
    group scored by the sum of its k // group_k best scores, the
    token's group_k best groups kept and the rest masked, the top k of
    what is left. Megatron-Core's group_limited_topk
    (megatron/core/transformer/moe/moe_utils.py, NVIDIA/Megatron-LM at
    d98e8a64ddf34856e74b24714e3bedb2f5a39553); for DeepSeek-V3 (8 of 256
    experts, 8 groups, 4 kept) k // group_k is 2, the sum of each group's
    top 2 of DeepSeek-V3's own gate. Returns (scores, indices) [n, k]."""
    n, E = scores.shape
    per = max(1, k // group_k)
    gs = scores.view(n, groups, E // groups).topk(per, -1)[0].sum(-1)
    keep = torch.zeros_like(gs).scatter_(1, gs.topk(group_k, -1)[1], 1.0).bool()
    allowed = keep.unsqueeze(-1).expand(n, groups, E // groups).reshape(n, E)
    return scores.masked_fill(~allowed, float("-inf")).topk(k, -1)


def route(m, t):
    """The router of Experts m on tokens t [n, h], run whole as
    Megatron-Core's topk_routing_with_score_function runs it
    (moe_utils.py, as above): the logits in FP32, the scores (softmax,
    or sigmoid), the expert bias added for the selection, the
    group-limited (or plain) top-k, the selected experts' scores without
    the bias gathered and, for sigmoid, normalised over the k. Returns
    (weights, indices) [n, k]; the profile then overrides the indices
    with the balanced assignment (Experts.forward) and keeps the
    weights, so that every kernel of the routing runs and its backward
    reaches the router."""
    logits = m.router(t).float()
    s = torch.sigmoid(logits) if m.sigmoid else F.softmax(logits, -1)
    choice = s if m.expert_bias is None else s + m.expert_bias
    if m.groups:
        _, idx = group_limited_topk(choice, m.k, *m.groups)
    else:
        _, idx = choice.topk(m.k, -1)
    w = s.gather(1, idx)
    if m.sigmoid and m.k > 1:
        w = w / (w.sum(-1, keepdim=True) + 1e-20)
    return w, idx
