"""timmbench's rules without torch or timm: the validation part by family,
the sample, Spearman's correlation and the summary's aggregates, each
against figures worked by hand (make test runs it under Debian's python3,
test-python-debian)."""

import hashlib
import math
import unittest

import timmbench  # unittest discover -s tools/measure/timmbench puts its folder on the path


class TestRules(unittest.TestCase):
    def test_part_is_the_hash_mod_3(self):
        # sha256("placer-timm-val:resnet")'s first 8 hex digits, worked
        # with hashlib here, mod 3 decide; every family is in one part.
        for fam in ("resnet", "efficientnet", "vision_transformer", "byobnet"):
            n = int(hashlib.sha256(("placer-timm-val:" + fam).encode()).hexdigest()[:8], 16)
            self.assertEqual(timmbench.part_of(fam), "val" if n % 3 == 0 else "dev", fam)

    def test_committed_sample_follows_the_rule(self):
        # Every committed row's part is its family's, no model twice, at
        # least 300 models, both parts non-empty (the counts by family
        # need timm: timmbench.py sample --check, make timm-bench).
        rows = timmbench.read_sample(timmbench.DEFAULT_DIR)
        self.assertGreaterEqual(len(rows), 300)
        fams = {}
        for r in rows:
            self.assertEqual(r["part"], timmbench.part_of(r["family"]), r["model"])
            fams.setdefault(r["family"], []).append(r["model"])
        self.assertEqual(len(rows), len({r["model"] for r in rows}))
        val = {f for f in fams if timmbench.part_of(f) == "val"}
        self.assertTrue(0 < len(val) < len(fams))

    def test_choose_takes_ceil_share_first_by_hash(self):
        models = ["m%d" % i for i in range(5)]
        got = timmbench.choose({"f": models}, share=0.4)  # ceil(2.0) = 2
        order = sorted(models, key=lambda m: int(hashlib.sha256(("placer-timm-sample:" + m).encode()).hexdigest()[:8], 16))
        self.assertEqual(got, [("f", m) for m in sorted(order[:2])])
        self.assertEqual(len(timmbench.choose({"g": ["a"]}, share=0.4)), 1)  # ceil(0.4) = 1: no family left out
        self.assertEqual(len(timmbench.choose({"g": ["a", "b", "c"]}, share=0.4)), 2)  # ceil(1.2)

    def test_renamed_are_the_widths_the_names_say(self):
        # ig_resnext101_32xNd is resnext101_32xNd at N = 16, 32, 48 (timm
        # 0.6.6's own definitions), not the 32x8d timm 1.0.31 maps them to;
        # timm 0.6.6's ecaresnext50t_32x4d had layers (2, 2, 2, 2), which
        # timm 1.0.31 builds as ecaresnext26t_32x4d.
        want = {"ig_resnext101_32x%dd" % n: "resnext101_32x%dd" % n for n in (16, 32, 48)}
        want["ecaresnext50t_32x4d"] = "ecaresnext26t_32x4d"
        self.assertEqual(timmbench.RENAMED, want)

    def test_key_names_the_model_built(self):
        r = {"model": "ecaresnext50t_32x4d", "nchw_batch": "256", "nchw_img": "224"}
        self.assertEqual(timmbench.key(r, "nchw"), "ecaresnext50t_32x4d-nchw-b256-i224-as-ecaresnext26t_32x4d")
        r = {"model": "resnet50", "nchw_batch": "256", "nchw_img": "224"}
        self.assertEqual(timmbench.key(r, "nchw"), "resnet50-nchw-b256-i224")

    def test_spearman(self):
        self.assertAlmostEqual(timmbench.spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1.0)
        self.assertAlmostEqual(timmbench.spearman([1, 2, 3, 4], [4, 3, 2, 1]), -1.0)
        # ranks x 1 2 3 4, y 1 3 2 4: d^2 = 0 + 1 + 1 + 0 = 2, 1 - 6 x 2 / (4 x 15) = 0.8
        self.assertAlmostEqual(timmbench.spearman([1, 2, 3, 4], [1, 3, 2, 4]), 0.8)
        # a tie: y ranks 1.5 1.5 3; Pearson of (1 2 3) and (1.5 1.5 3) = 1.5 / sqrt(2 x 1.5) = 0.8660
        self.assertAlmostEqual(timmbench.spearman([1, 2, 3], [5, 5, 9]), math.sqrt(3) / 2)
        self.assertTrue(math.isnan(timmbench.spearman([1], [2])))

    def test_aggregate(self):
        rows = [{"measured_ms": "100", "strict_ms": "80"}, {"measured_ms": "200", "strict_ms": "260"},
                {"measured_ms": "50", "strict_ms": ""}]
        g = timmbench.aggregate(rows, "strict")
        self.assertEqual(g["n"], 2)
        self.assertAlmostEqual(g["mean_abs_error"], (0.2 + 0.3) / 2)
        self.assertAlmostEqual(g["spearman"], 1.0)

    def test_measure_order(self):
        # The part's rows by sha256("placer-timm-sample:" + model), worked
        # with hashlib here; --limit keeps the first; "all" both parts.
        rows = [{"model": m, "part": p} for m, p in (("a", "val"), ("b", "dev"), ("c", "val"), ("d", "val"))]
        h = {m: int(hashlib.sha256(("placer-timm-sample:" + m).encode()).hexdigest()[:8], 16) for m in "abcd"}
        want = sorted("acd", key=lambda m: h[m])
        self.assertEqual([r["model"] for r in timmbench.measure_order(list(rows), "val")], want)
        self.assertEqual([r["model"] for r in timmbench.measure_order(list(rows), "val", limit=2)], want[:2])
        self.assertEqual(len(timmbench.measure_order(list(rows), "all")), 4)

    def test_read_measured_takes_rows_that_ran(self):
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "m.csv")
            rows = [{"model": "x", "format": "nchw", "step_ms": "12.5", "status": "ok", "device": "NVIDIA H200"},
                    {"model": "y", "format": "nchw", "status": "oom", "reason": "out of memory at batch 256",
                     "device": "NVIDIA H200"}]
            with open(p, "w") as f:
                f.write(timmbench.to_csv(rows, timmbench.MEASURE_FIELDS))
            got, devices = timmbench.read_measured(p)
        self.assertEqual(got, {("x", "nchw"): "12.5"})
        self.assertEqual(devices, {"NVIDIA H200"})

    def test_report_measured_needs_another_folder(self):
        # --measured without --out (or with --out = --dir) would overwrite
        # the committed results: refused in one line before anything runs.
        for extra in ([], ["--out", timmbench.DEFAULT_DIR]):
            with self.assertRaises(SystemExit) as e:
                timmbench.main(["report", "--measured", "m.csv"] + extra)
            self.assertIn("--measured needs --out", str(e.exception))


if __name__ == "__main__":
    unittest.main()
