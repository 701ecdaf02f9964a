"""The export command (tools/torchexport/torchexport.py, a thin command
line on this module: docs/import.md) once its flags are parsed: the
model from the zoo or the user's factory, its training step exported with
placer_torch.exporter (and with --profile measured by
placer_torch.profiling), the graph and its meta file written, one line
printed."""

import os
import sys
import time

import torch

from . import profiling
from .exporter import (_SDPA, DataDependentError, FakeRefusedError, SettingError, UsageError, _meta_path,
                       _write_json, export_training_step, model_spec)
from .semantics import export_line


def _check_out(flag, path):
    """Raise UsageError unless a file can be written at path (its folder
    exists and takes a new file, and path is not a folder), in placer's
    words (atomicfile.CheckFile)."""
    if os.path.isdir(path):
        raise UsageError("%s %s: is a folder" % (flag, path))
    folder = os.path.dirname(path) or "."
    if not os.path.exists(folder):
        raise UsageError("%s %s: folder %s does not exist" % (flag, path, folder))
    if not os.path.isdir(folder):
        raise UsageError("%s %s: %s is not a folder" % (flag, path, folder))
    if not os.access(folder, os.W_OK):
        raise UsageError("%s %s: cannot write in %s: permission denied" % (flag, path, folder))


def run(a, zoo_models):
    """The command line's export, its flags parsed (a: an argparse.Namespace
    of tools/torchexport/torchexport.py's flags); zoo_models the models
    --model names without a colon (python/placer_torch/placer_torch/zoo.py's MODELS).
    Returns the exit status: bad input is one line on stderr and 2, a step
    that reads a tensor's value under --data-dependent fail 1."""
    try:
        # The files it writes, before any work: a typo costs nothing.
        _check_out("-o", a.out)
        if a.cost_table:
            _check_out("--cost-table", a.cost_table)
        if a.batch < 0:
            raise UsageError("--batch %d: want a positive size" % a.batch)
        if a.profile_steps < 1:
            raise UsageError("--profile-steps %d: want at least 1" % a.profile_steps)
        if (a.cost_table or a.profile_device) and not a.profile:
            raise UsageError("--cost-table and --profile-device need --profile")
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

