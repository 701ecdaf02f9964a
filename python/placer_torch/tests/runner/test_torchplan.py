"""Tests of the torch-plan runner and the module map's transfer hooks (make
test-python; docs/torch-plan.md). A tiny GPT-like language model and
torchvision's ResNet-18 are exported with placer_torch.exporter, placed by hand
on 2 devices, turned into 2-stage x 2-replica plans by `placer export --to
torch-plan`, and run on 4 CPU processes (gloo): the loss and every
parameter's gradient must equal the unsplit model's step on the whole
batch (torch.allclose: |got - want| <= 1e-6 + 1e-5 |want| per element)."""

import json
import os
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F

from placer_torch import exporter, placement, torchplan

from ..commands import PLACER
from .tiny_models import TinyGPT

VOCAB, SEQ, BATCH = 64, 8, 8
RTOL, ATOL = 1e-5, 1e-6


def lm_loss(out, target):
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (BATCH, SEQ), generator=g), torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)


def placer(*args, check=True):
    r = subprocess.run([PLACER] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError("placer %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=10)


def image_batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(4, 3, 32, 32, generator=g), torch.randint(0, 10, (4,), generator=g)


# name -> (model_fn, batch_fn, loss_fn, mode). ResNet-18 runs in eval mode:
# micro-batches change BatchNorm's batch statistics (docs/torch-plan.md).
MODELS = {
    "tinygpt": (TinyGPT, batch, lm_loss, "train"),
    "resnet18": (resnet18, image_batch, F.cross_entropy, "eval"),
}


def reference(name, seed=0):
    """The unsplit model's step on the whole batch: loss and gradients."""
    build, data, loss_fn, mode = MODELS[name]
    torch.manual_seed(seed)
    model = build()
    model.train(mode == "train")
    x, y = data()
    loss = loss_fn(model(x), y)
    loss.backward()
    return float(loss), {n: p.grad.clone() for n, p in model.named_parameters()}


def _rank(rank, world, plan, out_dir, name):
    build, data, loss_fn, mode = MODELS[name]
    x, y = data()
    res = torchplan.run_plan(build, plan, (x,), y, loss_fn, rank=rank, world=world, seed=0, mode=mode)
    torch.save({"loss": res["loss"], "grads": res["grads"], "stage": res["stage"]},
               os.path.join(out_dir, "rank%d.pt" % rank))


class TorchPlanTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="torchplan-")
        cls.graph = os.path.join(cls.tmp, "tinygpt.json")
        x, y = batch()
        cls.g, cls.meta = exporter.export_training_step(TinyGPT, lambda: (x, y), lm_loss, torch.optim.Adam,
                                                        {"lr": 1e-3}, cls.graph, name="tinygpt", fake=False)

    def decision(self, name, device_of_module, strategy=None):
        dev = [device_of_module(m["module"]) for m in self.meta["ops"]]
        doc = {"format": "placer-decision", "version": 1, "graph": "tinygpt", "ops": len(dev), "devices": 2,
               "device": dev}
        if strategy:
            doc["version"], doc["strategy"] = 2, strategy
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    @staticmethod
    def issue_map(module):
        """The issue's placement: layer 0 on device 0 except its attention
        on 1 and the attention's out_proj on 0; layer 1 and the head on 1."""
        if module.startswith("layers.0.self_attn.out_proj"):
            return 0
        if module.startswith("layers.0.self_attn"):
            return 1
        if module.startswith("layers.1") or module in ("norm", "head"):
            return 1
        return 0

    def export_plan(self, dec, strategy=None):
        out = os.path.join(self.tmp, os.path.basename(dec)[:-5] + ".plan.json")
        args = ["export", "--graph", self.graph, "--placement", dec, "--to", "torch-plan", "-o", out]
        if strategy:
            args += ["--strategy", strategy]
        placer(*args)
        with open(out) as f:
            return json.load(f)

    def run_and_compare(self, plan, name="tinygpt"):
        out_dir = tempfile.mkdtemp(dir=self.tmp)
        world = plan["replicas"] * len(plan["stages"])
        torchplan.launch(world, _rank, (plan, out_dir, name), backend="gloo")
        want_loss, want = reference(name)
        got = {}
        for r in range(world):
            res = torch.load(os.path.join(out_dir, "rank%d.pt" % r))
            self.assertAlmostEqual(res["loss"], want_loss, delta=ATOL + RTOL * abs(want_loss))
            for n, g in res["grads"].items():
                if n in got:  # the same stage's other replica: the same all-reduced gradient
                    self.assertTrue(torch.equal(got[n], g), n)
                got[n] = g
        self.assertEqual(set(got), set(want))
        for n in want:
            self.assertTrue(torch.allclose(got[n], want[n], rtol=RTOL, atol=ATOL),
                            "%s: max difference %g" % (n, (got[n] - want[n]).abs().max()))

    def test_plan_1f1b(self):
        # The issue's placement, 2 replicas x 4 micro-batches, 1F1B: the
        # plan is contiguous (the out_proj joins its attention) and runs.
        dec = self.decision("issue", self.issue_map, {"replicas": 2, "micro_batches": 4, "schedule": "1f1b"})
        plan = self.export_plan(dec)
        self.assertEqual((plan["replicas"], plan["micro_batches"], plan["schedule"]), (2, 4, "1f1b"))
        self.assertEqual(len(plan["stages"]), 2)
        self.assertEqual(plan["joined"]["layers.0.self_attn.out_proj"], "layers.0.self_attn")
        stage = torchplan.module_stages(plan)
        self.assertEqual(stage["layers.0.self_attn"], stage["layers.0.self_attn.out_proj"])
        self.assertEqual(stage["head"], 1)
        self.run_and_compare(plan)

    def test_plan_gpipe(self):
        # A clean cut between the layers, gpipe, 2 micro-batches (the
        # strategy given on the command line, replacing the file's; its
        # 2 replicas take the 4 GPUs the file's prediction used: export
        # refuses a strategy that takes others).
        dec = self.decision("cut", lambda m: 1 if m.startswith("layers.1") or m in ("norm", "head") else 0,
                            {"replicas": 2, "micro_batches": 1, "schedule": "1f1b"})
        plan = self.export_plan(dec, "dp=2,mb=2,schedule=gpipe")
        self.assertEqual((plan["replicas"], plan["micro_batches"], plan["schedule"]), (2, 2, "gpipe"))
        self.assertEqual(plan["split_points"], {"layers.1": "BEGINNING"})
        self.run_and_compare(plan)

    def test_plan_resnet18(self):
        # torchvision's ResNet-18 (a zoo family) at batch 4, exported, cut
        # before layer3, 2 replicas x 2 micro-batches, 1F1B, in eval mode.
        build, data, loss_fn, _ = MODELS["resnet18"]
        graph = os.path.join(self.tmp, "resnet18.json")
        x, y = data()
        _, meta = exporter.export_training_step(build, lambda: (x, y), loss_fn, torch.optim.Adam, {"lr": 1e-3},
                                                graph, name="resnet18", fake=False)
        dev = [1 if m["module"].startswith(("layer3", "layer4", "fc")) else 0 for m in meta["ops"]]
        dec = os.path.join(self.tmp, "resnet18-cut.json")
        with open(dec, "w") as f:
            json.dump({"format": "placer-decision", "version": 2, "graph": "resnet18", "ops": len(dev), "devices": 2,
                       "device": dev, "strategy": {"replicas": 2, "micro_batches": 2, "schedule": "1f1b"}}, f)
        out = os.path.join(self.tmp, "resnet18.plan.json")
        placer("export", "--graph", graph, "--placement", dec, "--to", "torch-plan", "-o", out)
        with open(out) as f:
            plan = json.load(f)
        self.assertEqual(plan["split_points"], {"layer3": "BEGINNING"})
        self.run_and_compare(plan, "resnet18")

    def test_schedules(self):
        self.assertEqual(torchplan.schedule("gpipe", 0, 2, 2), [("F", 0), ("F", 1), ("B", 0), ("B", 1)])
        self.assertEqual(torchplan.schedule("1f1b", 0, 2, 3),
                         [("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("B", 2)])
        self.assertEqual(torchplan.schedule("1f1b", 1, 2, 3),
                         [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2), ("B", 2)])

    def test_bad_plan(self):
        bad = os.path.join(self.tmp, "bad.json")
        for doc, want in (({"format": "x"}, "format 'x'"),
                          ({"format": "placer-torch-plan", "version": 1, "schedule": "zigzag"}, "schedule 'zigzag'")):
            with open(bad, "w") as f:
                json.dump(doc, f)
            with self.assertRaises(torchplan.PlanError) as e:
                torchplan.load_plan(bad)
            self.assertIn(want, str(e.exception))
            self.assertIn(bad, str(e.exception))
            self.assertNotIn("\n", str(e.exception))
        # --gpus 2: every GPU (a replica's placement on 2 / 2), so that the
        # batch is what is refused.
        r = placer("export", "--graph", self.graph, "--placement", "single", "--to", "torch-plan", "--gpus", "2",
                   "--strategy", "dp=2,mb=8", "-o", os.path.join(self.tmp, "never.json"), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("more than the batch of 8", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "never.json")))


class ModuleMapHooksTest(unittest.TestCase):
    """The issue's regression: a module map with blocks.0.self_attn on GPU 1
    and its out_proj on GPU 0 failed with "Expected all tensors to be on the
    same device"."""

    def test_issue_map_runs(self):
        tmp = tempfile.mkdtemp(prefix="torchplan-mm-")
        graph = os.path.join(tmp, "tinygpt.json")
        x, y = batch()
        _, meta = exporter.export_training_step(TinyGPT, lambda: (x, y), lm_loss, torch.optim.Adam, {"lr": 1e-3},
                                                graph, name="tinygpt", fake=False)
        dev = [TorchPlanTest.issue_map(m["module"]) for m in meta["ops"]]
        dec = os.path.join(tmp, "issue.json")
        with open(dec, "w") as f:
            json.dump({"format": "placer-decision", "version": 1, "graph": "tinygpt", "ops": len(dev),
                       "devices": 2, "device": dev}, f)
        mm_path = os.path.join(tmp, "issue.modules.json")
        placer("export", "--graph", graph, "--placement", dec, "--to", "module-map", "-o", mm_path)
        mm = placement.load_module_map(mm_path)
        # The out_proj goes with its attention (MultiheadAttention's forward
        # reads out_proj.weight itself).
        self.assertEqual(mm["layers.0.self_attn"], 1)
        self.assertEqual(mm["layers.0.self_attn.out_proj"], 1)
        self.assertEqual(mm["layers.0.linear1"], 0)
        # Hooks where the devices change: with device 1 standing for meta
        # (not run), a pre-hook on every mapped module, and a post-hook
        # taking the outputs of each module placed away from its nearest
        # mapped ancestor back there.
        model = TinyGPT()
        hooks = placement.add_transfer_hooks(model, mm, {0: "cpu", 1: "meta"})
        pre = {p for p, kind, _ in hooks if kind == "pre"}
        post = {p: d for p, kind, d in hooks if kind == "post"}
        self.assertEqual(pre, set(mm))
        self.assertEqual(post.get("layers.0.self_attn"), "cpu")
        self.assertNotIn("layers.0.self_attn.out_proj", post)  # with its parent, on meta
        self.assertNotIn("layers.0.linear1", post)
        # And it runs (both devices CPU here): the same loss as the plain
        # model, with the hooks in place.
        torch.manual_seed(0)
        model = TinyGPT()
        torch.manual_seed(0)
        plain = TinyGPT()
        placement.apply_module_map(model, mm, device_of={0: "cpu", 1: "cpu"})
        self.assertTrue(model._placer_transfer_hooks)
        self.assertEqual(placement.check_module_map(model, mm, device_of={0: "cpu", 1: "cpu"}), [])
        self.assertTrue(torch.equal(model(x), plain(x)))

    def test_hooks_split_inside_module(self):
        # A map splitting a module from its children: the block on 0, its
        # attention on 1, its MLP's first linear on 1. Post-hooks on exactly
        # the modules away from their nearest mapped ancestor.
        mm = {"": 0, "layers.0": 0, "layers.0.self_attn": 1, "layers.0.self_attn.out_proj": 1,
              "layers.0.linear1": 1, "layers.0.linear2": 0, "head": 1}
        hooks = placement.add_transfer_hooks(TinyGPT(), mm, {0: "cpu", 1: "meta"})
        post = sorted(p for p, kind, _ in hooks if kind == "post")
        self.assertEqual(post, ["head", "layers.0.linear1", "layers.0.self_attn"])
        self.assertEqual(sorted(p for p, kind, _ in hooks if kind == "pre"), sorted(mm))


if __name__ == "__main__":
    unittest.main()
