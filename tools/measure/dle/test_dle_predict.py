"""Tests of tools/measure/dle/dle_predict.py's row selection and figures (no torch)."""

import json
import os
import tempfile
import unittest

import dle_predict  # noqa: E402


def row(**kw):
    r = {"kind": "train", "model": "resnet50", "batch": "256", "gpu": "A100", "gpu_mem_gb": "80",
         "gpus": "8", "precision": "AMP", "code_path": "launch.py --image-size 224 --batch-size 256"}
    r.update(kw)
    return r


class TestPredict(unittest.TestCase):
    def test_wanted(self):
        cases = [
            (row(), True),
            (row(kind="infer"), False),                 # inference: not a training step
            (row(model="jasper"), False),               # no network built for it
            (row(gpu="T4", gpu_mem_gb=""), False),      # no placer preset
            (row(gpus="4"), False),                     # 1 and 8 GPUs only
            (row(batch=""), False),
            (row(gpu="V100", gpu_mem_gb="32", gpus="1"), True),
        ]
        for r, want in cases:
            self.assertEqual(dle_predict.wanted([r]) == [r], want, r)

    def test_step_of(self):
        self.assertEqual(dle_predict.step_of(row(model="efficientnet-b4", batch="64",
                                                 code_path="--image-size 380 --batch-size 64")),
                         ("efficientnet-b4", 512, 380, "AMP"))
        self.assertEqual(dle_predict.step_of(row(code_path="launch.py")), ("resnet50", 2048, 224, "AMP"))

    def test_wanted_infer(self):
        train_b4 = row(model="efficientnet-b4", code_path="launch.py --image-size 380 --batch-size 64")
        inf = dict(kind="infer", gpus="1", code_path="launch.py --model resnet50 --mode benchmark_training")
        cases = [
            (row(**inf, batch="1"), "224"),                                    # no training row: 224
            (row(**inf, batch="8", gpu="V100", gpu_mem_gb="16"), "224"),
            (row(**inf, batch="16"), None),                                    # batch over 8
            (row(**inf, batch="1", gpu="T4", gpu_mem_gb=""), None),            # no t4 preset
            (row(**dict(inf, model="efficientnet-b4"), batch="2"), "380"),     # configs.yml's, from its training row
            (row(**dict(inf, model="waveglow"), batch="1"), None),             # no network built
            (row(**dict(inf, model="bert"), batch="1"), None),                 # BERT's inference not built
            (row(), None),                                                     # a training row
        ]
        for r, want in cases:
            got = dle_predict.wanted_infer([train_b4, r])
            self.assertEqual([x["image"] for x in got], [want] if want else [], r)
        x = dle_predict.wanted_infer([train_b4, row(**dict(inf, model="efficientnet-b4"), batch="4", precision="TF32")])[0]
        self.assertEqual(dle_predict.infer_step_of(x), ("efficientnet-b4", 4, 380, "TF32"))

    def test_aggregate(self):
        def res(model, pub, host, part="development"):
            return {"part": part, "model": model, "status": "ok", "published_ms": str(pub), "host_ms": str(host),
                    "strict_ms": str(pub), "host_err": str(host / pub - 1), "strict_err": "0"}
        out = [res("a", 10, 12), res("a", 20, 18), res("a", 30, 45), res("b", 10, 10),
               res("a", 10, 10, "validation"), {"part": "development", "model": "a", "status": "not exported"}]
        agg = dle_predict.aggregate(out, "development")
        # |errors| 0.2, 0.1, 0.5, 0: mean 0.2; within 20%: 0.2, 0.1 and 0
        self.assertEqual(agg["rows"], 4)
        self.assertEqual(agg["refused_or_missing"], 1)
        self.assertAlmostEqual(agg["host_mean_abs_err"], 0.2)
        self.assertEqual(agg["host_within_20"], 3)
        self.assertEqual(agg["host_spearman_by_sweep"], {"a": 1.0})   # b has one row: no sweep
        self.assertEqual(agg["host_mean_abs_err_by_model"], {"a": round(0.8 / 3, 4), "b": 0.0})
        v = dle_predict.aggregate(out, "validation")
        self.assertEqual((v["rows"], v["host_spearman_by_sweep"], v["host_mean_abs_err_by_model"]), (1, None, None))

    def test_bert_micro(self):
        v100 = ("Pre-training NVIDIA DGX-1 With 32G;Accumulation steps (FP32 and FP16)=128 and 64;"
                "Sequence length=128")
        a100 = ("Pre-training NVIDIA DGX A100 (8x A100 80GB);Accumulated Batch size / GPU (TF32 and FP16)="
                "4096 and 4096;Accumulation steps (TF32 and FP16)=256 and 128;Sequence length=512")
        cases = [
            (row(model="bert", batch="4096", precision="FP32", settings=v100), (32, 128)),   # 4096 / 128
            (row(model="bert", batch="4096", precision="AMP", settings=v100), (64, 128)),    # 4096 / 64
            (row(model="bert", batch="32", precision="AMP", settings=a100), (32, 512)),      # the micro-batch
            (row(model="bert", batch="32", settings="Fine-tuning NVIDIA DGX A100"), None),
        ]
        for r, want in cases:
            self.assertEqual(dle_predict.bert_micro(r), want, r["settings"])

    def test_bert_accum(self):
        v100 = ("Pre-training NVIDIA DGX-1 With 32G;Accumulation steps (FP32 and FP16)=512 and 256;"
                "Sequence length=512")
        a100 = ("Pre-training NVIDIA DGX A100 (8x A100 80GB);Accumulated Batch size / GPU (TF32 and FP16)="
                "8192 and 8192;Accumulation steps (TF32 and FP16)=64 and 32;Sequence length=128")
        cases = [
            (row(model="bert", batch="2048", precision="FP32", settings=v100), 512, ("bert", 4, 512, "FP32")),
            (row(model="bert", batch="2048", precision="AMP", settings=v100), 256, ("bert", 8, 512, "AMP")),
            (row(model="bert", batch="128", precision="TF32", settings=a100), 64, ("bert", 128, 128, "TF32")),
            (row(model="bert", batch="256", precision="AMP", settings=a100, gpus="1"), 32, ("bert", 256, 128, "AMP")),
            (row(model="bert", batch="32", settings="Fine-tuning NVIDIA DGX A100"), None, None),
            (row(settings=a100), None, None),           # a ConvNets row: no accumulation
        ]
        for r, accum, micro in cases:
            self.assertEqual(dle_predict.bert_accum(r), accum, r["settings"])
            self.assertEqual(dle_predict.micro_step(r), micro, r["settings"])

    def test_amortized(self):
        cases = [(120.0, 100.0, 1, 120.0), (120.0, 100.0, 4, 105.0), (164.0, 100.0, 64, 101.0)]
        for full, micro, accum, want in cases:
            self.assertAlmostEqual(dle_predict.amortized(full, micro, accum), want)

    def test_without_update(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "g.json")
            g = {"format": "placer-graph", "version": 1,
                 "execution": {"version": 1, "optimizer": "adamw", "optimizer_from": "opt/step"},
                 "ops": [{"name": "p"}, {"name": "mm"}, {"name": "bwd"}, {"name": "opt/step"}, {"name": "opt/mul"}],
                 "tensors": [{"producer": "p", "consumers": ["mm", "bwd", "opt/mul"], "bytes": 8},
                             {"producer": "p", "consumers": ["opt/mul"], "bytes": 0},
                             {"producer": "mm", "consumers": ["bwd"], "bytes": 4},
                             {"producer": "opt/step", "consumers": ["opt/mul"], "bytes": 0}]}
            with open(src, "w") as f:
                json.dump(g, f)
            out = dle_predict.without_update(src)
            self.assertEqual(out, os.path.join(d, "g-noupdate.json"))
            with open(out) as f:
                got = json.load(f)
            self.assertEqual([o["name"] for o in got["ops"]], ["p", "mm", "bwd"])
            self.assertEqual(got["tensors"], [{"producer": "p", "consumers": ["mm", "bwd"], "bytes": 8},
                                              {"producer": "mm", "consumers": ["bwd"], "bytes": 4}])
            self.assertEqual(got["execution"], {"version": 1, "optimizer": "adamw"})
            with open(src) as f:
                self.assertEqual(json.load(f), g)         # the export stays as it was

    def test_grad_scaler(self):
        cases = [
            (row(), True),                              # ConvNets AMP: training.py's scaler.step
            (row(precision="TF32"), False),             # no scaler without amp
            (row(precision="FP32", gpu="V100"), False),
            (row(model="bert"), False),                 # FusedLAMBAMP takes the scaler: no .item() sync
        ]
        for r, want in cases:
            self.assertEqual(dle_predict.grad_scaler(r), want, r)

    def test_with_grad_scaler(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "g.json")
            g = {"format": "placer-graph", "version": 1,
                 "execution": {"version": 1, "optimizer_from": "b"}, "ops": [{"name": "a"}, {"name": "b"}]}
            with open(src, "w") as f:
                json.dump(g, f)
            out = dle_predict.with_grad_scaler(src)
            self.assertEqual(out, os.path.join(d, "g-gradscaler.json"))
            with open(out) as f:
                got = json.load(f)
            g["execution"]["grad_scaler"] = True
            self.assertEqual(got, g)
            with open(src) as f:
                self.assertNotIn("grad_scaler", json.load(f)["execution"])  # the export stays as it was
            self.assertEqual(dle_predict.with_grad_scaler(src), out)       # written once

    def test_spearman(self):
        cases = [([1, 2, 3], [10, 20, 30], 1.0), ([1, 2, 3], [3, 2, 1], -1.0),
                 ([1, 2, 3, 4], [1, 3, 2, 4], 0.8)]
        for xs, ys, want in cases:
            self.assertAlmostEqual(dle_predict.spearman(xs, ys), want)


if __name__ == "__main__":
    unittest.main()
