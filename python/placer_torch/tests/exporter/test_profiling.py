"""Tests of torchexport --profile on CPU (placer_torch.profiling;
docs/import.md, "Profiling"): the real step's ops matched to the graph's,
their times in the graph and in a cost table that placer reads."""

import json
import os
import subprocess
import tempfile
import unittest

from placer_torch import profiling, torchexport  # torchexport: the command line

from ..commands import PLACER
STATE = ("Input", "Parameter", "Buffer", "OptimizerStep")


class _Ev:
    """A stand-in profiler event: a name and a parent."""

    def __init__(self, name, parent=None):
        self.name, self.cpu_parent = "aten::" + name, parent


class LaunchCountTest(unittest.TestCase):
    def test_median_of_steps(self):
        # (counts per profiled step, launches): a cuDNN convolution's 7 in
        # every step, a view's none, one step's extra memset outvoted, a
        # tie of two steps rounded half up.
        for counts, want in [([7, 7, 7], 7), ([0, 0], 0), ([2, 3, 2], 2), ([1, 2], 2), ([4], 4)]:
            self.assertEqual(profiling.launch_count(counts), want, counts)


class MatchTest(unittest.TestCase):
    def test_order_and_subtrees(self):
        lin = _Ev("linear")
        t, addmm = _Ev("t", lin), _Ev("addmm", lin)
        copy = _Ev("copy_", addmm)
        relu = _Ev("relu")
        add = _Ev("add_")
        cp2 = _Ev("copy_", add)
        events = [lin, t, addmm, copy, relu, add, cp2]
        # The graph's copy_ after relu is one the real run does not make
        # where it stands: the add_'s own copy_ must not take it, nor the
        # addmm's.
        types = [None, "t", "addmm", "relu", "copy_", "add_"]
        m = profiling.match(types, events)
        self.assertEqual({i: e for i, e in m.items()}, {1: t, 2: addmm, 3: relu, 5: add})


    def test_inplace_and_out_variants(self):
        # The recording's add, mul_ and _foreach_add_ are the real run's
        # add_, mul and _foreach_add (and relu its relu); an out= variant
        # has the plain name. A graph's add is never matched to a later
        # mul.
        add_, mul, fa, relu = _Ev("add_"), _Ev("mul"), _Ev("_foreach_add"), _Ev("relu")
        types = [None, "add", "mul_", "_foreach_add_", "relu"]
        m = profiling.match(types, [add_, mul, fa, relu])
        self.assertEqual(m, {1: add_, 2: mul, 3: fa, 4: relu})
        self.assertEqual(profiling._names("add_"), ("aten::add_", "aten::add__for_cpu", "aten::add", "aten::add_for_cpu"))
        self.assertEqual(profiling._base("__iadd__"), "__iadd__")
        # Twins of one base next to each other are matched in order, not
        # skipped as ops of another type ahead.
        a1, a2 = _Ev("add_"), _Ev("add")
        self.assertEqual(profiling.match(["add", "add_"], [a1, a2]), {0: a1, 1: a2})


class ProfileTest(unittest.TestCase):
    def test_mlp_on_cpu(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, table = os.path.join(tmp, "mlp.json"), os.path.join(tmp, "costs.json")
            for _ in range(2):
                self.assertEqual(torchexport.main(["--model", "mlp", "--profile", "--profile-steps", "3",
                                                   "--profile-device", "cpu", "--cost-table", table, "-o", out]), 0)
            with open(out) as f:
                g = json.load(f)
            with open(os.path.join(tmp, "mlp.meta.json")) as f:
                meta = json.load(f)
            ops = [o for o in g["ops"] if o["type"] not in STATE]
            # The fake recording's gradient copies (new_empty_strided and
            # copy_ where the real AccumulateGrad steals the gradient) are
            # the only ops left unmatched.
            unmatched = [o["type"] for o in ops if "time_s" not in o]
            self.assertEqual(set(unmatched), {"new_empty_strided", "copy_"})
            self.assertEqual(meta["profile"]["unmatched"], len(unmatched))
            for o in ops:
                if "time_s" in o:
                    # torch 1.13's profiler has microsecond resolution: a
                    # view, or an optimizer op on a 10-element bias, can
                    # read 0 s there; a matrix product cannot.
                    if o["type"] in ("addmm", "mm"):
                        self.assertGreater(o["time_s"], 0, o["name"])
                    self.assertGreaterEqual(o["time_s"], 0, o["name"])
                    self.assertLess(o["time_s"], 1, o["name"])
                self.assertNotIn("dispatch_s", o)  # a CPU run has none
            for o in g["ops"]:
                if o["type"] in STATE:
                    self.assertNotIn("time_s", o)
            with open(table) as f:
                tab = json.load(f)
            self.assertEqual(tab["format"], profiling.COST_TABLE_FORMAT)
            # Two runs of three steps: six samples for an op that occurs once.
            fc1 = [e for e in tab["entries"] if e["key"]["type"] == "addmm" and e["key"]["shape"] == [16, 64]]
            self.assertEqual(len(fc1), 1)
            self.assertEqual(fc1[0]["samples"], 6)
            if os.path.exists(PLACER):
                r = subprocess.run([PLACER, "eval", "--graph", out, "--cost-table", table, "--json"],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
