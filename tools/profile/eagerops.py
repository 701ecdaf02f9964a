"""The ATen ops one Llama layer's training step issues under eager
PyTorch, as the project's exporter records them (placer_torch.exporter on
fake CPU tensors, execution settings of a CUDA run): the test of
evaluate/scale's eager op list (eager.go, TestEagerOpsMatchExporter).

    python tools/profile/eagerops.py --layer llama --hidden 256 --heads 4 --kv-heads 2 --ffn 512 \
        --seq 64 --batch 2 --tp 1 --precision autocast

prints one JSON object: {"ops": [{"type", "class", "dtype", "flops",
"read", "written", "backward"}...]}, the layer's forward and backward
ops that are not views (no optimizer, no loss: the layer's output summed,
that sum and its backward left out; with --tp and --sp the stand-ins of
the sequence's gather and reduce-scatter left out, since placer costs
the collectives apart). --layer hf: transformers' LlamaDecoderLayer
(tp 1 only).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python", "placer_torch"))

import torch  # noqa: E402

import llama  # noqa: E402
from placer_torch import exporter  # noqa: E402


class _Sum(torch.nn.Module):
    """The layer and its rotary tables: x -> layer(x)."""

    def __init__(self, block, cos, sin):
        super().__init__()
        self.block = block
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x):
        return self.block(x, self.cos, self.sin)


def _built(make, dtype):
    """make() with its parameters created in dtype (a fake module cannot
    be converted after it is built)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return make()
    finally:
        torch.set_default_dtype(old)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--layer", choices=("llama", "hf"), default="llama")
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, required=True)
    p.add_argument("--ffn", type=int, required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--sp", action="store_true")
    p.add_argument("--precision", choices=("autocast", "bf16"), default="autocast")
    a = p.parse_args(argv)
    c = llama.config(a.hidden, a.heads, a.kv_heads, a.ffn, 1024, a.seq)
    dtype = torch.bfloat16 if a.precision == "bf16" else torch.float32
    hd = a.hidden // a.heads
    S = a.seq // a.tp if a.sp else a.seq
    if a.layer == "llama":
        shard = llama.Shard(a.tp, 0, None, a.sp)

        def build():
            # The rotary tables FP32 under autocast (llama.rotary's), the
            # weights' dtype with BF16 weights; made here, under the
            # exporter's fake tensors.
            cos, sin = llama.rotary(a.seq, hd)
            return _Sum(_built(lambda: llama.Block(c, shard), dtype), cos.to(dtype), sin.to(dtype))

        def inputs():
            # A layer's input needs its gradient (the layer below's).
            return torch.randn(S, a.batch, a.hidden, dtype=dtype, requires_grad=True), None
    else:
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer
        cfg = LlamaConfig(hidden_size=a.hidden, num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                          intermediate_size=a.ffn, attn_implementation="sdpa")
        cfg._attn_implementation = "sdpa"

        class HF(torch.nn.Module):
            def __init__(self):
                super().__init__()
                cos0, sin0 = llama.rotary(a.seq, hd)
                # transformers' rotary tables: [batch, seq, head_dim], the halves repeated.
                cos = torch.cat((cos0, cos0), -1).unsqueeze(0).expand(a.batch, -1, -1).contiguous()
                sin = torch.cat((sin0, sin0), -1).unsqueeze(0).expand(a.batch, -1, -1).contiguous()
                self.block = LlamaDecoderLayer(cfg, 0)
                self.register_buffer("cos", cos.to(torch.get_default_dtype()), persistent=False)
                self.register_buffer("sin", sin.to(torch.get_default_dtype()), persistent=False)

            def forward(self, x):
                y = self.block(x, position_embeddings=(self.cos, self.sin), attention_mask=None)
                return y[0] if isinstance(y, tuple) else y

        def build():
            return _built(HF, dtype)

        def inputs():
            return torch.randn(a.batch, a.seq, a.hidden, dtype=dtype, requires_grad=True), None

    ex = {"device": "cuda", "optimizer_impl": "foreach"}
    if a.precision == "autocast":
        ex["autocast"] = "bf16"
    graph, meta = exporter.export_training_step(build, inputs, lambda out, target: out.float().sum(),
                                                optimizer_cls=torch.optim.SGD, out=None, name="layer",
                                                batch_dim=None, attention="fused", execution=ex)
    ops = []
    for op, m in zip(graph["ops"], meta["ops"]):
        if m.get("phase") not in ("forward", "backward") or not m.get("module") or op.get("alias"):
            continue  # inputs, parameters, the loss (the sum), views
        if op["type"] == "repeat" or op["type"] == "sum" and m["module"] == "block" or (
                op["type"] == "slice_backward" and op["shape"][-1] == a.hidden):
            continue  # the stand-ins of sequence parallelism's gather and reduce-scatter (llama.Shard, no group)
        ops.append({"type": op["type"], "class": op["class"], "dtype": op["dtype"], "flops": op.get("flops", 0),
                    "read": op.get("bytes_read", 0), "written": op.get("bytes_written", 0),
                    "backward": m["phase"] == "backward"})
    # The input's own gradient laid out as the leaf it is here (the
    # layer below's output in a model): not the layer's.
    if [o["type"] for o in ops[-2:]] == ["new_empty_strided", "copy_"]:
        ops = ops[:-2]
    json.dump({"ops": ops}, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
