"""Tests of the execution settings (torchexport --device, --optimizer-impl,
--autocast, --tf32-*, --cudnn-rnn, --cuda-graphs, --compile;
docs/graph-format.md, "Execution settings"), with hand-computed figures.
They run on CPU, on current torch and on Debian's 1.13."""

import json
import os
import subprocess
import tempfile
import unittest

import torch

from placer_torch import exporter, torchexport  # torchexport: the command line

from ..commands import PLACER
TORCH2 = int(torch.__version__.split(".")[0]) >= 2
# torch 2.4 and later run a fused Adam on CPU tensors, which the exporter
# records on; 1.13 refuses it off CUDA.
FUSED_ON_CPU = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 4)


def three_params():
    """Three parameters: a 4 -> 3 linear's weight (12) and bias (3), a
    3 -> 2 linear's weight without bias (6): 21 floats, 84 bytes."""
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2, bias=False))


def export(build, shape, impl=None, loss="sum", opt=torch.optim.Adam, execution=None, batch_dim=None, **kw):
    if execution is None and impl is not None:
        execution = {"optimizer_impl": impl}
    return exporter.export_training_step(build, lambda: ((torch.randn(*shape),), None),
                                         exporter._custom_loss(loss), opt, {"lr": 0.1}, None,
                                         execution=execution, batch_dim=batch_dim, **kw)


def phase(graph, meta, name):
    return [o for o, m in zip(graph["ops"], meta["ops"]) if m["phase"] == name]


class OptimizerImplTest(unittest.TestCase):
    def update(self, impl):
        """The update's ops, optimizer.step()'s start (test_step_barrier)
        aside."""
        g, meta = export(three_params, (5, 4), impl)
        return g, meta, [o for o in phase(g, meta, "optimizer") if o["type"] != "OptimizerStep"]

    def test_step_barrier(self):
        # Every implementation starts with optimizer.step()'s op, which
        # reads the three gradients (a dependency, no bytes) and writes a
        # 0-byte tensor that the update's first ops read: none can start
        # before the backward has ended. The for-loop's first op of each
        # parameter (its step's add_) reads it; so do foreach's ops that
        # read only the state and the gradients.
        for impl in ("for-loop", "foreach") + (("fused",) if FUSED_ON_CPU else ()):
            g, meta = export(three_params, (5, 4), impl)
            ops = phase(g, meta, "optimizer")
            step = ops[0]
            self.assertEqual((step["type"], step["name"]), ("OptimizerStep", "optimizer/step"), impl)
            self.assertEqual(g["execution"]["optimizer_from"], "optimizer/step")
            self.assertFalse(step.get("bytes_read") or step.get("bytes_written") or step.get("flops"))
            into = [t for t in g["tensors"] if "optimizer/step" in t["consumers"]]
            self.assertEqual(len(into), 3, (impl, into))  # the gradients
            self.assertTrue(all(t["bytes"] > 0 for t in into))
            out = [t for t in g["tensors"] if t["producer"] == "optimizer/step"]
            self.assertEqual([t["bytes"] for t in out], [0])
            names = {o["name"] for o in ops}
            # Every update op follows it: through it or through an update op.
            after = {"optimizer/step"}
            for o in ops[1:]:
                srcs = {t["producer"] for t in g["tensors"] if o["name"] in t["consumers"]}
                self.assertTrue(srcs & after, (impl, o["name"], srcs))
                after.add(o["name"])
            self.assertEqual(after, names)
            if impl == "for-loop":
                # Per parameter the ops that read only the state and the
                # gradient: the step's add_ and the first op on each slot
                # (torch 2.x: exp_avg.lerp_, exp_avg_sq.mul_; 1.13: two
                # mul_s): 3 x 3.
                heads = out[0]["consumers"]
                self.assertEqual(len(heads), 9, heads)

    def test_for_loop_is_todays(self):
        # The default: the graph of an export without settings, op for op.
        g0, _ = export(three_params, (5, 4))
        g1, _ = export(three_params, (5, 4), "for-loop")
        self.assertNotIn("execution", g0)
        self.assertEqual(g1["execution"]["optimizer_impl"], "for-loop")
        self.assertEqual(g0["ops"], g1["ops"])
        self.assertEqual(g0["tensors"], g1["tensors"])

    def test_for_loop_state_in_place(self):
        # The for-loop Adam per parameter: step += 1, exp_avg.lerp_ (1.13:
        # mul_, add_), exp_avg_sq.mul_, .addcmul_, sqrt, div, add_(eps),
        # param.addcdiv_. The updates of the step, the slots and the
        # parameter write resident memory (the Parameter op's bytes):
        # their outputs are 0-byte tensors. Only the denominator holds
        # memory: sqrt, div and its in-place add_, P each = 3 x 84 = 252
        # bytes over the three parameters. (Until 2026-11-25 the slots'
        # lerp_, mul_ and addcmul_ outputs were new memory too, 6P = 504:
        # exp_avg_sq.mul_ reads only the state, so the simulator ran it
        # first and held its output through forward and backward, 0.49
        # GiB of bert_base's predicted peak.)
        g, meta, ops = self.update("for-loop")
        names = {o["name"] for o in ops}
        held = [(t["producer"], t["bytes"]) for t in g["tensors"] if t["producer"] in names and t["bytes"]]
        self.assertEqual(sum(b for _, b in held), 3 * 84, held)
        kinds = sorted({p.rsplit("/", 1)[1].split("#")[0] for p, _ in held})
        self.assertEqual(kinds, ["add_", "div", "sqrt"])

    @unittest.skipUnless(TORCH2, "torch 1.13's foreach Adam has other ops (9; tested below)")
    def test_foreach_by_hand(self):
        # torch 2.x's _multi_tensor_adam, one group of the three
        # parameters (P = 84 bytes, 21 elements; steps 3 x 4 B = 12):
        #   _foreach_add_(steps, tensor 1.0)        reads 12 + 4, writes 12
        #   _foreach_lerp_(exp_avgs, grads)          reads 2P, writes P
        #   _foreach_mul_(exp_avg_sqs)               reads P, writes P
        #   _foreach_addcmul_(exp_avg_sqs, g, g)     reads 3P, writes P
        #   _foreach_sqrt(exp_avg_sqs)               reads P, writes P (new)
        #   _foreach_div_(sqrt, bias corrections)    reads P, writes P
        #   _foreach_add_(sqrt, eps)                 reads P, writes P
        #   _foreach_addcdiv_(params, m, sqrt)       reads 3P, writes P
        # 8 ops (8 dispatches; the for-loop's 8 per parameter are 24),
        # reads 16 + 12P = 1024, writes 12 + 7P = 600; FLOPs one per
        # element written: 3 + 7 x 21 = 150, the for-loop's too.
        g, meta, ops = self.update("foreach")
        P = 84
        self.assertEqual([o["type"] for o in ops], ["_foreach_add_", "_foreach_lerp_", "_foreach_mul_",
                                                     "_foreach_addcmul_", "_foreach_sqrt", "_foreach_div_",
                                                     "_foreach_add_", "_foreach_addcdiv_"])
        self.assertEqual(sum(o.get("bytes_read", 0) for o in ops), 16 + 12 * P)
        self.assertEqual(sum(o.get("bytes_written", 0) for o in ops), 12 + 7 * P)
        self.assertEqual(sum(o.get("flops", 0) for o in ops), 150)
        _, _, loop = self.update("for-loop")
        self.assertEqual(len(loop), 24)
        self.assertEqual(sum(o.get("flops", 0) for o in loop), 150)
        # One group: no op belongs to one module.
        self.assertTrue(all("colocation" not in o for o in ops))
        self.assertEqual(g["execution"]["optimizer_from"], "optimizer/step")

    @unittest.skipIf(not TORCH2, "torch 1.13's _multi_tensor_adam differs (test_foreach_torch113)")
    def test_foreach_launches(self):
        # Each foreach op's kernels as multi_tensor_apply launches them on
        # CUDA: the three parameters (12, 3, 6 elements) fit one launch at
        # any depth; the step counters (0-dimensional, on the CPU) none.
        _, _, ops = self.update("foreach")
        self.assertEqual([o.get("launches") for o in ops], [0, 1, 1, 1, 1, 1, 1, 1])
        _, _, loop = self.update("for-loop")
        self.assertTrue(all("launches" not in o for o in loop))

    @unittest.skipIf(TORCH2, "torch 2.x: test_foreach_by_hand")
    def test_foreach_torch113(self):
        # torch 1.13's _multi_tensor_adam: 9 multi-tensor ops for the group.
        _, _, ops = self.update("foreach")
        self.assertEqual(len(ops), 9)
        self.assertTrue(all(o["type"].startswith("_foreach_") for o in ops))

    @unittest.skipUnless(FUSED_ON_CPU, "fused Adam on CPU tensors needs torch 2.4 (refusal tested below)")
    def test_fused_by_hand(self):
        # torch 2.x's fused Adam: the step counts' _foreach_add_ (reads
        # and writes 12) and one _fused_adam_ for the group, which reads
        # params, grads, exp_avgs, exp_avg_sqs (4P) and the steps (12) =
        # 348 and writes params, exp_avgs, exp_avg_sqs (3P) = 252 (its
        # gradients are written only when it unscales them); its FLOPs
        # are the for-loop's 7 per element: 147. 2 ops, reads 360, writes
        # 264: against foreach's 8 ops, 1024 and 600.
        g, meta, ops = self.update("fused")
        P = 84
        self.assertEqual([o["type"] for o in ops], ["_foreach_add_", "_fused_adam_"])
        self.assertEqual([o.get("bytes_read", 0) for o in ops], [12, 4 * P + 12])
        self.assertEqual([o.get("bytes_written", 0) for o in ops], [12, 3 * P])
        self.assertEqual(ops[1]["flops"], 7 * 21)
        self.assertEqual(g["execution"]["optimizer_impl"], "fused")
        # The parameters' and slots' new values hold no new memory: the
        # update's outputs are tensors of 0 bytes.
        names = {o["name"] for o in ops}
        for t in g["tensors"]:
            if t["producer"] in names and t["producer"].endswith("_fused_adam_"):
                self.assertEqual(t["bytes"], 0)

    @unittest.skipIf(FUSED_ON_CPU, "this torch records fused Adam")
    def test_fused_refused(self):
        with self.assertRaises(exporter.SettingError) as c:
            self.update("fused")
        self.assertIn("torch 2.4 or later", str(c.exception))
        self.assertNotIn("\n", str(c.exception))
        err = _main(["--model", "mlp", "--optimizer-impl", "fused", "-o", os.path.join(tempfile.mkdtemp(), "m.json")])
        self.assertEqual(err[0], 2)
        self.assertEqual(len(err[1].strip().splitlines()), 1, err[1])


def _main(argv):
    import contextlib
    import io
    e = io.StringIO()
    with contextlib.redirect_stderr(e), contextlib.redirect_stdout(io.StringIO()):
        rc = torchexport.main(argv)
    return rc, e.getvalue()


class AutocastTest(unittest.TestCase):
    def test_linear_bf16(self):
        # Linear(8 -> 4) on a batch of 2 under bf16 autocast, loss
        # output.float().sum(). Forward, by hand:
        #   _to_copy input   f32 -> bf16: reads 2x8x4 = 64, writes 32
        #   _to_copy weight  f32 -> bf16: reads 4x8x4 = 128, writes 64
        #   _to_copy bias    f32 -> bf16: reads 16, writes 8
        #   addmm bf16 [2, 4]: reads 8 + 32 + 64 = 104, writes 2x4x2 = 16,
        #     2x2x8x4 = 128 FLOPs
        #   _to_copy out     bf16 -> f32 (the loss's .float()), sum f32.
        # Backward: the matmuls in bf16, the weight's and bias's gradients
        # cast back to f32 (reads 64 and 8, writes 128 and 16) before the
        # f32 update.
        g, meta = export(lambda: torch.nn.Linear(8, 4), (2, 8), execution={"autocast": "bf16"}, opt=torch.optim.SGD)
        fwd = phase(g, meta, "forward")
        casts = [o for o in fwd if o["type"] == "_to_copy"]
        self.assertEqual([(o["dtype"], o["shape"], o["bytes_read"], o["bytes_written"]) for o in casts],
                         [("bf16", [2, 8], 64, 32), ("bf16", [4, 8], 128, 64), ("bf16", [4], 16, 8),
                          ("f32", [2, 4], 16, 32)])
        mm = [o for o in fwd if o["type"] == "addmm"]
        self.assertEqual([(o["dtype"], o["bytes_read"], o["bytes_written"], o["flops"]) for o in mm],
                         [("bf16", 104, 16, 128)])
        bwd = phase(g, meta, "backward")
        self.assertEqual({o["dtype"] for o in bwd if o["class"] == "matmul"}, {"bf16"})
        back = [(o["dtype"], o["shape"], o["bytes_read"], o["bytes_written"]) for o in bwd if o["type"] == "_to_copy"]
        self.assertIn(("f32", [4, 8], 64, 128), back)
        self.assertIn(("f32", [4], 8, 16), back)
        self.assertEqual({o["dtype"] for o in phase(g, meta, "optimizer")}, {"f32"})
        self.assertEqual(g["execution"]["autocast"], "bf16")
        for o in g["ops"]:
            self.assertIn(o["dtype"], ("f32", "bf16", "i64"), o["name"])

    def test_fp32_list(self):
        # cross-entropy's log_softmax keeps the logits' dtype (its composite
        # passes it explicitly), then nll_loss, on the float32 list, casts
        # the log-probabilities to f32; layer_norm is on the float32 list
        # too; a weight used twice is cast once.
        class Tied(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(8, 8))
                self.ln = torch.nn.LayerNorm(8)

            def forward(self, x):
                h = torch.nn.functional.linear(x, self.w)
                return torch.nn.functional.linear(self.ln(h), self.w)

        g, meta = export(Tied, (2, 8), loss="cross-entropy", execution={"autocast": "f16"}, opt=torch.optim.SGD)
        fwd = phase(g, meta, "forward")
        by = {}
        for o in fwd:
            by.setdefault(o["type"], []).append(o["dtype"])
        self.assertEqual(by["_log_softmax"], ["f16"])
        self.assertEqual(by["nll_loss_forward"], ["f32"])
        self.assertEqual(by["native_layer_norm"], ["f32"])
        self.assertEqual(by.get("mm", []) + by.get("addmm", []), ["f16", "f16"])
        w_casts = [o for o in fwd if o["type"] == "_to_copy" and o["shape"] == [8, 8]]
        self.assertEqual(len(w_casts), 1)  # cached, as under autocast

    def test_two_layer_mlp(self):
        # Linear(8 -> 16), ReLU, Linear(16 -> 4) on a batch of 2 under bf16
        # autocast, loss output.float().sum(). The casts autocast issues,
        # by hand (4 bytes an f32 element, 2 a bf16 one), each one kernel:
        #   forward: input [2, 8] reads 64, writes 32; weight 1 [16, 8]
        #   512 -> 256; bias 1 [16] 64 -> 32; the ReLU's output is bf16
        #   already, so the second linear casts only its weight [4, 16]
        #   256 -> 128 and bias [4] 16 -> 8; the loss's .float() of
        #   [2, 4] 16 -> 32. Six casts, 928 bytes read, 488 written.
        #   backward: the loss's gradient back to bf16 [2, 4] 32 -> 16;
        #   the weights' and biases' gradients to f32: [4, 16] 128 -> 256,
        #   [4] 8 -> 16, [16, 8] 256 -> 512, [16] 32 -> 64 (the input
        #   needs no gradient). Five casts, 456 read, 864 written.
        mlp = lambda: torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        g, meta = export(mlp, (2, 8), execution={"autocast": "bf16"}, opt=torch.optim.SGD)
        fwd = [o for o in phase(g, meta, "forward") if o["type"] == "_to_copy"]
        self.assertEqual(sorted((o["shape"], o["bytes_read"], o["bytes_written"]) for o in fwd),
                         sorted([([2, 8], 64, 32), ([16, 8], 512, 256), ([16], 64, 32), ([4, 16], 256, 128),
                                 ([4], 16, 8), ([2, 4], 16, 32)]))
        self.assertEqual((sum(o["bytes_read"] for o in fwd), sum(o["bytes_written"] for o in fwd)), (928, 488))
        bwd = [o for o in phase(g, meta, "backward") if o["type"] == "_to_copy"]
        self.assertEqual(sorted((o["shape"], o["bytes_read"], o["bytes_written"]) for o in bwd),
                         sorted([([2, 4], 32, 16), ([4, 16], 128, 256), ([4], 8, 16), ([16, 8], 256, 512),
                                 ([16], 32, 64)]))
        self.assertEqual((sum(o["bytes_read"] for o in bwd), sum(o["bytes_written"] for o in bwd)), (456, 864))

    def test_conv_bn_relu(self):
        # Conv2d(4 -> 8, 3x3, padding 1, no bias), BatchNorm2d(8), ReLU on
        # [2, 4, 4, 4] under bf16 autocast, loss output.float().sum().
        # The convolution casts its input (128 elements: 512 -> 256 bytes)
        # and weight (8x4x3x3 = 288: 1152 -> 576); batch norm is on none of
        # autocast's lists: it runs on the bf16 activations with its f32
        # weight, uncast, and so does the ReLU; the loss's .float() of [2,
        # 8, 4, 4] (256 elements) 512 -> 1024. Backward: that gradient back
        # to bf16 (1024 -> 512) and the convolution weight's to f32 (576 ->
        # 1152); batch norm's weight and bias get f32 gradients uncast.
        class CBR(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(4, 8, 3, padding=1, bias=False)
                self.bn = torch.nn.BatchNorm2d(8)

            def forward(self, x):
                return torch.relu(self.bn(self.conv(x)))

        g, meta = export(CBR, (2, 4, 4, 4), execution={"autocast": "bf16"}, opt=torch.optim.SGD)
        fwd = phase(g, meta, "forward")
        self.assertEqual(sorted((o["shape"], o["bytes_read"], o["bytes_written"]) for o in fwd if o["type"] == "_to_copy"),
                         sorted([([2, 4, 4, 4], 512, 256), ([8, 4, 3, 3], 1152, 576), ([2, 8, 4, 4], 512, 1024)]))
        by = {o["type"]: o["dtype"] for o in fwd}
        self.assertEqual((by["convolution"], by["native_batch_norm"], by["relu"]), ("bf16", "bf16", "bf16"))
        # torch 1.13's CPU batch norm returns its weight's and bias's
        # gradients in the bf16 input's dtype, which autograd casts to
        # their f32 (16 -> 32 bytes each): two casts more there, as the
        # recording's CPU kernels run them.
        bn = [] if TORCH2 else [([8], 16, 32), ([8], 16, 32)]
        bwd = phase(g, meta, "backward")
        self.assertEqual(sorted((o["shape"], o["bytes_read"], o["bytes_written"]) for o in bwd if o["type"] == "_to_copy"),
                         sorted([([2, 8, 4, 4], 1024, 512), ([8, 4, 3, 3], 576, 1152)] + bn))

    def test_cross_entropy(self):
        # Linear(8 -> 4) on a batch of 2 under bf16 autocast, loss
        # cross-entropy against class indices. As CUDA's autocast runs it
        # (torch 2.14.1 LossNLL.cpp, cross_entropy_loss_symint: log_softmax
        # with the logits' own dtype, then nll_loss on the float32 list),
        # by hand: log_softmax bf16 [2, 4] reads 16, writes 16; the cast to
        # f32 reads 16, writes 32; nll_loss in f32. Backward: nll_loss's
        # f32 gradient [2, 4] cast back to bf16 (32 -> 16) before
        # log_softmax's backward in bf16.
        g, meta = export(lambda: torch.nn.Linear(8, 4), (2, 8), loss="cross-entropy", execution={"autocast": "bf16"},
                         opt=torch.optim.SGD)
        fwd = [o for o in phase(g, meta, "forward") if o["type"] in ("_log_softmax", "_to_copy", "nll_loss_forward")]
        self.assertEqual([(o["type"], o["dtype"], o.get("bytes_read"), o.get("bytes_written")) for o in fwd[-3:]],
                         [("_log_softmax", "bf16", 16, 16), ("_to_copy", "f32", 16, 32), ("nll_loss_forward", "f32", 48, 8)])
        bwd = [(o["type"], o["dtype"]) for o in phase(g, meta, "backward")]
        i = bwd.index(("_log_softmax_backward_data", "bf16"))
        self.assertEqual(bwd[i - 1], ("_to_copy", "bf16"))

    @unittest.skipUnless(TORCH2, "torch 1.13's autocast lists are older")
    def test_fp32_list_2_14(self):
        # On torch 2.14.1's float32 list (autocast_mode.h AT_FORALL_FP32):
        # the upsampling kernels (F.interpolate but mode "area", an
        # adaptive average pool on no list) and logsumexp: their bf16
        # input is cast to f32 and they run in f32.
        class Up(torch.nn.Module):
            def __init__(self, mode):
                super().__init__()
                self.conv = torch.nn.Conv2d(4, 4, 1)
                self.mode = mode

            def forward(self, x):
                y = self.conv(x)
                if self.mode == "area":
                    return torch.nn.functional.interpolate(y, size=(2, 2), mode="area")
                return torch.nn.functional.interpolate(y, scale_factor=2, mode=self.mode)

        for mode, typ, dt in (("nearest", "upsample_nearest2d", "f32"), ("bilinear", "upsample_bilinear2d", "f32"),
                              ("area", "_adaptive_avg_pool2d", "bf16")):
            with self.subTest(mode=mode):
                g, meta = export(lambda: Up(mode), (1, 4, 4, 4), execution={"autocast": "bf16"}, opt=torch.optim.SGD)
                self.assertEqual([o["dtype"] for o in phase(g, meta, "forward") if o["type"] == typ], [dt])

        class LSE(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)

            def forward(self, x):
                return torch.logsumexp(self.lin(x), dim=1)

        g, meta = export(LSE, (2, 8), execution={"autocast": "bf16"}, opt=torch.optim.SGD)
        fwd = phase(g, meta, "forward")
        self.assertEqual([o["dtype"] for o in fwd if o["type"] == "logsumexp"], ["f32"])
        i = [o["type"] for o in fwd].index("logsumexp")
        self.assertEqual((fwd[i - 1]["type"], fwd[i - 1]["dtype"], fwd[i - 1]["shape"]), ("_to_copy", "f32", [2, 8]))

    def test_multihead_attention(self):
        # nn.MultiheadAttention computes its projections inside a Python
        # function of torch (multi_head_attention_forward): CUDA's
        # autocast casts them at the dispatcher, and so does the export
        # (its CPU autocast underneath): every forward matmul is bf16.
        class MHA(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = torch.nn.MultiheadAttention(16, 2)

            def forward(self, x):
                return self.attn(x, x, x, need_weights=False)[0]

        g, meta = export(MHA, (4, 2, 16), execution={"autocast": "bf16"}, opt=torch.optim.SGD)
        mm = [o for o in phase(g, meta, "forward") if o["class"] == "matmul"]
        self.assertGreaterEqual(len(mm), 2)
        self.assertEqual({o["dtype"] for o in mm}, {"bf16"}, [(o["name"], o["dtype"]) for o in mm])

    def test_off_is_todays(self):
        g0, _ = export(lambda: torch.nn.Linear(8, 4), (2, 8), opt=torch.optim.SGD)
        g1, _ = export(lambda: torch.nn.Linear(8, 4), (2, 8), execution={"autocast": "off"}, opt=torch.optim.SGD)
        self.assertEqual(g0["ops"], g1["ops"])


class RNN(torch.nn.Module):
    """A 2-layer LSTM (or GRU), 8 -> 16, and a 16 -> 4 head; input
    (seq 5, batch 3, 8)."""

    def __init__(self, mode="lstm"):
        super().__init__()
        self.rnn = (torch.nn.LSTM if mode == "lstm" else torch.nn.GRU)(8, 16, num_layers=2)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


class CudnnRNNTest(unittest.TestCase):
    def rnn_ops(self, mode, cudnn, **kw):
        g, meta = export(lambda: RNN(mode), (5, 3, 8), execution={"cudnn_rnn": cudnn}, opt=torch.optim.SGD,
                         batch_dim=1, **kw)
        ops = {ph: [o for o, m in zip(g["ops"], meta["ops"]) if m["phase"] == ph and m["module"] == "rnn"
                    and o["type"] not in ("zeros", "new_empty_strided", "copy_")] for ph in ("forward", "backward")}
        return g, ops

    def test_lstm_by_hand(self):
        # One op forward and one backward. Sizes (f32): input 5x3x8 = 480
        # B; h0, c0 2x3x16 = 384 each; weights: layer 0 64x8 + 64x16 + 2x64
        # = 1664 floats, layer 1 64x16 + 64x16 + 2x64 = 2176: 15,360 B.
        # Forward reads 480 + 2 x 384 + 15,360 = 16,608; writes the output
        # 5x3x16 = 960, hy, cy 384 each and the reserve
        # 2 layers x 5 x 3 x (4 gates + 2) x 16 x 4 B = 11,520 plus layer
        # 0's output 5x3x16x4 = 960: 12,480; total 14,208. Workspace: one
        # layer's input projection 5x3x64x4 = 3,840 (temp_bytes). FLOPs:
        # the per-gate recording's, 107,520 in the matmuls (per step 2x3x
        # (8+16)x64 in layer 0 and 2x3x(16+16)x64 in layer 1) and 6,720
        # elementwise: 114,240. Backward reads the output's gradient
        # (960), what forward read (16,608), the output (960) and the
        # reserve (12,480): 31,008; writes the weights' gradients, 15,360.
        g, ops = self.rnn_ops("lstm", True)
        fwd, bwd = ops["forward"], ops["backward"]
        self.assertEqual([o["type"] for o in fwd], ["_cudnn_rnn"])
        self.assertEqual([o["type"] for o in bwd], ["_cudnn_rnn_backward"])
        f, b = fwd[0], bwd[0]
        self.assertEqual((f["bytes_read"], f["bytes_written"], f["temp_bytes"], f["flops"]), (16608, 14208, 3840, 114240))
        self.assertEqual((b["bytes_read"], b["bytes_written"]), (31008, 15360))
        self.assertEqual(exporter.cudnn_rnn_sizes("lstm", 2, 1, 5, 3, 16, 4), (12480, 3840))
        # The reserve is a tensor from the forward op to the backward op.
        res = [t for t in g["tensors"] if t["producer"] == f["name"] and t["bytes"] == 12480]
        self.assertEqual(len(res), 1)
        self.assertEqual(res[0]["consumers"], [b["name"]])
        self.assertEqual(res[0].get("batch_dim"), 0)  # it grows with the batch
        # The per-gate recording (without cuDNN RNNs; on torch 2.x with
        # oneDNN held off, which would record one op a layer) has the same
        # FLOPs.
        _, per_gate = self.rnn_ops("lstm", False)
        self.assertEqual(sum(o.get("flops", 0) for o in per_gate["forward"]), 114240)
        self.assertGreater(len(per_gate["forward"]), 100)
        self.assertFalse([o for o in per_gate["forward"] if "mkldnn" in o["type"]])
        if os.path.exists(PLACER):
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "rnn.json")
                with open(out, "w") as fh:
                    json.dump(g, fh)
                r = subprocess.run([PLACER, "eval", "--graph", out, "--json"], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)

    def test_gru(self):
        # GRU: 3 gates, reserve 2 x 5 x 3 x (3 + 1) x 16 x 4 + 960 = 8,640,
        # workspace 5 x 3 x 48 x 4 = 2,880; one op each way.
        g, ops = self.rnn_ops("gru", True)
        self.assertEqual([o["type"] for o in ops["forward"]], ["_cudnn_rnn"])
        self.assertEqual([o["type"] for o in ops["backward"]], ["_cudnn_rnn_backward"])
        self.assertEqual(ops["forward"][0]["temp_bytes"], 2880)
        self.assertEqual(exporter.cudnn_rnn_sizes("gru", 2, 1, 5, 3, 16, 4), (8640, 2880))

    def test_autocast(self):
        # Under autocast the cuDNN op runs in the low dtype, as CUDA's
        # autocast casts an LSTM's input and weights.
        _, ops = self.rnn_ops("lstm", True)
        g, meta = export(lambda: RNN(), (5, 3, 8), execution={"cudnn_rnn": True, "autocast": "bf16"},
                         opt=torch.optim.SGD, batch_dim=1)
        f = [o for o in g["ops"] if o["type"] == "_cudnn_rnn"]
        self.assertEqual([o["dtype"] for o in f], ["bf16"])
        self.assertEqual(f[0]["bytes_read"], 16608 // 2)


class SettingsTest(unittest.TestCase):
    def test_defaults(self):
        s = exporter.execution_settings(device="cuda")
        self.assertEqual((s["optimizer_impl"], s["tf32_matmul"], s["tf32_cudnn"], s["cudnn_rnn"]),
                         ("foreach", False, True, True))
        s = exporter.execution_settings()
        self.assertEqual((s["optimizer_impl"], s["tf32_cudnn"], s["cudnn_rnn"]), ("for-loop", True, False))
        for bad in ({"device": "tpu"}, {"optimizer_impl": "fast"}, {"autocast": "f8"}, {"compile": "max"}):
            with self.assertRaises(ValueError):
                exporter.execution_settings(**bad)

    def test_command_line(self):
        # The flags land in the graph's execution object, before its ops,
        # and placer reads it (eval --host --tf32 graph).
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "mlp.json")
            rc, err = _main(["--model", "mlp", "--tf32-matmul", "on", "--tf32-cudnn", "off", "--cuda-graphs",
                             "--compile", "reduce-overhead", "-o", out])
            self.assertEqual(rc, 0, err)
            with open(out) as f:
                g = json.load(f)
            self.assertEqual(list(g).index("execution"), list(g).index("ops") - 1)
            e = g["execution"]
            self.assertEqual(e, {"version": 1, "optimizer": "adam", "optimizer_impl": "for-loop",
                                 "optimizer_from": e["optimizer_from"], "autocast": "off", "tf32_matmul": True,
                                 "cuda_graphs": True, "compile": "reduce-overhead"})
            names = [o["name"] for o in g["ops"]]
            with open(out[:-5] + ".meta.json") as f:
                meta = json.load(f)
            first = [m["phase"] for m in meta["ops"]].index("optimizer")
            self.assertEqual(names.index(e["optimizer_from"]), first)
            if os.path.exists(PLACER):
                r = subprocess.run([PLACER, "eval", "--graph", out, "--host", "--json"], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
            # Without a flag: no execution object.
            rc, err = _main(["--model", "mlp", "-o", out])
            self.assertEqual(rc, 0, err)
            with open(out) as f:
                self.assertNotIn("execution", json.load(f))


class MultiTensorLaunchesTest(unittest.TestCase):
    def test_by_hand(self):
        # (sizes, depth, launches), counted as MultiTensorApply.cuh's loop:
        # 200 small tensors at depth 1 fill 110 then 90; at depth 4, 36,
        # 36, 36, 36, 36 and 20; one tensor of 400 chunks fills 320 blocks
        # and carries 80 into a second launch; a tensor whose last chunk is
        # the 320th block ends one, the next small one takes another; empty
        # tensors are skipped, and none at all launch nothing.
        C = 65536
        for sizes, depth, want in [([10] * 200, 1, 2), ([10] * 200, 4, 6), ([400 * C], 2, 2),
                                   ([319 * C + 1, 5], 1, 2), ([1, 0, 1], 4, 1), ([0, 0], 1, 0), ([], 3, 0)]:
            self.assertEqual(exporter.multi_tensor_launches(sizes, depth), want, (len(sizes), depth))
        self.assertIsNone(exporter.multi_tensor_launches([1], 6))


if __name__ == "__main__":
    unittest.main()
