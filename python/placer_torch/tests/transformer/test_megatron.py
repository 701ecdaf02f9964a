"""Tests of the transformer plan runner (placer_torch.transformer, run by
python -m placer_torch.torchplan; docs/torch-plan.md, "Version 2"): a small GPT
run with tensor x pipeline x data parallelism on CPU processes (gloo) must
give the unsplit model's loss and gradients (torch.allclose rtol 1e-5, atol
1e-6 per element, float64), tied embeddings included.

All plans run in one launch of 8 processes (each process imports torch
once; on 2 cores that start is most of the time): the smaller plans run on
the first ranks while the others only create the groups. Each plan's
results are then compared in its own test, so that a failure names the
plan, the rank (t, d, p) and the parameter. Deliberately broken runs (a
wrong rank layout, a missing all-reduce) must not match."""

import copy
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import torch

from placer_torch import torchplan, transformer
from placer_torch.plan import is_transformer_plan

from ..commands import PLACER, command, env

WORLD = 8

BASE = {
    "format": "placer-transformer-plan", "version": 1,
    "graph": "gpt:layers=4,hidden=32,heads=4,seq=8,vocab=64,batch=8",
    "transformer": {"layers": 4, "hidden": 32, "heads": 4, "kv_heads": 4, "ffn": 128, "seq": 8, "vocab": 64,
                    "batch": 8, "tied": True, "norm": "layernorm", "activation": "gelu"},
    "gpus": 8, "tensor": 2, "pipeline": 2, "replicas": 2,
    "micro_batch_size": 2, "micro_batches": 2, "schedule": "1f1b", "sequence_parallel": True,
    "stages": [{"stage": 0, "layers": [0, 1], "embedding": True},
               {"stage": 1, "layers": [2, 3], "output": True}],
}


def make_plan(T=2, P=2, D=2, M=2, schedule="1f1b", sp=True, **transformer):
    plan = copy.deepcopy(BASE)
    plan["transformer"].update(transformer)
    L, B = plan["transformer"]["layers"], plan["transformer"]["batch"]
    plan.update(gpus=T * P * D, tensor=T, pipeline=P, replicas=D, micro_batches=M, micro_batch_size=B // (D * M),
                schedule=schedule, sequence_parallel=sp)
    per = L // P
    plan["stages"] = [{"stage": p, "layers": list(range(p * per, (p + 1) * per))} for p in range(P)]
    plan["stages"][0]["embedding"] = True
    plan["stages"][-1]["output"] = True
    return plan


# name -> (plan, faults). The first ranks of the world run each plan.
PLANS = {
    "tp2pp2dp2_sp_1f1b": (make_plan(), ()),
    "tp2pp2dp2_nosp_gpipe": (make_plan(sp=False, schedule="gpipe"), ()),
    "tp2pp2dp2_nosp_1f1b_m4": (make_plan(sp=False, M=4), ()),
    "tp2pp2dp2_sp_gpipe_untied": (make_plan(schedule="gpipe", tied=False), ()),
    "tp2pp1dp1_sp": (make_plan(T=2, P=1, D=1, M=2), ()),
    "tp2pp1dp1_nosp": (make_plan(T=2, P=1, D=1, M=1, sp=False), ()),
    "tp1pp2dp2_1f1b": (make_plan(T=1, P=2, D=2, M=4), ()),
    "tp1pp2dp2_gpipe": (make_plan(T=1, P=2, D=2, M=2, schedule="gpipe"), ()),
    "tp1pp4dp2_1f1b": (make_plan(T=1, P=4, D=2, M=4), ()),
    "tp2pp2dp2_llama": (make_plan(M=4, norm="rmsnorm", activation="swiglu", heads=8, kv_heads=4, tied=False, ffn=96), ()),
    "tp2pp2dp2_gqa_tied": (make_plan(kv_heads=2, schedule="gpipe"), ()),
    # Deliberately wrong runs: must not match.
    "fault_swapped_layout": (make_plan(), ("swapped",)),
    "fault_no_embedding_allreduce": (make_plan(sp=False), ("no-embedding-allreduce",)),
    "fault_no_sequence_allreduce": (make_plan(), ("no-sequence-allreduce",)),
    "fault_no_data_allreduce": (make_plan(T=1, P=2, D=2, M=2), ("no-data-allreduce",)),
}


def _run_all(rank, world, out_dir):
    for name, (plan, faults) in PLANS.items():
        res = transformer.run_megatron_plan(plan, rank, world, ranks=range(plan["gpus"]), faults=faults)
        if res is not None:
            torch.save(res, os.path.join(out_dir, "%s.rank%d.pt" % (name, res["rank"])))


class MegatronPlanTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="megatron-test-")
        start = time.time()
        torchplan.launch(WORLD, _run_all, (cls.tmp,), backend="gloo")
        cls.launch_s = time.time() - start

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def results(self, name):
        plan = PLANS[name][0]
        return plan, [torch.load(os.path.join(self.tmp, "%s.rank%d.pt" % (name, r))) for r in range(plan["gpus"])]

    def check(self, name):
        plan, res = self.results(name)
        problems = transformer.compare(plan, res)
        self.assertEqual(problems, [], "%s:\n%s" % (name, "\n".join(problems)))
        # The same shard on every data-parallel replica, and both copies of
        # a tied embedding equal.
        _, c = transformer.load_megatron_plan(plan)
        by = {}
        for r in res:
            t, d, p = r["coords"]
            for n, g in r["grads"].items():
                key = (n, t)
                if key in by:
                    self.assertTrue(torch.equal(by[key], g), "%s: %s of t=%d differs between ranks" % (name, n, t))
                by[key] = g
        return plan, res

    def test_tp2_pp2_dp2_sequence_parallel_1f1b(self):
        plan, res = self.check("tp2pp2dp2_sp_1f1b")
        # The tied word embedding: a copy in stage 0 and in stage 1.
        stages = {r["coords"][2] for r in res if "embedding.word" in r["grads"]}
        self.assertEqual(stages, {0, 1})

    def test_tp2_pp2_dp2_gpipe(self):
        self.check("tp2pp2dp2_nosp_gpipe")

    def test_tp2_pp2_dp2_1f1b(self):
        self.check("tp2pp2dp2_nosp_1f1b_m4")

    def test_tp2_pp2_dp2_untied(self):
        self.check("tp2pp2dp2_sp_gpipe_untied")

    def test_tp2_pp1_dp1(self):
        self.check("tp2pp1dp1_sp")
        self.check("tp2pp1dp1_nosp")

    def test_tp1_pp2_dp2(self):
        self.check("tp1pp2dp2_1f1b")
        self.check("tp1pp2dp2_gpipe")

    def test_tp1_pp4_dp2(self):
        # Middle stages: neither embedding nor output.
        self.check("tp1pp4dp2_1f1b")

    def test_llama_rmsnorm_swiglu_gqa(self):
        self.check("tp2pp2dp2_llama")
        self.check("tp2pp2dp2_gqa_tied")

    def test_the_losses_agree(self):
        # Every rank reports the global batch's loss.
        _, res = self.results("tp2pp2dp2_sp_1f1b")
        self.assertEqual(len({r["loss"] for r in res}), 1)

    def assertFails(self, name, want):
        plan, res = self.results(name)
        problems = transformer.compare(plan, res)
        self.assertTrue(problems, "%s: the broken run matched the unsplit model" % name)
        self.assertTrue(any(want in p for p in problems), "%s: %s" % (name, problems))

    def test_wrong_layout_fails(self):
        # rank = d + D * (t + T * p) instead of t + T * (d + D * p): the
        # same loss, but rank 1 holds tensor shard 0 of replica 1.
        self.assertFails("fault_swapped_layout", "rank 1 (t=1 d=0 p=0)")

    def test_missing_embedding_allreduce_fails(self):
        self.assertFails("fault_no_embedding_allreduce", "embedding.word")

    def test_missing_sequence_parallel_allreduce_fails(self):
        self.assertFails("fault_no_sequence_allreduce", "norm1.weight")

    def test_missing_data_parallel_allreduce_fails(self):
        self.assertFails("fault_no_data_allreduce", "qkv.weight")

    def test_perturbed_gradient_fails(self):
        plan, res = self.results("tp2pp2dp2_sp_1f1b")
        self.assertEqual(transformer.compare(plan, res), [])
        g = res[5]["grads"]["layers.2.fc1.weight"]  # rank 5: t=1, d=0, stage 1 (layers 2 and 3)
        g[3, 7] += 1e-4 + 1e-4 * abs(float(g[3, 7]))
        problems = transformer.compare(plan, res)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("rank 5 (t=1 d=0 p=1): layers.2.fc1.weight", problems[0])

    def test_gradients_are_large_enough(self):
        # The absolute tolerance must not hide anything: every parameter's
        # gradient of the unsplit model is far above it.
        _, c = transformer.load_megatron_plan(BASE)
        _, grads = transformer.reference_step(c)
        for n, g in grads.items():
            self.assertGreater(float(g.abs().max()), 1000 * transformer.ATOL, n)


class PlanInputTest(unittest.TestCase):
    def bad(self, plan, want):
        with self.assertRaises(torchplan.PlanError) as e:
            transformer.load_megatron_plan(plan)
        self.assertIn(want, str(e.exception))
        self.assertNotIn("\n", str(e.exception))

    def test_bad_plans(self):
        self.bad(make_plan(T=8, P=1, D=1, M=1), "tensor 8 does not divide transformer.heads 4")
        p = make_plan()
        p["transformer"]["kv_heads"] = 1
        self.bad(p, "tensor 2 does not divide transformer.kv_heads 1")
        p = make_plan()
        p["stages"][1]["layers"] = [2]
        self.bad(p, "are not layers 0..3 in order")
        p = make_plan()
        p["stages"][0]["layers"], p["stages"][1]["layers"] = [0, 2], [1, 3]
        self.bad(p, "are not layers 0..3 in order")
        p = make_plan()
        p["micro_batch_size"] = 3
        self.bad(p, "batch 8 is not replicas x micro_batches x micro_batch_size = 2 x 2 x 3")
        p = make_plan()
        p["transformer"]["batch"] = 6
        self.bad(p, "batch 6 is not replicas x micro_batches")
        p = make_plan()
        p["gpus"] = 4
        self.bad(p, "gpus 4 is not tensor x pipeline x replicas")
        p = make_plan(T=2, P=1, D=1, M=1)
        p["transformer"]["seq"] = 7
        self.bad(p, "sequence_parallel: tensor 2 does not divide seq 7")
        p = make_plan()
        p["stages"][1]["output"] = False
        self.bad(p, "the output layer must be in the last stage")
        p = make_plan()
        p["transformer"]["norm"] = "batchnorm"
        self.bad(p, "transformer.norm 'batchnorm'")

    def test_format_names(self):
        # placer-transformer-plan version 1, and its old spelling
        # (placer-torch-plan version 2) that placer wrote before, read
        # alike; nothing else does, and torchplan's main dispatches both.
        _, want = transformer.load_megatron_plan(BASE)
        old = dict(copy.deepcopy(BASE), format="placer-torch-plan", version=2)
        self.assertEqual(transformer.load_megatron_plan(old)[1], want)
        self.bad(dict(copy.deepcopy(BASE), version=2), "placer-transformer-plan version 2, this runner reads")
        self.bad(dict(copy.deepcopy(BASE), format="placer-torch-plan"), "placer-torch-plan version 1, this runner reads")
        self.bad(dict(copy.deepcopy(BASE), format="x"), "format 'x', want 'placer-transformer-plan'")
        tmp = tempfile.mkdtemp(prefix="megatron-format-")
        self.addCleanup(shutil.rmtree, tmp, True)
        for doc, want in ((BASE, True), (old, True), ({"format": "placer-torch-plan", "version": 1, "stages": []}, False)):
            path = os.path.join(tmp, "plan.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            self.assertEqual(is_transformer_plan(path), want, doc["format"])

    def test_rank_layout(self):
        _, c = transformer.load_megatron_plan(BASE)
        self.assertEqual([transformer.coords(r, c) for r in range(8)],
                         [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1), (1, 1, 1)])
        for r in range(8):
            self.assertEqual(transformer.rank_of(*transformer.coords(r, c), c), r)

    def test_shards_cover_the_parameters(self):
        # GQA + SwiGLU: the tensor ranks' shards put back together are the
        # whole parameter, each element once.
        p = make_plan(kv_heads=2, activation="swiglu")
        _, c = transformer.load_megatron_plan(p)
        full = transformer.reference_params(c)
        for n, w in full.items():
            parts = [transformer.shard(n, w, c, t) for t in range(2)]
            if parts[0].shape == w.shape:
                continue  # replicated
            self.assertEqual(sum(x.numel() for x in parts), w.numel(), n)
            got = sorted(torch.cat([x.reshape(-1) for x in parts]).tolist())
            self.assertEqual(got, sorted(w.reshape(-1).tolist()), n)


class CommandLineTest(unittest.TestCase):
    def run_cli(self, plan, *args):
        tmp = tempfile.mkdtemp(prefix="megatron-cli-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "gpt.plan.json")
        with open(path, "w") as f:
            json.dump(plan, f)
        return subprocess.run(command("torchplan", "--plan", path, *args), env=env(),
                              capture_output=True, text=True, timeout=300)

    def test_check(self):
        r = self.run_cli(make_plan(T=2, P=1, D=1, M=2), "--check")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("loss ", r.stdout)
        self.assertIn("match the unsplit model", r.stdout)

    def test_placer_exported_plan(self):
        """The plan `placer export --workload gpt:... --to torch-plan`
        writes is the plan these tests run, and it trains one step on 8
        processes with the unsplit model's loss and gradients."""
        placer = PLACER
        if not os.path.exists(placer):
            self.skipTest("no placer binary (make build)")
        tmp = tempfile.mkdtemp(prefix="megatron-export-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "gpt.plan.json")
        r = subprocess.run([placer, "export", "--allow-over", "--workload", BASE["graph"], "--gpus", "8",
                            "--strategy", "tp=2,pp=2,dp=2,mbs=2,sp=on", "--to", "torch-plan", "-o", path],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path) as f:
            exported = json.load(f)
        self.assertEqual(exported, make_plan())
        r = subprocess.run(command("torchplan", "--plan", path, "--check"), capture_output=True, text=True,
                           timeout=300, env=env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("match the unsplit model", r.stdout)

    def test_bad_plan_exits_1(self):
        p = make_plan()
        p["tensor"], p["gpus"] = 3, 12
        r = self.run_cli(p)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("tensor 3 does not divide transformer.heads 4", r.stderr)


if __name__ == "__main__":
    unittest.main()
