"""fp8.py's torchao-style FP8 linear (current, tensorwise scaling) on the
CPU, and placer profile --fp8 current through bin/placer (a Qwen2-MoE
layer with biases and experts; --fp8 blockwise refused for a dense
Llama's) (PLACER, else
the repository's bin/placer). Run by make test-python-venv.

The bounds: a value rounded to a format of m mantissa bits is off by at
most half its step, 2^-(m+1) of it (e4m3: m = 3, 1/16; e5m2: m = 2,
1/8), so a product of two operands by at most about the sum of theirs
(e4m3 x e4m3 1/8, e5m2 x e4m3 3/16), and a dot product's error, a sum of
such terms of either sign, lies well inside that bound relative to the
result's norm (random operands: about 0.04 and 0.06 measured). The
tests take 2^-3 for the forward (e4m3 x e4m3) and 2^-2 for the two
gradients (e5m2 grad_output), and check that a scale 64 times too large
(everything saturated at the format's largest value) or 2^-30 of the
right one (everything flushed to zero) breaks them, and that the FP8
result is not the FP32 one (above 2^-8 off)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import torch

from placer_torch.profile import fp8, layers

FWD, BWD = 2.0 ** -3, 2.0 ** -2


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def errors(seed=0, m=128, k=256, n=192):
    """The FP8 linear's forward, grad_input and grad_weight relative
    errors against FP32's on random operands."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(m, k, generator=g, requires_grad=True)
    w = (torch.randn(n, k, generator=g) * k ** -0.5).requires_grad_()
    dy = torch.randn(m, n, generator=g)
    y = fp8.fp8_linear(x, w)
    y.backward(dy)
    dx, dw = x.grad, w.grad
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    r = x2 @ w2.t()
    r.backward(dy)
    return rel(y, r), rel(dx, x2.grad), rel(dw, w2.grad)


@unittest.skipIf(fp8.torch_fp8(torch.device("cpu")), "this torch has no FP8 on the CPU")
class FP8Test(unittest.TestCase):
    def test_amax_scale_by_hand(self):
        x = torch.tensor([[1.0, -2.0], [0.5, 4.0]])
        bits, inv = fp8.quantize(x, fp8.E4M3)
        # amax 4: scale 448 / 4 = 112, every value exact in e4m3.
        self.assertEqual(bits.dtype, torch.float8_e4m3fn)
        self.assertEqual(bits.float().tolist(), [[112.0, -224.0], [56.0, 448.0]])
        self.assertAlmostEqual(inv.item() * 112, 1.0, places=6)
        self.assertEqual((bits.float() * inv).tolist(), x.tolist())
        bits, inv = fp8.quantize(x, fp8.E5M2)
        # e5m2's largest is 57344: scale 14336.
        self.assertEqual(bits.float().tolist(), [[14336.0, -28672.0], [7168.0, 57344.0]])
        self.assertAlmostEqual(inv.item() * 14336, 1.0, places=6)
        # All zeros: the amax clamped at 1e-12, nothing infinite.
        bits, inv = fp8.quantize(torch.zeros(3), fp8.E4M3)
        self.assertEqual(bits.float().tolist(), [0.0, 0.0, 0.0])
        self.assertTrue(torch.isfinite(inv).item())
        # A scale too large saturates at 448 rather than overflowing.
        bits, _ = fp8.quantize(x, fp8.E4M3, scale=torch.tensor(1000.0))
        self.assertEqual(bits.float().abs().max().item(), 448.0)

    def test_linear_within_bounds(self):
        for seed in range(3):
            f, dx, dw = errors(seed)
            with self.subTest(seed=seed):
                self.assertLess(f, FWD)
                self.assertLess(dx, BWD)
                self.assertLess(dw, BWD)
                # FP8, not FP32 passed through.
                self.assertGreater(f, 2.0 ** -8)
                self.assertGreater(dx, 2.0 ** -8)

    def test_wrong_scale_fails(self):
        right = fp8.scale_for
        for factor in (64.0, 2.0 ** -30):
            with self.subTest(factor=factor), mock.patch.object(fp8, "scale_for", lambda a, d, f=factor: right(a, d) * f):
                f, dx, dw = errors()
                self.assertGreater(f, FWD)
                self.assertGreater(dx, BWD)
                self.assertGreater(dw, BWD)

    def test_block_under_fp8(self):
        c = {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 128, "vocab": 256, "seq": 32}
        _, maker, err = fp8.plan(["current"], torch.device("cpu"))
        self.assertEqual(err, "")
        torch.manual_seed(0)
        block = maker("current")(c, layers.Shard())
        for name in fp8.LINEARS:
            self.assertIsInstance(getattr(block, name), fp8.Linear, name)
        torch.manual_seed(0)
        plain = layers.Block(c, layers.Shard())
        cos, sin = layers.rope_for(c)
        x = torch.randn(32, 2, 64)
        y, r = block(x, cos, sin), plain(x, cos, sin)
        # The residual stream carries x through: the layer's own output
        # (y - x) against the FP32 layer's.
        self.assertLess(rel(y - x, r - x), BWD)
        y.sum().backward()
        self.assertTrue(all(p.grad is not None and torch.isfinite(p.grad).all() for p in block.parameters()))

    def test_delayed_refused_without_te(self):
        _, _, err = fp8.plan(["current", "delayed"], torch.device("cpu"))
        self.assertIn("--fp8 delayed", err)
        self.assertNotIn("\n", err)


def placer_bin():
    p = os.environ.get("PLACER")
    if p:
        return p
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "bin", "placer")


@unittest.skipIf(fp8.torch_fp8(torch.device("cpu")), "this torch has no FP8 on the CPU")
class ProfileCLITest(unittest.TestCase):
    W = "llama:layers=1,hidden=64,heads=2,kv_heads=2,ffn=128,seq=32,vocab=256,batch=2"

    # A Qwen2-MoE layer in small: query, key and value biases, 4 experts,
    # top 2, a shared expert (the workload's biases come from its
    # config): the dense path's attention linears, biases and experts in
    # one profile (one run of a few seconds: make test's CPU loop).
    QWEN2_MOE = {"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_act": "silu",
                 "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
                 "shared_expert_intermediate_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "num_experts": 4, "num_experts_per_tok": 2, "num_hidden_layers": 1, "vocab_size": 256,
                 "decoder_sparse_step": 1, "norm_topk_prob": False, "rms_norm_eps": 1e-6, "rope_theta": 1e6,
                 "tie_word_embeddings": False, "use_sliding_window": False, "max_position_embeddings": 64}

    def test_profile_fp8_current(self):
        placer = placer_bin()
        self.assertTrue(os.path.exists(placer), "build placer first (make build), or set PLACER")
        env = dict(os.environ, TORCH_PY=sys.executable)
        with tempfile.TemporaryDirectory() as d:
            cfg, out = os.path.join(d, "qwen2-moe.json"), os.path.join(d, "p.json")
            with open(cfg, "w") as f:
                json.dump(self.QWEN2_MOE, f)
            w = "hf:%s:seq=32,batch=2" % cfg
            r = subprocess.run([placer, "profile", "--workload", w, "--device", "cpu", "--tp", "1", "--ep", "1", "--mbs", "1",
                                "--cp", "1", "--recompute", "none", "--repeats", "1", "--fp8", "current", "--out", out],
                               capture_output=True, text=True, env=env, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                p = json.load(f)
            self.assertTrue(p["complete"])
            self.assertTrue(p["software"]["fp8"].startswith("torchao-style"), p["software"])
            self.assertIn("experts: one torch._scaled_mm per expert", p["software"]["fp8"])
            self.assertEqual(sorted(x.get("fp8", "") for x in p["layers"]), ["", "current"])
            for x in p["layers"]:
                self.assertGreater(x["forward_s"], 0)
            self.assertNotIn("fp8", json.dumps(p["embedding"]) + json.dumps(p["loss"]))
            # eval prices fp8=current from the current layer (and says what
            # ran it), delayed by the roofline.
            for fp, src in (("current", "measured"), ("delayed", "modelled")):
                e = subprocess.run([placer, "eval", "--workload", w, "--profile", out, "--gpus", "1",
                                    "--strategy", "tp=1,pp=1,dp=1,mbs=1,fp8=" + fp, "--json"], capture_output=True, text=True)
                self.assertEqual(e.returncode, 0, e.stderr)
                got = json.loads(e.stdout)
                self.assertEqual(got["sources"]["layers"], src, fp)
                self.assertEqual(got.get("profile_fp8", ""), p["software"]["fp8"] if fp == "current" else "", fp)

    def test_refused(self):
        placer = placer_bin()
        env = dict(os.environ, TORCH_PY=sys.executable)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "p.json")
            r = subprocess.run([placer, "profile", "--workload", self.W, "--device", "cpu", "--fp8", "blockwise", "--out", out],
                               capture_output=True, text=True, env=env, timeout=300)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--fp8 blockwise", r.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
