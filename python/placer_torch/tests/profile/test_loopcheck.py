"""loopcheck's rules (the CPU loops' checks, docs/profile.md): the path's,
on hand-made profiles and rows, and the benchmarks' bounds from a
figure's spread, hand-computed."""

import json
import math
import os
import tempfile
import unittest

from placer_torch.profile import loopcheck


def row(**kw):
    r = {"model": "tiny", "plan": "tp=1,pp=1,dp=2,mbs=1", "predicted_s": 0.3, "measured_s": 0.33, "loss": 7.1}
    r.update(kw)
    return r


class PathTest(unittest.TestCase):
    def test_untrained_loss(self):
        # ln 1024 + 1/6 = 6.9315 + 0.1667.
        self.assertAlmostEqual(loopcheck.untrained_loss(1024), 7.0981, places=4)

    def test_rows(self):
        self.assertEqual(loopcheck.row_problems([row(), row(loss=7.143), row(loss=7.089)], 1024), [])
        for bad, word in ((row(predicted_s=0.0), "predicted step"), (row(measured_s=None), "measured step"),
                          (row(measured_s=float("nan")), "measured step"),
                          (row(predicted_s=300.0), "a wrong unit"),  # ms read as s
                          (row(predicted_s=0.02), "a wrong unit"),  # 15x fast: a lost term
                          (row(loss=7.1 * 8), "loss"),  # summed over 8 micro-batches
                          (row(loss=2 * 7.1), "loss"),  # summed over a tensor group of 2
                          (row(loss=None), "loss")):
            p = loopcheck.row_problems([row(), bad], 1024)
            self.assertEqual(len(p), 1, (bad, p))
            self.assertIn(word, p[0])
            self.assertTrue(p[0].startswith("tiny tp=1,pp=1,dp=2,mbs=1: "), p[0])
        # 9.9x either way is within the bound.
        self.assertEqual(loopcheck.row_problems([row(predicted_s=0.33 * 9.9), row(predicted_s=0.33 / 9.9)], 1024), [])

    def test_profile(self):
        good = {"format": "placer-profile", "version": 2, "kind": "layers", "complete": True,
                "layers": [{"tp": 1, "mbs": 1, "seq": 256, "forward_s": 0.01, "backward_s": 0.02}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")

            def problems(doc):
                with open(path, "w") as f:
                    json.dump(doc, f)
                return loopcheck.profile_problems(path)

            self.assertEqual(problems(good), [])
            self.assertIn("complete false", problems(dict(good, complete=False))[0])
            self.assertIn("no layer shape", problems(dict(good, layers=[]))[0])
            self.assertIn("kind", problems(dict(good, kind="ops"))[0])
            self.assertIn("forward", problems(dict(good, layers=[dict(good["layers"][0], backward_s=0)]))[0])
            self.assertIn("format", problems(dict(good, format="x"))[0])
            self.assertEqual(len(loopcheck.profile_problems(os.path.join(d, "absent.json"))), 1)


class BenchTest(unittest.TestCase):
    def test_spread(self):
        self.assertEqual(loopcheck.spread([0.9, 0.8, 0.86]), (0.86, 0.8, 0.9, (0.9 - 0.8) / 2))
        self.assertEqual(loopcheck.spread([0.2]), (0.2, 0.2, 0.2, 0.0))
        self.assertTrue(math.isnan(loopcheck.spread([])[0]))

    def test_verdict(self):
        # Spearman at least 0.8: median 0.78, spread (0.88 - 0.7) / 2 =
        # 0.09, bound 0.71: held.
        ok, bound, fig = loopcheck.verdict([0.7, 0.78, 0.88], 0.8, True)
        self.assertTrue(ok)
        self.assertAlmostEqual(bound, 0.71)
        self.assertEqual(fig[0], 0.78)
        # Median 0.6, spread 0.05: bound 0.75, missed.
        ok, bound, _ = loopcheck.verdict([0.55, 0.6, 0.65], 0.8, True)
        self.assertFalse(ok)
        self.assertAlmostEqual(bound, 0.75)
        # An error at most 20%: median 22%, spread 3%: bound 23%, held;
        # median 30%, spread 1%: missed.
        self.assertTrue(loopcheck.verdict([0.19, 0.22, 0.25], 0.2, False)[0])
        self.assertFalse(loopcheck.verdict([0.29, 0.3, 0.31], 0.2, False)[0])
        # One repeat: the plain limit.
        self.assertTrue(loopcheck.verdict([0.8], 0.8, True)[0])
        self.assertFalse(loopcheck.verdict([0.79], 0.8, True)[0])
        self.assertFalse(loopcheck.verdict([float("nan")], 0.8, True)[0])
        ok, line = loopcheck.describe("median |error|", [0.29, 0.3, 0.31], 0.2, False, pct=True)
        self.assertFalse(ok)
        self.assertIn("30.0% (29.0% to 31.0% over 3 repeats, spread 1.0%); limit <= 20.0%, bound 21.0%: OUTSIDE", line)


if __name__ == "__main__":
    unittest.main()
