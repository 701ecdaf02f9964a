"""placer's --to torchtitan@0.3 exports read by torchtitan 0.3.0's own code
(make test-frameworks-03; docs/frameworks.md).

bin/placer exports the plans test_exports.py checks with torchtitan 0.2.2
(the zoo's bert_base graph at batch 16: ddp, fsdp, zero2, gpipe, 1f1b on
2 and 3 stages; the llama 8B shape on 64 GPUs: tp/cp/pp/dp/vp, even and
uneven stages, gpipe, async tp) and the plans 0.3 runs and 0.2 does not
(plain data parallelism beside a pipeline, tensor parallelism without
sequence parallelism) to torchtitan@0.3, a Python module of config
functions; check03.py reads them all in one process with torchtitan
0.3.0 (FRAMEWORKS03_DIR, pinned by make venv-frameworks-03, on the
virtualenv's torch). What placer refuses for 0.3 is one line naming the
field and exit status 1, and where a framework's rule is the reason, the
framework is shown refusing the same plan.

PLACER names the binary (default: bin/placer of this checkout);
PLACER_FRAMEWORKS03 the folder torchtitan 0.3.0 is installed in (a
--target install; without it the tests are skipped, saying so).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from test_exports import GRAPH, GRAPH_PLANS, LLAMA, LLAMA_PLANS, placer

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMEWORKS03 = os.environ.get("PLACER_FRAMEWORKS03", "")
HEADER = "# torchtitan 0.3 configuration (a config function for torchtitan.train's --module and --config; checked with torchtitan 0.3.0)"

# What placer refuses for 0.3 of the graph's plans.
GRAPH_REFUSED = {"1f1b-1-micro-batch": "1F1B with 1 micro-batches on 2 stages: torch's Schedule1F1B"}
# The llama's plans on 64 GPUs for 0.3: test_exports.py's, float8 left
# out (refused below), and two 0.2 refuses: name -> (strategy, layers per
# pipeline rank).
PLANS = {k: v for k, v in LLAMA_PLANS.items() if "fp8" not in v[0]}
PLANS["async tp"] = ("tp=4,pp=2,dp=8,mbs=1,sp=on,fsdp=on,tpoverlap=on", [16, 16])
PLANS["ddp beside pp"] = ("tp=4,pp=4,dp=4,mbs=1,sp=on", [8, 8, 8, 8])
PLANS["tp without sp"] = ("tp=8,dp=8,mbs=1,fsdp=on", None)
# Shapes no torchtitan preset has: the module's base_config is llama3
# built at the plan's shape (placer_model), so placer_plan runs as
# written. name -> (workload, GPUs, strategy, the model's facts, layers
# per pipeline rank).
ANY_SHAPE = {
    "tiny, pp 2 x fsdp 2": ("llama:layers=4,hidden=64,heads=4,kv_heads=4,ffn=256,seq=32,vocab=256,batch=8", 4,
                            "pp=2,dp=2,mbs=1,fsdp=on", dict(dim=64, layers=4, vocab=256, heads=4, kv_heads=4, ffn=256, tied=False), [2, 2]),
    "gqa tied, tp 2 x fsdp 4": ("llama:layers=6,hidden=256,heads=8,kv_heads=2,ffn=768,seq=64,vocab=1000,batch=16,tied=true", 8,
                                "tp=2,dp=4,mbs=2,sp=on,fsdp=on", dict(dim=256, layers=6, vocab=1000, heads=8, kv_heads=2, ffn=768, tied=True), None),
}
REFUSED = {
    "float8": ("tp=4,pp=2,dp=8,mbs=1,sp=on,fsdp=on,fp8=current", "model_spec converters (Float8LinearConverter.Config.recipe_name): fp8=current has no torchtitan 0.3.0 recipe"),
    "bf16 gradients": ("dp=64,mbs=2,fsdp=on,grads=bf16", "training.mixed_precision_reduce: grads=bf16"),
    "selective recompute": ("tp=8,dp=8,mbs=1,sp=on,fsdp=on,recompute=selective", "activation_checkpoint: recompute=selective"),
}


@unittest.skipUnless(FRAMEWORKS03, "no PLACER_FRAMEWORKS03: make venv-frameworks-03 installs torchtitan 0.3.0, make test-frameworks-03 runs this")
class TestExports03(unittest.TestCase):
    """Every export, then check03.py once over them all."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="placer-frameworks-03-")
        with open(GRAPH[:-5] + ".meta.json") as f:
            cls.meta = json.load(f)
        cls.out, cls.refused, cls.stages, cases = {}, {}, {}, []
        for i, (name, (dev, devices, strategy)) in enumerate(GRAPH_PLANS.items()):
            dec = os.path.join(cls.tmp, "g%d.decision.json" % i)
            d = [dev(op["module"]) for op in cls.meta["ops"]]
            with open(dec, "w") as f:
                json.dump({"format": "placer-decision", "version": 2, "graph": cls.meta["graph"], "ops": len(d),
                           "devices": devices, "device": d, "strategy": strategy}, f)
            plan = os.path.join(cls.tmp, "g%d.plan.json" % i)
            r = placer("export", "--graph", GRAPH, "--placement", dec, "--to", "torch-plan", "-o", plan)
            assert r.returncode == 0, r.stderr
            with open(plan) as f:
                cls.stages[name] = [s["modules"] for s in json.load(f)["stages"]]
            path = os.path.join(cls.tmp, "graph_plan_%d.py" % i)
            r = placer("export", "--graph", GRAPH, "--placement", dec, "--to", "torchtitan@0.3", "-o", path)
            if r.returncode != 0:
                cls.refused[name] = (r.returncode, r.stderr)
                continue
            cls.out[name] = path
            cases.append({"name": name, "kind": "graph", "path": path, "world": strategy["replicas"] * len(cls.stages[name]),
                          "modules": cls.meta["modules"], "stages": cls.stages[name]})
        # torch's own refusal of what placer refuses: the 1f1b plan's
        # module with a replica's 8 samples as one micro-batch.
        cases.append(dict(cases[[c["name"] for c in cases].index("1f1b")], name="1f1b as 1 micro-batch",
                          args=["--parallelism.pipeline_parallel_microbatch_size", "8"]))
        for i, (name, (strategy, _)) in enumerate(PLANS.items()):
            path = os.path.join(cls.tmp, "llama_plan_%d.py" % i)
            r = placer("export", "--allow-over", "--workload", LLAMA, "--gpus", "64", "--strategy", strategy, "--to", "torchtitan", "-o", path)
            if r.returncode != 0:
                cls.refused["llama " + name] = (r.returncode, r.stderr)
                continue
            cls.out["llama " + name] = path
            cases.append({"name": "llama " + name, "kind": "transformer", "path": path, "world": 64, "layers": 32})
        for i, (name, (workload, gpus, strategy, _, _)) in enumerate(ANY_SHAPE.items()):
            path = os.path.join(cls.tmp, "any_plan_%d.py" % i)
            r = placer("export", "--workload", workload, "--gpus", str(gpus), "--strategy", strategy, "--to", "torchtitan", "-o", path)
            assert r.returncode == 0, r.stderr
            cases.append({"name": "any " + name, "kind": "transformer", "path": path, "world": gpus, "any": True})
        manifest, results = os.path.join(cls.tmp, "cases.json"), os.path.join(cls.tmp, "results.json")
        with open(manifest, "w") as f:
            json.dump(cases, f)
        # check03 imports each plan, and the wrapper it writes beside the
        # results, by module name: their folder, cls.tmp, on PYTHONPATH.
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (cls.tmp, FRAMEWORKS03, os.environ.get("PYTHONPATH")) if p))
        r = subprocess.run([sys.executable, os.path.join(HERE, "check03.py"), manifest, results], capture_output=True, text=True,
                           env=env, cwd=cls.tmp, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        with open(results) as f:
            cls.results = {res["name"]: res for res in json.load(f)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def accepted(self, name):
        self.assertNotIn(name, self.refused, "%s: refused: %s" % (name, self.refused.get(name)))
        res = self.results[name]
        self.assertTrue(res["ok"], "%s: %s\n%s" % (name, res.get("error"), res.get("trace")))
        self.assertTrue(res["facts"]["header"].startswith(HEADER), res["facts"]["header"])
        return res["facts"]

    def test_graph(self):
        for name, (_, _, strategy) in GRAPH_PLANS.items():
            with self.subTest(name):
                if name in GRAPH_REFUSED:
                    code, err = self.refused[name]
                    self.assertEqual((code, len(err.strip().splitlines())), (1, 1), err)
                    self.assertIn(GRAPH_REFUSED[name], err)
                    continue
                facts = self.accepted(name)
                self.assertFalse(facts["own_model"])  # base_config: the user's model
                S, R = len(self.stages[name]), strategy["replicas"]
                self.assertEqual(facts["world"], R * S)
                self.assertEqual((facts["dims"]["pp"], facts["dims"]["tp"]), (S, 1))
                self.assertEqual((facts["dims"]["dp_shard"], facts["dims"]["dp_replicate"]),
                                 (R, 1) if strategy.get("shard") else (1, R))
                self.assertEqual((facts["local"], facts["global"], facts["accumulation"]), (16 // R, 16, 1))
                self.assertIsNone(facts["ac"])
                if S > 1:
                    self.assertEqual(facts["parts"], S)
                    self.assertEqual(facts["microbatches"], strategy["micro_batches"])
                    self.assertEqual(facts["schedule"], {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B"}[strategy["schedule"]])

    def test_torch_refuses_what_placer_refuses(self):
        res = self.results["1f1b as 1 micro-batch"]
        self.assertFalse(res["ok"])
        self.assertIn("must be greater than or equal to the number of stages", res["error"])

    def test_llama(self):
        for name, (strategy, rank_layers) in PLANS.items():
            with self.subTest(name):
                facts = self.accepted("llama " + name)
                self.assertTrue(facts["own_model"])  # torchtitan's llama3 8B is the plan's shape
                self.assertEqual(facts["model"], dict(flavor="8B", dim=4096, layers=32, vocab=128256, heads=32, kv_heads=8, ffn=14336))
                self.assertEqual((facts["world"], facts["global"], facts["seq"]), (64, 128, 8192))
                kv = dict(x.split("=") for x in strategy.split(","))
                tp, pp, dp, cp = (int(kv.get(k, 1)) for k in ("tp", "pp", "dp", "cp"))
                fsdp = kv.get("fsdp") == "on"
                self.assertEqual(facts["dims"], dict(dp_replicate=1 if fsdp else dp, dp_shard=dp if fsdp else 1, cp=cp, tp=tp, pp=pp, ep=1))
                self.assertEqual(facts["sp"], tp == 1 or kv.get("sp") == "on")
                self.assertEqual(facts["ac"], "FullAC.Config" if kv.get("recompute") == "full" else None)
                self.assertEqual(facts["async_tp"], kv.get("tpoverlap") == "on")
                mbs = int(kv["mbs"])
                self.assertEqual(facts["local"], 128 // dp if pp > 1 else mbs)
                if rank_layers:
                    self.assertEqual(facts["rank_layers"], rank_layers)
                    V = int(kv.get("vp", 1))
                    self.assertEqual(facts["parts"], pp * V)
                    self.assertEqual(facts["microbatches"], 128 // dp // mbs)
                    want = "ScheduleInterleaved1F1B" if V > 1 else ("ScheduleGPipe" if "gpipe" in strategy else "Schedule1F1B")
                    self.assertEqual(facts["schedule"], want)

    def test_any_shape(self):
        """placer_plan as written for shapes no preset has: torchtitan's llama3
        at the plan's shape (its dimensions read off the model built on the
        meta device), and the plan's split and degrees."""
        for name, (workload, gpus, strategy, model, rank_layers) in ANY_SHAPE.items():
            with self.subTest(name):
                facts = self.accepted("any " + name)
                self.assertTrue(facts["own_model"])
                self.assertEqual(facts["model"], dict(model, flavor="placer"))
                kv = dict(x.split("=") for x in strategy.split(","))
                self.assertEqual((facts["dims"]["tp"], facts["dims"]["pp"], facts["dims"]["dp_shard"]),
                                 (int(kv.get("tp", 1)), int(kv.get("pp", 1)), int(kv["dp"])))
                if rank_layers:
                    self.assertEqual(facts["rank_layers"], rank_layers)

    def test_refused(self):
        for name, (strategy, words) in REFUSED.items():
            with self.subTest(name):
                r = placer("export", "--allow-over", "--workload", LLAMA, "--gpus", "64", "--strategy", strategy, "--to", "torchtitan@0.3")
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)

    def test_default_is_03(self):
        path = self.out["llama tp8 pp2 fsdp"]
        r = placer("export", "--allow-over", "--workload", LLAMA, "--gpus", "64", "--strategy", PLANS["tp8 pp2 fsdp"][0], "--to", "torchtitan@0.3.0")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path) as f:
            self.assertEqual(r.stdout, f.read())


if __name__ == "__main__":
    unittest.main()
