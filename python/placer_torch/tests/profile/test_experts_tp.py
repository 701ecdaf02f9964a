"""layers.Experts under tensor parallelism (the attention's, with
sequence parallelism), expert tensor parallelism and expert parallelism
is the whole layer's experts, and layers.Block at tp 2 (its attention
with sequence parallelism, its experts at etp 1 and 2) the whole layer: two gloo processes, each holding its slices of the
whole layer's weights and its seq/T tokens, give what one process with
the whole layer gives on those tokens, outputs, input gradients and
weight gradients (each rank's gradient put at its slice of the whole
weight and summed over the ranks: the replicas' reduction), to 1e-5
with the wire in FP32, routing forced balanced. Run by make
test-python-venv beside test_experts.py."""

import os
import unittest

import torch
import torch.distributed as dist

from placer_torch.profile import layers

from .spawning import spawn_cases

C = {"hidden": 64, "heads": 4, "kv_heads": 4, "ffn": 128, "vocab": 256, "seq": 32,
     "experts": 8, "topk": 2, "expert_ffn": 32, "shared": 1}


def slicers(tp, etp, ep, rank):
    """For each parameter name, the function taking the whole layer's
    tensor to this rank's slice of it (the experts' mesh as
    Megatron-Core lays it out: expert-tensor innermost, then expert;
    the attention's tensor group every tp consecutive ranks)."""
    f, E, sh = C["expert_ffn"], C["experts"], C["shared"] * C["expert_ffn"]
    t, r, e = rank % tp, rank % etp, (rank // etp) % ep
    n, fe, st = E // ep, f // etp, sh // tp
    lo = e * n

    def w1(w):  # [experts, h, 2f]: gate then up, each column-split over etp
        w = w[lo:lo + n]
        return torch.cat((w[..., r * fe:(r + 1) * fe], w[..., f + r * fe:f + (r + 1) * fe]), -1)

    def shared_in(w):  # [2 sh, h]: gate then up rows, split over tp
        return torch.cat((w[t * st:(t + 1) * st], w[sh + t * st:sh + (t + 1) * st]), 0)
    return {
        "router.weight": lambda w: w,
        "w1": w1,
        "w2": lambda w: w[lo:lo + n, r * fe:(r + 1) * fe],
        "shared.0.weight": shared_in,
        "shared.1.weight": lambda w: w[:, t * st:(t + 1) * st],
    }


def worker(rank, world, port, q, cases):
    """Every case of cases ({name: (fn, args)}: mesh or block with their
    arguments after rank) on one process group, one after another (one
    spawn for them all: a spawn and gloo's start cost seconds each): the
    case's figures, put on q as (name, rank, figures)."""
    layers.WIRE = torch.float32
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for name, (fn, args) in cases.items():
        try:
            figures = fn(rank, *args)
        except Exception as e:  # the rank ends (spawn ends the other): say which case
            raise RuntimeError("case %s, rank %d: %s" % (name, rank, e)) from e
        q.put((name, rank, figures))
        dist.barrier()
    dist.destroy_process_group()


def mesh(rank, tp, etp, ep):
    """Rank rank's layers.Experts at tp (sequence parallel), etp, ep on
    two processes against the whole layer's on its tokens: the largest
    differences, and the whole output's scale."""
    W = dist.group.WORLD  # two processes: every group of degree 2 is the world
    torch.manual_seed(0)
    whole = layers.Experts(C, 1)
    shard = layers.Shard(tp, rank % tp, W if tp > 1 else None, sp=True)
    mine = layers.Experts(C, ep, W if ep > 1 else None, etp, W if etp > 1 else None, shard)
    cut = slicers(tp, etp, ep, rank)
    wp, mp_ = dict(whole.named_parameters()), dict(mine.named_parameters())
    assert set(wp) == set(cut) == set(mp_), (sorted(wp), sorted(mp_))
    with torch.no_grad():
        for name, fn in cut.items():
            mp_[name].copy_(fn(wp[name]))
    # The rank's tokens: its sequence shard (tp 2) or its own micro-batch
    # (tp 1); one process's whole layer on the same tokens.
    torch.manual_seed(1 + rank)
    x = torch.randn(C["seq"] // tp, 2, C["hidden"], requires_grad=True)
    y = mine(x)
    y.square().sum().backward()
    gx = x.grad.clone()
    x.grad = None
    z = whole(x)
    z.square().sum().backward()
    out = {"y": (y - z).abs().max().item(), "dx": (gx - x.grad).abs().max().item(), "scale": z.abs().max().item()}
    for name, fn in cut.items():
        # Where this rank's slice lies in the whole: the same cut of the
        # whole's element indices.
        idx = fn(torch.arange(wp[name].numel()).view(wp[name].shape)).reshape(-1)
        placed = torch.zeros(wp[name].numel()).index_add_(0, idx, mp_[name].grad.reshape(-1))
        ref = wp[name].grad.reshape(-1).clone()
        dist.all_reduce(placed)
        dist.all_reduce(ref)
        out[name] = ((placed - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    return out


def block(rank, etp):
    """The whole layer (layers.Block: the attention tensor-parallel over
    2 with sequence parallelism, then the experts at etp) on two
    processes against one process's whole layer on the whole sequence."""
    W, T = dist.group.WORLD, dist.get_world_size()
    torch.manual_seed(0)
    whole = layers.Block(C, layers.Shard())
    mine = layers.Block(C, layers.Shard(T, rank, W, sp=True), 1, None, etp, W if etp > 1 else None)
    hd = C["hidden"] // C["heads"]
    nh, nkv = C["heads"] // T, C["kv_heads"] // T
    H, KV = C["heads"] * hd, C["kv_heads"] * hd

    def qkv(w):  # [q heads, kv heads, kv heads] x hd rows, each split over T
        q, k, v = w[:H], w[H:H + KV], w[H + KV:]
        return torch.cat((q[rank * nh * hd:(rank + 1) * nh * hd], k[rank * nkv * hd:(rank + 1) * nkv * hd],
                          v[rank * nkv * hd:(rank + 1) * nkv * hd]), 0)
    cut = {"qkv.weight": qkv, "proj.weight": lambda w: w[:, rank * nh * hd:(rank + 1) * nh * hd],
           "norm1.weight": lambda w: w, "norm2.weight": lambda w: w}
    cut.update({"moe." + k: f for k, f in slicers(T, etp, 1, rank).items()})
    wp, mp_ = dict(whole.named_parameters()), dict(mine.named_parameters())
    assert set(wp) == set(cut) == set(mp_), (sorted(wp), sorted(mp_))
    with torch.no_grad():
        for name, fn in cut.items():
            mp_[name].copy_(fn(wp[name]))
    cos, sin = layers.rope_for(C)
    torch.manual_seed(1)  # the same whole sequence on both
    xs = torch.randn(C["seq"], 2, C["hidden"])
    rows = C["seq"] // T
    x = xs[rank * rows:(rank + 1) * rows].clone().requires_grad_(True)
    y = mine(x, cos, sin)
    y.square().sum().backward()
    xw = xs.clone().requires_grad_(True)
    z = whole(xw, cos, sin)
    z.square().sum().backward()  # the sum over both ranks' outputs
    out = {"y": (y - z[rank * rows:(rank + 1) * rows]).abs().max().item(),
           "dx": (x.grad - xw.grad[rank * rows:(rank + 1) * rows]).abs().max().item(), "scale": z.abs().max().item()}
    for name, fn in cut.items():
        idx = fn(torch.arange(wp[name].numel()).view(wp[name].shape)).reshape(-1)
        placed = torch.zeros(wp[name].numel()).index_add_(0, idx, mp_[name].grad.reshape(-1))
        dist.all_reduce(placed)
        ref = wp[name].grad.reshape(-1)
        out[name] = ((placed - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    return out


# name -> (the case's function, its arguments after rank): the experts at
# (tp, etp, ep), the whole layer at tp 2 and etp.
CASES = {"tp2_etp1": (mesh, (2, 1, 1)), "tp2_etp2": (mesh, (2, 2, 1)), "tp2_ep2": (mesh, (2, 1, 2)),
         "tp1_ep2": (mesh, (1, 1, 2)), "tp1_etp2": (mesh, (1, 2, 1)),
         "layer_tp2_etp1": (block, (1,)), "layer_tp2_etp2": (block, (2,))}


class ExpertsTPTest(unittest.TestCase):
    results = None  # name -> [(rank, figures)], from the one spawn

    @classmethod
    def spawned(cls):
        if cls.results is None:
            try:
                cls.results = spawn_cases(worker, 2, CASES)
            except Exception as e:  # a rank failed: every case's test says so, without another spawn
                cls.results = e
        if isinstance(cls.results, Exception):
            raise cls.results
        return cls.results

    def ranks(self, name):
        got = self.spawned().get(name, [])
        self.assertEqual(len(got), 2, name)
        return got

    def run_mesh(self, tp, etp, ep):
        for rank, out in self.ranks("tp%d_%s" % (tp, "ep2" if ep > 1 else "etp%d" % etp)):
            self.assertGreater(out.pop("scale"), 0.01)
            for what, d in out.items():
                self.assertLess(d, 1e-5, "tp %d etp %d ep %d, rank %d: %s differs by %g" % (tp, etp, ep, rank, what, d))

    def test_tp2_etp1(self):
        self.run_mesh(2, 1, 1)

    def test_tp2_etp2(self):
        self.run_mesh(2, 2, 1)

    def test_tp2_ep2(self):
        self.run_mesh(2, 1, 2)

    def test_tp1_ep2(self):
        self.run_mesh(1, 1, 2)

    def test_tp1_etp2(self):
        self.run_mesh(1, 2, 1)

    def run_block(self, etp):
        for rank, out in self.ranks("layer_tp2_etp%d" % etp):
            self.assertGreater(out.pop("scale"), 0.01)
            for what, d in out.items():
                self.assertLess(d, 1e-5, "layer at tp 2 etp %d, rank %d: %s differs by %g" % (etp, rank, what, d))

    def test_layer_tp2_etp1(self):
        self.run_block(1)

    def test_layer_tp2_etp2(self):
        self.run_block(2)

    def test_shapes_without_group(self):
        # tp 2 with sp, etp 2, ep 2, no groups (what a profile times
        # alone): 16 rows a rank x 2 = 32 tokens, 64 copies, 8 a local
        # expert from each rank; the expert GEMMs over the etp x ep = 4
        # ranks' 8 each, an expert's FFN 32 / 2 columns; the output the
        # input's shape.
        m = layers.Experts(C, 2, None, 2, None, layers.Shard(2, 0, None, sp=True))
        self.assertEqual(tuple(m.w1.shape), (4, 64, 32))
        self.assertEqual(tuple(m.w2.shape), (4, 16, 64))
        seen = []
        orig = torch.bmm

        def spy(a, b):
            seen.append(tuple(a.shape))
            return orig(a, b)
        torch.bmm = spy
        try:
            y = m(torch.randn(16, 2, 64))
        finally:
            torch.bmm = orig
        self.assertEqual(seen[0], (4, 32, 64))
        self.assertEqual(tuple(y.shape), (16, 2, 64))


if __name__ == "__main__":
    unittest.main()
