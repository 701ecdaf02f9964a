"""layers.LatentAttention (DeepSeek-V2/V3's multi-head latent attention)
and the dense layers before the experts, as placer profile measures them:

- a block with latent attention split over two gloo processes (tensor
  parallelism 2, with and without sequence parallelism) gives what the
  whole block gives, its output, its input's gradient and every weight's
  gradient (the wire FP32 here, so to 1e-5);
- its parameters are what placer's model counts for the same shape
  (graph/transformer/transformer.go: AttentionParams, DenseLayerParams);
- with PLACER naming the binary, a tiny DeepSeek-like model (experts, one
  dense layer first, latent attention) profiles end to end on the CPU and
  placer eval prices its dense and MoE layers from the profile.

Run by make test-python-venv."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.distributed as dist

from placer_torch.profile import layers

from .spawning import spawn_cases

# Small, and every width distinct so that a slice taken along the wrong
# axis fails: hidden 48, 4 heads of nope width 12 and rope width 4 (query
# and key 16 a head, value 12), query latent 20, key-value latent 10.
C = {"hidden": 48, "heads": 4, "kv_heads": 4, "ffn": 40, "vocab": 64, "seq": 16,
     "head_dim": 12, "rope_dim": 4, "q_lora": 20, "kv_lora": 10}
T = 2


def heads_rows(w, t, c, width):
    """Rank t's rows of a column-parallel weight whose output is heads x
    width (its heads/T heads)."""
    nh = c["heads"] // T
    return w[t * nh * width:(t + 1) * nh * width]


def shares(whole, t, c, grad):
    """Rank t's share of whole block's weights (grad: of their
    gradients), by its shard's names: the down projections and norms
    whole, the up projections' (or the query's one projection's) rows of
    its heads, the output projection's columns of its heads, the MLP's
    rows and columns as layers.Block splits it."""
    d, r, f = c["head_dim"], c["rope_dim"], c["ffn"] // T
    w = {n: (p.grad if grad else p.detach()) for n, p in whole.named_parameters()}
    out = dict(w)
    for name, width in (("mla.q_up.weight", d + r), ("mla.q_proj.weight", d + r), ("mla.kv_up.weight", 2 * d)):
        if name in w:
            out[name] = heads_rows(w[name], t, c, width)
    nh = c["heads"] // T
    out["mla.proj.weight"] = w["mla.proj.weight"][:, t * nh * d:(t + 1) * nh * d]
    g, u = w["gate_up.weight"].chunk(2, 0)
    out["gate_up.weight"] = torch.cat((g[t * f:(t + 1) * f], u[t * f:(t + 1) * f]))
    out["down.weight"] = w["down.weight"][:, t * f:(t + 1) * f]
    return out


# The weights every rank of the group holds whole.
REPLICATED = ("norm1.weight", "norm2.weight", "mla.q_down.weight", "mla.q_norm.weight",
              "mla.kv_down.weight", "mla.kv_norm.weight")


# name -> (sp, q_lora): the block at tp 2 with and without sequence
# parallelism, and with the query one column-parallel projection (q_lora 0).
CASES = {"tp2": (False, C["q_lora"]), "tp2_sp": (True, C["q_lora"]), "tp2_query_projection": (False, 0)}


def worker(rank, world, port, q, cases):
    """Every case of cases on one process group, one after another (one
    spawn for them all: a spawn and gloo's start cost seconds each):
    compare's figures, put on q as (name, rank, figures)."""
    layers.WIRE = torch.float32
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for name, (sp, q_lora) in cases.items():
        try:
            figures = compare(rank, sp, q_lora)
        except Exception as e:  # the rank ends (spawn ends the other): say which case
            raise RuntimeError("case %s, rank %d: %s" % (name, rank, e)) from e
        q.put((name, rank, figures))
        dist.barrier()
    dist.destroy_process_group()


def compare(rank, sp, q_lora):
    """Rank rank's shard of the block (tp 2, sp: with sequence
    parallelism) against the whole block: the largest differences of the
    outputs, the input's gradients and the weights' gradients, and the
    whole output's scale."""
    c = dict(C, q_lora=q_lora)
    torch.manual_seed(0)
    whole = layers.Block(c, layers.Shard())
    mine = layers.Block(c, layers.Shard(T, rank, dist.group.WORLD, sp))
    mw = shares(whole, rank, c, False)
    with torch.no_grad():
        for n, p in mine.named_parameters():
            p.copy_(mw[n])
    cos, sin = layers.rotary_for(c, c["seq"])
    torch.manual_seed(7)
    x = torch.randn(c["seq"], 2, c["hidden"], requires_grad=True)
    S = c["seq"] // T
    xs = (x.detach()[rank * S:(rank + 1) * S] if sp else x.detach()).clone().requires_grad_(True)
    y = mine(xs, cos, sin)
    y.square().sum().backward()
    z = whole(x, cos, sin)
    z.square().sum().backward()
    want_y = z[rank * S:(rank + 1) * S] if sp else z
    want_gx = x.grad[rank * S:(rank + 1) * S] if sp else x.grad
    want = shares(whole, rank, c, True)
    dw = 0.0
    for n, p in mine.named_parameters():
        g = p.grad.clone()
        if sp and n in REPLICATED:
            # Each rank's gradient of its sequence shard: summed over the
            # group (Megatron-Core all-reduces the sequence-parallel
            # weights' gradients once a step).
            dist.all_reduce(g)
        # Relative to the gradient's largest element: the weights'
        # gradients sum over every token and reach the hundreds here.
        dw = max(dw, (g - want[n]).abs().max().item() / max(want[n].abs().max().item(), 1.0))
    return (y - want_y).abs().max().item(), (xs.grad - want_gx).abs().max().item(), dw, z.abs().max().item()


class LatentAttentionTest(unittest.TestCase):
    results = None  # name -> [(rank, figures)], from the one spawn

    @classmethod
    def spawned(cls):
        if cls.results is None:
            try:
                cls.results = spawn_cases(worker, T, CASES)
            except Exception as e:  # a rank failed: every case's test says so, without another spawn
                cls.results = e
        if isinstance(cls.results, Exception):
            raise cls.results
        return cls.results

    def check_tp(self, name):
        got = self.spawned().get(name, [])
        self.assertEqual(len(got), T, name)
        for rank, (dy, dx, dw, scale) in got:
            self.assertGreater(scale, 0.01)
            self.assertLess(dy, 1e-5, "rank %d: outputs differ by %g" % (rank, dy))
            self.assertLess(dx, 1e-5, "rank %d: input gradients differ by %g" % (rank, dx))
            self.assertLess(dw, 1e-5, "rank %d: weight gradients differ by %g" % (rank, dw))

    def test_tp2_is_whole(self):
        self.check_tp("tp2")

    def test_tp2_sp_is_whole(self):
        self.check_tp("tp2_sp")

    def test_tp2_query_projection_is_whole(self):
        # q_lora 0: the query one column-parallel projection.
        self.check_tp("tp2_query_projection")

    def test_params_are_placers(self):
        # transformer.Spec's AttentionParams for latent attention
        # (graph/transformer/transformer.go): with a query latent
        # h ql + ql + ql heads (d + r) (down, its norm, up), then
        # h (kl + r) + kl + kl heads 2d (the keys' and values' latent with
        # the rotary key, its norm, up), heads d h (output), 2h (the two
        # RMS norms); DenseLayerParams adds the SwiGLU MLP's 3 h ffn.
        # Without a query latent the query is h heads (d + r).
        h, heads, d, r, ql, kl, f = 48, 4, 12, 4, 20, 10, 40
        kv = h * (kl + r) + kl + kl * heads * 2 * d
        rest = heads * d * h + 2 * h + 3 * h * f
        for q_lora, want in ((ql, h * ql + ql + ql * heads * (d + r) + kv + rest),
                             (0, h * heads * (d + r) + kv + rest)):
            b = layers.Block(dict(C, q_lora=q_lora), layers.Shard())
            self.assertEqual(sum(p.numel() for p in b.parameters()), want, "q_lora %d" % q_lora)
        # 48*20 + 20 + 20*4*16 + 48*14 + 10 + 10*4*24 + 4*12*48 + 96 + 3*48*40:
        # the figure by hand, so that the formula above is not its own check.
        self.assertEqual(48 * 20 + 20 + 20 * 4 * 16 + 48 * 14 + 10 + 10 * 4 * 24 + 4 * 12 * 48 + 96 + 3 * 48 * 40, 12062)
        self.assertEqual(sum(p.numel() for p in layers.Block(C, layers.Shard()).parameters()), 12062)

    def test_dense_config(self):
        c = dict(C, experts=4, topk=2, expert_ffn=16, shared=1)
        self.assertIsNotNone(layers.Block(c, layers.Shard()).moe)
        d = layers.Block(layers.dense_config(c), layers.Shard())
        self.assertIsNone(d.moe)
        self.assertEqual(tuple(d.gate_up.weight.shape), (2 * C["ffn"], C["hidden"]))


WORKLOAD = ("llama:layers=3,hidden=48,heads=4,ffn=40,seq=16,vocab=64,batch=4,head_dim=12,"
            "experts=4,topk=2,expert_ffn=16,shared=1,dense_layers=1,q_lora=20,kv_lora=10,rope_dim=4")


@unittest.skipUnless(os.environ.get("PLACER"), "PLACER names the placer binary (make test-python-venv sets it)")
class ProfileDeepSeekLikeTest(unittest.TestCase):
    def test_profile_and_eval(self):
        placer = os.environ["PLACER"]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "ds.profile.json")
            r = subprocess.run([placer, "profile", "--workload", WORKLOAD, "--device", "cpu", "--procs", "1",
                                "--ep", "1", "--mbs", "1", "--cp", "1", "--recompute", "none", "--repeats", "2",
                                "--python", sys.executable, "--out", out], capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                pr = json.load(f)
            self.assertTrue(pr["complete"])
            blocks = sorted(layer.get("block", "") for layer in pr["layers"])
            self.assertEqual(blocks, ["dense", "moe"])
            for layer in pr["layers"]:
                self.assertGreater(layer["forward_s"], 0)
                self.assertGreater(layer["backward_s"], 0)
            r = subprocess.run([placer, "eval", "--profile", out, "--workload", WORKLOAD, "--gpus", "1",
                                "--strategy", "tp=1,pp=1,dp=1,mbs=1", "--json"], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            res = json.loads(r.stdout)
            src = res.get("sources") or res.get("result", {}).get("sources")
            self.assertIsNotNone(src, r.stdout[:500])
            self.assertEqual(src["layers"], "measured")
            self.assertEqual(src["dense_layers"], "measured")


if __name__ == "__main__":
    unittest.main()
