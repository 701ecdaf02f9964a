"""layers.Experts under expert parallelism is the whole layer's experts:
two gloo processes, each with half the experts (the whole layer's
weights), the all-to-alls exchanging their tokens, give what one
process with every expert gives (the wire FP32 here, so to 1e-5), and
the shard without a group holds the tokens an expert gets from the
whole group (forced balance). Run by make test-python-venv."""

import os
import unittest

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from placer_torch import free_port
from placer_torch.profile import layers

from . import spawning

C = {"hidden": 64, "heads": 4, "kv_heads": 4, "ffn": 128, "vocab": 256, "seq": 32,
     "experts": 8, "topk": 2, "expert_ffn": 32, "shared": 1}


def worker(rank, world, port, q):
    layers.WIRE = torch.float32
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    whole = layers.Experts(C, 1)
    mine = layers.Experts(C, world, dist.group.WORLD)
    n = C["experts"] // world
    with torch.no_grad():
        mine.router.weight.copy_(whole.router.weight)
        mine.w1.copy_(whole.w1[rank * n:(rank + 1) * n])
        mine.w2.copy_(whole.w2[rank * n:(rank + 1) * n])
        for a, b in zip(mine.shared.parameters(), whole.shared.parameters()):
            a.copy_(b)
    torch.manual_seed(1 + rank)
    x = torch.randn(32, 2, 64, requires_grad=True)
    y = mine(x)
    y.square().sum().backward()
    gx = x.grad.clone()
    x.grad = None
    z = whole(x)
    z.square().sum().backward()
    q.put((rank, (y - z).abs().max().item(), (gx - x.grad).abs().max().item(), z.abs().max().item()))
    dist.destroy_process_group()


class ExpertsTest(unittest.TestCase):
    def test_expert_parallel_is_whole(self):
        q = spawning.context().Queue()
        mp.start_processes(worker, args=(2, free_port(), q), nprocs=2, start_method=spawning.start_method())
        for _ in range(2):
            rank, dy, dg, scale = q.get()
            self.assertGreater(scale, 0.01)
            self.assertLess(dy, 1e-5, "rank %d: outputs differ by %g" % (rank, dy))
            self.assertLess(dg, 1e-5, "rank %d: input gradients differ by %g" % (rank, dg))

    def test_shard_tokens(self):
        # ep 4 of 8 experts, top 2, 64 tokens: 2 local experts, each the
        # 64 x 2 / 8 x 4 = 64 tokens it gets from the 4 ranks.
        m = layers.Experts(C, 4)
        self.assertEqual(tuple(m.w1.shape), (2, 64, 64))
        seen = {}
        orig = torch.bmm

        def spy(a, b):
            seen.setdefault("shape", tuple(a.shape))
            return orig(a, b)
        torch.bmm = spy
        try:
            m(torch.randn(32, 2, 64))
        finally:
            torch.bmm = orig
        self.assertEqual(seen["shape"], (2, 64, 64))


if __name__ == "__main__":
    unittest.main()
