"""torchtitan's device bound to the CPU, for its trainers on CPU processes
(titan_cpu.py for torchtitan 0.2.2, titan03_cpu.py for 0.3.0;
docs/frameworks.md).

torchtitan binds its device when it is imported
(torchtitan/tools/utils.py: `device_type = _get_available_device_type()
or "cuda"`, which its distributed, metrics and parallel-dims modules copy
as they import), so on a machine without a GPU its trainer stops at
torch.cuda.set_device ("Found no NVIDIA driver on your system"). Inside
cpu_as_device() torch's device query answers "cpu" and a device module
that is torch.cpu plus the CUDA-module calls torchtitan's memory monitor
makes; import torchtitan there, and torch's query is restored after.
With device type "cpu" torchtitan's init_distributed picks gloo.
"""

import contextlib
import os
import types

import torch
from torch.utils.data import IterableDataset


class _CPUDeviceModule(types.ModuleType):
    """torch.cpu, with the CUDA-module calls torchtitan's memory monitor
    makes (it reports a CPU's memory as nothing used)."""

    def __init__(self):
        super().__init__("placer_titan_cpu_device")

    def __getattr__(self, name):
        return getattr(torch.cpu, name)

    @staticmethod
    def get_device_name(device=None):
        return "cpu"

    @staticmethod
    def get_device_properties(device=None):
        return types.SimpleNamespace(total_memory=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))

    @staticmethod
    def current_device():
        return 0  # an index, as CUDA's (torch.cpu's is "cpu"; barrier(device_ids=[...]) takes ints)

    @staticmethod
    def memory_stats(device=None):
        return {}

    @staticmethod
    def reset_peak_memory_stats(device=None):
        pass

    @staticmethod
    def empty_cache():
        pass


@contextlib.contextmanager
def cpu_as_device():
    import torch._utils as tu

    query, module = tu._get_available_device_type, tu._get_device_module
    cpu = _CPUDeviceModule()
    tu._get_available_device_type = lambda: "cpu"
    tu._get_device_module = lambda t=None: cpu if t in (None, "cpu") else module(t)
    try:
        yield
    finally:
        tu._get_available_device_type, tu._get_device_module = query, module


class Tokens(IterableDataset):
    """Synthetic training data both releases' CPU runs read: sample i is
    seq_len + 1 tokens seeded by i; a step's global batch of G samples is
    samples sG .. sG + G - 1, data-parallel rank r of W reading the r-th
    G/W of them in order (so that a run of any plan sees the one-process
    run's batches)."""

    def __init__(self, vocab, seq_len, per_rank, rank, world):
        self.vocab, self.seq_len, self.per_rank, self.rank, self.world = vocab, seq_len, per_rank, rank, world

    def __iter__(self):
        k = 0
        while True:
            s, j = divmod(k, self.per_rank)
            g = torch.Generator().manual_seed(1000 + (s * self.world + self.rank) * self.per_rank + j)
            t = torch.randint(0, self.vocab, (self.seq_len + 1,), generator=g)
            yield {"input": t[:-1]}, t[1:]
            k += 1
