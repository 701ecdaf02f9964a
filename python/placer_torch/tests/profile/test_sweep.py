"""sweep's plumbing on the CPU: every plan of a tiny sweep prints one
line with its step and the workload and strategy placer eval takes for
it (and placer, when PLACER names the binary, evaluates each)."""

import contextlib
import io
import json
import os
import subprocess
import unittest

from placer_torch.profile import sweep


class SweepTest(unittest.TestCase):
    def test_quick(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(sweep.main(["--quick", "--device", "cpu"]), 0)
        lines = [json.loads(x) for x in out.getvalue().splitlines()]
        # mbs 1 and 2, without and with full recomputation.
        self.assertEqual([(x["mbs"], x["recompute"]) for x in lines], [(1, "none"), (2, "none"), (1, "full"), (2, "full")])
        for x in lines:
            self.assertGreater(x["step_s"], 0)
            self.assertTrue(x["workload"].startswith("llama:layers=2,hidden=64,"), x["workload"])
            self.assertIn("mbs=%d" % x["mbs"], x["strategy"])
            self.assertEqual("recompute=full" in x["strategy"], x["recompute"] == "full")
        placer = os.environ.get("PLACER")
        if placer:
            for x in lines:
                r = subprocess.run([placer, "eval", "--workload", x["workload"], "--gpus", "1",
                                    "--strategy", x["strategy"], "--json"], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertGreater(json.loads(r.stdout)["step_s"], 0)

    def test_bad_arguments(self):
        err = io.StringIO()
        for argv in (["--mbs", "3", "--batch", "4"], ["--mbs", "0"], ["--recompute", "half"]):
            with self.subTest(argv=argv), contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
                sweep.main(argv + ["--device", "cpu"])
            self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
