"""Measures PyTorch's CPU time per op on tiny tensors, one op of each of
placer's cost classes (docs/performance-model.md, "The host"): what eager
PyTorch spends on the CPU to run an op from Python (argument parsing, the
dispatcher, autograd's bookkeeping, the kernel's own set-up) when the
kernel itself is next to nothing. On a GPU the host adds the kernel launch
(cudaLaunchKernel) to it. The median of ROUNDS rounds of N calls each.

    python tools/dev/torchexport/dispatch.py
    python tools/dev/torchexport/dispatch.py --autocast

--autocast times what torch.autocast adds to an op's host time, on the
CPU's autocast (torch.autocast("cpu", dtype=torch.bfloat16)): the wrapper
is the same code for every device (aten/src/ATen/autocast_mode.h,
WrapFunction_ and cached_cast, torch 2.14.1), only the lists differ, and
torch.mm is on both the CPU's and CUDA's low-precision lists. Each case
against torch.mm on bf16 operands outside autocast (a 2x2 operand that
requires grad: one autograd node):

    wrapper    the same mm under autocast: its operands are bf16 already,
               so the wrapper casts nothing (the Autocast key's guard and
               cached_cast's checks alone)
    weight     the second operand an f32 leaf that requires grad (a
               weight): cast on the first call, then autocast's cache
    activation the first operand an f32 non-leaf (an activation): cast on
               every call, the _to_copy issued from C++ with its autograd
               node
    python_cast the same cast called from Python (x.to(torch.bfloat16)),
               outside autocast, for comparison
"""

import argparse
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


def autocast_costs():
    """The --autocast cases (see the module's docstring), in seconds per
    call, and the mm they are set against."""
    a16 = torch.randn(2, 2, dtype=torch.bfloat16, requires_grad=True)
    b16 = torch.randn(2, 2, dtype=torch.bfloat16)
    x32 = torch.randn(2, 2, requires_grad=True) * 1  # a non-leaf: not cached
    w32 = torch.randn(2, 2, requires_grad=True)
    out = {"mm_bf16": per_call(lambda: torch.mm(a16, b16)),
           "python_cast": per_call(lambda: x32.to(torch.bfloat16))}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out["wrapper"] = per_call(lambda: torch.mm(a16, b16))
        out["weight"] = per_call(lambda: torch.mm(a16, w32))
        out["activation"] = per_call(lambda: torch.mm(x32, b16))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--autocast", action="store_true", help="time what torch.autocast adds (see above)")
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.autocast:
        print("torch %s, Python %s, 1 thread: CPU time per call under torch.autocast(cpu, bfloat16) "
              "(median of %d x %d calls)" % (torch.__version__, sys.version.split()[0], ROUNDS, N))
        c = autocast_costs()
        for k, v in c.items():
            extra = "" if k in ("mm_bf16", "python_cast") else "   (+%.2f us over mm_bf16)" % ((v - c["mm_bf16"]) * 1e6)
            print("%-12s %6.2f us%s" % (k, v * 1e6, extra))
        return
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
