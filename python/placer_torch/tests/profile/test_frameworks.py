"""placer profile --framework's layers (placer_torch/profile/frameworks.py):
transformers' own decoder layer, torchtitan's Llama 3 block and
Megatron-Core's TransformerLayer (mcore.py), built at the model's shape
(their parameters those of layers.Block at the same shard), timed by
measure.py, the meta saying whose layer it was; at tensor degree 2
torchtitan's block runs torch's DTensor and Megatron-Core's layer its
own tensor-parallel linears on 2 gloo processes, each giving the
unsplit layer's output."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

from placer_torch import child
from placer_torch.profile import frameworks, layers

from .test_measure import request

# torchtitan 0.2.2 as make venv-frameworks installs it (pip --target):
# PLACER_FRAMEWORKS, else the folder beside the torch virtualenv.
TITAN = os.environ.get("PLACER_FRAMEWORKS") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "placer", "frameworks")


def titan_env():
    e = child.env()
    e["PYTHONPATH"] = os.pathsep.join([e["PYTHONPATH"], TITAN])
    return e


def have_titan():
    """Whether TITAN holds torchtitan's Llama 3 model: its file, looked
    for, not imported (a python importing torch and torchtitan to find it
    cost 3 to 5 CPU s). An install that is there but does not import
    fails the tests below rather than skipping them."""
    return os.path.isfile(os.path.join(TITAN, "torchtitan", "models", "llama3", "model", "model.py"))


C = {"layers": 1, "hidden": 32, "heads": 2, "kv_heads": 2, "ffn": 64, "vocab": 64, "seq": 32}
# One layer's parameters at hidden 32, FFN 64: two norms (2 x 32), the
# query, key, value and output projections (4 x 32 x 32) and SwiGLU's
# three (3 x 32 x 64).
PARAMS = 2 * 32 + 4 * 32 * 32 + 3 * 32 * 64


def count(m):
    return sum(p.numel() for p in m.parameters())


class HFTest(unittest.TestCase):
    def test_builds_transformers_class(self):
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer
        m = frameworks.hf_layer(C, layers.Shard())
        self.assertIsInstance(m.layer, LlamaDecoderLayer)
        self.assertEqual(m.layer.self_attn.config._attn_implementation, "sdpa")
        self.assertEqual(count(m), PARAMS)
        self.assertEqual(count(layers.Block(C, layers.Shard())), PARAMS)
        y = m(torch.randn(2, 32, 32))
        self.assertEqual(tuple(y.shape), (2, 32, 32))

    def test_moe_classes(self):
        moe = dict(C, experts=4, topk=2, expert_ffn=16)
        self.assertEqual(type(frameworks.hf_layer(moe, layers.Shard()).layer).__name__, "MixtralDecoderLayer")
        self.assertEqual(type(frameworks.hf_layer(dict(moe, qk_norm=1), layers.Shard()).layer).__name__, "Qwen3MoeDecoderLayer")

    def test_measure_records_the_class(self):
        r = subprocess.run(child.command("placer_torch.profile.measure", json.dumps(request(framework="hf"))), env=child.env(),
                           capture_output=True, text=True, timeout=180)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        sw = lines[0]["software"]
        self.assertEqual(sw["framework"], "transformers")
        self.assertEqual(sw["layer"], "transformers.models.llama.modeling_llama.LlamaDecoderLayer")
        self.assertEqual([x["kind"] for x in lines], ["meta", "host", "embedding", "loss", "optimizer", "layer", "layer"])

    def test_unknown_refused(self):
        r = subprocess.run(child.command("placer_torch.profile.measure", json.dumps(request(framework="nope"))), env=child.env(),
                           capture_output=True, text=True, timeout=180)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(json.loads(r.stdout.splitlines()[-1])["error"], "--framework 'nope': want hf, torchtitan or megatron")


# The unsplit block's output, then each of 2 gloo processes' with the
# same weights parallelized by DTensor with torchtitan's plan (with and
# without sequence parallelism): the same, each rank its sequence half
# with sequence parallelism. The processes are forked from a forkserver
# that has imported the script (torch, placer_torch's layers) and
# torchtitan's model once, as placer_torch.runner.launch starts its
# ranks, not spawned each (each then imported them anew); so MCORE_TP's
# (the script alone: megatron-core is imported by each rank).
DTENSOR = r"""
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
from placer_torch.profile import frameworks, layers
C = %s
def run(rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[1])
    dist.init_process_group("gloo", rank=rank, world_size=2)
    for sp in (False, True):
        torch.manual_seed(0)
        full = frameworks.titan_layer(C, layers.Shard())
        torch.manual_seed(0)
        tp = frameworks.titan_layer(C, layers.Shard(2, rank, dist.new_group([0, 1]), sp))
        torch.manual_seed(1)
        x = torch.randn(2, 32, 32)
        want = full(x)
        got = tp(x[:, rank * 16:(rank + 1) * 16] if sp else x)
        ref = want[:, rank * 16:(rank + 1) * 16] if sp else want
        assert torch.allclose(got, ref, atol=1e-5), (rank, sp, (got - ref).abs().max())
        got.sum().backward()
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.get_context("forkserver").set_forkserver_preload(["__main__", "torchtitan.models.llama3.model.model"])
    mp.start_processes(run, nprocs=2, start_method="forkserver")
    print("ok")
"""


@unittest.skipUnless(have_titan(), "torchtitan is not installed (make venv-frameworks)")
class TorchtitanTest(unittest.TestCase):
    def test_shard_widths(self):
        # Its linears at a rank's widths of 2: half the projections and
        # the FFN, the norms whole.
        sys.path.append(TITAN)
        whole = frameworks.titan_layer(C, layers.Shard())
        self.assertEqual(count(whole), PARAMS)
        half = frameworks.titan_layer(C, layers.Shard(2, 0, None, True))
        self.assertEqual(count(half), 2 * 32 + (PARAMS - 2 * 32) // 2)
        # Sequence parallelism: a rank's 16 tokens in, 16 out.
        self.assertEqual(tuple(half(torch.randn(2, 16, 32)).shape), (2, 16, 32))

    def test_dtensor_matches_unsplit(self):
        from placer_torch.runner import free_port
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "dtensor.py")  # a file: the forkserver imports it
            with open(script, "w") as f:
                f.write(DTENSOR % json.dumps(C))
            r = subprocess.run([sys.executable, script, str(free_port())], env=titan_env(),
                               capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("ok", r.stdout)


# megatron-core 0.16.1 as make venv-megatron installs it (pip --target):
# PLACER_MEGATRON, else the folder beside the torch virtualenv.
MEGATRON = os.environ.get("PLACER_MEGATRON") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "placer", "megatron")


def mcore_env():
    e = child.env()
    e["PYTHONPATH"] = os.pathsep.join([e["PYTHONPATH"], MEGATRON])
    return e


def have_mcore():
    """Whether MEGATRON holds megatron-core's TransformerLayer: its file,
    looked for, not imported (as have_titan)."""
    return os.path.isfile(os.path.join(MEGATRON, "megatron", "core", "transformer", "transformer_layer.py"))


# Megatron-Core's layers in a process of their own (mcore.cpu_shims
# points torch.cuda.current_device at the CPU for the whole process):
# the local spec's TransformerLayer at C's shape has layers.Block's
# parameters; its MoE layer (4 experts of FFN 16, top 2) two norms
# (2 x 32), the attention (4 x 32 x 32), the router (4 x 32) and the
# experts' SwiGLU (4 x 3 x 32 x 16); one rank's kernels at tensor degree
# 2 (no group) the norms whole and half of the rest; each runs forward
# and backward, sequence first; sequence parallelism is refused with
# the local spec.
MCORE_ALONE = r"""
import torch
from placer_torch.profile import frameworks, layers, mcore
C = %s
sw, make, err = frameworks.plan("megatron", C)
assert err is None and sw["framework"] == "megatron-core" and sw["framework_version"] == "0.16.1", (sw, err)
assert sw["layer"] == "megatron.core.transformer.transformer_layer.TransformerLayer (megatron-core local spec)", sw
count = lambda m: sum(p.numel() for p in m.parameters())
moe = dict(C, experts=4, topk=2, expert_ffn=16)
for c, shard, want, rows in ((C, layers.Shard(), %d, 32), (moe, layers.Shard(), 2 * 32 + 4 * 32 * 32 + 4 * 32 + 4 * 3 * 32 * 16, 32),
                             (C, layers.Shard(2, 0, None, False), 2 * 32 + (%d - 2 * 32) // 2, 32)):
    m = make(c, shard)
    assert type(m.layer).__name__ == "TransformerLayer" and count(m) == want, (type(m.layer), count(m), want)
    assert type(m.layer.mlp).__name__ == ("MoELayer" if c.get("experts") else "MLP"), type(m.layer.mlp)
    x = torch.randn(rows, 2, 32, requires_grad=True)
    y = m(x)
    assert tuple(y.shape) == (rows, 2, 32), y.shape
    y.sum().backward()
    assert x.grad is not None
assert frameworks.refuses("megatron", {"tp": 2, "sp": True}).startswith("Megatron-Core's local spec without Apex")
assert frameworks.refuses("megatron", {"tp": 2}) is None and frameworks.refuses("hf", {"tp": 2, "sp": True}) is None
print("ok")
"""

# The unsplit layer's output, then each of 2 gloo processes' with the
# same weights (use_cpu_initialization draws the whole weight, then
# takes the rank's part: _initialize_affine_weight_cpu) over Megatron-
# Core's ColumnParallelLinear and RowParallelLinear on their group: the
# same.
MCORE_TP = r"""
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
from placer_torch.profile import mcore, layers
C = %s
def run(rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[1])
    dist.init_process_group("gloo", rank=rank, world_size=2)
    g = dist.new_group([0, 1])
    torch.manual_seed(0)
    full = mcore.layer(C, layers.Shard())
    torch.manual_seed(0)
    tp = mcore.layer(C, layers.Shard(2, rank, g, False))
    torch.manual_seed(1)
    x = torch.randn(32, 2, 32)
    want, got = full(x), tp(x)
    assert torch.allclose(got, want, atol=1e-5), (rank, (got - want).abs().max())
    got.sum().backward()
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.get_context("forkserver").set_forkserver_preload(["__main__"])
    mp.start_processes(run, nprocs=2, start_method="forkserver")
    print("ok")
"""


@unittest.skipUnless(have_mcore(), "megatron-core is not installed (make venv-megatron)")
class MegatronTest(unittest.TestCase):
    def script(self, text, *args):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mcore.py")  # a file: the forkserver imports it
            with open(path, "w") as f:
                f.write(text)
            r = subprocess.run([sys.executable, path, *args], env=mcore_env(), capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertIn("ok", r.stdout)

    def test_layers_alone(self):
        self.script(MCORE_ALONE % (json.dumps(C), PARAMS, PARAMS))

    def test_tp_matches_unsplit(self):
        from placer_torch.runner import free_port
        self.script(MCORE_TP % json.dumps(C), str(free_port()))

    def test_measure_records_the_class(self):
        r = subprocess.run(child.command("placer_torch.profile.measure", json.dumps(request(framework="megatron"))),
                           env=mcore_env(), capture_output=True, text=True, timeout=180)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        sw = lines[0]["software"]
        self.assertEqual((sw["framework"], sw["framework_version"]), ("megatron-core", "0.16.1"))
        self.assertEqual(sw["layer"], "megatron.core.transformer.transformer_layer.TransformerLayer (megatron-core local spec)")
        self.assertEqual([x["kind"] for x in lines], ["meta", "host", "embedding", "loss", "optimizer", "layer", "layer"])
        self.assertNotIn("not installed", r.stderr)


if __name__ == "__main__":
    unittest.main()
