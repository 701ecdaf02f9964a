"""Mixture-of-experts models from Hugging Face export with no extra flag
(docs/import.md, "Ops fake tensors refuse"): transformers'
experts call torch._grouped_mm, whose fake-tensor rule refuses FP32, so
the exporter runs that op on real CPU zeros of its inputs and the rest of
the step on fake tensors, with one warning line; an op that cannot run
apart re-records the whole step on real tensors (as --real does), and a
step that fails there too is one line pointing to --real, never a
traceback. Tiny MixtralForCausalLM and Qwen3MoeForCausalLM from their
config classes (tiny_moe.py: random weights, nothing downloaded); skipped
without transformers' MoE models or torch._grouped_mm (Debian's 1.13)."""

import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

import torch

from placer_torch import exporter, torchexport  # torchexport: the command line

from . import tiny_moe
from ..commands import command, env

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import transformers
    HAVE = hasattr(transformers, "MixtralForCausalLM") and hasattr(transformers, "Qwen3MoeForCausalLM") and \
        hasattr(torch, "_grouped_mm")
except ImportError:
    HAVE = False
BATCH, SEQ = 2, 8


def tokens():
    return torch.zeros(BATCH, SEQ, dtype=torch.long), None


def lm_sum(out, target):
    return out.float().sum()


def export(build, fake=True):
    e = io.StringIO()
    with contextlib.redirect_stderr(e):
        graph, meta = exporter.export_training_step(build, tokens, lm_sum, torch.optim.Adam, {"lr": 1e-3},
                                                    name="moe", fake=fake)
    return graph, meta, e.getvalue()


def grouped(graph):
    return [(o["name"], o["shape"], o.get("flops", 0)) for o in graph["ops"] if o["type"] == "_grouped_mm"]


@unittest.skipUnless(HAVE, "needs transformers' Mixtral and Qwen3-MoE models and torch._grouped_mm")
class MoETest(unittest.TestCase):
    def test_mixtral_command_line(self):
        # The command line, as a user runs it: exit 0, the graph written,
        # one warning line naming the op, no traceback (torch's own log of
        # the meta kernel's failure is silenced too).
        out = os.path.join(tempfile.mkdtemp(prefix="torchexport-moe-"), "mixtral.json")
        r = subprocess.run(command("torchexport", "--model", os.path.join(HERE, "tiny_moe.py") + ":mixtral",
                                   "--input-shape", "%d:int64" % SEQ, "--batch", str(BATCH), "-o", out),
                           capture_output=True, text=True, env=env())
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertNotIn("Traceback", r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("fake tensors refuse aten._grouped_mm.default", lines[0])
        self.assertIn("real CPU zeros", lines[0])
        with open(out[:-5] + ".meta.json") as f:
            meta = json.load(f)
        self.assertTrue(meta["fake"])
        self.assertEqual(meta["real_ops"], ["aten._grouped_mm.default"])

    def check_like_real(self, build):
        g, meta, err = export(build)
        self.assertTrue(meta["fake"])
        self.assertEqual(meta["real_ops"], ["aten._grouped_mm.default"])
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        gr, _, _ = export(build, fake=False)
        # The experts' grouped matmuls (forward: gate-up and down per
        # layer; backward: each operand's gradient) as --real records
        # them: names, shapes and FLOPs.
        self.assertEqual(grouped(g), grouped(gr))
        self.assertEqual(len(grouped(g)), 2 * 2 * 3)  # 2 layers x 2 matmuls x (forward + 2 gradients)
        return g, meta

    def test_mixtral(self):
        g, _ = self.check_like_real(tiny_moe.mixtral)
        # Forward gate-up of layer 0: 16 tokens x top 2 = 32 rows, 32 ->
        # 2 x 64 (gate and up), 2 FLOPs a multiply-add.
        ops = {n: (shape, f) for n, shape, f in grouped(g)}
        self.assertEqual(ops["model.layers.0.mlp.experts/_grouped_mm"], ([32, 128], 2 * 32 * 32 * 128))

    def test_qwen3_moe(self):
        self.check_like_real(tiny_moe.qwen3_moe)

    def test_whole_step_on_real_tensors(self):
        # An op that cannot run apart (here: every op is taken as writing
        # its inputs): the whole step re-recorded on real tensors, one line.
        with mock.patch.object(exporter, "_functional", lambda func: False):
            g, meta, err = export(tiny_moe.qwen3_moe)
        self.assertFalse(meta["fake"])
        self.assertIn("aten._grouped_mm.default", meta["fake_refused"])
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn("recorded the step on real CPU tensors instead (as --real does)", lines[0])
        self.assertEqual(len(grouped(g)), 12)

    def test_no_fallback_is_one_line(self):
        # Fake tensors refuse the op and the step fails on real tensors too
        # (here: no memory for it): one line naming both, pointing to --real.
        record = exporter._record

        def no_real(*args, **kwargs):
            if not args[5]:  # fake
                raise MemoryError("cannot allocate 94 GiB")
            return record(*args, **kwargs)
        e = io.StringIO()
        with mock.patch.object(exporter, "_functional", lambda func: False), \
                mock.patch.object(exporter, "_record", no_real), contextlib.redirect_stderr(e):
            code = torchexport.main(["--model", os.path.join(HERE, "tiny_moe.py") + ":mixtral", "--input-shape",
                                     "%d:int64" % SEQ, "-o", os.path.join(tempfile.mkdtemp(), "m.json")])
        self.assertEqual(code, 1)
        lines = e.getvalue().strip().splitlines()
        self.assertNotIn("Traceback", e.getvalue())
        self.assertIn("torchexport: fake tensors refuse aten._grouped_mm.default", lines[-1])
        self.assertIn("MemoryError: cannot allocate 94 GiB", lines[-1])
        self.assertIn("--real", lines[-1])
        self.assertEqual(len(lines), 2, e.getvalue())  # the re-record's warning, then the failure


if __name__ == "__main__":
    unittest.main()
