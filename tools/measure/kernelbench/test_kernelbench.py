"""Tests of tools/measure/kernelbench (make test-python-debian): the shapes by hand,
FP8 quantization's round trip where this torch has float8, and a whole
--quick run on the CPU: every section writes its lines, each a JSON object
with its kind, name, device and torch, and a time above 0 or an error."""

import io
import json
import os
import unittest
from contextlib import redirect_stdout, redirect_stderr

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

import kernelbench as kb


class Shapes(unittest.TestCase):
    def test_orientations(self):
        # y = x W^T: forward [M,K]x[K,N]; dgrad [M,N]x[N,K]; wgrad [N,M]x[M,K].
        self.assertEqual(kb.orientations(4096, 2048, 6144),
                         [("fwd", 4096, 2048, 6144), ("dgrad", 4096, 6144, 2048), ("wgrad", 6144, 4096, 2048)])

    def test_row_shapes(self):
        # The 7.1B row: hidden 4096, 32 heads (d 128), TP 2: QKV 4096 -> 3*32*128/2.
        rows = {(r, op): (m, k, n) for r, op, m, k, n in kb.row_shapes(False)}
        self.assertEqual(rows[("7.1B", "qkv")], (4096, 4096, 6144))
        self.assertEqual(rows[("7.1B", "proj")], (4096, 2048, 4096))
        self.assertEqual(rows[("7.1B", "fc1")], (4096, 4096, 8192))
        self.assertEqual(rows[("7.1B", "fc2")], (4096, 8192, 4096))
        self.assertEqual(len(rows), 4 * 9)


class MoELayer(unittest.TestCase):
    def test_against_each_token(self):
        # moehost's layer: each token's output is the sum over its top-k
        # experts (id modulo the local experts) of the routing weight times
        # that expert's SwiGLU MLP, token by token in float64.
        kb.DEVICE = "cpu"
        torch.manual_seed(0)
        n, h, f, experts, k, local = 12, 8, 6, 8, 3, 4
        x = torch.randn(n, h, dtype=torch.float64)
        wr = torch.randn(experts, h, dtype=torch.float64)
        w13 = torch.randn(local, h, 2 * f, dtype=torch.float64)
        w2 = torch.randn(local, f, h, dtype=torch.float64)
        got = kb.moe_layer(x, wr, w13, w2, k, "loop")
        probs = torch.softmax(x @ wr.t(), dim=-1)
        for t in range(n):
            v, i = torch.topk(probs[t], k)
            want = torch.zeros(h, dtype=torch.float64)
            for p, e in zip(v, i):
                g, u = (x[t] @ w13[int(e) % local]).chunk(2)
                want += p * ((torch.nn.functional.silu(g) * u) @ w2[int(e) % local])
            self.assertTrue(torch.allclose(got[t], want, atol=1e-9), (t, got[t], want))


@unittest.skipIf(kb.FP8 is None, "this torch has no float8_e4m3fn")
class Quantize(unittest.TestCase):
    def test_round_trip(self):
        kb.DEVICE = "cpu"
        x = torch.randn(64, 128, dtype=torch.bfloat16) * 3
        q, inv = kb.quantize_tensorwise(x)
        self.assertEqual(q.dtype, kb.FP8)
        back = q.float() * inv
        # e4m3 keeps 3 mantissa bits: within 1/16 relative, and the amax maps to 448.
        self.assertLessEqual(float((back - x.float()).abs().max()), float(x.float().abs().max()) / 16 + 1e-6)
        self.assertAlmostEqual(float(q.float().abs().max()), 448.0, delta=1e-3)


class QuickRun(unittest.TestCase):
    def test_every_section(self):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            kb.main(["--device", "cpu", "--quick", "--runs", "1", "--warmup", "0", "--json"])
        lines = [json.loads(l) for l in out.getvalue().splitlines() if l.strip()]
        kinds = {l["kind"] for l in lines}
        self.assertTrue({"gemm", "attention", "fp8", "grouped", "moe", "ringsplit", "memory", "between"} <= kinds, kinds)
        for l in lines:
            for k in ("kind", "name", "device", "torch"):
                self.assertIn(k, l)
            if "error" in l:
                continue
            # bwd_seconds is a difference of two medians (the docstring).
            times = [v for k, v in l.items() if k.endswith("seconds") and k != "bwd_seconds"]
            self.assertTrue(times and all(t > 0 for t in times), l)
        step = [l for l in lines if l["kind"] == "between" and l["name"].endswith(".step")]
        self.assertEqual(len(step), 1)
        self.assertNotIn("error", step[0])
        self.assertEqual(step[0]["micro_batches"], 1)
        self.assertAlmostEqual(step[0]["blocks_seconds"],
                               step[0]["layers"] * (step[0]["block_fwd_seconds"] + step[0]["block_bwd_seconds"]))
        for sec in ("gemm", "attention", "fp8", "grouped", "moe", "ringsplit", "memory", "between"):
            self.assertIn("kernelbench: %s" % sec, err.getvalue())

    def test_moehost(self):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            kb.main(["--device", "cpu", "--quick", "--only", "moehost", "--runs", "2", "--warmup", "0", "--json"])
        lines = [json.loads(l) for l in out.getvalue().splitlines() if l.strip()]
        host = [l for l in lines if l["kind"] == "moehost" and l["name"].endswith(".loop")]
        self.assertEqual(len(host), len(kb.MOEHOST))
        for l in host:
            self.assertNotIn("error", l)
            self.assertGreater(l["wall_seconds"], l["wall_fwd_seconds"])
            self.assertGreater(l["tflops_wall"], 0)

    def test_sustained(self):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            kb.main(["--device", "cpu", "--quick", "--only", "sustained", "--idle", "0,0.5", "--json"])
        lines = [json.loads(l) for l in out.getvalue().splitlines() if l.strip()]
        for case in ("gemm", "block"):
            got = [l for l in lines if l["name"].endswith("." + case)]
            self.assertGreaterEqual(len(got), 1, lines)
            for l in got:
                self.assertNotIn("error", l)
                self.assertGreater(l["seconds_per_iteration"], 0)
        self.assertTrue(all("tflops" in l for l in lines if l["name"].endswith(".gemm")))
        idle = [l for l in lines if l["name"].endswith(".block.idle50")]
        self.assertGreaterEqual(len(idle), 1, lines)
        self.assertTrue(all(l["idle_share"] == 0.5 for l in idle))

    def test_host_and_shapes(self):
        # The sections make gpu's host and shapes steps run (tools/measure/gpu/run.sh):
        # every line is data or an error, none missing its numbers.
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            kb.main(["--device", "cpu", "--quick", "--only", "host,tpe,conv,lstm,smallmm", "--runs", "2", "--warmup", "0",
                     "--json"])
        lines = [json.loads(l) for l in out.getvalue().splitlines() if l.strip()]
        by = {}
        for l in lines:
            self.assertNotIn("error", l)
            by.setdefault(l["kind"], []).append(l)
        issue = [l for l in by["host"] if l["name"].startswith("issue.")]
        # 7, and a module call, a view, a convolution, a batch norm, a
        # convolution's backward, and a multiply and a convolution under
        # autocast.
        self.assertEqual(len(issue), 14)
        self.assertTrue(all(l["host_seconds"] > 0 for l in issue), issue)
        # On a CPU there is no kernel queue: the GPU-only cases say null.
        self.assertIsNone(next(l for l in by["host"] if l["name"] == "graph.add_")["host_seconds"])
        # tpe: on a CPU only the loop (torch._grouped_mm needs CUDA), 2 sizes x 5 presets.
        self.assertEqual(len(by["tpe"]), 2 * len(kb.MOE))
        self.assertEqual(len(by["conv"]), 3)
        self.assertEqual(len(by["lstm"]), 1)
        # smallmm: on a CPU 2 shapes in FP32 only, each with its rate.
        self.assertEqual(len(by["smallmm"]), 2)
        self.assertTrue(all(l["seconds"] > 0 and l["tflops"] > 0 for l in by["smallmm"]), by["smallmm"])

    def test_window(self):
        # quick: 4 heads (2 key-value), head 32, window 16, 128 tokens.
        # The window's keys: 16 x 17 / 2 for the first 16 queries, then 16
        # each for 112: 136 + 1,792 = 1,928; FLOPs 2 x 4 heads x 2 x 32 x
        # 1,928 = 987,136. Causal: 128 x 129 / 2 = 8,256 keys, 4,227,072.
        self.assertEqual(kb.window_keys(128, 16), 1928)
        self.assertEqual(kb.window_keys(16, 16), 136)
        self.assertEqual(kb.window_keys(4, 16), 10)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            kb.main(["--device", "cpu", "--quick", "--only", "window", "--runs", "1", "--warmup", "0", "--json"])
        lines = {l["name"]: l for l in (json.loads(x) for x in out.getvalue().splitlines() if x.strip())}
        self.assertEqual(sorted(lines), ["causal.s128", "window.profile.s128", "window.sdpa-mask.s128"])
        # On a CPU the profile's windowed layers take SDPA with the mask.
        self.assertEqual(lines["window.profile.s128"]["kernel"], "sdpa-mask")
        for name, (w, flops) in {"window.profile.s128": (16, 987136), "window.sdpa-mask.s128": (16, 987136),
                                 "causal.s128": (0, 4227072)}.items():
            l = lines[name]
            self.assertEqual((l["seq"], l["window"]), (128, w))
            if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
                self.assertIn("scaled_dot_product_attention", l["error"])  # Debian's 1.13
                continue
            self.assertNotIn("error", l)
            self.assertEqual(l["fwd_flops"], flops)
            self.assertGreater(l["fwd_seconds"], 0)

    def test_longattn_ring_calls(self):
        # torch's load-balanced ring's two calls (quick: 4 heads, head 32,
        # chunks of 128): 256 queries against 128 keys and 128 against
        # 256, each every score twice (Q K^T and P V): 2 x 4 x 256 x 128 x
        # (32 + 32) = 16,777,216 FLOPs, not causal, seq the queries and
        # seq_k the keys.
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            kb.main(["--device", "cpu", "--quick", "--only", "longattn", "--runs", "1", "--warmup", "0", "--json"])
        lines = [json.loads(l) for l in out.getvalue().splitlines() if l.strip()]
        ring = {l["name"]: l for l in lines if ".lb" in l["name"]}
        # The backend's label is the CPU's: "math" where torch lets
        # kernelbench pick SDPA's backend (torch.nn.attention.sdpa_kernel),
        # "default" where it cannot (Debian's 1.13).
        try:
            from torch.nn.attention import sdpa_kernel  # noqa: F401
            backend = "math"
        except ImportError:
            backend = "default"
        self.assertEqual(sorted(ring), ["ring.lbk.c128." + backend, "ring.lbq.c128." + backend])
        for name, (sq, sk) in {"ring.lbq.c128." + backend: (256, 128), "ring.lbk.c128." + backend: (128, 256)}.items():
            l = ring[name]
            self.assertEqual((l["seq"], l["seq_k"], l["causal"]), (sq, sk, False))
            if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
                # Debian's 1.13 has no SDPA: each case says so in its line.
                self.assertIn("scaled_dot_product_attention", l["error"])
                continue
            self.assertNotIn("error", l)
            self.assertEqual(l["fwd_flops"], 16777216)
            self.assertGreater(l["fwd_seconds"], 0)

    def test_conv_flops(self):
        # EfficientNet's first depthwise 3x3: 32 channels at 112 px, batch
        # 32: 2 x 32 x 112^2 x 32 x (32/32) x 9 multiply-adds.
        self.assertEqual(kb.conv_flops(32, 32, 112, 32, 3, 1, 32), 2 * 32 * 112 * 112 * 32 * 1 * 9)
        # A stride-2 stem: 224 -> 112, 3 channels in, 64 out, 7x7.
        self.assertEqual(kb.conv_flops(1, 3, 224, 64, 7, 2, 1), 2 * 112 * 112 * 64 * 3 * 49)
        # Odd sizes round up: 7 px at stride 2 gives 4.
        self.assertEqual(kb.conv_flops(1, 8, 7, 8, 3, 2, 1), 2 * 4 * 4 * 8 * 8 * 9)

    def test_unknown_section(self):
        with self.assertRaises(SystemExit), redirect_stderr(io.StringIO()):
            kb.main(["--device", "cpu", "--only", "nope"])


if __name__ == "__main__":
    unittest.main()
