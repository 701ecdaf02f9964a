"""Tests of tools/measure/dle/dle_bench.py on hand-written README tables."""

import hashlib
import unittest

import dle_bench  # noqa: E402


README = """\
#### Training performance results

##### Training performance: NVIDIA DGX A100 (8x A100 80GB)

| **GPUs** | **Batch size / GPU** | **Throughput - TF32 (tok/s)** | **Throughput - Mixed precision (tok/s)** | **Throughput speedup (TF32 to Mixed precision)** |
| --- | --- | --- | --- | --- |
| 1   | 128 | 83214  | 140909 | 1.693 |
| 8   | 104@FP16, 48@TF32 | 519,952 | 822024 | 1.581 |

##### Training accuracy: NVIDIA DGX-1 (8x V100 16GB)

| **GPUs** | **Batch size / GPU** | **Throughput - FP32 (tok/s)** |
| --- | --- | --- |
| 1   | 128 | 999 |

##### Inference performance: NVIDIA DGX-1 (1x V100 16GB)

###### FP32 Inference Latency

| **Batch Size** | **Throughput Avg** | **Latency Avg** | **Latency 95%** |
|:-:|:-:|:-:|:-:|
|       1        |      96 img/s      |    10.37 ms     |    10.81 ms     |
"""


class TestTables(unittest.TestCase):
    def test_training_and_inference_rows(self):
        got = []
        for heads, header, rows in dle_bench.tables(README):
            gpu, mem, system = dle_bench.gpu_of(heads)
            for r in dle_bench.training_rows("x", "m", "", heads, header, rows, None):
                got.append(("train", gpu, mem, r["gpus"], r["batch"], r["precision"], r["value"], r["unit"]))
            for r in dle_bench.inference_rows("x", "m", heads, header, rows):
                got.append(("infer", gpu, mem, r["gpus"], r["batch"], r["precision"], r["value"], r["unit"]))
        want = [
            ("train", "A100", "80", 1, 128, "TF32", 83214.0, "tok/s"),
            ("train", "A100", "80", 1, 128, "AMP", 140909.0, "tok/s"),
            ("train", "A100", "80", 8, 48, "TF32", 519952.0, "tok/s"),
            ("train", "A100", "80", 8, 104, "AMP", 822024.0, "tok/s"),
            # the accuracy section's table is not a throughput table
            ("infer", "V100", "16", 1, 1, "FP32", 10.37, "ms"),
        ]
        self.assertEqual(got, want)


class TestCells(unittest.TestCase):
    def test_batch_for(self):
        cases = [
            ("128", "Batch size / GPU", "AMP", 128),
            ("128 and 256", "Batch size / GPU (TF32 and FP16)", "TF32", 128),
            ("128 and 256", "Batch size / GPU (TF32 and FP16)", "AMP", 256),
            ("24, 40", "Batch size (TF32, BF16)", "BF16", 40),
            ("10@FP16, 4@TF32", "Batch size per GPU", "TF32", 4),
            ("64k", "Batch size / GPU", "AMP", 65536),
            ("128 and 256", "Batch size / GPU", "AMP", None),
        ]
        for cell, header, prec, want in cases:
            self.assertEqual(dle_bench.batch_for(cell, header, prec), want, (cell, header, prec))

    def test_number(self):
        cases = [("938 img/s", (938.0, "img/s")), ("22.59M", (22590000.0, "")),
                 ("1,010,880", (1010880.0, "")), ("N/A", (None, ""))]
        for s, want in cases:
            self.assertEqual(dle_bench.number(s), want, s)

    def test_precision_of(self):
        cases = [("Throughput - mixed precision", "AMP"), ("Throughput - TF32", "TF32"),
                 ("FP32 Inference Latency", "FP32"), ("Throughput - BF16", "BF16"), ("GPUs", "")]
        for s, want in cases:
            self.assertEqual(dle_bench.precision_of(s), want, s)

    def test_gpu_of(self):
        cases = [(["Pre-training NVIDIA DGX A100 (8x A100 80GB)"], ("A100", "80", "DGX A100")),
                 (["Training performance: NVIDIA DGX-1 (8x V100 16GB)", "Base model"], ("V100", "16", "DGX-1")),
                 (["Inference performance: NVIDIA T4"], ("T4", "", ""))]
        for heads, want in cases:
            self.assertEqual(dle_bench.gpu_of(heads), want, heads)

    def test_part_rule(self):
        # The README's rule, computed here from its words.
        for m in ("resnet50", "bert", "jasper", "fastpitch"):
            val = int(hashlib.sha256(("placer-dle-val:" + m).encode()).hexdigest()[:8], 16) % 4 == 0
            self.assertEqual(dle_bench.part_of(m), "validation" if val else "development", m)
        self.assertEqual(dle_bench.part_of("gnmt"), "development")


if __name__ == "__main__":
    unittest.main()
