"""Export one PyTorch training step as a placer graph (docs/import.md).

A thin command line on placer_torch (python/placer_torch): its flags, then
placer_torch.torchexport.run, which exports the model's step with
placer_torch.exporter (the recording: forward, loss, backward and one
optimizer update at ATen granularity, into placer's native JSON graph and
a meta file beside it) and, with --profile, measures it with
placer_torch.profiling. The zoo's models (placer_torch.zoo) are
named by --model without a colon.

    python3 tools/torchexport/torchexport.py --model resnet50 --batch 32 -o resnet50.json
    python3 tools/torchexport/torchexport.py --model mypkg.models:build --input-shape 3,224,224 --batch 32 -o m.json

The exporter's functions are placer_torch.exporter's; importing this file
as the module torchexport still reaches them (torchexport.export_training_step,
torchexport.model_spec: tools/fidelity reads them so).
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

from placer_torch import exporter, torchexport as command, zoo
from placer_torch.exporter import _LOSSES, ATTENTION, AUTOCAST, COMPILE_MODES, OPTIMIZER_IMPLS


def __getattr__(name):
    """torchexport.X for the exporter's X (placer_torch.exporter)."""
    try:
        return getattr(exporter, name)
    except AttributeError:
        raise AttributeError("module %r has no attribute %r" % (__name__, name)) from None


def main(argv=None):
    models = ", ".join(sorted(zoo.MODELS))
    p = argparse.ArgumentParser(description="Export a model's training step (forward, backward, optimizer update) "
                                "as a placer graph. Zoo models: " + models)
    p.add_argument("--model", required=True,
                   help="a model of zoo.py (" + models + "), or package.module:factory (or file.py:factory): a "
                   "callable that returns your torch.nn.Module, with --input-shape")
    p.add_argument("--input-shape", action="append", default=[], metavar="SHAPE[:DTYPE]",
                   help="for package.module:factory: one example's input shape without the batch, e.g. 3,224,224 "
                   "or 128:int64 (token ids, zeros); repeat once per model input, in order")
    p.add_argument("--batch", type=int, default=0,
                   help="batch size (default: the zoo model's; 1 for package.module:factory)")
    p.add_argument("--loss", default="cross-entropy", choices=_LOSSES,
                   help="for package.module:factory: cross-entropy over the output's last dimension (targets "
                   "class 0), mse against zeros, or the output's sum (default cross-entropy)")
    p.add_argument("--attention", choices=ATTENTION, default=None,
                   help="scaled_dot_product_attention as one fused op (flash or memory-efficient: Q, K, V, the output "
                   "and the log-sum-exp saved for backward; the default on torch 2.x) or as the math path computes "
                   "it (S x S scores saved; the default and only choice on torch 1.13); with --device cpu, fused is "
                   "a CPU's flash attention, and a call with dropout takes the math path, as a CPU runs it")
    p.add_argument("--data-dependent", choices=("follow", "fail"), default="follow",
                   help="when the step reads a tensor's value (a branch on it, .item(), nonzero), which fake tensors "
                   "cannot: follow records it on real CPU tensors along the example inputs' path, with a warning "
                   "(default); fail stops with one line naming the op")
    p.add_argument("--optimizer", default="adam", choices=["adam", "adamw", "sgd"])
    g = p.add_argument_group("execution settings", "how you run the step, recorded as it runs and written into the "
                             "graph's execution object (docs/graph-format.md); without any of them the graph is as "
                             "before and has none")
    g.add_argument("--device", choices=("cuda", "cpu"), default=None,
                   help="the device you train on; cuda takes PyTorch's defaults there: the foreach optimizer, cuDNN "
                   "RNNs, TF32 for cuDNN but not matmuls (the recording itself runs on CPU fake tensors)")
    g.add_argument("--optimizer-impl", choices=OPTIMIZER_IMPLS, default=None,
                   help="the optimizer's implementation: for-loop (a few kernels per parameter; the default off "
                   "CUDA), foreach (multi-tensor: a few per group; PyTorch's default on CUDA) or fused (one per group)")
    g.add_argument("--autocast", choices=tuple(AUTOCAST), default=None,
                   help="torch.autocast(\"cuda\", dtype) around forward and loss: matmuls and convolutions in bf16 or "
                   "f16 with the casts autocast inserts, reductions, softmax, norms and losses in f32 (CUDA's lists)")
    g.add_argument("--tf32-matmul", choices=("on", "off"), default=None,
                   help="torch.backends.cuda.matmul.allow_tf32 (PyTorch's default off; "
                   "torch.set_float32_matmul_precision('high') is on)")
    g.add_argument("--tf32-cudnn", choices=("on", "off"), default=None,
                   help="torch.backends.cudnn.allow_tf32 (PyTorch's default on)")
    g.add_argument("--cudnn-rnn", choices=("on", "off"), default=None,
                   help="LSTM/GRU layers as cuDNN's fused op, one forward and one backward (default: on with "
                   "--device cuda, else the per-gate ops)")
    g.add_argument("--cuda-graphs", action="store_true",
                   help="you capture the whole step in one CUDA graph and replay it (placer eval --host: one launch)")
    g.add_argument("--compile", choices=COMPILE_MODES, default=None,
                   help="you torch.compile the model in this mode (placer eval --host: one launch per compiled "
                   "kernel, or per CUDA graph with reduce-overhead)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--real", action="store_true", help="run on real CPU tensors instead of fake ones")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-batch", action="store_true",
                   help="write no batch information (records the step once instead of twice)")
    p.add_argument("--profile", action="store_true",
                   help="also run the real step under torch.profiler and write each op's measured time (and on CUDA "
                   "its dispatch time) into the graph; ops it cannot match keep roofline costs (docs/import.md)")
    p.add_argument("--profile-device", default=None,
                   help="device to profile on: cpu, cuda or cuda:N (default: cuda when there is one, else cpu)")
    p.add_argument("--profile-steps", type=int, default=5, help="profiled steps, after 3 warm-up steps (default 5)")
    p.add_argument("--cost-table", metavar="FILE", default=None,
                   help="with --profile: merge the measured op times into this cost table (created if absent), "
                   "which placer eval/search --cost-table reads")
    p.add_argument("-o", "--out", required=True, help="the placer graph (JSON); the meta file goes beside it")
    return command.run(p.parse_args(argv), zoo.MODELS)


if __name__ == "__main__":
    sys.exit(main())
