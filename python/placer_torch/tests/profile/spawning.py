"""One spawn of gloo processes that runs every case of a test class.

spawn_cases(worker, nprocs, cases) starts nprocs processes once with
torch.multiprocessing (worker(rank, nprocs, port, queue, cases) puts one
(name, rank, result) on the queue per case and rank) and returns
{name: [(rank, result), ...]}: the tensor-parallel tests compare each
case's ranks without starting processes again for every case.
"""

import torch.multiprocessing as mp

from placer_torch import free_port


def spawn_cases(worker, nprocs, cases):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    mp.spawn(worker, args=(nprocs, free_port(), q, cases), nprocs=nprocs)
    results = {}
    for _ in range(nprocs * len(cases)):
        name, rank, out = q.get()
        results.setdefault(name, []).append((rank, out))
    return results
