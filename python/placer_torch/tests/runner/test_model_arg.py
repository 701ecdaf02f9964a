"""torchplan.py's --model names a model as torchexport's does
(placer_torch.loader, docs/torch-plan.md): mymodel:SmallCNN for a
mymodel.py in the current directory, with no PYTHONPATH (before, "No
module named 'mymodel'"), and path/to/mymodel.py:SmallCNN by its path;
what names nothing is one line. test_forms runs tools/dev/torchplan/
torchplan.py by its path as a user does, on a one-stage, one-replica plan of the
model's top-level modules (one process: gloo on CPU)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from ..commands import ROOT

HERE = os.path.dirname(os.path.abspath(__file__))
# The command from a checkout, run by its path as a user does (python -m
# would put the current directory on the import path itself, whether or
# not --model's loader does).
TORCHPLAN = os.path.join(ROOT, "tools", "dev", "torchplan", "torchplan.py")

MODEL = '''import torch.nn as nn


class SmallCNN(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 8 * 8, 10))
'''

PLAN = {"format": "placer-torch-plan", "version": 1, "graph": "smallcnn", "batch": 4, "devices": 1, "gpus": 1,
        "replicas": 1, "micro_batches": 1, "schedule": "gpipe",
        "stages": [{"stage": 0, "device": 0, "modules": ["0", "1", "2", "3"]}]}


class ModelArgTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.work = cls.dir.name
        with open(os.path.join(cls.work, "mymodel.py"), "w") as f:
            f.write(MODEL)
        cls.plan = os.path.join(cls.work, "plan.json")
        with open(cls.plan, "w") as f:
            json.dump(PLAN, f)
        # A user's shell: no PYTHONPATH pointing at the model.
        cls.env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_plan(self, model, cwd):
        return subprocess.run([sys.executable, TORCHPLAN, "--plan", self.plan, "--model", model, "--input", "3,8,8",
                               "--classes", "10"], cwd=cwd, env=self.env, capture_output=True, text=True, timeout=300)

    def test_forms(self):
        for model, cwd in (("mymodel:SmallCNN", self.work),  # a module in the current directory
                           (os.path.join(self.work, "mymodel.py") + ":SmallCNN", HERE)):  # a file by its path
            with self.subTest(model=model):
                r = self.run_plan(model, cwd)
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                self.assertNotIn("Traceback", r.stderr)

    def test_builder(self):
        """The runner's builder, in this process: the forms above and a
        relative path, each a SmallCNN; what names nothing, one line
        (torchplan.py prints it after "torchplan: ", exit 1)."""
        from placer_torch import torchplan
        from placer_torch.plan import PlanError
        old = os.getcwd()
        os.chdir(self.work)
        try:
            for model in ("mymodel:SmallCNN", "mymodel.py:SmallCNN", os.path.join(self.work, "mymodel.py") + ":SmallCNN"):
                with self.subTest(model=model):
                    self.assertEqual(type(torchplan.model_builder(model, {})()).__name__, "SmallCNN")
            for model, want in (("nosuchmodule_x:SmallCNN", "--model 'nosuchmodule_x:SmallCNN': cannot import "
                                 "nosuchmodule_x: ModuleNotFoundError: No module named 'nosuchmodule_x'"),
                                ("nofile.py:SmallCNN", "--model 'nofile.py:SmallCNN': no such file nofile.py"),
                                ("mymodel", "--model 'mymodel': want module:callable (or file.py:callable)"),
                                ("mymodel:Nope", "--model 'mymodel:Nope': mymodel has no 'Nope'")):
                with self.subTest(model=model):
                    with self.assertRaises(PlanError) as e:
                        torchplan.model_builder(model, {})
                    self.assertEqual(str(e.exception), want)
        finally:
            os.chdir(old)


if __name__ == "__main__":
    unittest.main()
