"""Tests of tools/measure/gpu/run.sh, make gpu's script (make test-python-debian),
without a GPU and without torch: its step list (run.sh --list) and every
`placer profile --workload` step's command line checked by the real
bin/placer ($PLACER; skipped when absent) up to the start of its Python
(--python /bin/false: placer checks every option before anything runs,
so a step whose options it refuses fails there, in one line, and one it
takes fails only at the measurements). About a second: no step runs.
make gpu-check runs the steps themselves on the CPU at smoke-test sizes."""

import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RUN = os.path.join(HERE, "run.sh")
PLACER = os.environ.get("PLACER", os.path.join(ROOT, "bin", "placer"))
HAVE_PLACER = os.access(PLACER, os.X_OK)

# The steps only GPU_STEPS runs (the attention beyond causal GQA and the
# frameworks' layers on CUDA).
NAMED = ["profile-gpt-oss-window", "eval-gpt-oss-window", "window-attn", "profile-deepseek-v3-mla", "eval-deepseek-v3-mla",
         "profile-llama1b-hf", "profile-llama1b-titan", "timm-val"]


def listed(out, **env):
    """run.sh --list OUT's lines as (name, limit, kind, command)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPU_")}
    e.update(env)
    p = subprocess.run(["sh", RUN, "--list", out], cwd=ROOT, env=e, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("run.sh --list: exit %d: %s" % (p.returncode, p.stderr))
    return [tuple(l.split("\t", 3)) for l in p.stdout.splitlines() if l.strip()]


class ListTest(unittest.TestCase):
    def test_list_runs_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "gpu")
            steps = listed(out, GPU_DEVICE="cuda", GPU_QUICK="0")
            self.assertFalse(os.path.exists(out), "--list made %s" % out)
        names = [s[0] for s in steps]
        self.assertEqual(len(names), len(set(names)), names)
        by = {s[0]: s for s in steps}
        # The named steps: listed as such, each with a limit, in the order
        # they run.
        self.assertEqual([n for n in names if by[n][2] == "named"], NAMED)
        limits = {"window-attn": "150", "timm-val": "300"}
        for n in NAMED:
            self.assertEqual(by[n][1], limits.get(n, "90" if n.startswith("profile-") else "30"), by[n])
        # The ones a plain run takes, and the hw bench said skipped
        # without bin/placer-cuda or a GPU.
        self.assertEqual(by["layerbench"][2], "default")
        self.assertEqual(by["profile-llama1b-mcore"][2], "default")

    def test_list_named_commands(self):
        with tempfile.TemporaryDirectory() as d:
            by = {s[0]: s for s in listed(d, GPU_DEVICE="cuda", GPU_QUICK="0")}
        want = {
            "profile-gpt-oss-window": ["--workload", "gpt-oss-120b:seq=4096,batch=512", "--ep", "8", "--mbs", "1,4",
                                       "--out", d + "/gpt-oss-window.profile.json"],
            "profile-deepseek-v3-mla": ["--workload", "deepseek-v3:seq=4096,batch=15360", "--ep", "64",
                                        "--out", d + "/deepseek-v3-mla.profile.json"],
            "profile-llama1b-hf": ["--framework", "hf", "--out", d + "/llama1b.hf.profile.json"],
            "profile-llama1b-titan": ["--framework", "torchtitan", "--out", d + "/llama1b.titan.profile.json"],
        }
        for name, args in want.items():
            cmd = by[name][3].split()
            for i in range(0, len(args), 2):
                k = cmd.index(args[i])
                self.assertEqual(cmd[k + 1], args[i + 1], (name, cmd))
        self.assertIn("--strategy tp=1,pp=4,dp=16,ep=8,mbs=4", by["eval-gpt-oss-window"][3])
        self.assertIn("kernelbench.py --device cuda --only window --json", by["window-attn"][3])
        self.assertIn("--strategy tp=1,pp=16,dp=128,ep=64,mbs=1,first=1", by["eval-deepseek-v3-mla"][3])

    def test_gpu_steps_picks(self):
        with tempfile.TemporaryDirectory() as d:
            steps = listed(d, GPU_STEPS="profile-llama1b-hf,layerbench", GPU_DEVICE="cuda")
        # (skipped steps are said whatever GPU_STEPS names, as in a run's steps.jsonl)
        steps = [s for s in steps if s[2] != "skipped"]
        self.assertEqual([s[0] for s in steps], ["layerbench", "profile-llama1b-hf"])
        self.assertEqual(steps[1][2], "named")


@unittest.skipUnless(HAVE_PLACER, "no bin/placer (make build)")
class ProfileOptionsTest(unittest.TestCase):
    def test_placer_takes_every_profile_step(self):
        # Each profile of a workload, at the GPU's sizes and at the CPU
        # check's: placer takes its options and stops at the Python.
        for quick in ("0", "1"):
            with tempfile.TemporaryDirectory() as d:
                steps = listed(d, GPU_DEVICE="cuda", GPU_QUICK=quick, PLACER=PLACER)
                checked = 0
                for name, _, kind, cmd in steps:
                    # A profile step's command: env TORCH_PY=... PLACER profile ARGS
                    # (no quoting: its arguments have no spaces).
                    args = cmd.split()
                    if kind == "skipped" or args[0] != "env" or "profile" not in args or "--workload" not in args:
                        continue
                    args = args[args.index("profile"):]
                    p = subprocess.run([PLACER] + args + ["--python", "/bin/false"], cwd=ROOT, capture_output=True,
                                       text=True, timeout=30)
                    self.assertNotEqual(p.returncode, 0, name)
                    self.assertIn("the measurements failed", p.stderr, "%s (quick=%s): %s" % (name, quick, p.stderr))
                    self.assertEqual(os.listdir(d), [], name)
                    checked += 1
                # 5 profiles by default (llama1b, megatron-1.7b, qwen3-30b-a3b, llama3-8b-fp8 and the two FP8
                # and two mcore ones: 8) and the 4 named.
                self.assertEqual(checked, 12, quick)

    def test_a_refused_option_fails_before_python(self):
        # The check above tells a refused option from a taken one.
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([PLACER, "profile", "--workload", "gpt-oss-120b:seq=4096,batch=512", "--tp", "1", "--ep",
                                "7", "--mbs", "1", "--cp", "1", "--recompute", "none", "--out", d + "/x.json",
                                "--python", "/bin/false"], cwd=ROOT, capture_output=True, text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertNotIn("the measurements failed", p.stderr)
        self.assertIn("--ep 7", p.stderr)


if __name__ == "__main__":
    unittest.main()
