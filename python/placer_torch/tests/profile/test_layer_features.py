"""The layers placer profile builds for GPT-OSS-like and DeepSeek-V3-like
models, in layers.py:

- sliding-window attention (transformer.Spec's Window, WindowEvery): the
  window's mask by hand on a tiny sequence (query i attends key j where
  i - W < j <= i), the attention by hand, which layers are windowed;
- biases: Qwen2's on the query, key and value projections, GPT-OSS's on
  every linear, its router and experts included, column-parallel ones
  split with their columns, row-parallel ones added once after the
  reduction;
- DeepSeek-V3's routing: sigmoid scores, the expert bias added for the
  selection only, group-limited top-k, by hand on a small score matrix;
- each at tensor parallelism 2 (with and without sequence parallelism,
  the experts at etp 1 and 2) and expert parallelism 2 over two gloo
  processes, which give the single process's outputs and gradients to
  1e-5 (FP32 on the wire, routing forced balanced);
- the parameters placer counts for the same shape;
- with PLACER naming the binary: a tiny GPT-OSS-like and a tiny
  DeepSeek-V3-like model (their real config.json's with the shape made
  small) profiled on the CPU end to end and priced by placer eval from
  the profile.

Run by make test-python-venv."""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import torch
import torch.distributed as dist
import torch.nn.functional as F

from placer_torch.profile import layers

from .spawning import spawn_cases

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))

# Widths all distinct, so that a slice along the wrong axis fails: hidden
# 48, 4 heads of 8 (head_dim, not 48 / 4), 2 key-value heads, a window of
# 5 of 16 tokens.
OSS = {"hidden": 48, "heads": 4, "kv_heads": 2, "head_dim": 8, "ffn": 40, "vocab": 64, "seq": 16,
       "window": 5, "window_every": 2, "linear_bias": 1}
OSS_MOE = dict(OSS, experts=4, topk=2, expert_ffn=24)
QWEN2 = {"hidden": 48, "heads": 4, "kv_heads": 2, "ffn": 40, "vocab": 64, "seq": 16, "qkv_bias": 1}
# DeepSeek-V3-like: latent attention, 8 experts in 4 groups of 2, a
# token's 4 experts from its 2 best groups, sigmoid scores, the expert
# bias, one shared expert.
DSV3 = {"hidden": 48, "heads": 4, "kv_heads": 4, "ffn": 40, "vocab": 64, "seq": 16,
        "head_dim": 12, "rope_dim": 4, "q_lora": 20, "kv_lora": 10,
        "experts": 8, "topk": 4, "expert_ffn": 16, "shared": 1,
        "router_sigmoid": 1, "router_groups": 4, "router_group_k": 2, "expert_bias": 1}


def cuts(c, T, t, etp, ep, rank):
    """For each parameter name of layers.Block(c) the function taking the
    whole layer's tensor to this rank's slice of it (tensor rank t of T;
    the experts' mesh as Megatron-Core lays it out, expert-tensor
    innermost, then expert). Absent: the parameter is whole on every
    rank."""
    h, heads = c["hidden"], c["heads"]
    out = {}
    nh = heads // T
    if c.get("kv_lora"):
        d, r = c["head_dim"], c["rope_dim"]

        def rows(width):
            return lambda w: w[t * nh * width:(t + 1) * nh * width]
        out["mla.q_up.weight"] = rows(d + r)
        out["mla.q_proj.weight"] = rows(d + r)
        out["mla.kv_up.weight"] = rows(2 * d)
        out["mla.proj.weight"] = lambda w: w[:, t * nh * d:(t + 1) * nh * d]
    else:
        hd = c.get("head_dim") or h // heads
        nkv = c["kv_heads"] // T
        H, KV = heads * hd, c["kv_heads"] * hd

        def qkv(w):  # q heads, then k and v heads, each split over T
            q, k, v = w[:H], w[H:H + KV], w[H + KV:]
            return torch.cat((q[t * nh * hd:(t + 1) * nh * hd], k[t * nkv * hd:(t + 1) * nkv * hd],
                              v[t * nkv * hd:(t + 1) * nkv * hd]), 0)
        out["qkv.weight"] = out["qkv.bias"] = qkv
        out["proj.weight"] = lambda w: w[:, t * nh * hd:(t + 1) * nh * hd]
    if c.get("experts"):
        f, E = c["expert_ffn"], c["experts"]
        sh = c.get("shared", 0) * f
        r, e = rank % etp, (rank // etp) % ep
        n, fe, st = E // ep, f // etp, sh // T
        lo = e * n

        def w1(w):  # [experts, ., 2f]: gate then up, each column-split over etp
            w = w[lo:lo + n]
            return torch.cat((w[..., r * fe:(r + 1) * fe], w[..., f + r * fe:f + (r + 1) * fe]), -1)

        def shared_in(w):  # [2 sh, .]: gate then up rows, split over T
            return torch.cat((w[t * st:(t + 1) * st], w[sh + t * st:sh + (t + 1) * st]), 0)
        out.update({"moe.w1": w1, "moe.w1_bias": w1, "moe.w2": lambda w: w[lo:lo + n, r * fe:(r + 1) * fe],
                    "moe.w2_bias": lambda w: w[lo:lo + n], "moe.shared.0.weight": shared_in,
                    "moe.shared.0.bias": shared_in, "moe.shared.1.weight": lambda w: w[:, t * st:(t + 1) * st]})
    else:
        f = c["ffn"] // T

        def gate_up(w):
            g, u = w.chunk(2, 0)
            return torch.cat((g[t * f:(t + 1) * f], u[t * f:(t + 1) * f]))
        out["gate_up.weight"] = out["gate_up.bias"] = gate_up
        out["down.weight"] = lambda w: w[:, t * f:(t + 1) * f]
    return out


def worker(rank, world, port, q, cases):
    """Every case of cases ({name: (c, T, sp, etp, ep, layer)}) on one
    process group, one after another (one spawn for them all: a spawn
    and gloo's start cost seconds each): compare's figures, put on q as
    (name, rank, out)."""
    layers.WIRE = torch.float32
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for name, case in cases.items():
        q.put((name, rank, compare(rank, *case)))
        dist.barrier()
    dist.destroy_process_group()


def compare(rank, c, T, sp, etp, ep, layer):
    """One rank's layers.Block(c) at tensor degree T (sp: with sequence
    parallelism), etp, ep against the whole layer on one process: at T 2
    every rank holds the whole sequence's slice (its rows with sp), at
    T 1 each rank its own micro-batch (the whole layer's gradients then
    summed over the ranks, as the replicas' reduction sums them). Each
    rank's weight gradients are put at their slice of the whole weight
    and summed over the ranks (a weight whole on every rank without
    sequence parallelism has the whole gradient on each: its share 1/T)."""
    W = dist.group.WORLD  # two processes: every group of degree 2 is the world
    torch.manual_seed(0)
    whole = layers.Block(c, layers.Shard(), layer=layer)
    with torch.no_grad():  # biases and the expert bias not zero, so that one added twice shows
        for name, p in list(whole.named_parameters()) + list(whole.named_buffers()):
            if name.endswith("bias"):
                p.copy_(torch.randn_like(p) * 0.5)
    mine = layers.Block(c, layers.Shard(T, rank % T, W if T > 1 else None, sp), ep, W if ep > 1 else None,
                       etp, W if etp > 1 else None, layer=layer)
    cut = cuts(c, T, rank % T, etp, ep, rank)
    wp, mp_ = dict(whole.named_parameters()), dict(mine.named_parameters())
    assert set(wp) == set(mp_), (sorted(wp), sorted(mp_))
    with torch.no_grad():
        for name, p in mp_.items():
            p.copy_(cut.get(name, lambda w: w)(wp[name]))
        if c.get("expert_bias"):
            mine.moe.expert_bias.copy_(whole.moe.expert_bias)
    cos, sin = layers.rotary_for(c, c["seq"])
    torch.manual_seed(1 if T > 1 else 1 + rank)
    xs = torch.randn(c["seq"], 2, c["hidden"])
    rows = c["seq"] // T if sp else c["seq"]
    lo = rank * rows if sp else 0
    x = xs[lo:lo + rows].clone().requires_grad_(True)
    y = mine(x, cos, sin)
    y.square().sum().backward()
    xw = xs.clone().requires_grad_(True)
    z = whole(xw, cos, sin)
    z.square().sum().backward()
    # Relative to the largest element (the random biases make the
    # outputs and the input's gradient reach the tens here).
    gw = xw.grad[lo:lo + rows]
    out = {"y": ((y - z[lo:lo + rows]).abs().max() / z.abs().max()).item(),
           "dx": ((x.grad - gw).abs().max() / gw.abs().max()).item(), "scale": z.abs().max().item(),
           "dx_scale": gw.abs().max().item()}
    for name in wp:
        fn = cut.get(name, lambda w: w)
        idx = fn(torch.arange(wp[name].numel()).view(wp[name].shape)).reshape(-1)
        g = mp_[name].grad.reshape(-1)
        if T > 1 and not sp and name not in cut:
            g = g / T
        placed = torch.zeros(wp[name].numel()).index_add_(0, idx, g)
        dist.all_reduce(placed)
        ref = wp[name].grad.reshape(-1).clone()
        if T == 1:
            dist.all_reduce(ref)
        out[name] = ((placed - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    return out


# ParallelTest's cases: (config, T, sp, etp, ep, layer).
CASES = {
    "window_biases_tp2": (OSS, 2, False, 1, 1, 0),
    "window_biases_tp2_sp": (OSS, 2, True, 1, 1, 0),
    "qkv_bias_tp2": (QWEN2, 2, False, 1, 1, 0),
    "gptoss_moe_tp2_etp1": (OSS_MOE, 2, True, 1, 1, 0),
    "gptoss_moe_tp2_etp2": (OSS_MOE, 2, True, 2, 1, 0),
    "gptoss_moe_ep2": (OSS_MOE, 1, False, 1, 2, 0),
    "deepseek_routing_ep2": (DSV3, 1, False, 1, 2, 0),
    "deepseek_routing_tp2_etp2": (DSV3, 2, True, 2, 1, 0),
}


class ParallelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Two processes run every case in turn (one spawn).
        cls.results = spawn_cases(worker, 2, CASES)

    def run_ranks(self, name):
        c, T, sp, etp, ep, _ = CASES[name]
        self.assertEqual(len(self.results.get(name, [])), 2, name)
        for rank, out in self.results[name]:
            self.assertGreater(out.pop("scale"), 0.01)
            self.assertGreater(out.pop("dx_scale"), 0.01)
            self.assertTrue(any(k.endswith("bias") for k in out) or not (c.get("linear_bias") or c.get("qkv_bias")))
            for what, d in out.items():
                self.assertLess(d, 1e-5, "tp %d sp %s etp %d ep %d, rank %d: %s differs by %g" % (T, sp, etp, ep, rank, what, d))

    def test_window_biases_tp2(self):
        self.run_ranks("window_biases_tp2")

    def test_window_biases_tp2_sp(self):
        self.run_ranks("window_biases_tp2_sp")

    def test_qkv_bias_tp2(self):
        self.run_ranks("qkv_bias_tp2")

    def test_gptoss_moe_tp2_etp1(self):
        self.run_ranks("gptoss_moe_tp2_etp1")

    def test_gptoss_moe_tp2_etp2(self):
        self.run_ranks("gptoss_moe_tp2_etp2")

    def test_gptoss_moe_ep2(self):
        self.run_ranks("gptoss_moe_ep2")

    def test_deepseek_routing_ep2(self):
        self.run_ranks("deepseek_routing_ep2")

    def test_deepseek_routing_tp2_etp2(self):
        self.run_ranks("deepseek_routing_tp2_etp2")


def warnings_off(fn):
    """fn with torch's warning that FlexAttention runs uncompiled here
    (on a CPU the profile runs SDPA with the mask) silenced."""
    def run(*a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*a)
    return run


class WindowTest(unittest.TestCase):
    def test_mask_by_hand(self):
        # 6 tokens, a window of 3: token i attends j in (i - 3, i].
        want = [[1, 0, 0, 0, 0, 0],
                [1, 1, 0, 0, 0, 0],
                [1, 1, 1, 0, 0, 0],
                [0, 1, 1, 1, 0, 0],
                [0, 0, 1, 1, 1, 0],
                [0, 0, 0, 1, 1, 1]]
        self.assertEqual(layers.window_mask(6, 3).int().tolist(), want)
        # A window as long as the sequence is the causal mask.
        self.assertEqual(layers.window_mask(4, 4).int().tolist(), torch.ones(4, 4).tril().int().tolist())

    def test_attention_by_hand(self):
        torch.manual_seed(3)
        q, k, v = (torch.randn(1, 2, 7, 4) for _ in range(3))
        got = layers._core_attention(q, k, v, False, 3)
        want = torch.empty_like(got)
        for i in range(7):
            js = [j for j in range(7) if i - 3 < j <= i]
            s = torch.stack([(q[0, :, i] * k[0, :, j]).sum(-1) / 2.0 for j in js], -1)  # 1/sqrt(4)
            p = s.softmax(-1)
            want[0, :, i] = sum(p[:, n:n + 1] * v[0, :, j] for n, j in enumerate(js))
        self.assertLess((got - want).abs().max().item(), 1e-5)
        # Window 0, or at least the sequence: causal attention.
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        self.assertLess((layers._core_attention(q, k, v, False, 7) - causal).abs().max().item(), 1e-6)
        self.assertGreater((got - causal).abs().max().item(), 1e-3)

    @warnings_off
    def test_flex_is_the_mask(self):
        try:
            from torch.nn.attention import flex_attention  # noqa: F401
        except ImportError:
            self.skipTest("no FlexAttention in this torch")
        torch.manual_seed(4)
        q, k, v = (torch.randn(1, 4, 32, 8) for _ in range(3))
        k, v = k[:, :2], v[:, :2]  # grouped-query: 2 key-value heads
        a = layers._flex_window(q, k, v, True, 5)
        b = F.scaled_dot_product_attention(q, k, v, attn_mask=layers.window_mask(32, 5), enable_gqa=True)
        self.assertLess((a - b).abs().max().item(), 1e-5)

    def test_which_layers(self):
        # GPT-OSS: every other layer from the first; Mistral: every layer.
        self.assertEqual([layers.window_of(OSS, i) for i in range(4)], [5, 0, 5, 0])
        self.assertEqual([layers.window_of(dict(OSS, window_every=0), i) for i in range(3)], [5, 5, 5])
        self.assertEqual([layers.window_of(QWEN2, i) for i in range(2)], [0, 0])
        # The second layer of the GPT-OSS-like model is causal over the
        # whole sequence: the same weights give another output.
        torch.manual_seed(0)
        a = layers.Block(OSS, layers.Shard(), layer=0)
        b = layers.Block(OSS, layers.Shard(), layer=1)
        b.load_state_dict(a.state_dict())
        self.assertEqual((a.window, b.window), (5, 0))
        cos, sin = layers.rotary_for(OSS, 16)
        x = torch.randn(16, 1, 48)
        ya, yb = a(x, cos, sin), b(x, cos, sin)
        self.assertLess((ya[:5] - yb[:5]).abs().max().item(), 1e-5)  # the first 5 tokens see the same keys
        self.assertGreater((ya[5:] - yb[5:]).abs().max().item(), 1e-4)


class RoutingTest(unittest.TestCase):
    def test_group_limited_by_hand(self):
        # 8 experts in 4 groups of 2, 2 groups kept, top 4 (each group
        # scored by its top 4 / 2 = 2 summed). Token 0's groups sum 1.0,
        # 1.0, 0.8, 0.5: experts 0 to 3 selectable, expert 4 (0.8) not
        # although it beats expert 1 (0.1). Token 1's groups 0.2, 0.3,
        # 1.1, 1.3: experts 4 to 7 alone.
        s = torch.tensor([[0.9, 0.1, 0.5, 0.5, 0.8, 0.0, 0.3, 0.2],
                          [0.1, 0.1, 0.2, 0.1, 0.6, 0.5, 0.7, 0.6]])
        _, idx = layers.group_limited_topk(s, 4, 4, 2)
        self.assertEqual([sorted(r) for r in idx.tolist()], [[0, 1, 2, 3], [4, 5, 6, 7]])
        # Without the groups the top 4 would take expert 4 for token 0.
        self.assertIn(4, s.topk(4, -1)[1][0].tolist())
        # One group kept, top 2: token 0's best group is 0 or 1 (both
        # 1.0; group 0's top is 0.9), token 1's is 3 (0.7 + 0.6).
        _, idx = layers.group_limited_topk(s, 2, 4, 1)
        self.assertEqual(sorted(idx[1].tolist()), [6, 7])

    def test_sigmoid_bias_by_hand(self):
        # The bias moves the selection, not the weights: the weights are
        # the selected experts' sigmoid scores, normalised over the k.
        c = {"hidden": 2, "experts": 4, "topk": 2, "expert_ffn": 2, "router_sigmoid": 1, "expert_bias": 1}
        m = layers.Experts(c)
        with torch.no_grad():
            m.router.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-1.0, 0.0]]))
            m.expert_bias.copy_(torch.tensor([0.0, 0.0, 0.0, 2.0]))
        t = torch.tensor([[1.0, 0.5]])  # logits 1, 0.5, 0.75, -1
        w, idx = layers.route(m, t)
        sg = [1 / (1 + math.exp(-v)) for v in (1.0, 0.5, 0.75, -1.0)]
        # Biased scores: 0.731, 0.622, 0.679, 0.269 + 2: experts 3 and 0.
        self.assertEqual(sorted(idx[0].tolist()), [0, 3])
        want = {0: sg[0] / (sg[0] + sg[3]), 3: sg[3] / (sg[0] + sg[3])}
        for j, e in enumerate(idx[0].tolist()):
            self.assertAlmostEqual(w[0, j].item(), want[e], places=6)

    def test_forced_balance_still_routes(self):
        # The router's kernels run and its gradient flows from the
        # balanced assignment's weights; the expert bias's counts are the
        # balanced copies.
        torch.manual_seed(0)
        m = layers.Experts(DSV3)
        y = m(torch.randn(8, 2, 48))
        y.square().sum().backward()
        self.assertGreater(m.router.weight.grad.abs().max().item(), 0)
        self.assertEqual(m.tokens_per_expert.tolist(), [8.0] * 8)  # 16 tokens x 4 over 8 experts
        self.assertNotIn("expert_bias", dict(m.named_parameters()))  # a buffer, as Megatron-Core keeps it


class ParamsTest(unittest.TestCase):
    def test_params_are_placers(self):
        # graph/transformer/transformer.go (AttentionParams, mlpParams,
        # RouterParams, MoELayerParams), a Llama-family layer of head
        # width d: h (heads + 2 kv) d + heads d h + 2h (the projections
        # and the two RMS norms), a dense MLP 3 h ffn, a MoE block
        # h experts (router) + (experts + shared) 3 h f. Its Spec leaves
        # the biases out (graph/transformer/hf.go, gpt_oss and qwen2: under
        # 0.01% of the parameters): (heads + 2 kv) d on the query, key
        # and value (Qwen2's and GPT-OSS's), h on the output, 2 ffn + h on
        # the MLP, experts on the router, experts (2f + h) on the
        # experts (GPT-OSS's). The expert bias is a buffer, no parameter.
        h, heads, kv, d, ffn = 48, 4, 2, 8, 40
        attn = h * (heads + 2 * kv) * d + heads * d * h + 2 * h
        qkv_b = (heads + 2 * kv) * d
        for c, want in ((dict(OSS, linear_bias=0), attn + 3 * h * ffn),
                        (OSS, attn + 3 * h * ffn + qkv_b + h + 2 * ffn + h),
                        (dict(QWEN2, head_dim=8), attn + 3 * h * ffn + qkv_b)):
            b = layers.Block(c, layers.Shard())
            self.assertEqual(sum(p.numel() for p in b.parameters()), want, c)
        E, f = 4, 24
        moe = attn + h * E + E * 3 * h * f
        b = layers.Block(OSS_MOE, layers.Shard())
        self.assertEqual(sum(p.numel() for p in b.parameters()), moe + qkv_b + h + E + E * (2 * f + h))
        # The same by hand: 48*8*8 + 32*48 + 96 = 4704 of attention,
        # 192 router, 4 x 3456 experts; biases 64 + 48 + 4 + 4 x 96.
        self.assertEqual(sum(p.numel() for p in b.parameters()), 4704 + 192 + 4 * 3456 + 64 + 48 + 4 + 384)


def tiny_config(name, edits, drop=()):
    """The config.json of graph/transformer/testdata/hf/NAME with its
    shape replaced by edits."""
    with open(os.path.join(ROOT, "graph", "transformer", "testdata", "hf", name)) as f:
        c = json.load(f)
    for k in drop:
        c.pop(k, None)
    c.update(edits)
    return c


# GPT-OSS's config.json (attention_bias true, a window of 128 in every
# other layer) made small: 4 layers, hidden 48, 4 heads of 8, 2 key-value
# heads, 4 experts of 24, top 2, a window of 8.
GPTOSS_TINY = tiny_config("gpt-oss-120b.json", {
    "hidden_size": 48, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
    "intermediate_size": 24, "num_local_experts": 4, "num_experts_per_tok": 2, "experts_per_token": 2,
    "num_hidden_layers": 4, "layer_types": ["sliding_attention", "full_attention"] * 2,
    "sliding_window": 8, "vocab_size": 64})
# DeepSeek-V3's (sigmoid scores, noaux_tc's expert bias, n_group 8 of
# which topk_group 4) made small: 3 layers, the first dense, 8 experts of
# 16 in 4 groups, 2 kept, top 4, one shared; latent attention.
DSV3_TINY = tiny_config("deepseek-v3.json", {
    "hidden_size": 48, "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 40,
    "moe_intermediate_size": 16, "n_routed_experts": 8, "num_experts_per_tok": 4, "n_group": 4, "topk_group": 2,
    "num_hidden_layers": 3, "first_k_dense_replace": 1, "q_lora_rank": 20, "kv_lora_rank": 10,
    "qk_rope_head_dim": 4, "qk_nope_head_dim": 12, "v_head_dim": 12, "vocab_size": 64,
    "num_nextn_predict_layers": 0})


@unittest.skipUnless(os.environ.get("PLACER"), "PLACER names the placer binary (make test-python-venv sets it)")
class ProfileEndToEndTest(unittest.TestCase):
    def profile_and_eval(self, config, blocks):
        placer = os.environ["PLACER"]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            workload = "hf:%s:seq=32,batch=4" % path
            out = os.path.join(tmp, "p.json")
            r = subprocess.run([placer, "profile", "--workload", workload, "--device", "cpu", "--procs", "1",
                                "--ep", "1", "--mbs", "1", "--cp", "1", "--recompute", "none", "--repeats", "2",
                                "--python", sys.executable, "--out", out], capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                pr = json.load(f)
            self.assertTrue(pr["complete"])
            self.assertEqual(sorted(layer.get("block", "") for layer in pr["layers"]), blocks)
            for layer in pr["layers"]:
                self.assertGreater(layer["forward_s"], 0)
                self.assertGreater(layer["backward_s"], 0)
            r = subprocess.run([placer, "eval", "--profile", out, "--workload", workload, "--gpus", "1",
                                "--strategy", "tp=1,pp=1,dp=1,mbs=1", "--json"], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            res = json.loads(r.stdout)
            src = res.get("sources") or res.get("result", {}).get("sources")
            self.assertIsNotNone(src, r.stdout[:500])
            self.assertEqual(src["layers"], "measured")
            return src

    def test_gptoss_like(self):
        self.profile_and_eval(GPTOSS_TINY, [""])

    def test_deepseek_v3_like(self):
        src = self.profile_and_eval(DSV3_TINY, ["dense", "moe"])
        self.assertEqual(src["dense_layers"], "measured")


if __name__ == "__main__":
    unittest.main()
