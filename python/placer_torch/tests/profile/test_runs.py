"""runs.py's plans with experts (moeloop.py's): the experts' mesh as
Megatron-Core lays it out, and on two gloo processes what a step
reduces: at tp 2 and etp 1 every expert is whole on both ranks, which
route their own tokens, so the experts' gradients differ until reduced
over the expert-data-parallel group (the tensor group) and are then
equal; at etp 2 each rank holds its half of each expert's FFN, nothing
to reduce; in a model with dense layers first, the first layer has no
experts. Run by make test-python-venv."""

import os
import unittest

import torch
import torch.distributed as dist

from placer_torch import free_port
from placer_torch.profile import runs

from . import spawning

C = {"layers": 2, "hidden": 32, "heads": 4, "kv_heads": 4, "ffn": 64, "vocab": 64, "seq": 16, "batch": 2,
     "experts": 4, "topk": 2, "expert_ffn": 16}
DEEPSEEK = dict(C, head_dim=8, rope_dim=4, q_lora=16, kv_lora=8, shared=1, dense_layers=1)


class Mesh(unittest.TestCase):
    def test_layouts(self):
        # Megatron-Core's expert mesh: expert-tensor innermost, then
        # expert, then expert-data-parallel.
        self.assertEqual(runs.expert_mesh(2, 1, 1), ([[0], [1]], [[0], [1]], [[0, 1]]))
        self.assertEqual(runs.expert_mesh(2, 1, 2), ([[0, 1]], [[0], [1]], [[0], [1]]))
        self.assertEqual(runs.expert_mesh(2, 2, 1), ([[0], [1]], [[0, 1]], [[0], [1]]))
        self.assertEqual(runs.expert_mesh(8, 2, 2),
                         ([[0, 1], [2, 3], [4, 5], [6, 7]], [[0, 2], [1, 3], [4, 6], [5, 7]], [[0, 4], [1, 5], [2, 6], [3, 7]]))

    def test_partitions(self):
        for n in (2, 4, 8, 16):
            for E in (1, 2, 4):
                for X in (1, 2, 4):
                    if n % (E * X):
                        continue
                    for size, groups in zip((X, E, n // (E * X)), runs.expert_mesh(n, E, X)):
                        self.assertEqual(sorted(r for g in groups for r in g), list(range(n)))
                        self.assertTrue(all(len(g) == size for g in groups))

    def test_default_etp(self):
        self.assertEqual(runs.expert_degrees("tp=2,pp=1,dp=1,mbs=1,sp=on"), (1, 2))
        self.assertEqual(runs.expert_degrees("tp=2,pp=1,dp=1,mbs=1,sp=on,ep=2,etp=1"), (2, 1))


class Recorder:
    """An optimizer's stand-in: keeps the gradients a step hands it."""

    def __init__(self, model):
        self.model, self.grads = model, None

    def step(self):
        # As numpy arrays: a tensor on the queue is a handle the process
        # that put it must outlive.
        self.grads = {n: p.grad.numpy().copy() for n, p in self.model.named_parameters() if p.grad is not None}

    def zero_grad(self, set_to_none=False):
        pass


def worker(rank, world, port, q):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    out = {}
    for name, c, plan in (("etp1", C, "tp=2,pp=1,dp=1,mbs=1,sp=on,etp=1"),
                          ("etp2", C, "tp=2,pp=1,dp=1,mbs=1,sp=on,etp=2"),
                          ("dense-first", DEEPSEEK, "tp=1,pp=2,dp=1,mbs=1")):
        r = runs.Rank(plan, c, rank, world)
        r.opt = Recorder(r.model)
        r.step()
        out[name] = {"grads": r.opt.grads, "moe": [b.moe is not None for b in r.blocks],
                     "w1": [tuple(b.moe.w1.shape) for b in r.blocks if b.moe is not None]}
    q.put((rank, out))
    dist.destroy_process_group()


class Step(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ctx = spawning.context()
        q = ctx.Queue()
        port = free_port()
        procs = [ctx.Process(target=worker, args=(r, 2, port, q)) for r in range(2)]
        for p in procs:
            p.start()
        cls.out = dict(q.get(timeout=300) for _ in procs)
        for p in procs:
            p.join()

    def test_etp1_experts_reduced_over_the_tensor_group(self):
        a, b = self.out[0]["etp1"], self.out[1]["etp1"]
        self.assertEqual(a["w1"], [(4, 32, 32)] * 2)  # every expert whole
        experts = [n for n in a["grads"] if n.endswith((".moe.w1", ".moe.w2"))]
        self.assertEqual(len(experts), 4)
        for n in experts:
            self.assertTrue((a["grads"][n] == b["grads"][n]).all(), n)
        # The tensor-parallel shards' own: not reduced, not equal.
        self.assertFalse((a["grads"]["1.0.qkv.weight"] == b["grads"]["1.0.qkv.weight"]).all())

    def test_etp2_experts_split(self):
        a, b = self.out[0]["etp2"], self.out[1]["etp2"]
        self.assertEqual(a["w1"], [(4, 32, 16)] * 2)  # each expert's FFN halved
        self.assertFalse((a["grads"]["1.0.moe.w1"] == b["grads"]["1.0.moe.w1"]).all())

    def test_dense_layers_first(self):
        self.assertEqual(self.out[0]["dense-first"]["moe"], [False])  # stage 0: the dense layer
        self.assertEqual(self.out[1]["dense-first"]["moe"], [True])


if __name__ == "__main__":
    unittest.main()
