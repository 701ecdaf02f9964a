"""Tests of the runner of transformer plans with experts
(placer_torch.experts, run by python -m placer_torch.torchplan;
docs/torch-plan.md, "Experts"): a small mixture of
experts (4 experts, top-2) exported by `placer export --strategy ep=2,dp=4
--to torch-plan` (EP 2 x expert-DP 2 on 4 ranks, the rest data parallel
over all 4) trains one step on 4 gloo processes with the unsplit model's
loss and gradients (torch.allclose rtol 1e-5, atol 1e-6 per element,
float64).

Every plan runs in one launch of 4 processes (smaller plans on the first
ranks); each is then compared in its own test. Deliberately broken runs (a
wrong dispatch, the expert gradients averaged over the wrong group or not
reduced) must not match."""

import copy
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import torch

from placer_torch import experts, torchplan, transformer

from ..commands import PLACER, command, env

WORLD = 4
WORKLOAD = "gpt:layers=2,hidden=16,heads=2,seq=8,vocab=64,batch=8,experts=4,topk=2,expert_ffn=32"


def export(tmp, strategy="ep=2,dp=4"):
    """The plan as placer writes it."""
    out = os.path.join(tmp, "moe.plan.json")
    r = subprocess.run([PLACER, "export", "--allow-over", "--workload", WORKLOAD, "--gpus", "4", "--strategy", strategy,
                        "--to", "torch-plan", "-o", out], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("placer export: exit %d: %s (PLACER=%s; make build)" % (r.returncode, r.stderr.strip(), PLACER))
    with open(out) as f:
        return out, json.load(f)


def variant(plan, D=None, EP=None, M=None, **transformer):
    p = copy.deepcopy(plan)
    p["transformer"].update(transformer)
    p["stages"][0]["layers"] = list(range(p["transformer"]["layers"]))
    if D is not None:
        p.update(gpus=D, replicas=D)
    if M is not None:
        p["micro_batches"] = M
    p["micro_batch_size"] = p["transformer"]["batch"] // (p["replicas"] * p["micro_batches"])
    if EP is not None:
        p["expert_parallel"] = EP
    p["expert_data"] = p["replicas"] // p["expert_parallel"]
    return p


def _run_all(rank, world, cases, out_dir):
    for name, (plan, faults) in cases.items():
        res = experts.run_experts_plan(plan, rank, world, ranks=range(plan["gpus"]), faults=faults)
        if res is not None:
            torch.save(res, os.path.join(out_dir, "%s.rank%d.pt" % (name, res["rank"])))


class ExpertsPlanTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="experts-test-")
        cls.path, plan = export(cls.tmp)
        cls.cases = {
            "ep2_dp4": (plan, ()),  # the exported plan: EP 2 x expert-DP 2, M = 2
            "ep4": (variant(plan, EP=4, M=1), ()),  # one expert a rank, no expert-DP
            "ep1": (variant(plan, EP=1), ()),  # every rank all experts (expert-DP 4)
            "ep2_dp2": (variant(plan, D=2), ()),  # 2 ranks: EP 2, no expert-DP
            "llama_dense_first": (variant(plan, M=1, layers=3, dense_layers=1, norm="rmsnorm", activation="swiglu",
                                          tied=False, experts=8, expert_ffn=16), ()),
            # Deliberately wrong runs: must not match.
            "fault_wrong_rank": (plan, ("wrong-rank",)),
            "fault_expert_data_mean": (plan, ("expert-data-mean",)),
            "fault_no_expert_allreduce": (plan, ("no-expert-allreduce",)),
        }
        torchplan.launch(WORLD, _run_all, (cls.cases, cls.tmp), backend="gloo")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def results(self, name):
        plan = self.cases[name][0]
        return plan, [torch.load(os.path.join(self.tmp, "%s.rank%d.pt" % (name, r))) for r in range(plan["gpus"])]

    def check(self, name):
        plan, res = self.results(name)
        problems, _ = experts.compare(plan, res)
        self.assertEqual(problems, [], "%s:\n%s" % (name, "\n".join(problems)))
        # Every rank the same loss; a replicated parameter's gradient the
        # same on every rank, an expert's on every rank holding it.
        self.assertEqual(len({r["loss"] for r in res}), 1)
        by = {}
        for r in res:
            for n, g in r["grads"].items():
                if n in by:
                    self.assertTrue(torch.equal(by[n], g), "%s: %s differs between ranks" % (name, n))
                by[n] = g
        return plan, res

    def test_ep2_dp4_exported(self):
        # The exported plan, EP 2 x expert-DP 2 on 4 ranks.
        plan, res = self.check("ep2_dp4")
        self.assertEqual((plan["expert_parallel"], plan["expert_tensor"], plan["expert_data"], plan["replicas"]),
                         (2, 1, 2, 4))
        _, c = experts.load_experts_plan(plan)
        for r in res:
            # Each rank holds its 2 experts of each layer, and only those:
            # ranks 0 and 2 experts 0 and 1, ranks 1 and 3 experts 2 and 3.
            want = [0, 1] if r["rank"] % 2 == 0 else [2, 3]
            self.assertEqual(r["experts"], want)
            held = {(n.split(".")[1], experts.expert_of(n)) for n in r["grads"] if experts.expert_of(n) is not None}
            self.assertEqual(held, {(str(i), j) for i in range(c["layers"]) for j in want}, r["rank"])
            # Tokens crossed ranks both ways (the all-to-alls carried data).
            self.assertGreater(r["sent"], 0)
            self.assertGreater(r["received"], 0)
        # What each rank sent its partner is what the partner received.
        for a, b in ((0, 1), (2, 3)):
            self.assertEqual(res[a]["sent"], res[b]["received"])
            self.assertEqual(res[b]["sent"], res[a]["received"])

    def test_expert_parallel_degrees(self):
        self.check("ep4")
        self.check("ep1")
        self.check("ep2_dp2")
        _, res = self.results("ep4")
        self.assertEqual([r["experts"] for r in res], [[0], [1], [2], [3]])
        _, res = self.results("ep1")
        self.assertTrue(all(r["sent"] == 0 and r["experts"] == [0, 1, 2, 3] for r in res))

    def test_dense_layer_swiglu_rmsnorm(self):
        plan, res = self.check("llama_dense_first")
        held = set(res[0]["grads"])  # rank 0: experts 0-3 of 8
        self.assertIn("layers.0.fc1.weight", held)  # the dense block before the experts
        self.assertNotIn("layers.0.router.weight", held)
        self.assertIn("layers.1.experts.3.fc1.weight", held)
        self.assertNotIn("layers.1.experts.4.fc1.weight", held)
        self.assertEqual([r["experts"] for r in res], [[0, 1, 2, 3], [4, 5, 6, 7]] * 2)

    def test_the_same_loss_whatever_the_split(self):
        losses = {name: self.results(name)[1][0]["loss"] for name in ("ep2_dp4", "ep4", "ep1", "ep2_dp2")}
        self.assertEqual(len({round(v, 10) for v in losses.values()}), 1, losses)

    def assertFails(self, name, want):
        plan, res = self.results(name)
        problems, _ = experts.compare(plan, res)
        self.assertTrue(problems, "%s: the broken run matched the unsplit model" % name)
        self.assertTrue(any(want in p for p in problems), "%s: %s" % (name, problems))

    def test_wrong_dispatch_fails(self):
        # Tokens sent to the other expert-parallel rank: another expert
        # computes them; the loss and the gradients differ.
        self.assertFails("fault_wrong_rank", "loss")
        self.assertFails("fault_wrong_rank", "experts.0.fc1.weight")

    def test_expert_gradients_over_the_expert_data_group(self):
        # Averaged over expert-DP (2) instead of every replica (4): twice
        # the gradient; not reduced: half the tokens' share.
        self.assertFails("fault_expert_data_mean", "experts.1.fc2.weight")
        self.assertFails("fault_no_expert_allreduce", "experts.3.fc1.weight")
        plan, res = self.results("fault_expert_data_mean")
        problems, _ = experts.compare(plan, res)
        self.assertTrue(all(".experts." in p for p in problems), problems)  # the rest is right

    def test_perturbed_expert_gradient_fails(self):
        plan, res = self.results("ep2_dp4")
        g = res[3]["grads"]["layers.1.experts.2.fc1.weight"]
        g[5, 3] += 1e-4 + 1e-4 * abs(float(g[5, 3]))
        problems, _ = experts.compare(plan, res)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("rank 3 (expert-parallel 1, expert-data 1): layers.1.experts.2.fc1.weight", problems[0])

    def test_a_rank_holding_another_ranks_expert_fails(self):
        plan, res = self.results("ep2_dp4")
        res[0]["grads"]["layers.0.experts.2.fc1.weight"] = res[1]["grads"]["layers.0.experts.2.fc1.weight"]
        problems, _ = experts.compare(plan, res)
        self.assertEqual(problems, ["rank 0 (expert-parallel 0, expert-data 0): holds gradients of "
                                    "['layers.0.experts.2.fc1.weight'] it should not, lacks none"])

    def test_gradients_are_large_enough(self):
        # The absolute tolerance hides nothing: every parameter's gradient
        # in the unsplit model is far above it (the router's included).
        _, c = experts.load_experts_plan(self.cases["ep2_dp4"][0])
        _, grads = experts.reference_step(c)
        for n, g in grads.items():
            self.assertGreater(float(g.abs().max()), 1000 * experts.ATOL, n)

    def test_command_line_check(self):
        r = subprocess.run(command("torchplan", "--plan", self.path, "--check"), capture_output=True, text=True,
                           timeout=300, env=env())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("2 of 4 experts per MoE layer", r.stdout)
        self.assertRegex(r.stdout, r"max abs difference [0-9.e+-]+ .*: ok")


class ExpertsPlanInputTest(unittest.TestCase):
    PLAN = {
        "format": "placer-transformer-plan", "version": 1, "graph": WORKLOAD,
        "transformer": {"layers": 2, "hidden": 16, "heads": 2, "kv_heads": 2, "ffn": 64, "seq": 8, "vocab": 64,
                        "batch": 8, "tied": True, "norm": "layernorm", "activation": "gelu",
                        "experts": 4, "topk": 2, "expert_ffn": 32},
        "gpus": 4, "tensor": 1, "pipeline": 1, "replicas": 4, "micro_batch_size": 1, "micro_batches": 2,
        "schedule": "gpipe", "sequence_parallel": False, "expert_parallel": 2, "expert_tensor": 1, "expert_data": 2,
        "stages": [{"stage": 0, "layers": [0, 1], "embedding": True, "output": True}],
    }

    def bad(self, change, want, transformer=None):
        plan = copy.deepcopy(self.PLAN)
        plan.update(change)
        plan["transformer"].update(transformer or {})
        with self.assertRaises(torchplan.PlanError) as e:
            experts.load_experts_plan(plan)
        self.assertIn(want, str(e.exception))
        self.assertNotIn("\n", str(e.exception))

    def test_good(self):
        _, c = experts.load_experts_plan(self.PLAN)
        self.assertEqual((c["EP"], c["ETP"], c["EDP"], c["D"]), (2, 1, 2, 4))
        self.assertEqual([experts.expert_coords(r, c) for r in range(4)], [(0, 0), (1, 0), (0, 1), (1, 1)])

    def test_bad_plans(self):
        self.bad({"expert_parallel": 3}, "expert_tensor 1 x expert_parallel 3 x expert_data 2 is not tensor x replicas")
        self.bad({"expert_parallel": 4, "expert_data": 1}, "does not divide the 3 experts", {"experts": 3})
        self.bad({}, "want 1 <= topk <= experts", {"topk": 5})
        self.bad({}, "a layer with experts", {"dense_layers": 2})
        self.bad({"pipeline": 2, "replicas": 2, "gpus": 4, "expert_data": 1, "micro_batch_size": 2,
                  "stages": [{"stage": 0, "layers": [0], "embedding": True}, {"stage": 1, "layers": [1], "output": True}]},
                 "data and expert parallelism only")
        self.bad({"replicas": 3}, "gpus 4 is not tensor x pipeline x replicas")

    def test_megatron_refuses_experts(self):
        with self.assertRaises(torchplan.PlanError) as e:
            transformer.load_megatron_plan(self.PLAN)
        self.assertIn("experts.py", str(e.exception))

    def test_dense_plan_refused_here(self):
        plan = copy.deepcopy(self.PLAN)
        for k in experts.MOE_KEYS:
            plan["transformer"].pop(k, None)
        with self.assertRaises(torchplan.PlanError):
            experts.load_experts_plan(plan)


if __name__ == "__main__":
    unittest.main()
