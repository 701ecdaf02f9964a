"""heldout.py's own pieces (not the held-out run itself, which is long:
make held-out): the one-line reasons, the table's cells, the models'
factories building and giving logits of the runner's shapes."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import heldout  # noqa: E402


class HeldOutTest(unittest.TestCase):
    def test_first_line(self):
        tb = "Traceback (most recent call last):\n  File x\nValueError: bad plan\n"
        self.assertEqual(heldout.first_line(tb), "ValueError: bad plan")
        self.assertEqual(heldout.first_line("UserWarning: x\nplacer: no such file\n"), "placer: no such file")
        self.assertEqual(heldout.first_line(""), "")
        warn = "x.py:336: UserWarning: a view\n  output = f(output)\ntorchplan: a process failed: SIGKILL\n"
        self.assertEqual(heldout.first_line(warn), "torchplan: a process failed: SIGKILL")

    def test_cells(self):
        c = {"model": "m", "gpus": 4, "row": "answer", "search": "ok", "step_s": 1e-3, "export_plan": "ok",
             "plan": "R2 x S2, M2 1f1b", "run": "ok", "match": True, "procs": 4, "predicted_gpus": 4,
             "eval_equal": True, "eval_rel": 0.0}
        self.assertEqual(heldout.fmt(c), "m | 4 | answer | ok | 1 ms | ok | R2 x S2, M2 1f1b | ok | yes | 4 / 4 | equal")
        c.update(procs=2, match=False, eval_equal=False, eval_rel=0.5, rebuilt="single --strategy dp=4")
        self.assertIn("2 / 4 !", heldout.fmt(c))
        self.assertIn("NO", heldout.fmt(c))
        self.assertIn("rebuilt (single --strategy dp=4): differs (rel 5.0e-01)", heldout.fmt(c))

    def test_small_models(self):
        x = torch.randn(8, 8)
        for name in ("skip", "looped"):
            self.assertEqual(tuple(getattr(heldout, name)()(x).shape), (8, 5))
        ids = torch.randint(0, 32, (8, heldout.SEQ))
        self.assertEqual(tuple(heldout.tied()(ids).shape), (8, heldout.SEQ, 32))
        m = heldout.tied()
        self.assertIs(m.head.weight, m.emb.weight)
        self.assertEqual(tuple(heldout.two_inputs()(torch.randn(8, 3, 4), torch.randn(8, 4)).shape), (8, 5))


if __name__ == "__main__":
    unittest.main()
