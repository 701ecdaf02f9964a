"""A plain-PyTorch Llama trained for a few steps under each plan of a
one-GPU sweep, as a user runs it: BF16 autocast over FP32 weights on a
GPU (FP32 on a CPU), AdamW (fused on a GPU), the global batch fixed and
the micro-batch and full recomputation (torch.utils.checkpoint around
every block) varied. For each plan: the step's time (the median of the
timed steps, after warm-up), torch.cuda.max_memory_allocated and
max_memory_reserved (reset per plan), or "oom" where it ran out of
memory; one JSON line each, with the workload and strategy placer eval
takes for the same plan (placer eval --workload W --gpus 1 --strategy S), so that the step and the peak are tests of
placer's plain-PyTorch figures, never constants.

The model is placer_torch.profile.layers' (RMS norm, rotary, grouped-query
SDPA, SwiGLU, untied output, the loss's FP32 logits), one shard (T = 1).

    python -m placer_torch.profile.sweep --shape llama3.2-1b --batch 16 --mbs 1,2,4,8 --recompute none,full
    python -m placer_torch.profile.sweep --quick          # a tiny shape on the CPU: the plumbing, not a figure

make gpu runs it (step sweep). Exit 0 with every plan's line, an
OOM included; 2 for a bad argument.
"""

import argparse
import json
import statistics
import sys
import time

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from . import layers

# Shapes by name: layers, hidden, heads, kv_heads, ffn, vocab, seq.
SHAPES = {
    # Llama 3.2 1B (its config.json: 16 x 2048, 32 heads, 8 KV heads,
    # FFN 8192, vocabulary 128,256; untied here, as layers.py builds it).
    "llama3.2-1b": (16, 2048, 32, 8, 8192, 128256, 2048),
    # Llama 3 8B's layer, 8 of its 32 layers (fits one H100 with AdamW).
    "llama3-8b-8l": (8, 4096, 32, 8, 14336, 128256, 2048),
    "tiny": (2, 64, 4, 2, 128, 256, 32),
}


class Model(nn.Module):
    def __init__(self, c, n_layers, recompute):
        super().__init__()
        sh = layers.Shard()
        self.emb = layers.Embedding(c, sh)
        self.blocks = nn.ModuleList(layers.Block(c, sh) for _ in range(n_layers))
        self.loss = layers.Loss(c, sh)
        self.recompute = recompute
        cos, sin = layers.rope_for(c)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, ids, targets):
        x = self.emb(ids)
        for b in self.blocks:
            if self.recompute:
                x = checkpoint(b, x, self.cos, self.sin, use_reentrant=False)
            else:
                x = b(x, self.cos, self.sin)
        return self.loss(x, targets)


def run_plan(shape, batch, mbs, recompute, steps, warmup, dev):
    n_layers, hidden, heads, kv, ffn, vocab, seq = shape
    c = layers.config(hidden, heads, kv, ffn, vocab, seq)
    cuda = dev.type == "cuda"
    line = {"batch": batch, "mbs": mbs, "recompute": "full" if recompute else "none",
            "workload": "llama:layers=%d,hidden=%d,heads=%d,kv_heads=%d,ffn=%d,seq=%d,vocab=%d,batch=%d"
                        % (n_layers, hidden, heads, kv, ffn, seq, vocab, batch),
            "strategy": "tp=1,pp=1,dp=1,mbs=%d%s%s" % (mbs, ",recompute=full" if recompute else "",
                                                      # the layers' ATen ops under autocast
                                                      ",stack=torch-eager" if cuda else "")}
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    try:
        torch.manual_seed(0)
        model = Model(c, n_layers, recompute).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda)
        ids = torch.randint(0, vocab, (batch, seq + 1), device=dev)
        ctx = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if cuda else (lambda: torch.autocast("cpu", enabled=False))
        times = []
        for i in range(warmup + steps):
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            for m in range(batch // mbs):
                chunk = ids[m * mbs:(m + 1) * mbs]
                with ctx():
                    loss = model(chunk[:, :-1], chunk[:, 1:]) / (batch // mbs)
                loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if cuda:
                torch.cuda.synchronize()
            if i >= warmup:
                times.append(time.perf_counter() - t0)
        line["step_s"] = statistics.median(times)
        line["steps"] = times
    except torch.OutOfMemoryError:
        line["oom"] = True
    finally:
        model = opt = None
    if cuda:
        line["max_allocated_bytes"] = torch.cuda.max_memory_allocated()
        line["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
        line["device"] = torch.cuda.get_device_name()
    else:
        line["device"] = "cpu"
    line["torch"] = torch.__version__
    return line


def ints(s):
    try:
        v = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("%r: want whole numbers, comma-separated" % s)
    if any(x < 1 for x in v):
        raise argparse.ArgumentTypeError("%r: want each at least 1" % s)
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="llama3.2-1b", choices=sorted(SHAPES))
    ap.add_argument("--batch", type=int, default=16, help="the global batch, fixed over the plans")
    ap.add_argument("--mbs", type=ints, default=[1, 2, 4, 8], help="micro-batches to run, each dividing --batch")
    ap.add_argument("--recompute", default="none,full", help="none, full or both")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--quick", action="store_true", help="the tiny shape, batch 4, one step: the plumbing")
    a = ap.parse_args(argv)
    if a.quick:
        a.shape, a.batch, a.mbs, a.steps, a.warmup = "tiny", 4, [1, 2], 1, 0
    rec = a.recompute.split(",")
    if any(r not in ("none", "full") for r in rec):
        ap.error("--recompute %s: want none, full or both" % a.recompute)
    bad = [m for m in a.mbs if a.batch % m]
    if bad or a.batch < 1 or a.steps < 1 or a.warmup < 0:
        ap.error("--batch %d, --mbs %s, --steps %d, --warmup %d: every micro-batch must divide the batch, the steps be at least 1"
                 % (a.batch, ",".join(map(str, a.mbs)), a.steps, a.warmup))
    dev = torch.device(a.device)
    for r in rec:
        for mbs in a.mbs:
            print(json.dumps(run_plan(SHAPES[a.shape], a.batch, mbs, r == "full", a.steps, a.warmup, dev)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
