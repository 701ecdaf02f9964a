"""placer's exported plans trained by the frameworks' own code on CPU
processes with gloo, each step's loss against the unsplit model's (make
test-frameworks-run; docs/frameworks.md).

torchtitan 0.2.2 (titan_cpu.py: its own main and Trainer, on
torch.distributed.run): bin/placer exports plans of a tiny llama
(LLAMA, titan_cpu's placer_tiny flavor: torchtitan's llama3 debugmodel
narrowed) on 4 GPUs (FSDP 4; TP 2 x FSDP 2; PP 2 x FSDP 2, 1F1B; PP 2 x
2 virtual stages x FSDP 2, Interleaved1F1B; FSDP 4 with float8), each
run for 2 steps on 4 processes from one seed checkpoint (torchtitan's
own --checkpoint.create_seed_checkpoint, loaded with
--checkpoint.initial_load_path), against the same job on 1 process
(every parallel degree 1: the unsplit model, the plan's local batch,
its accumulation). Compared: the logged loss of both steps (the second
after the first step's AdamW update) and the logged gradient norm. A
mixture of experts with expert parallelism is shown stopping where
torchtitan's CPU path stops.

DeepSpeed 0.19.8 (ds_run.py, on torch.distributed.run): bin/placer
exports plans of the zoo's BERT graph (measurements/..., as
test_exports.py) to a DeepSpeed configuration (and _pipeline.py); a
tiny model with BERT's module paths trains 2 steps with each (ZeRO-2
and ZeRO-3 on 2 processes, the 2-stage pipeline on 2, and 2 stages x 2
replicas on 4), against the unsplit model's 2 steps in plain torch.

torchtitan 0.3.0 (titan03_cpu.py: torchtitan.train's main with the
device bound to the CPU, SDPA attention, FSDP's sum reduction and
synthetic data): bin/placer exports the same tiny llama's plans (FSDP 4;
TP 2 x FSDP 2; PP 2 x FSDP 2, 1F1B) to torchtitan 0.3's config module,
each saved as plan.py and run as its Run line says, titan03_cpu.py in
place of -m torchtitan.train (--module plan --config placer_plan: the
module's own base_config, torchtitan's llama3 built at the plan's
shape), from one seed checkpoint, against the FSDP module on 1 process.

Each run is its own process group (torch.distributed.run and its
workers), killed whole past its timeout; its log is kept in the failure
message. PLACER names the binary (default: bin/placer of this
checkout); PLACER_FRAMEWORKS the frameworks' folder (make
venv-frameworks), PLACER_FRAMEWORKS03 torchtitan 0.3.0's (make
venv-frameworks-03); without one, its tests are skipped, saying so.
"""

import json
import os
import re
import signal
import subprocess
import sys
import shutil
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLACER = os.environ.get("PLACER") or os.path.join(ROOT, "bin", "placer")
FRAMEWORKS = os.environ.get("PLACER_FRAMEWORKS", "")
FRAMEWORKS03 = os.environ.get("PLACER_FRAMEWORKS03", "")
GRAPH = os.path.join(ROOT, "measurements", "2026-11-26-h100", "graphs", "bert_base-b16-fp32.json")

TOL = 1e-5  # |loss - unsplit loss|; measured: 5e-7 at most (float32, another summation order)
TIMEOUT = 180  # seconds, one run (a 4-process run takes 15 to 35 s on 2 shared cores)

# titan_cpu's placer_tiny (llama3's debugmodel narrowed) as placer's
# workload: 4 layers, 64 wide, 4 heads, FFN 256 (llama3's rounding of
# 2/3 x 4 x 64 up to 256), 256 tokens; 8 sequences of 32 a step.
LLAMA = "llama:layers=4,hidden=64,heads=4,kv_heads=4,ffn=256,seq=32,vocab=256,batch=8"
TOKENS = 8 * 32
TITAN_PLANS = {  # name -> placer strategy on 4 GPUs
    "FSDP 4": "dp=4,mbs=2,fsdp=on",
    "TP 2 x FSDP 2": "tp=2,dp=2,mbs=2,fsdp=on,sp=on",
    "PP 2 x FSDP 2, 1F1B": "pp=2,dp=2,mbs=1,fsdp=on",
    "PP 2 x 2 virtual stages x FSDP 2, Interleaved1F1B": "pp=2,vp=2,dp=2,mbs=1,fsdp=on",
    "FSDP 4, float8": "dp=4,mbs=2,fsdp=on,fp8=current",
}
TITAN_ARGS = [
    "--experimental.custom_import", "titan_cpu", "--model.name", "llama3_cpu", "--model.flavor", "placer_tiny",
    "--training.steps", "2", "--training.mixed_precision_param", "float32", "--metrics.log_freq", "1",
    "--lr_scheduler.warmup_steps", "0", "--optimizer.lr", "0.01", "--optimizer.implementation", "foreach",
    "--checkpoint.enable",
]
# float8 on the CPU: torchtitan's converter asks for a GPU of SM 8.9 or
# float8.emulate in eager mode (0.2.2's float8.py refuses emulate with the
# model compiled, and placer's torchtitan stack exports compile=on); its
# tensorwise recipe then runs torchao's Float8Linear, whose scaled matmul
# torch 2.14 has on the CPU. So the float8 plan runs as exported but eager.
FLOAT8_ARGS = ["--quantize.linear.float8.emulate", "--compile.no-enable"]
TP_CPU_ARGS = ["--compile.no-enable"]
# A mixture of experts in placer's shape of titan_cpu's placer_tiny_moe
# (torchtitan's qwen3 debugmodel_moe narrowed), expert parallel 2.
MOE = "llama:layers=2,hidden=64,heads=4,kv_heads=2,seq=32,vocab=256,batch=4,experts=4,topk=2,expert_ffn=64"
# (eager: NotImplementedError ... for 'Long'; compiled, as placer's torchtitan
# stack exports: Dynamo's fake-tensor run of the same call, ... for 'torch.int64')
MOE_STOP = re.compile(r"\"histogram_cpu\" not implemented for '(Long|torch\.int64)'")

# torchtitan 0.3.0: the same llama's plans, on its trainer through
# titan03_cpu.py. The settings a CPU run needs beside the module's: float32
# parameters (FSDP's default is bfloat16), every step logged, no warmup
# (the first step's update counts in the second step's loss), and neither
# the profiler nor TensorBoard, which llama3_8b's trainer settings turn on.
TITAN03_PLANS = {k: TITAN_PLANS[k] for k in ("FSDP 4", "TP 2 x FSDP 2", "PP 2 x FSDP 2, 1F1B")}
TITAN03_ARGS = [
    "--training.steps", "2", "--training.mixed_precision_param", "float32", "--metrics.log_freq", "1",
    "--lr_scheduler.warmup_steps", "0", "--profiler.no-enable_profiling", "--metrics.no-enable_tensorboard", "--checkpoint.enable",
]

# The BERT graph's plans for DeepSpeed: name -> (stages, strategy, processes).
DS_PLANS = {
    "ZeRO-2": (1, {"replicas": 2, "shard": "zero2"}, 2),
    "ZeRO-3": (1, {"replicas": 2, "shard": "fsdp"}, 2),
    "pipeline 2 stages, 1F1B": (2, {"replicas": 1, "micro_batches": 4, "schedule": "1f1b"}, 2),
    "pipeline 2 stages x 2 replicas, 1F1B": (2, {"replicas": 2, "micro_batches": 4, "schedule": "1f1b"}, 4),
}

TIMES = []  # (framework, plan, processes, [loss - unsplit per step], seconds), printed at the end


def placer(*args):
    r = subprocess.run([PLACER] + list(args), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def env(**extra):
    e = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (FRAMEWORKS, os.environ.get("PYTHONPATH")) if p))
    e.update(extra)
    return e


def launch(argv, log, environ, cwd, timeout=TIMEOUT):
    """argv in a process group of its own, output to log; (exit status,
    seconds). Past timeout the group is killed (SIGTERM, then SIGKILL)."""
    start = time.monotonic()
    with open(log, "w") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=environ, cwd=cwd, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            rc = "timeout after %d s" % timeout
    return rc, time.monotonic() - start


def torchrun(n, script, *args):
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(n), os.path.join(HERE, script)] + list(args)


def tail(log, n=40):
    with open(log) as f:
        return "".join(f.readlines()[-n:])


@unittest.skipUnless(FRAMEWORKS, "no PLACER_FRAMEWORKS: make venv-frameworks installs torchtitan and DeepSpeed, make test-frameworks-run runs this")
class TestTorchtitanRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="placer-titan-run-")
        cls.toml = {}
        for name, strategy in TITAN_PLANS.items():
            path = os.path.join(cls.tmp, "plan-%d.toml" % len(cls.toml))
            placer("export", "--allow-over", "--workload", LLAMA, "--gpus", "4", "--strategy", strategy, "--to", "torchtitan@0.2", "-o", path)
            cls.toml[name] = path
        cls.seed = os.path.join(cls.tmp, "seed")
        fsdp = cls.toml["FSDP 4"]
        cls.titan(1, fsdp, cls.seed, "--checkpoint.create_seed_checkpoint", "--parallelism.data_parallel_shard_degree", "1", seed=False)
        cls.unsplit = cls.titan(1, fsdp, os.path.join(cls.tmp, "unsplit"), "--parallelism.data_parallel_shard_degree", "1")
        cls.float8 = os.path.isdir(os.path.join(FRAMEWORKS, "torchao"))
        if cls.float8:
            cls.unsplit8 = cls.titan(1, cls.toml["FSDP 4, float8"], os.path.join(cls.tmp, "unsplit-float8"),
                                     "--parallelism.data_parallel_shard_degree", "1", *FLOAT8_ARGS)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def titan(cls, n, toml, dump, *args, seed=True, expect_ok=True):
        """torchtitan's main on n processes (from the seed checkpoint): each
        rank's [{step, loss, grad_norm}] (titan_cpu's record), the exit
        status, the log."""
        argv = torchrun(n, "titan_cpu.py", "--job.config_file", toml, "--job.dump_folder", dump, *TITAN_ARGS)
        if seed:
            argv += ["--checkpoint.initial_load_path", os.path.join(cls.seed, "checkpoint", "step-0")]
        argv += list(args)
        log = dump + ".log"
        rc, secs = launch(argv, log, env(), cls.tmp)
        if expect_ok:
            assert rc == 0, "torchtitan on %d processes: exit %s\n%s" % (n, rc, tail(log))
        return {"ranks": read_ranks(dump), "rc": rc, "log": log, "seconds": secs}

    def compare(self, name, n=4, grad_scale=1.0, float8=False, args=()):
        ref = (self.unsplit8 if float8 else self.unsplit)["ranks"][0]
        res = self.titan(n, self.toml[name], os.path.join(self.tmp, name.replace(" ", "_").replace(",", "")), *(FLOAT8_ARGS if float8 else []), *args)
        self.assertEqual(sorted(res["ranks"]), list(range(n)))
        last = res["ranks"][n - 1]  # the last rank holds the last pipeline stage: its loss is the step's
        self.assertEqual([r["step"] for r in last], [1, 2])
        diffs = [abs(a["loss"] - b["loss"]) for a, b in zip(last, ref)]
        for step, (a, b) in enumerate(zip(last, ref), 1):
            self.assertLessEqual(abs(a["loss"] - b["loss"]), TOL, "%s step %d: loss %.8f, unsplit %.8f" % (name, step, a["loss"], b["loss"]))
            self.assertAlmostEqual(a["grad_norm"] / grad_scale / b["grad_norm"], 1.0, delta=TOL,
                                   msg="%s step %d: grad norm %.8g (/ %g), unsplit %.8g" % (name, step, a["grad_norm"], grad_scale, b["grad_norm"]))
        TIMES.append(("torchtitan 0.2.2", name, n, diffs, res["seconds"]))

    def test_fsdp(self):
        self.compare("FSDP 4")

    # The TP plan runs eager on the CPU: compiled (placer's torchtitan stack
    # exports compile=on), torch 2.14.1's Dynamo traces DTensor's
    # collectives by process-group name and gloo's TP group is not found
    # ("Could not resolve the process group registered under the name 12").
    def test_tp_fsdp(self):
        self.compare("TP 2 x FSDP 2", args=TP_CPU_ARGS)

    # torchtitan 0.2.2's pipeline backpropagates each micro-batch's loss
    # sum (reduction "sum", scale_grads=False) and divides by the global
    # token count only for the logged loss: its gradients are the token
    # count (8 x 32) times the unsplit run's (pytorch/torchtitan#2972).
    # Its gradient clipping (max_norm 1) and AdamW's first step hide the
    # scale: the second step's loss matches.
    def test_pp_fsdp(self):
        self.compare("PP 2 x FSDP 2, 1F1B", grad_scale=TOKENS)

    def test_pp_interleaved_fsdp(self):
        self.compare("PP 2 x 2 virtual stages x FSDP 2, Interleaved1F1B", grad_scale=TOKENS)

    def test_float8_fsdp(self):
        if not self.float8:
            self.skipTest("no torchao in PLACER_FRAMEWORKS (make venv-frameworks pins it)")
        self.compare("FSDP 4, float8", float8=True)

    def test_experts_stop(self):
        """Expert parallelism (2 of 2 processes): torchtitan's MoE router
        counts tokens per expert with torch.histc on int64 indices, which
        the CPU has no kernel for; it stops there, before any all-to-all."""
        path = os.path.join(self.tmp, "moe.toml")
        placer("export", "--allow-over", "--workload", MOE, "--gpus", "2", "--strategy", "dp=2,ep=2,mbs=2,fsdp=on", "--to", "torchtitan@0.2", "-o", path)
        with open(path) as f:
            self.assertIn("expert_parallel_degree = 2", f.read())
        res = self.titan(2, path, os.path.join(self.tmp, "moe"), "--model.name", "qwen3_cpu", "--model.flavor", "placer_tiny_moe",
                         seed=False, expect_ok=False)
        self.assertNotEqual(res["rc"], 0)
        with open(res["log"]) as f:
            log = f.read()
        self.assertTrue(MOE_STOP.search(log) and "torchtitan/models/moe/moe.py" in log and "torch.histc(" in log,
                        "want torchtitan's router stopping at torch.histc:\n" + tail(res["log"]))
        TIMES.append(("torchtitan 0.2.2", "MoE, EP 2 in FSDP 2: stops (torch.histc)", 2, None, res["seconds"]))


def read_ranks(dump):
    """Each rank's [{step, loss, grad_norm}] as titan_cpu.py and
    titan03_cpu.py record them."""
    rows = {}
    out = os.path.join(dump, "placer_losses")
    for f in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        with open(os.path.join(out, f)) as fh:
            rows[int(f[4:-5])] = json.load(fh)
    return rows


@unittest.skipUnless(FRAMEWORKS03, "no PLACER_FRAMEWORKS03: make venv-frameworks-03 installs torchtitan 0.3.0, make test-frameworks-run runs this")
class TestTorchtitan03Runs(unittest.TestCase):
    """torchtitan 0.3.0's trainer on placer's --to torchtitan modules, each
    run as its Run line says with titan03_cpu.py for -m torchtitan.train."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="placer-titan03-run-")
        cls.dirs = {}
        for name, strategy in TITAN03_PLANS.items():
            d = os.path.join(cls.tmp, "plan%d" % len(cls.dirs))
            os.mkdir(d)
            placer("export", "--workload", LLAMA, "--gpus", "4", "--strategy", strategy, "--to", "torchtitan", "-o", os.path.join(d, "plan.py"))
            cls.dirs[name] = d
        cls.seed = os.path.join(cls.tmp, "seed")
        fsdp = cls.dirs["FSDP 4"]
        cls.titan(1, fsdp, cls.seed, "--checkpoint.create_seed_checkpoint", "--parallelism.data_parallel_shard_degree", "1", seed=False)
        cls.unsplit = cls.titan(1, fsdp, os.path.join(cls.tmp, "unsplit"), "--parallelism.data_parallel_shard_degree", "1")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def titan(cls, n, plan_dir, dump, *args, seed=True):
        """titan03_cpu.py on n processes in plan_dir (PYTHONPATH=. and
        torchtitan 0.3.0's folder), --module plan --config placer_plan."""
        argv = torchrun(n, "titan03_cpu.py", "--module", "plan", "--config", "placer_plan", "--dump_folder", dump, *TITAN03_ARGS)
        if seed:
            argv += ["--checkpoint.initial_load_path", os.path.join(cls.seed, "checkpoint", "step-0")]
        argv += list(args)
        log = dump + ".log"
        environ = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (".", FRAMEWORKS03, os.environ.get("PYTHONPATH")) if p))
        rc, secs = launch(argv, log, environ, plan_dir)
        assert rc == 0, "torchtitan 0.3.0 on %d processes: exit %s\n%s" % (n, rc, tail(log))
        return {"ranks": read_ranks(dump), "seconds": secs}

    def compare(self, name, n=4):
        ref = self.unsplit["ranks"][0]
        self.assertEqual([r["step"] for r in ref], [1, 2])
        res = self.titan(n, self.dirs[name], os.path.join(self.tmp, name.replace(" ", "_").replace(",", "")))
        self.assertEqual(sorted(res["ranks"]), list(range(n)))
        last = res["ranks"][n - 1]  # the last rank holds the last pipeline stage: its loss is the step's
        self.assertEqual([r["step"] for r in last], [1, 2])
        for step, (a, b) in enumerate(zip(last, ref), 1):
            self.assertLessEqual(abs(a["loss"] - b["loss"]), TOL, "%s step %d: loss %.8f, unsplit %.8f" % (name, step, a["loss"], b["loss"]))
            self.assertAlmostEqual(a["grad_norm"] / b["grad_norm"], 1.0, delta=TOL,
                                   msg="%s step %d: grad norm %.8g, unsplit %.8g" % (name, step, a["grad_norm"], b["grad_norm"]))
        TIMES.append(("torchtitan 0.3.0", name, n, [abs(a["loss"] - b["loss"]) for a, b in zip(last, ref)], res["seconds"]))

    def test_fsdp(self):
        self.compare("FSDP 4")

    def test_tp_fsdp(self):
        self.compare("TP 2 x FSDP 2")

    # 0.3.0's pipeline scales its gradients as the unsplit step does (0.2.2's
    # were the token count times larger, above): the norms are compared as
    # they are.
    def test_pp_fsdp(self):
        self.compare("PP 2 x FSDP 2, 1F1B")


@unittest.skipUnless(FRAMEWORKS, "no PLACER_FRAMEWORKS: make venv-frameworks installs torchtitan and DeepSpeed, make test-frameworks-run runs this")
class TestDeepSpeedRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="placer-ds-run-")
        with open(GRAPH[:-5] + ".meta.json") as f:
            meta = json.load(f)

        def stage(module, stages):  # layers 0-5 and the embeddings on stage 0
            if stages == 1:
                return 0
            if module.startswith("layers."):
                return int(int(module.split(".")[1]) >= 6)
            return 1 if module.startswith(("norm", "head")) else 0

        cls.config = {}
        for name, (stages, strategy, _) in DS_PLANS.items():
            base = os.path.join(cls.tmp, "plan%d" % len(cls.config))
            d = [stage(op["module"], stages) for op in meta["ops"]]
            with open(base + ".decision.json", "w") as f:
                json.dump({"format": "placer-decision", "version": 2, "graph": meta["graph"], "ops": len(d), "devices": stages,
                           "device": d, "strategy": strategy}, f)
            placer("export", "--graph", GRAPH, "--placement", base + ".decision.json", "--to", "deepspeed", "-o", base + ".json")
            cls.config[name] = (base + ".json", base + "_pipeline.py" if stages > 1 else None)
        out = os.path.join(cls.tmp, "unsplit.json")
        log = out + ".log"
        rc, _ = launch([sys.executable, os.path.join(HERE, "ds_run.py"), "--unsplit", "16", out], log, env(), cls.tmp)
        assert rc == 0, tail(log)
        with open(out) as f:
            cls.unsplit = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compare(self, name):
        config, pipeline = self.config[name]
        n = DS_PLANS[name][2]
        out = config[:-5] + ".out.json"
        log = out + ".log"
        rc, secs = launch(torchrun(n, "ds_run.py", config, out, *([pipeline] if pipeline else [])), log, env(DS_ACCELERATOR="cpu"),
                          self.tmp)
        self.assertEqual(rc, 0, "DeepSpeed %s on %d processes: exit %s\n%s" % (name, n, rc, tail(log)))
        with open(out) as f:
            losses = json.load(f)
        for step, (a, b) in enumerate(zip(losses, self.unsplit), 1):
            self.assertLessEqual(abs(a - b), TOL, "%s step %d: loss %.8f, unsplit %.8f" % (name, step, a, b))
        TIMES.append(("DeepSpeed 0.19.8", name, n, [abs(a - b) for a, b in zip(losses, self.unsplit)], secs))

    def test_zero2(self):
        self.compare("ZeRO-2")

    def test_zero3(self):
        self.compare("ZeRO-3")

    def test_pipeline(self):
        self.compare("pipeline 2 stages, 1F1B")

    def test_pipeline_replicas(self):
        self.compare("pipeline 2 stages x 2 replicas, 1F1B")


def tearDownModule():
    if TIMES:
        print("\nframework | plan | processes | |loss - unsplit| steps 1, 2 | seconds", file=sys.stderr)
        for fw, plan, n, diffs, secs in TIMES:
            d = ", ".join("%.1e" % x for x in diffs) if diffs else "-"
            print("%s | %s | %d | %s | %.1f" % (fw, plan, n, d, secs), file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
