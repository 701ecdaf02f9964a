"""One start of gloo processes that runs every case of a test class.

spawn_cases(worker, nprocs, cases) starts nprocs processes once with
torch.multiprocessing (worker(rank, nprocs, port, queue, cases) puts one
(name, rank, result) on the queue per case and rank) and returns
{name: [(rank, result), ...]}: the tensor-parallel tests compare each
case's ranks without starting processes again for every case.

The processes are started as placer_torch.runner's launch starts its ranks
(start_method: on Linux forked from a forkserver that has imported torch
once, else spawned), not spawned each: a spawned process imports torch
and the test's module anew (3 to 4 CPU s on torch 2.14), a fork of the
forkserver its test's module only. The forkserver is this python's one,
started by the first test that needs it.
"""

import torch.multiprocessing as mp

from placer_torch import free_port, runner


def start_method():
    """forkserver (torch preloaded) on Linux, else spawn: runner's."""
    return runner._start_method(mp)


def context():
    """The multiprocessing context of start_method (its Queue and Process)."""
    return mp.get_context(start_method())


def spawn_cases(worker, nprocs, cases):
    q = context().Queue()
    mp.start_processes(worker, args=(nprocs, free_port(), q, cases), nprocs=nprocs, start_method=start_method())
    results = {}
    for _ in range(nprocs * len(cases)):
        name, rank, out = q.get()
        results.setdefault(name, []).append((rank, out))
    return results
