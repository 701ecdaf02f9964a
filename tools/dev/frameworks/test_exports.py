"""placer's exports for named framework releases, read by those releases'
own code (make test-frameworks; docs/import.md#frameworks).

bin/placer exports plans of a graph from PyTorch (the zoo's bert_base at
batch 16, committed under measurements/: ddp, fsdp, zero2, gpipe, 1f1b on
2 and 3 stages) and of a dense llama at cluster scale (tp/cp/pp/dp/vp,
even and uneven stages, gpipe, float8) to torchtitan@0.2 and
deepspeed@0.19 (torchtitan@0.3, the default: test_exports_03.py), and transformers at cluster scale to deepspeed@0.19 (data
parallelism under ZeRO, DeepSpeed-MoE's experts); check.py reads them with torchtitan 0.2.2 and DeepSpeed
0.19.8 (FRAMEWORKS_DIR, pinned by make venv-frameworks, on the
virtualenv's torch) in one process per framework. What placer refuses is
one line and exit status 1, and where a framework's rule is the reason,
the framework is shown refusing the same plan.

PLACER names the binary (default: bin/placer of this checkout);
PLACER_FRAMEWORKS the frameworks' folder (a --target install; without it
the tests are skipped, saying so).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLACER = os.environ.get("PLACER") or os.path.join(ROOT, "bin", "placer")
FRAMEWORKS = os.environ.get("PLACER_FRAMEWORKS", "")
GRAPH = os.path.join(ROOT, "measurements", "2026-11-26-h100", "graphs", "bert_base-b16-fp32.json")
LLAMA = "llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=128"

# The graph's plans: name -> (device of a module, devices, strategy).
def _split(cuts):
    def dev(module):
        if module.startswith("layers."):
            i = int(module.split(".")[1])
            return sum(i >= c for c in cuts)
        return len(cuts) if module.startswith(("norm", "head")) else 0
    return dev


ONE = lambda module: 0
TWO, THREE = _split([6]), _split([4, 8])
GRAPH_PLANS = {
    "ddp": (ONE, 1, {"replicas": 4}),
    "fsdp": (ONE, 1, {"replicas": 4, "shard": "fsdp"}),
    "zero2": (ONE, 1, {"replicas": 4, "shard": "zero2"}),
    "gpipe": (TWO, 2, {"replicas": 2, "micro_batches": 4, "schedule": "gpipe"}),
    "1f1b": (TWO, 2, {"replicas": 2, "micro_batches": 4, "schedule": "1f1b"}),
    "1f1b-3-stages": (THREE, 3, {"replicas": 1, "micro_batches": 4, "schedule": "1f1b"}),
    "fsdp-1f1b": (TWO, 2, {"replicas": 2, "micro_batches": 4, "schedule": "1f1b", "shard": "fsdp"}),
    "1f1b-1-micro-batch": (TWO, 2, {"replicas": 2, "micro_batches": 1, "schedule": "1f1b"}),
}
# What placer refuses, per framework: plan -> the refusal's words.
REFUSED = {
    ("torchtitan", "1f1b-1-micro-batch"): "1F1B with 1 micro-batches on 2 stages: torch's Schedule1F1B",
    ("deepspeed", "gpipe"): "pipeline: schedule gpipe; DeepSpeed's pipeline engine runs 1F1B",
    ("deepspeed", "fsdp-1f1b"): "zero_optimization.stage: 3 with 2 pipeline stages",
}
# The llama's plans on 64 GPUs: name -> (strategy, layers per pipeline rank).
LLAMA_PLANS = {
    "docs: tp4 pp4 dp4 vp2 fsdp": ("tp=4,pp=4,dp=4,vp=2,mbs=1,sp=on,fsdp=on,recompute=full", [8, 8, 8, 8]),
    "tp8 pp2 fsdp": ("tp=8,pp=2,dp=4,mbs=1,sp=on,fsdp=on", [16, 16]),
    "uneven ends": ("tp=2,pp=4,dp=8,mbs=2,sp=on,fsdp=on,first=6,last=6", [6, 10, 10, 6]),
    "uneven ends, interleaved": ("tp=2,pp=4,dp=8,vp=2,mbs=1,sp=on,fsdp=on,first=6,last=6", [6, 10, 10, 6]),
    "gpipe": ("tp=4,pp=2,dp=8,mbs=1,sp=on,fsdp=on,schedule=gpipe", [16, 16]),
    "context parallel": ("tp=2,cp=2,pp=2,dp=8,mbs=1,sp=on,fsdp=on", [16, 16]),
    "float8, async tp": ("tp=4,pp=2,dp=8,mbs=1,sp=on,fsdp=on,tpoverlap=on,fp8=current", [16, 16]),
    "float8 rowwise": ("tp=4,pp=2,dp=8,mbs=1,sp=on,fsdp=on,fp8=rowwise,stack=torchtitan-0.2,compile=on", [16, 16]),
    "float8 rowwise_with_gw_hp": ("dp=64,mbs=1,fsdp=on,fp8=rowwise_with_gw_hp,stack=torchtitan-0.2,compile=on", None),
    "float8 all-gather": ("dp=64,mbs=1,fsdp=on,fp8=current,fp8gather=on,stack=torchtitan-0.2,compile=on", None),
    "ddp alone": ("dp=64,mbs=2", None),
}
# A transformer at cluster scale for DeepSpeed 0.19: name -> (workload,
# GPUs, plan, ZeRO stage, experts' (ep, local experts, experts, top-k,
# one expert's parameters) or None, DeepSpeed's engine built). The small
# MoE: 8 experts of a SwiGLU of 64 at hidden 32 (3 x 32 x 64 = 6,144
# parameters), the first layer dense; Qwen3-30B-A3B: 128 experts of 768
# at hidden 2,048 (4,718,592), top 8; Mixtral 8x7B: 8 of 14,336 at 4,096
# (176,160,768), top 2.
DS_MOE = "llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=64,vocab=64,batch=32,head_dim=16,experts=8,topk=2,expert_ffn=64,dense_layers=1"
DS_PLANS = {
    "dense ddp": (LLAMA, 64, "dp=64,mbs=2", 0, None, False),
    "dense zero-1": (LLAMA, 64, "dp=64,mbs=1,distopt=on", 1, None, False),
    "dense zero-3": (LLAMA, 64, "dp=64,mbs=1,fsdp=on", 3, None, False),
    "moe ep4 zero-1": (DS_MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,distopt=on", 1, (4, 2, 8, 2, 6144), True),
    "moe ep8 ddp": (DS_MOE, 16, "tp=1,pp=1,dp=16,ep=8,mbs=2", 0, (8, 1, 8, 2, 6144), True),
    "qwen3-30b-a3b ep64": ("qwen3-30b-a3b:seq=4096,batch=256", 64, "tp=1,pp=1,dp=64,ep=64,mbs=1,distopt=on", 1, (64, 2, 128, 8, 4718592), False),
    "mixtral ep8": ("hf:" + os.path.join(ROOT, "graph", "transformer", "testdata", "hf", "mixtral-8x7b.json") + ":seq=4096,batch=128", 64,
                    "tp=1,pp=1,dp=64,ep=8,mbs=1,distopt=on", 1, (8, 1, 8, 2, 176160768), False),
}
DS_REFUSED = {
    "tp": (LLAMA, 64, "tp=2,pp=1,dp=32,mbs=1,sp=on", "tp=2: DeepSpeed's engine shards no layer"),
    "pp": (LLAMA, 64, "tp=1,pp=2,dp=32,mbs=1", "pipeline: pp=2"),
    "recompute": (LLAMA, 64, "dp=64,mbs=1,recompute=full", "activation_checkpointing: recompute=full"),
    "shared experts": ("deepseek-v3:seq=4096,batch=64", 64, "dp=64,ep=64,mbs=1,distopt=on", "shared=1"),
    "moe zero-3": (DS_MOE, 8, "tp=1,pp=1,dp=8,ep=4,mbs=1,fsdp=on", "Native DeepSpeed MoE is not supported with ZeRO Stage 3"),
}
LLAMA_REFUSED = {
    "ddp beside pp": ("tp=4,pp=4,dp=4,mbs=1,sp=on", "dp=4 without fsdp=on beside tp=4, cp=1, pp=4"),
    "bf16 gradients": ("dp=64,mbs=2,fsdp=on,grads=bf16", "training.mixed_precision_reduce: grads=bf16"),
}


def placer(*args):
    return subprocess.run([PLACER] + list(args), capture_output=True, text=True, timeout=120)


@unittest.skipUnless(FRAMEWORKS, "no PLACER_FRAMEWORKS: make venv-frameworks installs torchtitan and DeepSpeed, make test-frameworks runs this")
class TestExports(unittest.TestCase):
    """Every export, then each framework's check.py once over them all."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="placer-frameworks-")
        with open(GRAPH[:-5] + ".meta.json") as f:
            cls.meta = json.load(f)
        cls.out, cls.refused, cls.stages = {}, {}, {}
        titan, ds = [], []
        for name, (dev, devices, strategy) in GRAPH_PLANS.items():
            dec = os.path.join(cls.tmp, name + ".decision.json")
            d = [dev(op["module"]) for op in cls.meta["ops"]]
            with open(dec, "w") as f:
                json.dump({"format": "placer-decision", "version": 2, "graph": cls.meta["graph"], "ops": len(d),
                           "devices": devices, "device": d, "strategy": strategy}, f)
            plan = os.path.join(cls.tmp, name + ".plan.json")
            r = placer("export", "--graph", GRAPH, "--placement", dec, "--to", "torch-plan", "-o", plan)
            assert r.returncode == 0, r.stderr
            with open(plan) as f:
                stages = [s["modules"] for s in json.load(f)["stages"]]
            cls.stages[name] = stages
            R = strategy["replicas"]
            for fw, ext in (("torchtitan", "toml"), ("deepspeed", "json")):
                path = os.path.join(cls.tmp, "%s-%s.%s" % (name, fw, ext))
                r = placer("export", "--graph", GRAPH, "--placement", dec, "--to", fw + ("@0.2" if fw == "torchtitan" else ""), "-o", path)
                if r.returncode != 0:
                    cls.refused[(fw, name)] = (r.returncode, r.stderr)
                    continue
                cls.out[(fw, name)] = path
                if fw == "torchtitan":
                    titan.append({"name": name, "kind": "graph", "path": path, "world": R * len(stages),
                                  "modules": cls.meta["modules"], "stages": stages})
                else:
                    py = os.path.join(cls.tmp, "%s_deepspeed_pipeline.py" % name.replace("-", "_"))
                    ds.append({"name": name, "config": path, "replicas": R, "stages": stages,
                               "modules": cls.meta["modules"], "pipeline": py if len(stages) > 1 else None})
        # torchtitan's own refusal of what placer refuses: the 1f1b plan's
        # file with a replica's 8 samples as one micro-batch.
        titan.append({"name": "1f1b as 1 micro-batch", "kind": "graph", "path": cls.out[("torchtitan", "1f1b")], "world": 4,
                      "modules": cls.meta["modules"], "stages": cls.stages["1f1b"],
                      "args": ["--parallelism.pipeline_parallel_microbatch_size", "8"]})
        for name, (strategy, rank_layers) in LLAMA_PLANS.items():
            path = os.path.join(cls.tmp, "llama-%s.toml" % len(titan))
            r = placer("export", "--allow-over", "--workload", LLAMA, "--gpus", "64", "--strategy", strategy, "--to", "torchtitan@0.2", "-o", path)
            if r.returncode != 0:
                cls.refused[("torchtitan", "llama " + name)] = (r.returncode, r.stderr)
                continue
            cls.out[("torchtitan", "llama " + name)] = path
            titan.append({"name": "llama " + name, "kind": "transformer", "path": path, "world": 64, "layers": 32,
                          "rank_layers": rank_layers})
        for name, (workload, gpus, strategy, _, moe, engine) in DS_PLANS.items():
            path = os.path.join(cls.tmp, "ds-%d.json" % len(ds))
            r = placer("export", "--allow-over", "--workload", workload, "--gpus", str(gpus), "--strategy", strategy, "--to", "deepspeed", "-o", path)
            if r.returncode != 0:
                cls.refused[("deepspeed", "transformer " + name)] = (r.returncode, r.stderr)
                continue
            cls.out[("deepspeed", "transformer " + name)] = path
            py = os.path.join(cls.tmp, os.path.basename(path)[:-5].replace("-", "_") + "_moe.py")
            ds.append({"name": "transformer " + name, "kind": "transformer", "config": path, "world": gpus,
                       "moe": py if moe else None, "engine": engine})
        # DeepSpeed's own refusal of what placer refuses: the ZeRO-1 MoE
        # plan's files with ZeRO-3, in DeepSpeed's engine.
        zero1 = [c for c in ds if c["name"] == "transformer moe ep4 zero-1"][0]
        ds.append(dict(zero1, name="transformer moe under zero-3", zero_stage=3))
        cls.results = {}
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (FRAMEWORKS, os.environ.get("PYTHONPATH")) if p))
        for fw, cases in (("torchtitan", titan), ("deepspeed", ds)):
            manifest = os.path.join(cls.tmp, fw + ".cases.json")
            with open(manifest, "w") as f:
                json.dump(cases, f)
            results = os.path.join(cls.tmp, fw + ".results.json")
            r = subprocess.run([sys.executable, os.path.join(HERE, "check.py"), fw, manifest, results], capture_output=True, text=True,
                               env=env, cwd=cls.tmp, timeout=600)
            assert r.returncode == 0, r.stderr[-3000:]
            with open(results) as f:
                for res in json.load(f):
                    cls.results[(fw, res["name"])] = res

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def accepted(self, fw, name):
        res = self.results[(fw, name)]
        self.assertTrue(res["ok"], "%s %s: %s\n%s" % (fw, name, res.get("error"), res.get("trace")))
        return res["facts"]

    def refused_one_line(self, key, words):
        self.assertIn(key, self.refused, "%s %s: exported, want refused" % key)
        code, err = self.refused[key]
        self.assertEqual(code, 1, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(words, err)

    def test_torchtitan_graph(self):
        for name, (_, _, strategy) in GRAPH_PLANS.items():
            with self.subTest(name):
                if ("torchtitan", name) in REFUSED:
                    self.refused_one_line(("torchtitan", name), REFUSED[("torchtitan", name)])
                    continue
                facts = self.accepted("torchtitan", name)
                S = len(self.stages[name])
                self.assertEqual(facts["world"], strategy["replicas"] * S)
                self.assertEqual(facts["dims"]["pp"], S)
                shard = strategy.get("shard")
                self.assertEqual((facts["dims"]["dp_shard"], facts["dims"]["dp_replicate"]),
                                 (strategy["replicas"], 1) if shard else (1, strategy["replicas"]))
                if S > 1:
                    self.assertEqual(facts["parts"], S)
                    self.assertEqual(facts["microbatches"], strategy["micro_batches"])
                    self.assertEqual(facts["schedule"], {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B"}[strategy["schedule"]])
                with open(self.out[("torchtitan", name)]) as f:
                    self.assertTrue(f.readline().startswith("# torchtitan 0.2 job configuration (TOML for --job.config_file; checked with torchtitan 0.2.2)"))

    def test_torchtitan_refuses_what_placer_refuses(self):
        res = self.results[("torchtitan", "1f1b as 1 micro-batch")]
        self.assertFalse(res["ok"])
        self.assertIn("must be greater than or equal to the number of stages", res["error"])

    def test_torchtitan_llama(self):
        for name, (strategy, rank_layers) in LLAMA_PLANS.items():
            with self.subTest(name):
                facts = self.accepted("torchtitan", "llama " + name)
                self.assertEqual(facts["world"], 64)
                if rank_layers:
                    self.assertEqual(facts["rank_layers"], rank_layers)
                    V = 2 if "vp=2" in strategy else 1
                    self.assertEqual(facts["parts"], len(rank_layers) * V)
                    want = "ScheduleInterleaved1F1B" if V > 1 else ("ScheduleGPipe" if "gpipe" in strategy else "Schedule1F1B")
                    self.assertEqual(facts["schedule"], want)
                # torchao's recipe as torchtitan read it (fp8=current is
                # its tensorwise); the rowwise ones leave the output out.
                keys = dict(kv.split("=") for kv in strategy.split(","))
                recipe, gather = keys.get("fp8"), keys.get("fp8gather") == "on"
                want8 = None
                if recipe:
                    # fp8gather=on leaves recipe_name unset (torchtitan
                    # refuses it beside the float8 all-gather): torchao's
                    # tensorwise default, the gather and its scales on.
                    want8 = dict(recipe=None if gather else "tensorwise" if recipe == "current" else recipe,
                                 filter_fqns=[] if recipe == "current" else ["output"])
                    self.assertEqual(facts.get("float8_all_gather"), [gather, gather])
                self.assertEqual(facts.get("float8"), want8)
        for name, (strategy, words) in LLAMA_REFUSED.items():
            with self.subTest(name):
                r = placer("export", "--allow-over", "--workload", LLAMA, "--gpus", "64", "--strategy", strategy, "--to", "torchtitan@0.2")
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)

    def test_deepspeed(self):
        for name, (_, _, strategy) in GRAPH_PLANS.items():
            with self.subTest(name):
                if ("deepspeed", name) in REFUSED:
                    self.refused_one_line(("deepspeed", name), REFUSED[("deepspeed", name)])
                    continue
                facts = self.accepted("deepspeed", name)
                R, M = strategy["replicas"], strategy.get("micro_batches", 1)
                self.assertEqual((facts["world_size"], facts["train_batch_size"], facts["accumulation"], facts["micro_batch"]),
                                 (R, 16, M, 16 // (R * M)))
                self.assertEqual(facts["zero_stage"], {None: 0, "zero2": 2, "fsdp": 3}[strategy.get("shard")])
                with open(self.out[("deepspeed", name)]) as f:
                    cfg = json.load(f)
                self.assertEqual(set(cfg), {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_optimization"})
                S = len(self.stages[name])
                out = self.out[("deepspeed", name)]
                py = os.path.join(os.path.dirname(out), os.path.basename(out)[:-5].replace("-", "_") + "_pipeline.py")
                self.assertEqual(os.path.exists(py), S > 1, py)
                if S > 1:
                    self.assertEqual(facts["parts"], list(range(S + 1)))

    def test_deepspeed_transformer(self):
        """A transformer's plan at cluster scale: DeepSpeed's config at the
        plan's world, its experts as DeepSpeed-MoE builds them (groups,
        local experts, gate) and, for the small ones, DeepSpeed's engine."""
        for name, (workload, gpus, strategy, stage, moe, engine) in DS_PLANS.items():
            with self.subTest(name):
                facts = self.accepted("deepspeed", "transformer " + name)
                batch = int(workload.rsplit("batch=", 1)[1].split(",")[0])
                mbs = int(strategy.split("mbs=")[1].split(",")[0])
                self.assertEqual((facts["world_size"], facts["train_batch_size"], facts["micro_batch"], facts["accumulation"], facts["zero_stage"], facts["bf16"]),
                                 (gpus, batch, mbs, batch // (gpus * mbs), stage, True))
                out = self.out[("deepspeed", "transformer " + name)]
                with open(out) as f:
                    self.assertEqual(set(json.load(f)), {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                                                         "bf16", "zero_optimization"})
                py = os.path.join(os.path.dirname(out), os.path.basename(out)[:-5].replace("-", "_") + "_moe.py")
                self.assertEqual(os.path.exists(py), moe is not None, py)
                if moe:
                    ep, local, experts, k, params = moe
                    self.assertEqual((facts["ep"], facts["edp"], facts["local_experts"], facts["experts"], facts["k"], facts["drop_tokens"],
                                      facts["expert_params"]), (ep, gpus // ep, local, experts, k, False, params))
                    self.assertEqual(facts.get("engine"), "DeepSpeedEngine" if engine else None)
        res = self.results[("deepspeed", "transformer moe under zero-3")]
        self.assertFalse(res["ok"])
        self.assertIn("Native DeepSpeed MoE is not supported with ZeRO Stage 3", res["error"])
        for name, (workload, gpus, strategy, words) in DS_REFUSED.items():
            with self.subTest(name):
                r = placer("export", "--allow-over", "--workload", workload, "--gpus", str(gpus), "--strategy", strategy, "--to", "deepspeed", "-o",
                           os.path.join(self.tmp, "refused.json"))
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)
        r = placer("export", "--allow-over", "--workload", DS_MOE, "--gpus", "8", "--strategy", "dp=8,ep=4,mbs=1,distopt=on", "--to", "deepspeed")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("give -o FILE", r.stderr)

    def test_refusals(self):
        dec = os.path.join(self.tmp, "1f1b.decision.json")
        for args, words in (
                (["--to", "torchtitan@0.9"], "--to torchtitan@0.9: placer writes torchtitan@0.3 (checked against 0.3.0), torchtitan@0.2 (checked against 0.2.2) only"),
                (["--to", "torchtitan@0.1"], "torchtitan 0.1's TOML names other fields"),
                (["--to", "deepspeed@0.14"], "placer writes deepspeed@0.19 (checked against 0.19.8) only"),
                (["--to", "deepspeed"], "give -o FILE"),  # a pipeline's module goes beside the file
        ):
            with self.subTest(args[1]):
                r = placer("export", "--graph", GRAPH, "--placement", dec, *args)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)
        r = placer("export", "--graph", GRAPH, "--placement", dec, "--to", "torchtitan@0.2.2")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.out[("torchtitan", "1f1b")]) as f:
            self.assertEqual(r.stdout, f.read())


if __name__ == "__main__":
    unittest.main()
