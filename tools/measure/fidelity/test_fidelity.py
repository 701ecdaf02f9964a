"""Tests of tools/measure/fidelity (make test-python-debian), without a GPU.

The pure parts on hand-made numbers: the batch list, the errors and their
mean absolute values, the merged device intervals of a profile, the
table; the argument errors (one line, exit status 1). Then the whole
pipeline end to end on --device cpu with two tiny models defined here
(--model test_fidelity:tiny and test_fidelity:tiny_wide, through the
exporter's package.module:factory support), FP32, batches 4 and 2,
against the real bin/placer ($PLACER; skipped when absent): the exports
are profiled on the CPU, placer predicts them for an H100 (--hardware
h100), and the real step is timed on the CPU. Those predictions are not
comparable with a CPU step: the test checks the plumbing (the table
prints, the JSON has every field, the errors are finite, the calibration
is leave-one-out), not the accuracy, which only a GPU run measures.
"""

import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stderr, redirect_stdout

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import fidelity as fd

PLACER = os.environ.get("PLACER", os.path.join(ROOT, "bin", "placer"))
HAVE_PLACER = os.access(PLACER, os.X_OK)


def tiny():
    """The end-to-end test's model: 12 -> 32 -> 4."""
    return torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def tiny_wide():
    """A second model, so that each is calibrated on the other: 12 -> 64 -> 64 -> 4."""
    return torch.nn.Sequential(torch.nn.Linear(12, 64), torch.nn.GELU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 4))


class CPUPeakTest(unittest.TestCase):
    def test_by_hand(self):
        # Live at the start: a Linear(3, 2)'s weight and bias (8 floats,
        # 32 B), its Adam state after one step (2 x 32 B and the step's
        # 4 B... as this torch keeps it) and a 5-float input (20 B). The
        # step allocates 4,000 B, then 2,000 B, frees the first, then
        # allocates 8,000 B: at most 10,000 B live at once.
        model = torch.nn.Linear(3, 2)
        named = list(model.named_parameters())
        opt = torch.optim.Adam(model.parameters())
        model(torch.ones(1, 3)).sum().backward()
        opt.step()
        state = sum(v.numel() * v.element_size() for st in opt.state.values() for v in st.values()
                    if isinstance(v, torch.Tensor))
        self.assertGreaterEqual(state, 64)
        keep = []

        def step():
            a = torch.empty(1000)
            keep.append(torch.empty(500))
            del a
            keep.append(torch.empty(2000))
        got = fd.cpu_peak_bytes(step, model, named, [opt], (torch.ones(5),), None)
        self.assertEqual(got, 32 + state + 20 + 10000)


    def test_output_not_held(self):
        # The real step frees the model's output once the loss has read
        # it, as the exported graph does: a Linear(3, 1000)'s 8 x 1,000
        # floats (32,000 B) at batch 8 are gone before the backward runs,
        # which needs none of them (the loss, out.sum(), keeps no input).
        import weakref
        from placer_torch import exporter as te
        model = torch.nn.Linear(3, 1000)
        named = list(model.named_parameters())
        refs, alive = [], []

        class Check(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                alive.append(refs[-1]() is not None)
                return g

        def loss_fn(out, target):
            refs.append(weakref.ref(out))
            return Check.apply(out.sum())
        step = te.training_step(model, (torch.ones(8, 3),), None, loss_fn, [], named, "cpu")
        step()
        self.assertEqual(alive, [False])


class PureTest(unittest.TestCase):
    def test_batch_list(self):
        self.assertEqual(fd.batch_list(32), [32, 16, 8, 4])
        self.assertEqual(fd.batch_list(16), [16, 8, 4, 2])
        self.assertEqual(fd.batch_list(8), [8, 4, 2, 1])
        self.assertEqual(fd.batch_list(4), [4, 2, 1])  # 4/8 is below 1
        self.assertEqual(fd.batch_list(6), [6, 3, 1])
        self.assertEqual(fd.batch_list(1), [1])
        self.assertEqual(fd.batch_list(0), [])

    def test_errors(self):
        self.assertAlmostEqual(fd.pct_error(110.0, 100.0), 10.0)
        self.assertAlmostEqual(fd.pct_error(45.0, 50.0), -10.0)
        self.assertIsNone(fd.pct_error(None, 100.0))
        self.assertIsNone(fd.pct_error(1.0, None))
        self.assertIsNone(fd.pct_error(1.0, 0.0))
        self.assertIsNone(fd.pct_error(float("inf"), 1.0))
        self.assertIsNone(fd.pct_error(float("nan"), 1.0))
        self.assertAlmostEqual(fd.abs_diff(0.85, 0.9), -0.05)
        self.assertIsNone(fd.abs_diff(0.5, None))

    def test_preset_for(self):
        self.assertEqual(fd.preset_for("NVIDIA H200"), "h200")
        self.assertEqual(fd.preset_for("NVIDIA H100 80GB HBM3"), "h100")
        self.assertEqual(fd.preset_for("NVIDIA A100-SXM4-80GB"), "a100")
        self.assertEqual(fd.preset_for(""), "h100")  # a CPU run

    def test_strip_times(self):
        with tempfile.TemporaryDirectory() as d:
            g = os.path.join(d, "g.json")
            with open(g, "w") as f:
                json.dump({"ops": [{"name": "a", "time_s": 1e-5, "dispatch_s": 2e-5}, {"name": "b"}]}, f)
            fd.strip_times(g, os.path.join(d, "plain.json"))
            fd.strip_times(g, os.path.join(d, "kernels.json"), keep_dispatch=True)
            with open(os.path.join(d, "plain.json")) as f:
                self.assertEqual(json.load(f)["ops"][0], {"name": "a"})
            with open(os.path.join(d, "kernels.json")) as f:
                self.assertEqual(json.load(f)["ops"][0], {"name": "a", "dispatch_s": 2e-5})

    def test_mean_abs(self):
        self.assertEqual(fd.mean_abs([10.0, -20.0, None, float("nan")]), (15.0, 2))
        self.assertEqual(fd.mean_abs([None]), (None, 0))
        self.assertEqual(fd.mean_abs([]), (None, 0))

    def test_fill_errors_and_summary(self):
        rows = [
            {"real_ms": 100.0, "roofline_ms": 120.0, "calibrated_ms": 90.0, "measured_ms": 102.0,
             "real_peak_gib": 10.0, "roofline_peak_gib": 11.0, "calibrated_peak_gib": 11.0, "measured_peak_gib": 9.5,
             "real_busy": 0.8, "roofline_busy": 1.0, "calibrated_busy": 0.9, "measured_busy": 0.75},
            {"real_ms": 50.0, "roofline_ms": 40.0, "calibrated_ms": 55.0, "measured_ms": 49.0,
             "real_peak_gib": None, "roofline_peak_gib": 1.0, "calibrated_peak_gib": 1.0, "measured_peak_gib": 1.0,
             "real_busy": None, "roofline_busy": 1.0, "calibrated_busy": 1.0, "measured_busy": 1.0},
        ]
        for r in rows:
            fd.fill_errors(r)
        r = rows[0]
        self.assertAlmostEqual(r["roofline_err_pct"], 20.0)
        self.assertAlmostEqual(r["calibrated_err_pct"], -10.0)
        self.assertAlmostEqual(r["measured_err_pct"], 2.0)
        self.assertAlmostEqual(r["measured_peak_err_pct"], -5.0)
        self.assertAlmostEqual(r["roofline_busy_err"], 0.2)
        self.assertAlmostEqual(r["measured_busy_err"], -0.05)
        self.assertIsNone(rows[1]["measured_peak_err_pct"])
        self.assertIsNone(rows[1]["measured_busy_err"])
        s = fd.summary(rows)
        # step time: roofline |20|, |-20| -> 20; calibrated |-10|, |10| -> 10; measured |2|, |-2| -> 2
        self.assertAlmostEqual(s["roofline_ms_pct"], 20.0)
        self.assertAlmostEqual(s["calibrated_ms_pct"], 10.0)
        self.assertAlmostEqual(s["measured_ms_pct"], 2.0)
        self.assertEqual(s["measured_ms_pct_rows"], 2)
        # memory and busy: one row each (the second's real values are null)
        self.assertAlmostEqual(s["roofline_peak_pct"], 10.0)
        self.assertAlmostEqual(s["measured_peak_pct"], 5.0)
        self.assertEqual(s["measured_peak_pct_rows"], 1)
        self.assertAlmostEqual(s["calibrated_busy_abs"], 0.1)
        self.assertEqual(s["calibrated_busy_abs_rows"], 1)

    def test_merge_intervals(self):
        self.assertEqual(fd.merge_intervals([(5, 6), (0, 2), (1, 3)]), 4)
        self.assertEqual(fd.merge_intervals([(0, 10), (2, 3)]), 10)
        self.assertEqual(fd.merge_intervals([]), 0)

    def test_device_time(self):
        from torch.autograd import DeviceType

        class Range:
            def __init__(self, s, e):
                self.start, self.end = s, e

        class Ev:
            def __init__(self, dt, s, e, kernels=()):
                self.device_type, self.time_range, self.kernels = dt, Range(s, e), list(kernels)

        # microseconds: two overlapping kernels (0-100, 50-150) and a copy at 300-400: 250 us
        evs = [Ev(DeviceType.CPU, 0, 1000), Ev(DeviceType.CUDA, 0, 100), Ev(DeviceType.CUDA, 50, 150),
               Ev(DeviceType.CUDA, 300, 400)]
        self.assertAlmostEqual(fd.device_time(evs), 250e-6)

        class K:
            def __init__(self, d):
                self.duration = d
        self.assertAlmostEqual(fd.device_time([Ev(DeviceType.CPU, 0, 10, [K(30), K(20)])]), 50e-6)
        self.assertIsNone(fd.device_time([Ev(DeviceType.CPU, 0, 10)]))

    def test_table(self):
        r = fd.fill_errors({"model": "m", "batch": 4, "precision": "fp32", "real_ms": 10.0, "roofline_ms": 11.0,
                            "calibrated_ms": None, "measured_ms": 10.2, "real_peak_gib": None,
                            "measured_peak_gib": 1.5, "real_busy": None, "roofline_busy": 1.0,
                            "calibrated_busy": None, "measured_busy": 0.5, "notes": ["a note"]})
        t = fd.format_table([r], fd.summary([r]), ["the run's note"])
        self.assertIn("11.00 (+10.0%)", t)
        self.assertIn("10.20 (+2.0%)", t)
        self.assertIn("1.00/-/0.50", t)
        self.assertIn("note: m b4: a note", t)
        self.assertIn("note: the run's note", t)
        self.assertIn("mean absolute error", t)


class ArgsTest(unittest.TestCase):
    def main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = fd.main(list(argv))
        return rc, out.getvalue(), err.getvalue()

    def assertOneLine(self, argv, want):
        rc, out, err = self.main(*argv)
        self.assertEqual(rc, 1, err)
        self.assertEqual(out, "")
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("fidelity: "), lines[0])
        self.assertIn(want, lines[0])

    def test_errors(self):
        exe = ["--placer", sys.executable]  # any executable passes the binary check
        self.assertOneLine(["--precision", "fp8"] + exe, "--precision fp8: want fp32 or bf16")
        self.assertOneLine(["--no-such-flag"], "unrecognized arguments")
        self.assertOneLine(["--steps", "x"], "invalid int value")
        self.assertOneLine(["--steps", "0"] + exe, "--steps 0")
        self.assertOneLine(["--batches", "4,x"] + exe, "--batches")
        self.assertOneLine(["--batches", "4,0"] + exe, "positive")
        self.assertOneLine(["--model", "test_fidelity:tiny"] + exe, "needs --input-shape")
        self.assertOneLine(["--model", "resnet50", "--input-shape", "12"] + exe, "zoo models have their own")
        self.assertOneLine(["--placer", "/nonexistent/placer"], "no placer binary at /nonexistent/placer")
        self.assertOneLine(["--model", "no_such_model", "--device", "cpu"] + exe, "not a zoo model")
        self.assertOneLine(["--device", "tpu"] + exe, "--device tpu")
        self.assertOneLine(["--table", "/nonexistent/f.json"], "--table")
        if not torch.cuda.is_available():
            self.assertOneLine(exe, "sees no CUDA device")

    def test_export_command(self):
        # The export records the settings the real step runs with.
        cmd = fd.export_command("py", "resnet50", [], 8, "cross-entropy", "adam", "cuda:1", True, 3, "g.json",
                                "bf16", (False, True))
        text = " ".join(cmd)
        for want in ("--device cuda", "--optimizer-impl for-loop", "--tf32-matmul off", "--tf32-cudnn on",
                     "--autocast bf16", "--profile-device cuda:1"):
            self.assertIn(want, text)
        cmd = fd.export_command("py", "m:f", ["12"], 4, "mse", "sgd", "cpu", False, 3, "g.json", "fp32", (True, False))
        text = " ".join(cmd)
        for want in ("--device cpu", "--tf32-matmul on", "--tf32-cudnn off", "--input-shape 12", "--loss mse"):
            self.assertIn(want, text)
        self.assertNotIn("--autocast", text)
        self.assertNotIn("--profile", text)

    def test_exit_status_from_the_command_line(self):
        r = subprocess.run([sys.executable, os.path.join(HERE, "fidelity.py"), "--precision", "fp8"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


@unittest.skipUnless(HAVE_PLACER, "no placer binary at %s (make build)" % PLACER)
class EndToEndCPUTest(unittest.TestCase):
    """The pipeline on --device cpu: plumbing, not accuracy (the module's
    docstring says why)."""

    def test_cpu_bf16(self):
        # --precision bf16: the real step under autocast, the graph
        # exported with --autocast bf16 and the TF32 settings.
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, os.path.join(HERE, "fidelity.py"), "--device", "cpu",
                                "--model", "test_fidelity:tiny", "--input-shape", "12", "--batches", "2",
                                "--precision", "bf16", "--warmup", "1", "--steps", "2", "--profile-steps", "1",
                                "--placer", PLACER, "--work", os.path.join(d, "work"), "--json"],
                               cwd=HERE, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = [json.loads(l) for l in r.stdout.splitlines()]
            self.assertEqual([(x["batch"], x["precision"]) for x in rows], [(2, "bf16")])
            x = rows[0]
            self.assertGreater(x["real_ms"], 0)
            self.assertGreater(x["roofline_ms"], 0)
            with open(x["graph"]) as f:
                e = json.load(f)["execution"]
            self.assertEqual((e["device"], e["autocast"], e["optimizer_impl"]), ("cpu", "bf16", "for-loop"))
            self.assertEqual(e.get("tf32_matmul", False), bool(torch.backends.cuda.matmul.allow_tf32))
            self.assertEqual(e.get("tf32_cudnn", False), bool(torch.backends.cudnn.allow_tf32))

    def test_cpu_pipeline(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fidelity.json")
            start = time.monotonic()
            r = subprocess.run([sys.executable, os.path.join(HERE, "fidelity.py"), "--device", "cpu",
                                "--model", "test_fidelity:tiny", "--model", "test_fidelity:tiny_wide",
                                "--input-shape", "12", "--batches", "4,2", "--warmup", "1", "--steps", "3",
                                "--profile-steps", "2", "--placer", PLACER, "--work", os.path.join(d, "work"),
                                "--json", "--out", out], cwd=HERE, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            elapsed = time.monotonic() - start
            lines = [json.loads(l) for l in r.stdout.splitlines()]
            self.assertEqual(len(lines), 4)
            self.assertIn("note: device cpu: no CUDA kernel time", r.stderr)
            with open(out) as f:
                doc = json.load(f)
            self.assertEqual(doc["format"], "placer-fidelity")
            self.assertEqual(doc["rows"], lines)
            self.assertEqual([(x["model"], x["batch"], x["precision"]) for x in lines],
                             [("test_fidelity:tiny", 4, "fp32"), ("test_fidelity:tiny", 2, "fp32"),
                              ("test_fidelity:tiny_wide", 4, "fp32"), ("test_fidelity:tiny_wide", 2, "fp32")])
            for x in lines:
                self.assertGreater(x["real_ms"], 0)
                for k in fd.KINDS:
                    for f in ("_ms", "_err_pct", "_peak_gib", "_busy"):
                        self.assertTrue(math.isfinite(x[k + f]), (k + f, x))
                    self.assertGreater(x[k + "_ms"], 0)
                    self.assertGreater(x[k + "_peak_gib"], 0)
                    # no busy share on a CPU: null, and so its error; the
                    # peak is the CPU allocator's, compared
                    self.assertTrue(math.isfinite(x[k + "_peak_err_pct"]), x)
                    self.assertIsNone(x[k + "_busy_err"])
                self.assertGreater(x["real_peak_gib"], 0)
                self.assertIsNone(x["real_busy"])
                self.assertEqual(x["notes"], [])
                self.assertGreater(x["profile_matched"], 0)
                # leave-one-out: each model calibrated on the other's two graphs
                other = "test_fidelity_tiny_wide" if x["model"] == "test_fidelity:tiny" else "test_fidelity_tiny"
                self.assertEqual(x["calibrated_on"], ["%s-b4-fp32" % other, "%s-b2-fp32" % other])
            s = doc["mean_abs_error"]
            for k in fd.KINDS:
                self.assertTrue(math.isfinite(s[k + "_ms_pct"]))
                self.assertEqual(s[k + "_ms_pct_rows"], 4)
                self.assertTrue(math.isfinite(s[k + "_peak_pct"]))
                self.assertEqual(s[k + "_peak_pct_rows"], 4)
            # the table, from the file
            t = subprocess.run([sys.executable, os.path.join(HERE, "fidelity.py"), "--table", out],
                               capture_output=True, text=True)
            self.assertEqual(t.returncode, 0, t.stderr)
            self.assertIn("real ms", t.stdout)
            self.assertIn("test_fidelity:tiny_wide", t.stdout)
            self.assertIn("mean absolute error", t.stdout)
            self.assertIn("null", t.stdout)  # the CPU note
            print("\nend to end on cpu: %.1f s (torch %s)" % (elapsed, torch.__version__), file=sys.stderr)


class OplevelTableTest(unittest.TestCase):
    """tools/measure/fidelity/oplevel_table.py's parts on the committed files."""

    def test_committed_graph_and_strip(self):
        import oplevel_table as ot
        # The zoo's resnet50 at 32 is committed from the first H100; a
        # torchvision model is found by its factory's name; a batch no
        # run profiled has none.
        self.assertTrue(ot.committed_graph("resnet50", 32).endswith(
            os.path.join("2026-11-26-h100", "graphs", "resnet50-b32-fp32.json")))
        self.assertIn("mobilenet_v3_large-b32", ot.committed_graph("torchvision.models:mobilenet_v3_large", 32))
        self.assertIsNone(ot.committed_graph("resnet50", 3))
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            ot.strip(ot.committed_graph("resnet50", 8), out)
            with open(out) as f:
                g = json.load(f)
            self.assertTrue(all("time_s" not in o and "dispatch_s" not in o for o in g["ops"]))
            with open(os.path.join(d, "r.meta.json")) as f:
                self.assertNotIn("profile", json.load(f))

    def test_default_column_is_what_a_user_gets(self):
        # The columns are eval with no --host flag, --host=false and
        # --host: on a graph that records an eager PyTorch run (ResNet-50
        # at 8, exported with --device cuda) the default is the host
        # model's step, and the GPU alone's is shorter (its 17.8 ms of
        # kernels wait on the host's issue of every op).
        import oplevel_table as ot
        placer = os.environ.get("PLACER", "")
        if not os.path.exists(placer):
            self.skipTest("no placer binary (PLACER=%r)" % placer)
        self.assertEqual([m for m, _ in ot.MODES], ["default", "--host=false", "--host"])
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            ot.strip(ot.committed_graph("resnet50", 8), out)
            default, gpu, host = (ot.step_ms(placer, out, "h100", flags) for _, flags in ot.MODES)
        self.assertEqual(default, host)
        self.assertLess(gpu, host)


if __name__ == "__main__":
    unittest.main()
