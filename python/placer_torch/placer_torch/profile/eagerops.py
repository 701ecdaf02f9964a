"""The ATen ops one Llama layer's training step issues under eager
PyTorch, as the project's exporter records them (placer_torch.exporter on
fake CPU tensors, execution settings of a CUDA run): the test of
planner's eager op list (eager.go, TestEagerOpsMatchExporter).

    python -m placer_torch.profile.eagerops --layer llama --hidden 256 --heads 4 --kv-heads 2 --ffn 512 \
        --seq 64 --batch 2 --tp 1 --precision autocast

prints one JSON object: {"ops": [{"type", "class", "dtype", "flops",
"read", "written", "backward"}...]}, the layer's forward and backward
ops that are not views (no optimizer, no loss: the layer's output summed,
that sum and its backward left out; with --tp and --sp the stand-ins of
the sequence's gather and reduce-scatter left out, since placer costs
the collectives apart). --layer hf: transformers' LlamaDecoderLayer
(tp 1 only). --vocab: the output part instead (layers.py's Loss at --tp:
its vocabulary shard, the all-reduces left out).

An MoE block alone (eager_moe.go, TestEagerMoEOpsMatchExporter), routed
forced balanced (_route), with --experts, --topk, --expert-ffn:
--layer hf-moe, transformers' Qwen3MoeSparseMoeBlock with
experts_implementation "eager" (its loop; recorded on real CPU tensors,
since it reads values); hf-moe-grouped, the same with "grouped_mm"
(5.24's default); titan-moe, _TitanMoE (torchtitan v0.2.0's MoE, with
--grouped its torch._grouped_mm path, else its for-loop;
--shared-experts); llama-moe, placer_torch.profile.layers' Experts.

Many cases in one process (planner's tests: torch and transformers
imported once, not once a case):

    python -m placer_torch.profile.eagerops --cases < cases.jsonl

reads one JSON list of a case's arguments a line and prints, in order,
one line a case: {"ops": [...]}, or {"error": "case N ...: why"}.
"""

import argparse
import json
import sys
import traceback

import torch
import torch.nn.functional as F

from .. import exporter
from . import layers


class _Sum(torch.nn.Module):
    """The layer and its rotary tables: x -> layer(x)."""

    def __init__(self, block, cos, sin):
        super().__init__()
        self.block = block
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x):
        return self.block(x, self.cos, self.sin)


class _TitanNorm(torch.nn.Module):
    """RMS norm as torchtitan's Llama computes it (torchtitan/models/norms.py
    RMSNorm: in FP32, cast back to the input's dtype, then scaled)."""

    def __init__(self, h, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return y.type_as(x) * self.weight


class _TitanBlock(torch.nn.Module):
    """A Llama layer written as torchtitan 9dec370 writes its
    TransformerBlock (torchtitan/models/llama/model.py: wq, wk, wv, wo,
    w1, w2, w3 a GEMM each; [batch, seq, hidden] activations; the rotary
    embedding as a complex product in FP32, cast back; keys and values
    repeated to every query head by expand and reshape before SDPA,
    without enable_gqa); written here after its structure, for the
    exporter to record."""

    def __init__(self, c):
        super().__init__()
        h, nh, nkv = c["hidden"], c["heads"], c["kv_heads"]
        self.nh, self.nkv, self.hd = nh, nkv, h // nh
        lin = lambda i, o: torch.nn.Linear(i, o, bias=False)  # noqa: E731
        self.wq, self.wk, self.wv, self.wo = lin(h, nh * self.hd), lin(h, nkv * self.hd), lin(h, nkv * self.hd), lin(nh * self.hd, h)
        self.w1, self.w2, self.w3 = lin(h, c["ffn"]), lin(c["ffn"], h), lin(h, c["ffn"])
        self.attention_norm, self.ffn_norm = _TitanNorm(h), _TitanNorm(h)

    def _rope(self, x, freqs):
        B, S = x.shape[:2]
        z = torch.view_as_complex(x.float().reshape(B, S, x.shape[2], -1, 2))
        return torch.view_as_real(z * freqs.view(1, S, 1, -1)).flatten(3).type_as(x)

    def _repeat(self, x):
        rep = self.nh // self.nkv
        if rep == 1:
            return x
        B, S, n, d = x.shape
        return x[:, :, :, None, :].expand(B, S, n, rep, d).reshape(B, S, n * rep, d)

    def forward(self, x, freqs):
        B, S, _ = x.shape
        y = self.attention_norm(x)
        q = self.wq(y).view(B, S, -1, self.hd)
        k = self.wk(y).view(B, S, -1, self.hd)
        v = self.wv(y).view(B, S, -1, self.hd)
        q, k = self._rope(q, freqs), self._rope(k, freqs)
        k, v = self._repeat(k), self._repeat(v)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(o.transpose(1, 2).contiguous().view(B, S, -1))
        y = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(y)) * self.w3(y))


class _CrossEntropy(torch.nn.Module):
    """torchtitan's loss_fn: the FP32 logits' cross-entropy over [batch, seq]."""

    def forward(self, pred, targets):
        return F.cross_entropy(pred.flatten(0, 1).float(), targets.flatten(0, 1))


def _route(x, experts, topk):
    """Forced balanced routing: token t's largest router logits are those of
    experts t*topk ... t*topk+topk-1 (mod experts), in falling order, so that
    every expert receives tokens*topk/experts of them. The router's weight is
    [I | 0] (each expert reads one coordinate of the input) and x carries
    the scores there: x[t, (t*topk+j) % experts] = 8 - j."""
    flat = x.detach().view(-1, x.shape[-1])
    with torch.no_grad():
        flat.zero_()
        for t in range(flat.shape[0]):
            for j in range(topk):
                flat[t, (t * topk + j) % experts] = 8.0 - j
    return x


def _eye_router(weight):
    with torch.no_grad():
        weight.zero_()
        for e in range(weight.shape[0]):
            weight[e, e] = 1.0


class _TitanMoE(torch.nn.Module):
    """torchtitan v0.2.0's MoE layer (torchtitan/models/moe/moe.py: MoE,
    TokenChoiceTopKRouter, TokenReorderer, GroupedExperts; utils.py
    indices_padding_wrapper, _permute, _unpermute) with its Qwen3 settings
    (models/qwen3/__init__.py: softmax scores, route_norm, scores applied
    after the experts, no shared experts unless asked; MoEArgs's default
    load_balance_coeff 1e-3, so an expert_bias buffer), written here after
    its structure for the exporter to record. One stand-in:
    generate_permute_indices' Triton fill kernel (kernels.py) is one
    torch.full of its output's shape, its arithmetic on the counts kept."""

    def __init__(self, h, ffn, experts, topk, shared, grouped):
        super().__init__()
        self.E, self.k, self.grouped = experts, topk, grouped
        self.gate = torch.nn.Linear(h, experts, bias=False)
        self.w1 = torch.nn.Parameter(torch.empty(experts, ffn, h))
        self.w2 = torch.nn.Parameter(torch.empty(experts, h, ffn))
        self.w3 = torch.nn.Parameter(torch.empty(experts, ffn, h))
        self.shared = None
        if shared:
            lin = lambda i, o: torch.nn.Linear(i, o, bias=False)  # noqa: E731
            self.shared = torch.nn.ModuleDict({"w1": lin(h, ffn * shared), "w2": lin(ffn * shared, h), "w3": lin(h, ffn * shared)})
        self.register_buffer("expert_bias", torch.zeros(experts, dtype=torch.float32))
        self.register_buffer("tokens_per_expert", torch.zeros(experts, dtype=torch.float32), persistent=False)

    def _permute_indices(self, counts, max_len, align=8):
        start = torch.cumsum(counts, 0) - counts  # noqa: F841 (the fill kernel's input)
        total = counts.view(1, -1).sum(0)
        total = torch.clamp_min(total, align)
        sizes = ((total + align - 1) // align * align).to(torch.int32)
        offs = torch.cumsum(sizes, 0)
        write = offs - sizes  # noqa: F841
        return torch.full((max_len,), -1, dtype=torch.int32), sizes

    def _experts(self, x, counts):
        if not self.grouped:
            # _run_experts_for_loop: a host sync, then each expert's three matmuls.
            sizes = counts.tolist()
            outs = []
            for e, xe in enumerate(torch.split(x[: int(sum(sizes))], [int(n) for n in sizes], dim=0)):
                y = F.silu(torch.matmul(xe, self.w1[e].transpose(-2, -1)))
                y = y * torch.matmul(xe, self.w3[e].transpose(-2, -1))
                outs.append(torch.matmul(y, self.w2[e].transpose(-2, -1)))
            out = torch.cat(outs, dim=0)
            return torch.vstack((out, out.new_zeros((x.shape[0] - int(sum(sizes)), out.shape[-1]))))
        # indices_padding_wrapper(_run_experts_grouped_mm) without expert parallelism.
        max_len = -(-(x.shape[0] + self.E * 8) // 8) * 8
        with torch.no_grad():
            idx, sizes = self._permute_indices(counts, max_len)
        x = torch.vstack((x, x.new_zeros((x.shape[-1]))))
        shape = x.shape
        x = x[idx, :]
        offs = torch.cumsum(sizes, dim=0, dtype=torch.int32)
        y = F.silu(torch._grouped_mm(x.bfloat16(), self.w1.bfloat16().transpose(-2, -1), offs=offs))
        y = y * torch._grouped_mm(x.bfloat16(), self.w3.bfloat16().transpose(-2, -1), offs=offs)
        out = torch._grouped_mm(y, self.w2.bfloat16().transpose(-2, -1), offs=offs).type_as(x)
        back = out.new_empty(shape)
        back[idx, :] = out
        return back[:-1]

    def forward(self, x):
        bs, slen, dim = x.shape
        x = x.view(-1, dim)
        scores = F.softmax(self.gate(x).to(torch.float32), dim=1)
        _, chosen = torch.topk(scores + self.expert_bias, k=self.k, dim=1)
        top = scores.gather(dim=1, index=chosen)
        top = top / (top.sum(dim=-1, keepdim=True) + 1e-20)
        top = top * 1.0
        # histc of the int64 choices, as CUDA runs it; a CPU has no int64
        # histogram, so it runs on an FP32 copy here (the copy left out of
        # the record: _histc_cast).
        counts = torch.histc(chosen.view(-1).float(), bins=self.E, min=0, max=self.E)
        with torch.no_grad():
            self.tokens_per_expert.add_(counts)
        counts = torch.histc(chosen.view(-1).float(), bins=self.E, min=0, max=self.E)
        order = torch.argsort(chosen.view(-1), stable=True)
        top_sorted = top.view(-1)[order]
        order = (order // self.k).reshape(-1, 1).expand(-1, dim)
        routed = torch.gather(x, dim=0, index=order)
        y = self._experts(routed, counts)
        if self.shared is not None:
            s = self.shared
            out = s["w2"](F.silu(s["w1"](x)) * s["w3"](x))
        else:
            out = torch.zeros_like(x)
        y = (y.to(torch.float32) * top_sorted.reshape(-1, 1)).to(x.dtype)
        out = out.scatter_add(dim=0, index=order, src=y)
        return out.reshape(bs, slen, dim)


class _Wrap(torch.nn.Module):
    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return self.block(x)


def _histc_cast(op, m, a):
    """The FP32 copy of the choices _TitanMoE makes for histc on a CPU."""
    n = a.batch * a.seq * a.topk
    return (m.get("phase") == "forward" and op["type"] == "_to_copy" and op["dtype"] == "f32"
            and op.get("bytes_read") == 8 * n and op.get("bytes_written") == 4 * n)


def _moe(a, dtype):
    """build and inputs of an MoE block alone: --layer hf-moe, transformers'
    Qwen3MoeSparseMoeBlock (experts_implementation "eager": the loop over
    the experts hit); titan-moe, _TitanMoE. The routing forced balanced
    (_route, _eye_router)."""
    if a.hidden < a.experts or (a.batch * a.seq * a.topk) % a.experts:
        raise SystemExit("eagerops: balanced routing needs hidden >= experts and tokens x topk a multiple of experts")
    if a.layer == "llama-moe":
        # layers.py's own Experts (its routing forced balanced by arange
        # after the router's kernels), no expert parallelism.
        c = layers.config(a.hidden, 1, 1, 1, 1024, a.seq)
        c.update(experts=a.experts, topk=a.topk, expert_ffn=a.expert_ffn, shared=a.shared_experts)

        def build():
            return _built(lambda: _Wrap(layers.Experts(c)), dtype)

        def inputs():
            return torch.randn(a.seq, a.batch, a.hidden, dtype=dtype, requires_grad=True), None
        return build, inputs
    if a.layer in ("hf-moe", "hf-moe-grouped"):
        from transformers import Qwen3MoeConfig
        from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeSparseMoeBlock
        cfg = Qwen3MoeConfig(hidden_size=a.hidden, moe_intermediate_size=a.expert_ffn, num_experts=a.experts,
                             num_experts_per_tok=a.topk, norm_topk_prob=True)
        # "eager": Qwen3MoeExperts' own loop; "grouped_mm": what 5.24 picks
        # by default (integrations/moe.py grouped_mm_experts_forward).
        cfg._experts_implementation = "grouped_mm" if a.layer == "hf-moe-grouped" else "eager"

        def make():
            m = Qwen3MoeSparseMoeBlock(cfg)
            torch.nn.init.normal_(m.experts.gate_up_proj, std=0.02)
            torch.nn.init.normal_(m.experts.down_proj, std=0.02)
            _eye_router(m.gate.weight)
            return m
    else:
        def make():
            m = _TitanMoE(a.hidden, a.expert_ffn, a.experts, a.topk, a.shared_experts, a.grouped)
            for w in (m.w1, m.w2, m.w3):
                torch.nn.init.normal_(w, std=0.02)
            _eye_router(m.gate.weight)
            return _Wrap(m)  # a named child, so that the exporter names its ops' module

    def build():
        return _built(make, dtype)

    def inputs():
        x = torch.randn(a.batch, a.seq, a.hidden, dtype=dtype)
        return _route(x, a.experts, a.topk).requires_grad_(True), None
    return build, inputs


def _built(make, dtype):
    """make() with its parameters created in dtype (a fake module cannot
    be converted after it is built)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return make()
    finally:
        torch.set_default_dtype(old)


class _CaseError(Exception):
    """A case's refused arguments (--cases: reported for that case)."""


class _CaseParser(argparse.ArgumentParser):
    def error(self, message):
        raise _CaseError(message)


def _parser(cls=argparse.ArgumentParser):
    p = cls(prog="python -m placer_torch.profile.eagerops")
    p.add_argument("--layer", choices=("llama", "hf", "titan", "hf-moe", "hf-moe-grouped", "titan-moe", "llama-moe"), default="llama")
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, required=True)
    p.add_argument("--ffn", type=int, required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--sp", action="store_true")
    p.add_argument("--precision", choices=("autocast", "bf16"), default="autocast")
    p.add_argument("--vocab", type=int, default=0,
                   help="record the output part instead: the final norm, the output layer and the cross-entropy of "
                   "this vocabulary (layers.py's Loss; --layer titan: torchtitan's norm before it), tp 1")
    p.add_argument("--experts", type=int, default=0, help="--layer hf-moe, titan-moe: the routed experts")
    p.add_argument("--topk", type=int, default=0, help="the experts each token is routed to")
    p.add_argument("--expert-ffn", type=int, default=0, help="each expert's FFN")
    p.add_argument("--shared-experts", type=int, default=0, help="titan-moe: shared experts of --expert-ffn")
    p.add_argument("--grouped", action="store_true", help="titan-moe: torch._grouped_mm (else the for-loop)")
    return p


def _model(a):
    """build and inputs of what a's --layer and --vocab name."""
    c = layers.config(a.hidden, a.heads, a.kv_heads, a.ffn, 1024, a.seq)
    dtype = torch.bfloat16 if a.precision == "bf16" else torch.float32
    hd = a.hidden // a.heads
    S = a.seq // a.tp if a.sp else a.seq
    if a.vocab:
        c["vocab"] = a.vocab

        class Out(torch.nn.Module):
            """layers.py's Loss; with --layer titan torchtitan's: its norm, the
            output layer, cross_entropy(pred.flatten(0, 1).float(),
            labels.flatten(0, 1)) on [batch, seq] (train.py's loss_fn)."""

            def __init__(self):
                super().__init__()
                if a.layer == "titan":
                    self.norm, self.output = _TitanNorm(a.hidden), torch.nn.Linear(a.hidden, a.vocab, bias=False)
                    self.ce = _CrossEntropy()  # a module, so that the exporter names its ops
                else:
                    # Its shard of the vocabulary at --tp (no group: the
                    # max's and the sums' all-reduces, which placer costs
                    # apart, not run).
                    self.loss = layers.Loss(c, layers.Shard(a.tp, 0, None, False))

            def forward(self, x, targets):
                if a.layer == "titan":
                    pred = self.output(self.norm(x))
                    return self.ce(pred, targets)
                return self.loss(x, targets)

        def build():
            return _built(Out, dtype)

        def inputs():
            shape = (a.batch, a.seq) if a.layer == "titan" else (a.seq, a.batch)
            x = torch.randn(*shape, a.hidden, dtype=dtype, requires_grad=True)
            return (x, torch.zeros(a.batch, a.seq, dtype=torch.int64)), None
    elif a.layer in ("hf-moe", "hf-moe-grouped", "titan-moe", "llama-moe"):
        build, inputs = _moe(a, dtype)
    elif a.layer == "llama":
        shard = layers.Shard(a.tp, 0, None, a.sp)

        def build():
            # The rotary tables FP32 under autocast (layers.rotary's), the
            # weights' dtype with BF16 weights; made here, under the
            # exporter's fake tensors.
            cos, sin = layers.rotary(a.seq, hd)
            return _Sum(_built(lambda: layers.Block(c, shard), dtype), cos.to(dtype), sin.to(dtype))

        def inputs():
            # A layer's input needs its gradient (the layer below's).
            return torch.randn(S, a.batch, a.hidden, dtype=dtype, requires_grad=True), None
    elif a.layer == "titan":
        class Titan(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = _TitanBlock(c)
                cos, sin = layers.rotary(a.seq, hd)
                self.register_buffer("freqs", torch.complex(cos, sin), persistent=False)  # complex64

            def forward(self, x):
                return self.block(x, self.freqs)

        def build():
            return _built(Titan, dtype)

        def inputs():
            return torch.randn(a.batch, a.seq, a.hidden, dtype=dtype, requires_grad=True), None
    else:
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer
        cfg = LlamaConfig(hidden_size=a.hidden, num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                          intermediate_size=a.ffn, attn_implementation="sdpa")
        cfg._attn_implementation = "sdpa"

        class HF(torch.nn.Module):
            def __init__(self):
                super().__init__()
                cos0, sin0 = layers.rotary(a.seq, hd)
                # transformers' rotary tables: [batch, seq, head_dim], the halves repeated.
                cos = torch.cat((cos0, cos0), -1).unsqueeze(0).expand(a.batch, -1, -1).contiguous()
                sin = torch.cat((sin0, sin0), -1).unsqueeze(0).expand(a.batch, -1, -1).contiguous()
                self.block = LlamaDecoderLayer(cfg, 0)
                self.register_buffer("cos", cos.to(torch.get_default_dtype()), persistent=False)
                self.register_buffer("sin", sin.to(torch.get_default_dtype()), persistent=False)

            def forward(self, x):
                y = self.block(x, position_embeddings=(self.cos, self.sin), attention_mask=None)
                return y[0] if isinstance(y, tuple) else y

        def build():
            return _built(HF, dtype)

        def inputs():
            return torch.randn(a.batch, a.seq, a.hidden, dtype=dtype, requires_grad=True), None

    return build, inputs


def record(a):
    """The ops of a (parsed arguments) as the module's docstring says: a
    list of {"type", "class", "dtype", "flops", "read", "written",
    "backward"}."""
    build, inputs = _model(a)
    ex = {"device": "cuda", "optimizer_impl": "foreach"}
    if a.precision == "autocast":
        ex["autocast"] = "bf16"
    loss = (lambda out, target: out) if a.vocab else (lambda out, target: out.float().sum())
    graph, meta = exporter.export_training_step(build, inputs, loss,
                                                optimizer_cls=torch.optim.SGD, out=None, name="layer",
                                                batch_dim=None, attention="fused", execution=ex)
    ops = []
    for op, m in zip(graph["ops"], meta["ops"]):
        if m.get("phase") not in ("forward", "backward") or not m.get("module") or op.get("alias"):
            continue  # inputs, parameters, the loss (the sum), views
        if a.layer == "llama" and a.sp and (op["type"] == "repeat" or op["type"] == "sum" and m["module"] == "block" or (
                op["type"] == "slice_backward" and op["shape"][-1] == a.hidden)):
            continue  # the stand-ins of sequence parallelism's gather and reduce-scatter (layers.Shard, no group)
        if a.layer == "titan-moe" and _histc_cast(op, m, a):
            continue
        ops.append({"type": op["type"], "class": op["class"], "dtype": op["dtype"], "flops": op.get("flops", 0),
                    "read": op.get("bytes_read", 0), "written": op.get("bytes_written", 0),
                    "backward": m["phase"] == "backward"})
    # The input's own gradient laid out as the leaf it is here (the
    # layer below's output in a model): not the layer's.
    if [o["type"] for o in ops[-2:]] == ["new_empty_strided", "copy_"]:
        ops = ops[:-2]
    return ops


def cases(lines, out):
    """--cases: each line of lines a JSON list of one case's arguments;
    for each, in order, one line on out: {"ops": [...]} as a single run
    prints, or {"error": "..."} where that case failed (the others still
    run). One process for many cases: torch, transformers and the
    exporter imported once (planner's tests run every case this
    way). Each export seeds torch itself (exporter._record's
    torch.manual_seed) and _built restores the default dtype, so a case
    records what it records alone."""
    p = _parser(_CaseParser)
    for n, line in enumerate(l for l in lines if l.strip()):
        try:
            argv = json.loads(line)
            res = {"ops": record(p.parse_args(argv))}
        except (Exception, SystemExit) as e:  # SystemExit: _moe's refusal
            res = {"error": "case %d %s: %s" % (n + 1, line.strip(), "".join(
                traceback.format_exception_only(type(e), e)).strip())}
        out.write(json.dumps(res) + "\n")
        out.flush()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--cases"]:
        return cases(sys.stdin, sys.stdout)
    json.dump({"ops": record(_parser().parse_args(argv))}, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
