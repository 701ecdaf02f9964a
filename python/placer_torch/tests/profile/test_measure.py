"""measure.py as placer profile runs it, on the CPU: what every plan needs
(the embedding, the loss, the optimizer's step) is timed before the
layer shapes, so that a budget cut leaves out layer shapes rather than
them; --device cuda without a GPU is refused in one line (exit 2) rather
than the CPU profiled; torch's deprecation warnings of the two
collectives it calls are not printed, other warnings are."""

import json
import subprocess
import sys
import time
import unittest

import torch

from placer_torch import child


def request(**kw):
    """A tiny Llama's request, one process, two layer shapes."""
    shape = {"tp": 1, "mbs": 1, "seq": 32}
    req = {"model": {"layers": 1, "hidden": 32, "heads": 2, "kv_heads": 2, "ffn": 64, "vocab": 64, "seq": 32,
                     "experts": 0, "topk": 0, "expert_ffn": 0, "shared": 0, "qk_norm": 0},
           "device": "cpu", "procs": 1, "threads": 1, "budget_s": 60, "warmup": 1, "repeats": 1, "loop_s": 0.001,
           "layers": [dict(shape, recompute="none"), dict(shape, mbs=2, recompute="none")],
           "embeddings": [shape], "losss": [shape], "optimizer_params": 1000,
           "groups": [2], "ops": ["all_reduce"], "sizes": [65536], "fp8": []}
    req.update(kw)
    return req


def run(req):
    return subprocess.run(child.command("placer_torch.profile.measure", json.dumps(req)), env=child.env(),
                          capture_output=True, text=True, timeout=120)


class MeasureTest(unittest.TestCase):
    def test_order(self):
        # The embedding, the loss and the optimizer before the layers:
        # before, the layers came first, and 4 processes on 2 cores spent
        # a 5-minute budget on them, measuring no embedding, loss or
        # collective.
        r = run(request())
        self.assertEqual(r.returncode, 0, r.stderr)
        kinds = [json.loads(x)["kind"] for x in r.stdout.splitlines()]
        self.assertEqual(kinds, ["meta", "host", "embedding", "loss", "optimizer", "layer", "layer"])
        # A deadline already passed (placer's, from its start): the
        # optimizer's step (a few milliseconds) still, no shape.
        r = run(request(deadline=time.time() - 1))
        self.assertEqual(r.returncode, 0, r.stderr)
        kinds = [json.loads(x)["kind"] for x in r.stdout.splitlines()]
        self.assertEqual(kinds, ["meta", "host", "optimizer"])
        self.assertIn("budget spent: embedding shapes from 1 of 1 on left out", r.stderr)

    @unittest.skipIf(torch.cuda.is_available(), "a GPU is here")
    def test_cuda_refused(self):
        r = run(request(device="cuda"))
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        self.assertEqual(len(lines), 1)
        self.assertEqual(lines[0]["kind"], "refused")
        self.assertTrue(lines[0]["error"].startswith("--device cuda: torch %s sees no CUDA device" % torch.__version__))

    def test_deprecations_dropped(self):
        # A fresh process that imports measure, as the processes mp.spawn
        # starts do: its filter drops these two (eight lines of them in a
        # 4-process profile's progress before); another FutureWarning
        # still shows.
        code = ("import warnings, placer_torch.profile.measure\n"
                "for op in ('all_gather_into_tensor', 'reduce_scatter_tensor', 'broadcast'):\n"
                "    warnings.warn_explicit('`torch.distributed.%s` is deprecated. Please use x instead.' % op,"
                " FutureWarning, 'c10d_logger.py', 83)\n")
        r = subprocess.run([sys.executable, "-c", code], env=child.env(), capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("all_gather_into_tensor", r.stderr)
        self.assertNotIn("reduce_scatter_tensor", r.stderr)
        self.assertIn("FutureWarning: `torch.distributed.broadcast` is deprecated", r.stderr)


if __name__ == "__main__":
    unittest.main()
