"""heldout.py's own pieces (not the held-out run itself, which is long:
make held-out): the one-line reasons, the table's cells, the models'
factories building and giving logits of the runner's shapes."""

import json
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

import torch

import heldout


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

    def test_rows(self):
        """Every row of the search's --rows index becomes a cell: a file
        is evaluated, exported and run (here: recorded), a row without
        one says why, the search's own row when it is the answer is the
        answer's cell; the summary lists them."""
        import argparse
        import tempfile
        with tempfile.TemporaryDirectory() as work:
            a = argparse.Namespace(placer=os.path.join(work, "placer"), work=work, json=None)
            d = heldout.Driver(a)
            folder = d.path("m", 2, "rows")
            os.makedirs(folder)
            dec = {"format": "placer-decision", "version": 2, "graph": "m", "ops": 3, "devices": 2,
                   "device": [0, 1, 1], "strategy": {"micro_batches": 2, "schedule": "1f1b"}}
            with open(os.path.join(folder, "1f1b.json"), "w") as f:
                json.dump({"format": "placer-result", "decision": dec}, f)
            index = {"format": "placer-rows", "version": 1, "answer": "go-scored", "rows": [
                {"method": "expert", "valid": False, "note": "no expert placement for this graph"},
                {"method": "1f1b", "step_time_s": 2e-3, "valid": True, "strategy": "mb=2,schedule=1f1b",
                 "file": "1f1b.json"},
                {"method": "go-scored", "step_time_s": 1e-3, "valid": True, "file": "go-scored.json"}]}
            with open(os.path.join(folder, "rows.json"), "w") as f:
                json.dump(index, f)
            report = {"result": {"method": "go-scored"}, "comparison": {"methods": [
                {"method": "expert", "step_time_s": 0, "error": "no expert placement for this graph"},
                {"method": "1f1b", "step_time_s": 2e-3}, {"method": "go-scored", "step_time_s": 1e-3}]}}
            ran = []

            def plan_eval_run(name, graph, gpus, cell, placement, want):
                ran.append((cell["row"], placement, want))
                cell.update(export_plan="ok", run="ok", match=True, eval_equal=True, eval_rel=0.0)
            d.plan_eval_run = plan_eval_run
            d.rows("m", "g.json", 2, report)
            self.assertEqual(ran, [("1f1b", ["--placement", os.path.join(folder, "1f1b.json")], 2e-3)])
            self.assertEqual([c["row"] for c in d.cells], ["expert", "1f1b"])
            self.assertEqual(d.cells[0]["search"], "no decision: no expert placement for this graph")
            self.assertEqual(d.cells[1]["predicted_gpus"], 2)
            d.cells.insert(0, {"model": "m", "gpus": 2, "row": "answer", "search": "ok", "step_s": 1e-3})
            line = heldout.summary({"cells": d.cells, "exports": {}}).splitlines()[-1]
            self.assertIn("| 1f1b ok, = | 1 (expert) |", line)

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
