"""Measures PyTorch's CPU time per op on tiny tensors, one op of each of
placer's cost classes (docs/performance-model.md, "The host"): what eager
PyTorch spends on the CPU to run an op from Python (argument parsing, the
dispatcher, autograd's bookkeeping, the kernel's own set-up) when the
kernel itself is next to nothing. On a GPU the host adds the kernel launch
(cudaLaunchKernel) to it. The median of ROUNDS rounds of N calls each.

    python tools/torchexport/dispatch.py
"""

import statistics
import sys
import time

import torch
import torch.nn.functional as F

N, ROUNDS = 2000, 15


def per_call(f):
    f()
    xs = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        for _ in range(N):
            f()
        xs.append((time.perf_counter() - t) / N)
    return statistics.median(xs)


def main():
    torch.set_num_threads(1)
    a = torch.randn(2, 2, requires_grad=True)
    b = torch.randn(2, 2)
    img = torch.randn(1, 1, 4, 4, requires_grad=True)
    w = torch.randn(1, 1, 3, 3)
    table = torch.randn(8, 2)
    idx = torch.tensor([1, 3])
    ops = {
        "matmul": lambda: torch.mm(a, b),
        "conv": lambda: F.conv2d(img, w, padding=1),
        "elementwise": lambda: torch.add(a, b),
        "reduction": lambda: torch.sum(a),
        "datamove": lambda: a.clone(),
        "embedding": lambda: F.embedding(idx, table),
        "view": lambda: a.view(4),
    }
    print("torch %s, Python %s, 1 thread: CPU time per op on tiny tensors (median of %d x %d calls)" % (
        torch.__version__, sys.version.split()[0], ROUNDS, N))
    for k, f in ops.items():
        print("%-12s %6.2f us" % (k, per_call(f) * 1e6))


if __name__ == "__main__":
    main()
