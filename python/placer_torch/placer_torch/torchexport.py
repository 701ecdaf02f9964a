"""The export command (docs/import.md): main parses its flags and run
exports the model from the zoo or the user's factory, its training step
recorded by placer_torch.exporter (and with --profile measured by
placer_torch.profiling), the graph and its meta file written, one line
printed.

    python3 -m placer_torch.torchexport --model resnet50 --batch 32 -o resnet50.json

(placer_torch installed, pip install -e python/placer_torch, or
python/placer_torch on PYTHONPATH); tools/dev/torchexport/torchexport.py is
the same command from a checkout."""

import argparse
import os
import sys
import time

# Only modules without torch here: main checks the flags (exportflags)
# before run imports torch, the exporter and the zoo.
from .exportflags import (ATTENTION, AUTOCAST_NAMES, COMPILE_MODES, LOSSES, OPTIMIZER_IMPLS, ZOO_MODELS, UsageError,
                          check_flags)
from .semantics import export_line


def run(a, zoo_models):
    """The command line's export, its flags parsed (a: an argparse.Namespace
    of main's flags); zoo_models the models --model names without a colon
    (zoo.MODELS).
    Returns the exit status: bad input is one line on stderr and 2, a step
    that reads a tensor's value under --data-dependent fail 1."""
    import torch

    from . import profiling
    from .exporter import (_SDPA, DataDependentError, FakeRefusedError, SettingError, _meta_path, _write_json,
                           export_training_step, model_spec)
    try:
        # The files it writes, before any work: a typo costs nothing.
        check_flags(a, zoo_models)
        pdev = a.profile_device or ("cuda" if torch.cuda.is_available() else "cpu")
        if a.profile and pdev.startswith("cuda") and not torch.cuda.is_available():
            raise UsageError("--profile-device %s: torch %s sees no CUDA device" % (pdev, torch.__version__))
        build, make_inputs, loss, batch = model_spec(a.model, a.input_shape, a.batch, a.loss, zoo_models)
        opt = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[a.optimizer]
        kw = {"lr": a.lr}
        if a.optimizer == "sgd":
            kw["momentum"] = 0.9
        execution = None
        onoff = {"on": True, "off": False, None: None}
        if any(v is not None for v in (a.device, a.optimizer_impl, a.autocast, a.tf32_matmul, a.tf32_cudnn,
                                       a.cudnn_rnn, a.compile)) or a.cuda_graphs:
            execution = dict(device=a.device, optimizer_impl=a.optimizer_impl, autocast=a.autocast,
                             tf32_matmul=onoff[a.tf32_matmul], tf32_cudnn=onoff[a.tf32_cudnn],
                             cudnn_rnn=onoff[a.cudnn_rnn], cuda_graphs=a.cuda_graphs, compile=a.compile)
        start = time.monotonic()
        if a.attention == "fused" and _SDPA is None:
            raise UsageError("--attention fused needs torch 2.0 or later: torch %s has no "
                             "scaled_dot_product_attention (its attention is the math path)" % torch.__version__)
        graph, meta = export_training_step(build, make_inputs, loss, opt, kw, None if a.profile else a.out,
                                           name=os.path.splitext(os.path.basename(a.out))[0], fake=not a.real,
                                           seed=a.seed, batch_dim=None if a.no_batch else 0, attention=a.attention,
                                           data_dependent=a.data_dependent, execution=execution)
        if a.profile:
            matched, unmatched, dev, measured = profiling.profile_step(graph, meta, build, make_inputs, loss, opt, kw,
                                                                       device=pdev, steps=a.profile_steps,
                                                                       seed=a.seed, execution=meta.get("execution"))
            _write_json(a.out, graph)
            _write_json(_meta_path(a.out), meta)
            print("profiled %d steps on %s: %d ops measured, %d unmatched (they keep roofline costs)" % (
                a.profile_steps, dev, matched, unmatched))
            if a.cost_table:
                n = profiling.merge_cost_table(a.cost_table, dev, measured)
                print("%s: %d entries" % (a.cost_table, n))
    except (UsageError, SettingError) as e:
        print("torchexport: %s" % e, file=sys.stderr)
        return 2
    except (DataDependentError, FakeRefusedError) as e:
        print("torchexport: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:  # a write that failed after the check (disk full, a folder removed)
        print("torchexport: %s: %s" % (e.filename or a.out, e.strerror or e), file=sys.stderr)
        return 1
    line = export_line(meta.get("train_mode"))
    if line:
        print("torchexport: warning: %s" % line, file=sys.stderr)
    flops = sum(o.get("flops", 0) for o in graph["ops"])
    print("%s: %d ops, %d tensors, %.2f GFLOPs, %d parameter bytes, batch %d, %s attention, exported in %.1f s" % (
        a.out, len(graph["ops"]), len(graph["tensors"]), flops / 1e9, meta["param_bytes"], batch,
        meta["attention"] + (" (math with dropout, as a CPU runs it)" if meta["attention"] == "fused" and
                             a.device == "cpu" else ""), time.monotonic() - start))
    return 0


def main(argv=None):
    """The command line: its flags parsed and checked without torch
    (exportflags: a typo costs no import of torch), then run. Returns the
    exit status."""
    models = ", ".join(sorted(ZOO_MODELS))
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
    p.add_argument("--loss", default="cross-entropy", choices=LOSSES,
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
    g.add_argument("--autocast", choices=AUTOCAST_NAMES, default=None,
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
    a = p.parse_args(argv)
    try:
        check_flags(a, ZOO_MODELS)
    except UsageError as e:
        print("torchexport: %s" % e, file=sys.stderr)
        return 2
    from . import zoo
    return run(a, zoo.MODELS)



if __name__ == "__main__":
    # Run as python -m placer_torch.torchexport: the module's own import,
    # not this __main__ copy, so that what it defines keeps its name
    # (placer_torch.torchexport) wherever it is pickled or compared.
    from placer_torch import torchexport
    sys.exit(torchexport.main())
