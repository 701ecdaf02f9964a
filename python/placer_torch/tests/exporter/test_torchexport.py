"""Tests of the PyTorch exporter, the module-map helper and the ONNX route
(make test-python; docs/import.md). They need torch (and onnx for the ONNX
test) and the placer binary: PLACER (default bin/placer from the repository
root), which `make test-python` builds first."""

import contextlib
import inspect
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch

from placer_torch import exporter, exportflags, placement, torchexport, zoo  # torchexport: the command line

from . import user_models
from ..commands import PLACER, ROOT, command, env

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"f32", "f16", "bf16", "f64", "i32", "i64", "i8", "bool"}


def placer(*args, check=True):
    r = subprocess.run([PLACER] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError("placer %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r


def export(model, tmp, batch=None):
    spec = zoo.MODELS[model]
    out = os.path.join(tmp, model + ".json")
    b = batch or spec.batch
    graph, meta = exporter.export_training_step(spec.build, lambda: spec.inputs(b), spec.loss, torch.optim.Adam,
                                                {"lr": 1e-3}, out, name=model)
    return out, graph, meta


class ExporterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="torchexport-")
        cls.mlp_path, cls.mlp, cls.mlp_meta = export("mlp", cls.tmp)
        cls.cnn_path, cls.cnn, cls.cnn_meta = export("cnn", cls.tmp)

    def ops_of(self, graph, meta, module, phase, cls=None):
        return [o for o, m in zip(graph["ops"], meta["ops"])
                if m["module"] == module and m["phase"] == phase and (cls is None or o["class"] == cls)]

    def test_linear_flops(self):
        b = zoo.MODELS["mlp"].batch  # 16; fc1 32 -> 64, fc2 64 -> 10
        for module, d_in, d_out in (("fc1", 32, 64), ("fc2", 64, 10)):
            fwd = sum(o.get("flops", 0) for o in self.ops_of(self.mlp, self.mlp_meta, module, "forward", "matmul"))
            self.assertEqual(fwd, 2 * b * d_in * d_out, module)
        # fc2's backward computes the input's and the weight's gradients:
        # twice its forward. (fc1's input needs no gradient: once.)
        bwd = sum(o.get("flops", 0) for o in self.ops_of(self.mlp, self.mlp_meta, "fc2", "backward", "matmul"))
        self.assertEqual(bwd, 2 * (2 * b * 64 * 10))
        bwd1 = sum(o.get("flops", 0) for o in self.ops_of(self.mlp, self.mlp_meta, "fc1", "backward", "matmul"))
        self.assertEqual(bwd1, 2 * b * 32 * 64)

    def test_grouped_conv_backward_flops(self):
        """A depthwise (and a grouped) convolution's backward: its input's
        and weight's gradients each the forward's FLOPs (2 x the output's
        elements x the weight's elements a group), the bias's the output's
        elements, whatever torch's flop counter says of grouped weights."""
        for groups, c_in in ((72, 72), (4, 72), (1, 8)):
            x, w, go = torch.randn(2, c_in, 28, 28), torch.randn(72, c_in // groups, 5, 5), torch.randn(2, 72, 28, 28)
            f = torch.ops.aten.convolution_backward.default
            args = (go, x, w, [72], [1, 1], [2, 2], [1, 1], False, [0, 0], groups, [True, True, True])
            outs = f(*args)
            fwd = 2 * go.numel() * (c_in // groups) * 25
            got = exporter._flops(f, "convolution_backward", args, {}, outs)
            if groups == 1:  # torch's counter where it has one: no bias term
                self.assertIn(got, (2 * fwd, 2 * fwd + go.numel()))
            else:
                self.assertEqual(got, 2 * fwd + go.numel(), groups)

    def test_param_and_state_bytes(self):
        for name, meta in (("mlp", self.mlp_meta), ("cnn", self.cnn_meta)):
            model = zoo.MODELS[name].build()
            want = sum(p.numel() * p.element_size() for p in model.parameters())
            self.assertEqual(meta["param_bytes"], want, name)
            self.assertEqual(meta["grad_bytes"], want, name)
            # Adam's two slots (exp_avg, exp_avg_sq) are twice the
            # parameters; the state adds one scalar step per parameter.
            self.assertEqual(meta["optimizer_slot_bytes"], 2 * want, name)
            self.assertGreaterEqual(meta["optimizer_state_bytes"], 2 * want, name)
            # Each Parameter op holds its parameter and its state.
            held = sum(o.get("param_bytes", 0) for o in self.mlp["ops"] if o["type"] == "Parameter") \
                if name == "mlp" else None
            if held is not None:
                self.assertEqual(held, want + meta["optimizer_state_bytes"])

    def test_ops_complete(self):
        for graph, meta in ((self.mlp, self.mlp_meta), (self.cnn, self.cnn_meta)):
            self.assertEqual(len(graph["ops"]), len(meta["ops"]))
            phases = set()
            for o, m in zip(graph["ops"], meta["ops"]):
                self.assertIsInstance(o["shape"], list, o["name"])
                self.assertIn(o["dtype"], DTYPES, o["name"])
                for k in ("flops", "bytes_read", "bytes_written", "param_bytes"):
                    self.assertGreaterEqual(o.get(k, 0), 0, (o["name"], k))
                self.assertEqual(m["name"], o["name"])
                phases.add(m["phase"])
            self.assertEqual(phases, {"input", "parameter", "forward", "backward", "optimizer"})
        # Views are aliases.
        views = [o for o in self.mlp["ops"] if o["type"] in ("t", "view")]
        self.assertTrue(views and all(o.get("alias") for o in views))
        # A reader of a view reads its base too: fc2's forward matmul reads
        # the weight through t(), and so consumes the Parameter op's value.
        readers = {c for t in self.mlp["tensors"] if t["producer"] == "param:fc2.weight" for c in t["consumers"]}
        self.assertIn("fc2/addmm", readers)
        # In-place ops write a new value; they are not views.
        self.assertTrue(all(not o.get("alias") for o in self.mlp["ops"] if o["type"].endswith("_")))
        # Every backward op of the MLP belongs to one of its modules.
        mods = {m["module"] for m in self.mlp_meta["ops"] if m["phase"] == "backward"}
        self.assertLessEqual(mods, {"", "fc1", "act", "fc2"})
        self.assertIn("fc1", mods)

    def test_batch_marks(self):
        g, meta = self.mlp, self.mlp_meta
        self.assertEqual((g["version"], g["batch"]), (2, zoo.MODELS["mlp"].batch))
        b = g["batch"]
        dims = {}
        for t in g["tensors"]:
            dims.setdefault(t["producer"], set()).add(t.get("batch_dim"))
        # The inputs hold the batch in dimension 0, the parameters (and
        # their optimizer state) in none.
        self.assertEqual(dims["input0"], {0})
        self.assertEqual(dims["input1"], {0})
        self.assertEqual(dims["param:fc1.weight"], {None})
        ops = {o["name"]: o for o in g["ops"]}
        # fc1's forward reads its weight and bias whole at any batch.
        self.assertEqual(ops["fc1/addmm"]["fixed_bytes_read"], (64 * 32 + 64) * 4)
        self.assertNotIn("fixed_flops", ops["fc1/addmm"])
        self.assertEqual(ops["fc1/addmm"]["bytes_read"] - ops["fc1/addmm"]["fixed_bytes_read"], b * 32 * 4)
        # The optimizer's update does not scale; the weight gradients are
        # written whole.
        for o, m in zip(g["ops"], meta["ops"]):
            if m["phase"] == "optimizer":
                for k in ("flops", "bytes_read", "bytes_written"):
                    self.assertEqual(o.get("fixed_" + k, 0), o.get(k, 0), (o["name"], k))
            if m["phase"] == "backward" and o["type"] == "mm" and o["shape"] == [64, 32]:
                self.assertEqual(o["fixed_bytes_written"], 64 * 32 * 4, o["name"])
                self.assertNotIn("fixed_flops", o)
        # Without batch information: version 1, no batch keys.
        spec = zoo.MODELS["mlp"]
        plain, _ = exporter.export_training_step(spec.build, lambda: spec.inputs(b), spec.loss, torch.optim.Adam,
                                                 {"lr": 1e-3}, name="mlp", batch_dim=None)
        self.assertEqual(plain["version"], 1)
        text = json.dumps(plain)
        self.assertNotIn("batch", text)
        self.assertNotIn("fixed_", text)

    def test_batch_exact(self):
        # The graph at half its batch, by graph.AtBatch's rule (fixed part
        # plus the rest times b/B, rounded up; batched tensors b/B), is the
        # graph exported at half the batch, op by op and tensor by tensor.
        def up(x, b, B):
            return -(-x * b // B)

        for name, g in (("mlp", self.mlp), ("cnn", self.cnn)):
            B = g["batch"]
            _, half, _ = export(name, tempfile.mkdtemp(dir=self.tmp), batch=B // 2)
            self.assertEqual(half["batch"], B // 2)
            self.assertEqual([o["name"] for o in g["ops"]], [o["name"] for o in half["ops"]])
            for o, h in zip(g["ops"], half["ops"]):
                for k in ("flops", "bytes_read", "bytes_written"):
                    f = o.get("fixed_" + k, 0)
                    self.assertEqual(f + up(o.get(k, 0) - f, B // 2, B), h.get(k, 0), (name, o["name"], k))
                    self.assertEqual(f, h.get("fixed_" + k, 0), (name, o["name"], k))
            self.assertEqual(len(g["tensors"]), len(half["tensors"]))
            for t, h in zip(g["tensors"], half["tensors"]):
                want = t["bytes"] if t.get("batch_dim") is None else up(t["bytes"], B // 2, B)
                self.assertEqual(want, h["bytes"], (name, t["producer"]))
                self.assertEqual(t.get("batch_dim"), h.get("batch_dim"), (name, t["producer"]))

    def test_deterministic(self):
        # Two separate processes (tensor ids, hash seeds and allocation
        # differ) write byte-identical files: a process of its own, and
        # this one (which has run other tests' exports before), through
        # the same command line (torchexport.main); a second process
        # would import torch again (2 to 5 CPU s).
        outs = []
        for own in (True, False):
            d = tempfile.mkdtemp(dir=self.tmp)
            out = os.path.join(d, "cnn.json")
            if own:
                subprocess.run(command("torchexport", "--model", "cnn", "-o", out), check=True, capture_output=True,
                               env=env())
            else:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    self.assertEqual(torchexport.main(["--model", "cnn", "-o", out]), 0)
            with open(out, "rb") as f, open(out[:-5] + ".meta.json", "rb") as m:
                outs.append((f.read(), m.read()))
        self.assertEqual(outs[0][0], outs[1][0])
        self.assertEqual(outs[0][1], outs[1][1])

    def test_module_calls(self):
        # A module applied three times: its forward ops carry the call
        # they belong to ("call", 0-based; absent for the first), which
        # placer's torch plan writes as NAME#k where calls go to different
        # stages (docs/torch-plan.md).
        class Looped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = torch.nn.Linear(4, 8)
                self.block = torch.nn.Linear(8, 8)
                self.out = torch.nn.Linear(8, 2)

            def forward(self, x):
                h = self.inp(x)
                for _ in range(3):
                    h = torch.tanh(self.block(h))
                return self.out(h)

        out = os.path.join(self.tmp, "looped.json")
        _, meta = exporter.export_training_step(Looped, lambda: (torch.randn(4, 4), torch.randint(0, 2, (4,))),
                                                torch.nn.functional.cross_entropy,
                                                torch.optim.Adam, {"lr": 1e-3}, out, name="looped")
        calls = [m.get("call", 0) for m in meta["ops"] if m["phase"] == "forward" and m["module"] == "block"]
        self.assertEqual(sorted(set(calls)), [0, 1, 2])
        self.assertEqual(calls, sorted(calls))  # in program order
        self.assertEqual({m.get("call", 0) for m in meta["ops"] if m["module"] in ("inp", "out")}, {0})
        self.assertFalse(any("call" in m for m in meta["ops"] if m["phase"] != "forward"))

    def test_placer_validates(self):
        for path, graph in ((self.mlp_path, self.mlp), (self.cnn_path, self.cnn)):
            r = placer("eval", "--graph", path, "--json")
            rep = json.loads(r.stdout)
            self.assertEqual(rep["ops"], len(graph["ops"]))
            self.assertGreater(rep["step_time_s"], 0)

    def round_trip(self, placement_args, devices):
        res = os.path.join(self.tmp, "cnn-result.json")
        if placement_args[0] == "search":
            placer("search", "--graph", self.cnn_path, "--gpus", "2", "--steps", "3", "--samples", "4",
                   "--warmup", "2", "--seed", "1", "--out", res, "-q")
            pl = res
        else:
            pl = placement_args[0]
        mm_path = os.path.join(self.tmp, "cnn.modules.json")
        placer("export", "--graph", self.cnn_path, "--placement", pl, "--gpus", "2", "--to", "module-map",
               "-o", mm_path)
        with open(mm_path) as f:
            mm = json.load(f)
        self.assertEqual(mm["format"], "placer-module-map")
        model = zoo.MODELS["cnn"].build()
        # Every module that owns parameters is in the map.
        owners = {n.rsplit(".", 1)[0] if "." in n else "" for n, _ in model.named_parameters()}
        self.assertLessEqual(owners, set(mm["modules"]))
        placement.apply_module_map(model, mm_path, device_of=devices)
        self.assertEqual(placement.check_module_map(model, mm_path, device_of=devices), [])
        # And placer's own answer, op by op: each module's Parameter ops
        # sit on the device the map gives its module.
        with open(pl) as f:
            dec = json.load(f)
        dev = dec.get("device") or dec.get("decision", {}).get("device")
        for i, (o, m) in enumerate(zip(self.cnn["ops"], self.cnn_meta["ops"])):
            if m["phase"] == "parameter":
                self.assertEqual(mm["modules"][m["module"]], dev[i], o["name"])
                name = m.get("param")
                if name:
                    p = dict(model.named_parameters())[name]
                    self.assertEqual(str(p.device), devices[dev[i]], name)
        return mm

    def test_round_trip_search(self):
        self.round_trip(["search"], {0: "cpu", 1: "meta"})

    def test_round_trip_two_devices(self):
        # A placement that surely uses both devices: parameters of the
        # classifier on device 1, everything else on 0; a contiguous
        # pipeline with one split point.
        ops = self.cnn["ops"]
        meta = self.cnn_meta["ops"]
        dev = [1 if m["module"].startswith("classifier") else 0 for m in meta]
        path = os.path.join(self.tmp, "cnn-split.json")
        with open(path, "w") as f:
            json.dump({"format": "placer-decision", "version": 1, "graph": "cnn", "ops": len(ops), "devices": 2,
                       "device": dev}, f)
        mm = self.round_trip([path], {0: "cpu", 1: "meta"})
        self.assertEqual(mm["modules"]["classifier"], 1)
        self.assertEqual(mm["modules"]["features.0"], 0)
        self.assertEqual(mm["pipeline"]["split_points"], {"classifier": "BEGINNING"})
        model = zoo.MODELS["cnn"].build()
        placement.apply_module_map(model, mm["modules"], device_of={0: "cpu", 1: "meta"})
        self.assertEqual(model.classifier.weight.device.type, "meta")
        self.assertEqual(model.features[0].weight.device.type, "cpu")


class SDPA(torch.nn.Module):
    """F.scaled_dot_product_attention in a module of its own, so that the
    math path's ops are told apart by their module."""

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


class AttentionLayer(torch.nn.Module):
    """One attention layer: B=2 (the test's batch), H=4 heads of D=32, E=128
    wide, on sequences of S=128."""

    def __init__(self, heads=4, dim=128, dtype=None):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = (torch.nn.Linear(dim, dim, bias=False, dtype=dtype) for _ in range(4))
        self.attn = SDPA()

    def forward(self, x):
        b, s, e = x.shape
        q, k, v = (w(x).view(b, s, self.heads, e // self.heads).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        return self.wo(self.attn(q, k, v).transpose(1, 2).reshape(b, s, e))


def saved_for_backward(graph, meta):
    """The tensors that stay allocated from forward to backward: produced
    by a forward op that is no view, read by a backward op. -> [(producer
    name, bytes)] in graph order."""
    phase = {m["name"]: m["phase"] for m in meta["ops"]}
    alias = {o["name"] for o in graph["ops"] if o.get("alias")}
    return [(t["producer"], t["bytes"]) for t in graph["tensors"]
            if phase[t["producer"]] == "forward" and t["producer"] not in alias
            and any(phase[c] == "backward" for c in t["consumers"])]


def peak_bytes(path):
    rep = json.loads(placer("eval", "--graph", path, "--json").stdout)
    return rep["devices_detail"][0]["peak_memory"]


@unittest.skipIf(exporter._SDPA is None,
                 "torch %s has no scaled_dot_product_attention: attention is the math path" % torch.__version__)
class FusedAttentionTest(unittest.TestCase):
    B, H, S, D = 2, 4, 128, 32

    def export(self, attention, build=AttentionLayer, inputs=None, loss=None):
        d = tempfile.mkdtemp(prefix="torchexport-sdpa-")
        out = os.path.join(d, attention + ".json")
        inputs = inputs or (lambda: (torch.randn(self.B, self.S, self.H * self.D), None))
        graph, meta = exporter.export_training_step(build, inputs, loss or (lambda o, t: o.sum()),
                                                    torch.optim.Adam, {"lr": 1e-3}, out, name=attention,
                                                    attention=attention)
        return out, graph, meta

    def test_saved_tensors(self):
        path, g, meta = self.export("fused")
        self.assertEqual(meta["attention"], "fused")
        fwd = [o for o in g["ops"] if o["type"] == "_scaled_dot_product_efficient_attention"]
        bwd = [o for o in g["ops"] if o["type"] == "_scaled_dot_product_efficient_attention_backward"]
        self.assertEqual((len(fwd), len(bwd)), (1, 1), [o["type"] for o in g["ops"]])
        self.assertEqual(fwd[0]["name"], "attn/_scaled_dot_product_efficient_attention")
        # By hand, f32: Q, K and V are 2 x 4 x 128 x 32 x 4 B = 131,072 B
        # each (views of the projections' outputs, which stay allocated);
        # the output as much; the log-sum-exp 2 x 4 x 128 x 4 B = 4,096 B.
        # wo's input (the output made contiguous, 131,072 B) is saved for
        # wo's weight gradient, and the loss (4 B) for its own. Nothing
        # S x S (2 x 4 x 128 x 128 x 4 B = 524,288 B).
        saved = saved_for_backward(g, meta)
        self.assertEqual(sorted(n for _, n in saved), [4, 4096] + [131072] * 5, saved)
        self.assertEqual(sum(n for _, n in saved), 659460)
        self.assertEqual([n for p, n in saved if p == "attn/_scaled_dot_product_efficient_attention"],
                         [131072, 4096])  # the output, the log-sum-exp
        self.assertEqual(sorted(p for p, n in saved if n == 131072),
                         ["attn/_scaled_dot_product_efficient_attention", "model/clone", "wk/mm", "wq/mm", "wv/mm"])
        # The backward reads dO, Q, K, V, O and the lse; writes dQ, dK, dV.
        self.assertEqual(bwd[0]["bytes_read"], 5 * 131072 + 4096)
        self.assertEqual(bwd[0]["bytes_written"], 3 * 131072)
        self.assertEqual((fwd[0]["bytes_read"], fwd[0]["bytes_written"]), (3 * 131072, 131072 + 4096))
        self.assertEqual(fwd[0]["class"], "matmul")

        # The math path saves the scores (softmax's output) for backward.
        mpath, m, mmeta = self.export("math")
        self.assertEqual(mmeta["attention"], "math")
        self.assertFalse([o for o in m["ops"] if "attention" in o["type"]])
        # By hand: it keeps the 524,288 B of softmax's output (read by its
        # backward and by the second matmul's), Q and K scaled (as large
        # as Q and K), V, and neither the attention's output nor a
        # log-sum-exp: 524,288 - 131,072 - 4,096 = 389,120 B more than fused.
        msaved = saved_for_backward(m, mmeta)
        self.assertIn(524288, [n for _, n in msaved], msaved)
        self.assertEqual(sum(n for _, n in msaved) - sum(n for _, n in saved), 389120, msaved)
        # And placer's peak memory sees it.
        self.assertGreaterEqual(peak_bytes(mpath) - peak_bytes(path), 389120)

        # FLOPs: the math path's, forward and backward: at least the two
        # matmuls forward (4·B·H·S·S·D) and four backward.
        def attn_flops(graph, metas, phase):
            return sum(o.get("flops", 0) for o, x in zip(graph["ops"], metas["ops"])
                       if x["module"] == "attn" and x["phase"] == phase)
        b, h, s, d = self.B, self.H, self.S, self.D
        self.assertEqual(fwd[0]["flops"], attn_flops(m, mmeta, "forward"))
        self.assertEqual(bwd[0]["flops"], attn_flops(m, mmeta, "backward"))
        self.assertGreaterEqual(fwd[0]["flops"], 4 * b * h * s * s * d)
        self.assertGreaterEqual(bwd[0]["flops"], 8 * b * h * s * s * d)
        self.assertEqual([x["module"] for o, x in zip(g["ops"], meta["ops"]) if "attention" in o["type"]],
                         ["attn", "attn"])

    def test_batch_scales(self):
        # At twice the batch the fused ops' costs double: nothing fixed.
        _, g, _ = self.export("fused")
        for o in g["ops"]:
            if "attention" in o["type"]:
                self.assertFalse([k for k in o if k.startswith("fixed_")], o)

    def test_multihead_attention_dropout(self):
        # nn.MultiheadAttention (through nn.TransformerEncoderLayer, with
        # dropout 0.1 and a causal mask) is fused too: one op each way per
        # layer, and no S x S tensor (scores or dropout mask) saved.
        spec = zoo.MODELS["bert_base"]
        build = lambda: zoo.Transformer(100, 64, 64, 4, 128, 2, causal=True)  # noqa: E731
        _, g, meta = self.export("fused", build, lambda: (torch.randint(0, 100, (2, 40)),
                                                          torch.randint(0, 100, (2, 40))), spec.loss)
        types = [o["type"] for o in g["ops"]]
        self.assertEqual(types.count("_scaled_dot_product_efficient_attention"), 2)
        self.assertEqual(types.count("_scaled_dot_product_efficient_attention_backward"), 2)
        self.assertNotIn("_safe_softmax", types)
        ss = 2 * 4 * 40 * 40  # elements of one layer's scores (f32), or of a bool mask
        self.assertEqual([(p, n) for p, n in saved_for_backward(g, meta) if n in (ss * 4, ss)], [])
        # The math path saves them: scores, and a dropout mask of as many.
        _, m, mmeta = self.export("math", build, lambda: (torch.randint(0, 100, (2, 40)),
                                                          torch.randint(0, 100, (2, 40))), spec.loss)
        self.assertGreaterEqual(len([p for p, n in saved_for_backward(m, mmeta) if n == ss * 4]), 4)
        self.assertEqual({x["module"] for o, x in zip(g["ops"], meta["ops"]) if "attention" in o["type"]},
                         {"layers.0.self_attn", "layers.1.self_attn"})

    def test_cpu_device(self):
        # --device cpu records attention as a CPU runs it: its flash
        # kernel when there is no dropout (the log-sum-exp unpadded: 2 x 4
        # x 128 x 4 B = 4,096 B, as the memory-efficient kernel's at this
        # S), the math path with dropout (a CPU's fused kernel has none).
        cpu = exporter.execution_settings(device="cpu")

        def export(build, inputs, loss):
            return exporter.export_training_step(build, inputs, loss, torch.optim.Adam, {"lr": 1e-3},
                                                 name="cpu", attention="fused", execution=cpu)
        g, meta = export(AttentionLayer, lambda: (torch.randn(self.B, self.S, self.H * self.D), None),
                         lambda o, t: o.sum())
        types = [o["type"] for o in g["ops"]]
        self.assertEqual(types.count("_scaled_dot_product_flash_attention_for_cpu"), 1)
        self.assertEqual(types.count("_scaled_dot_product_flash_attention_for_cpu_backward"), 1)
        saved = saved_for_backward(g, meta)
        self.assertEqual(sorted(n for _, n in saved), [4, 4096] + [131072] * 5, saved)
        spec = zoo.MODELS["bert_base"]
        build = lambda: zoo.Transformer(100, 64, 64, 4, 128, 2, causal=False)  # noqa: E731
        g, meta = export(build, lambda: (torch.randint(0, 100, (2, 40)), torch.randint(0, 100, (2, 40))), spec.loss)
        types = [o["type"] for o in g["ops"]]
        self.assertFalse([t for t in types if "attention" in t], types)
        # Per layer three f32 tensors of 2 x 4 x 40 x 40 elements are
        # saved for backward: the scores' softmax, the dropout mask (the
        # math path's composite dropout draws it in f32) and the dropped
        # scores, which the second matmul's backward reads.
        ss = 2 * 4 * 40 * 40
        sizes = [n for _, n in saved_for_backward(g, meta)]
        self.assertEqual(sizes.count(ss * 4), 2 * 3, sizes)

    def test_real_values(self):
        # On real tensors the fused stand-in computes what PyTorch does.
        torch.manual_seed(0)
        layer = AttentionLayer()
        x = torch.randn(2, 16, 128)
        want = layer(x)
        gw = torch.autograd.grad(want.sum(), layer.wq.weight)[0]
        graph, _ = exporter.export_training_step(lambda: layer, lambda: (x, None), lambda o, t: o.sum(),
                                                 torch.optim.SGD, {"lr": 0.0}, name="real", fake=False,
                                                 batch_dim=None, attention="fused")
        self.assertTrue(any(o["type"] == "_scaled_dot_product_efficient_attention" for o in graph["ops"]))
        self.assertTrue(torch.allclose(layer.wq.weight.grad, gw, atol=1e-5))

    def test_flash_for_half(self):
        # bf16 without a mask: FlashAttention's op names.
        _, g, _ = self.export("fused", lambda: AttentionLayer(dtype=torch.bfloat16),
                              lambda: (torch.randn(self.B, self.S, 128, dtype=torch.bfloat16), None),
                              lambda o, t: o.float().sum())
        types = {o["type"] for o in g["ops"]}
        self.assertIn("_scaled_dot_product_flash_attention", types)
        self.assertIn("_scaled_dot_product_flash_attention_backward", types)


class TransformerEncoderTest(unittest.TestCase):
    """torch.nn's own TransformerEncoder, whose constructor deep-copies its
    layer (_get_clones): recorded on fake tensors, as any module, and its
    step's FLOPs as counted by hand."""

    B, S, E, H, F, L = 4, 16, 64, 4, 128, 2

    @classmethod
    def setUpClass(cls):
        B, S, E, H, F, L = cls.B, cls.S, cls.E, cls.H, cls.F, cls.L

        def build():
            layer = torch.nn.TransformerEncoderLayer(d_model=E, nhead=H, dim_feedforward=F, dropout=0.0, batch_first=True)
            return torch.nn.TransformerEncoder(layer, num_layers=L, enable_nested_tensor=False)

        cls.tmp = tempfile.mkdtemp(prefix="torchexport-encoder-")
        cls.path = os.path.join(cls.tmp, "encoder.json")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            cls.graph, cls.meta = exporter.export_training_step(build, lambda: (torch.randn(B, S, E), None), lambda o, t: o.sum(),
                                                                torch.optim.Adam, {"lr": 1e-3}, cls.path, name="encoder")
        cls.stderr = err.getvalue()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_fake(self):
        # Its deep copies kept the recording's fake mode: no op mixed two
        # and nothing ran on real tensors.
        self.assertTrue(self.meta["fake"], self.stderr)
        self.assertNotIn("fake_refused", self.meta)
        self.assertNotIn("real CPU", self.stderr)
        self.assertEqual({m["module"].split(".")[1] for m in self.meta["ops"] if m["module"].startswith("layers.")},
                         {str(i) for i in range(self.L)})
        placer("eval", "--graph", self.path)

    @unittest.skipIf(exporter._SDPA is None, "torch %s has no scaled_dot_product_attention: its attention is other ops" % torch.__version__)
    def test_flops(self):
        """The matmul class's FLOPs of each phase by hand. N = B x S tokens;
        per layer forward: the QKV projection 2·N·E·3E, the output
        projection 2·N·E·E, the MLP 2 x 2·N·E·F, and the fused attention
        at the math path's count: its two batched matmuls 2 x 2·B·H·S·S·(E/H),
        softmax 5 a score (B·H·S·S scores), Q and K each scaled once
        (2·B·S·E). Backward: each linear layer's input and weight gradients
        (2 x its forward), but the first layer's QKV projection has no input
        gradient (the model's input needs none); attention's four batched
        matmuls, softmax's backward 3 a score and the two scalings."""
        B, S, E, H, F, L = self.B, self.S, self.E, self.H, self.F, self.L
        N = B * S
        proj = 2 * N * E * 3 * E
        linear = proj + 2 * N * E * E + 2 * (2 * N * E * F)
        attn_fwd = 2 * (2 * B * S * S * E) + 5 * B * H * S * S + 2 * B * S * E
        attn_bwd = 4 * (2 * B * S * S * E) + 3 * B * H * S * S + 2 * B * S * E
        want_fwd = L * (linear + attn_fwd)
        want_bwd = L * (2 * linear + attn_bwd) - proj
        got = {}
        for o, m in zip(self.graph["ops"], self.meta["ops"]):
            if o["class"] == "matmul":
                got[m["phase"]] = got.get(m["phase"], 0) + o.get("flops", 0)
        self.assertEqual(got, {"forward": want_fwd, "backward": want_bwd})
        self.assertEqual((want_fwd, want_bwd), (8970240, 16293888))  # B 4, S 16, E 64, H 4, F 128, 2 layers


class AttentionOptionTest(unittest.TestCase):
    def test_default_and_errors(self):
        spec = zoo.MODELS["mlp"]
        args = (spec.build, lambda: spec.inputs(4), spec.loss)
        if exporter._SDPA is None:
            self.assertEqual(exporter.default_attention(), "math")
            with self.assertRaisesRegex(ValueError, "needs torch 2.0 or later"):
                exporter.export_training_step(*args, attention="fused")
            e = io.StringIO()
            with contextlib.redirect_stderr(e):
                code = torchexport.main(["--model", "mlp", "--attention", "fused", "-o", "/tmp/never.json"])
            self.assertEqual(code, 2)
            self.assertEqual(len(e.getvalue().strip().splitlines()), 1, e.getvalue())
        else:
            self.assertEqual(exporter.default_attention(), "fused")
        with self.assertRaisesRegex(ValueError, "want one of"):
            exporter.export_training_step(*args, attention="flash")
        _, meta = exporter.export_training_step(*args, attention="math")
        self.assertEqual(meta["attention"], "math")


BRANCH_LINE = "user_models.py:%d" % next(
    i for i, line in enumerate(open(user_models.__file__), 1) if "# BRANCH:" in line and "x.mean()" in line)


class Widths(torch.nn.Module):
    """A constructor that sizes its layers from tensor values (as
    torchvision's regnets do)."""

    def __init__(self):
        super().__init__()
        w = (torch.arange(3) * 4 + 4).tolist()  # [4, 8, 12]
        self.layers = torch.nn.Sequential(torch.nn.Linear(8, w[0]), torch.nn.Linear(w[0], w[1]),
                                          torch.nn.Linear(w[1], w[2]))

    def forward(self, x):
        return self.layers(x)


class CPUStorage(torch.nn.Module):
    """A constructor that points a buffer at a CPU storage (Tensor.set_),
    which fake tensors refuse (aten.set_.source_Storage: a meta tensor on
    a CPU storage), as timm's ecaresnet101d_pruned's constructor does."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        buf = torch.empty(0)
        buf.set_(torch.UntypedStorage(8 * 4), 0, (8,), (1,))
        self.register_buffer("buf", buf)

    def forward(self, x):
        return self.lin(x) + self.buf


class DataDependentTest(unittest.TestCase):
    def export(self, build, data_dependent="follow"):
        e = io.StringIO()
        with contextlib.redirect_stderr(e):
            graph, meta = exporter.export_training_step(build, lambda: (torch.ones(4, 8), None),
                                                        lambda o, t: o.sum(), torch.optim.Adam, {"lr": 1e-3},
                                                        name="dd", data_dependent=data_dependent)
        return graph, meta, e.getvalue()

    def test_follow(self):
        # The example inputs are ones: the branch takes a, and only a's
        # ops are recorded, on real tensors, with one warning line naming
        # the op and the model's line.
        g, meta, err = self.export(user_models.Branchy)
        self.assertFalse(meta["fake"])
        mods = {m["module"] for m in meta["ops"] if m["phase"] == "forward"}
        self.assertIn("a", mods)
        self.assertNotIn("b", mods)
        self.assertIn("a/addmm", {o["name"] for o in g["ops"]})
        lines = [line for line in err.splitlines() if "warning" in line]
        self.assertEqual(len(lines), 1, err)
        self.assertIn(BRANCH_LINE, lines[0])
        self.assertIn("_local_scalar_dense", lines[0])
        self.assertIn("example inputs", lines[0])

    def test_fail(self):
        with self.assertRaises(exporter.DataDependentError) as c:
            self.export(user_models.Branchy, "fail")
        msg = str(c.exception)
        self.assertEqual(len(msg.splitlines()), 1, msg)
        self.assertIn("_local_scalar_dense", msg)
        self.assertIn(BRANCH_LINE, msg)
        e = io.StringIO()
        with contextlib.redirect_stderr(e):
            code = torchexport.main(["--model", os.path.join(HERE, "user_models.py") + ":Branchy", "--input-shape",
                                     "8", "--data-dependent", "fail", "-o", os.path.join(tempfile.mkdtemp(), "b.json")])
        self.assertEqual(code, 1)
        self.assertEqual(len(e.getvalue().strip().splitlines()), 1, e.getvalue())
        self.assertIn(BRANCH_LINE, e.getvalue())

    def test_constructor(self):
        # Built on real tensors, recorded on fake ones: one note.
        g, meta, err = self.export(Widths)
        self.assertTrue(meta["fake"])
        self.assertEqual(meta["param_bytes"], (8 * 4 + 4 + 4 * 8 + 8 + 8 * 12 + 12) * 4)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("constructor reads tensor values", err)

    def test_constructor_refused_op(self):
        # An op fake tensors refuse in the constructor: built on real
        # tensors, recorded on fake ones, one note naming the op (before,
        # the note's format raised TypeError and the export failed).
        g, meta, err = self.export(CPUStorage)
        self.assertTrue(meta["fake"])
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("which fake tensors refuse", err)
        self.assertIn("aten.set_", err)

    def test_regnet(self):
        # torchvision's regnet_y_1_6gf, which fake tensors alone cannot
        # build (DataDependentOutputException on torch 2.x, .tolist() on
        # 1.13), at a small batch and image.
        spec = zoo.MODELS["regnet_y_1_6gf"]
        e = io.StringIO()
        with contextlib.redirect_stderr(e):
            g, meta = exporter.export_training_step(spec.build, lambda: (torch.randn(2, 3, 64, 64),
                                                                         torch.randint(0, 1000, (2,))),
                                                    spec.loss, name="regnet")
        self.assertTrue(meta["fake"])
        self.assertIn("regnet.py", e.getvalue())
        model = spec.build()
        self.assertEqual(meta["param_bytes"], sum(p.numel() * p.element_size() for p in model.parameters()))
        self.assertGreater(len(g["ops"]), 1000)


class CommandLineTest(unittest.TestCase):
    """torchexport's command line: zoo models and the user's own
    (user_models.py)."""

    def run_export(self, *args, cwd=HERE, process=False):
        """Runs torchexport's main with args (in a process of its own
        when process is true, else in this one: each process starts torch
        anew, 2 to 5 s)."""
        d = tempfile.mkdtemp(prefix="torchexport-cli-")
        out = os.path.join(d, "m.json")
        if process:
            r = subprocess.run(command("torchexport", *args) + ["-o", out], capture_output=True, text=True, cwd=cwd,
                               env=env())
        else:
            o, e = io.StringIO(), io.StringIO()
            old = os.getcwd()
            os.chdir(cwd)
            try:
                with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
                    code = torchexport.main(list(args) + ["-o", out])
            finally:
                os.chdir(old)
            r = subprocess.CompletedProcess(args, code, o.getvalue(), e.getvalue())
        graph = meta = None
        if r.returncode == 0:
            with open(out) as f:
                graph = json.load(f)
            with open(out[:-5] + ".meta.json") as f:
                meta = json.load(f)
        return r, graph, meta

    def test_factory(self):
        r, g, meta = self.run_export("--model", "user_models:tiny_net", "--input-shape", "12", "--batch", "6",
                                     process=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(g["batch"], 6)
        ops = {o["name"]: o for o in g["ops"]}
        self.assertEqual(ops["input0"]["shape"], [6, 12])
        self.assertEqual(ops["fc/addmm"]["flops"], 2 * 6 * 12 * 5)
        self.assertEqual(meta["param_bytes"], (12 * 5 + 5) * 4)
        self.assertEqual({p["module"] for p in meta["params"]}, {"fc"})
        # The default loss, cross-entropy over the 5 outputs.
        self.assertIn("_log_softmax", {o["type"] for o in g["ops"]})
        self.assertIn("batch 6", r.stdout)
        # The same model as file.py:factory, from another directory, and
        # with the mse loss.
        r2, g2, _ = self.run_export("--model", os.path.join(HERE, "user_models.py") + ":tiny_net",
                                    "--input-shape", "12", "--batch", "6", "--loss", "mse", cwd=ROOT)
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertEqual({o["name"]: o for o in g2["ops"]}["fc/addmm"]["flops"], 2 * 6 * 12 * 5)
        self.assertIn("mse_loss", {o["type"] for o in g2["ops"]})

    def test_factory_two_inputs(self):
        r, g, _ = self.run_export("--model", "user_models:TwoInputs", "--input-shape", "12",
                                  "--input-shape", "7:int64", "--batch", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        ops = {o["name"]: o for o in g["ops"]}
        self.assertEqual((ops["input0"]["shape"], ops["input0"]["dtype"]), ([4, 12], "f32"))
        self.assertEqual((ops["input1"]["shape"], ops["input1"]["dtype"]), ([4, 7], "i64"))
        self.assertEqual(ops["fc/addmm"]["flops"], 2 * 4 * 12 * 3)

    def test_zoo_batch(self):
        r, g, _ = self.run_export("--model", "mlp", "--batch", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(g["batch"], 4)
        self.assertEqual({o["name"]: o for o in g["ops"]}["input0"]["shape"], [4, 32])

    def test_bad_input(self):
        for args, want in (
                (["--model", "user_models:tiny_net"], "needs --input-shape"),
                (["--model", "no_such_module_x:f", "--input-shape", "3"], "cannot import no_such_module_x"),
                (["--model", "user_models:nope", "--input-shape", "3"], "has no attribute 'nope'"),
                (["--model", "user_models:not_a_module", "--input-shape", "3"], "not a torch.nn.Module"),
                (["--model", "user_models:tiny_net", "--input-shape", "3,x"], "want sizes"),
                (["--model", "user_models:tiny_net", "--input-shape", "3:int7"], "unknown dtype"),
                (["--model", "resnet5"], "not a zoo model"),
                (["--model", "mlp", "--input-shape", "3"], "has its own inputs"),
                (["--model", "nofile.py:f", "--input-shape", "3"], "no such file"),
        ):
            r, _, _ = self.run_export(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, (args, r.stderr))
            self.assertIn(want, r.stderr, args)


    def test_bad_output_path(self):
        # Output paths are checked before any work: one line, exit 2, no
        # traceback (the write used to fail after the export, in 22 lines).
        with tempfile.TemporaryDirectory() as d:
            plain = os.path.join(d, "plain")
            open(plain, "w").close()
            missing = os.path.join(d, "nodir")
            for args, want in (
                    (["-o", os.path.join(missing, "x.json")], "-o %s: folder %s does not exist" % (
                        os.path.join(missing, "x.json"), missing)),
                    (["-o", d], "-o %s: is a folder" % d),
                    (["-o", os.path.join(plain, "x.json")], "-o %s: %s is not a folder" % (
                        os.path.join(plain, "x.json"), plain)),
                    (["-o", os.path.join(d, "x.json"), "--profile", "--cost-table", os.path.join(missing, "c.json")],
                     "--cost-table %s: folder %s does not exist" % (os.path.join(missing, "c.json"), missing)),
            ):
                r = subprocess.run(command("torchexport", "--model", "mlp", *args), capture_output=True, text=True,
                                   env=env())
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertEqual(r.stderr, "torchexport: %s\n" % want, args)
                self.assertFalse(os.path.exists(os.path.join(d, "x.json")), args)


    def test_flags_checked_before_torch(self):
        # Flags, output paths and zoo names are checked before torch is
        # imported (exportflags): each is one line and exit 2 in a python
        # that has not imported torch afterwards, as a user's typo is.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "x.json")
            cases = [
                (["--model", "mlp", "-o", os.path.join(d, "nodir", "x.json")],
                 "-o %s: folder %s does not exist" % (os.path.join(d, "nodir", "x.json"), os.path.join(d, "nodir"))),
                (["--model", "resnet5", "-o", out], "--model 'resnet5': not a zoo model ("),
                (["--model", "mlp", "--batch", "-1", "-o", out], "--batch -1: want a positive size"),
                (["--model", "mlp", "--profile-steps", "0", "-o", out], "--profile-steps 0: want at least 1"),
                (["--model", "mlp", "--profile-device", "cpu", "-o", out], "--cost-table and --profile-device need --profile"),
            ]
            script = ("import contextlib, io, json, sys\n"
                      "from placer_torch import torchexport\n"
                      "res = []\n"
                      "for args in json.loads(sys.argv[1]):\n"
                      "    e = io.StringIO()\n"
                      "    with contextlib.redirect_stderr(e):\n"
                      "        res.append((torchexport.main(args), e.getvalue()))\n"
                      "print(json.dumps([res, 'torch' in sys.modules]))\n")
            r = subprocess.run([command("torchexport")[0], "-c", script, json.dumps([a for a, _ in cases])],
                               capture_output=True, text=True, env=env())
            self.assertEqual(r.returncode, 0, r.stderr)
            res, imported = json.loads(r.stdout)
            for (args, want), (code, err) in zip(cases, res):
                self.assertEqual(code, 2, (args, err))
                self.assertEqual(len(err.strip().splitlines()), 1, (args, err))
                self.assertIn("torchexport: " + want, err, args)
            self.assertEqual(len(res), len(cases))
            self.assertFalse(imported, "torch imported before the flags' errors")
            self.assertFalse(os.path.exists(out))

    def test_zoo_names(self):
        # exportflags.ZOO_MODELS (the names torchexport checks before
        # torch) are the zoo's models, in its order.
        self.assertEqual(exportflags.ZOO_MODELS, tuple(zoo.MODELS))


class OnnxTest(unittest.TestCase):
    def test_onnx_import(self):
        try:
            import onnx
        except ImportError:
            self.fail("onnx is not installed (make test-python installs it: python3-onnx, and onnx in the virtualenv)")
        with tempfile.TemporaryDirectory() as d:
            model = zoo.SmallCNN().eval()
            x = torch.randn(2, 3, 16, 16)
            raw = os.path.join(d, "raw.onnx")
            # The TorchScript-based exporter (torch 1.13's only one; on
            # torch 2.9 and later dynamo=False) writes no shapes for the
            # intermediate values.
            legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
            torch.onnx.export(model, (x,), raw, opset_version=13, input_names=["x"], output_names=["y"], **legacy)
            # Without shape inference the intermediate values have no shape.
            r = placer("eval", "--graph", raw, check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("run shape inference first", r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            path = os.path.join(d, "cnn.onnx")
            onnx.save(onnx.shape_inference.infer_shapes(onnx.load(raw)), path)
            r = placer("eval", "--graph", path, "--json")
            rep = json.loads(r.stdout)
            self.assertGreater(rep["ops"], 5)
            # A truncated file: one line.
            with open(path, "rb") as f:
                data = f.read()
            bad = os.path.join(d, "bad.onnx")
            with open(bad, "wb") as f:
                f.write(data[: len(data) // 2])
            r = placer("eval", "--graph", bad, check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_onnx_import_dynamo(self):
        # torch.onnx.export's default on torch 2.9 and later (torch.export
        # and onnxscript) writes the intermediate values' shapes: the file
        # imports as it is.
        if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
            self.skipTest("torch %s has no torch.export-based ONNX exporter (torch 2.x has)" % torch.__version__)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cnn.onnx")
            torch.onnx.export(zoo.SmallCNN().eval(), (torch.randn(2, 3, 16, 16),), path, input_names=["x"],
                              output_names=["y"], dynamo=True)
            rep = json.loads(placer("eval", "--graph", path, "--json").stdout)
            # Two convolutions, batch norm, two ReLUs, pooling, the classifier.
            self.assertGreaterEqual(rep["ops"], 7)


if __name__ == "__main__":
    unittest.main()
