"""placer profile --model's measurements (docs/profile.md, "Op graphs"):
the model's training step exported as a placer graph
(placer_torch.exporter), then run on the device, each profiled step
timed op by op (placer_torch.profiling.step_times). One JSON object a
line on stdout, which placer reads as they come (an interrupted run keeps
the steps it finished):

    {"kind": "meta", "dtype": ..., "device": {...}, "software": {...}}
    {"kind": "graph", "batch": B, "graph": {...the placer graph...}, "meta": {...its meta file...}}
    {"kind": "step", "ops": [[op index, seconds, dispatch seconds or -1], ...]}  (one a profiled step)

Progress on stderr. Its argument is one JSON object (placer's request):
model (a zoo name, package.module:factory, or a hub's id: torchvision:NAME,
timm:NAME, hf:PATH/config.json), input_shapes, batch, loss, optimizer, precision (fp32, tf32,
bf16), device (cpu, cuda), steps, warmup, seed.

    python -m placer_torch.opprofile '{"model": "mlp", "device": "cpu", ...}'
"""

import json
import os
import sys
import time

import torch

from . import exporter, profiling
from .exporter import UsageError
from .measuring import cpu_name, driver, emit, say

PRECISIONS = ("fp32", "tf32", "bf16")


def execution(precision, device):
    """The exporter's execution settings of a precision on device: fp32
    (TF32 off for matmuls and convolutions), tf32 (on for both), bf16
    (torch.autocast to bfloat16 over FP32 weights, TF32 as PyTorch's
    defaults)."""
    if precision not in PRECISIONS:
        raise UsageError("--precision %s: want one of %s" % (precision, ", ".join(PRECISIONS)))
    if device == "cpu" and precision != "fp32":
        raise UsageError("--precision %s: on a GPU (--device cuda); a CPU profile is fp32" % precision)
    kw = {"device": device}
    if precision == "fp32":
        kw.update(tf32_matmul=False, tf32_cudnn=False)
    elif precision == "tf32":
        kw.update(tf32_matmul=True, tf32_cudnn=True)
    else:
        kw.update(autocast="bf16")
    return exporter.execution_settings(**kw)


HUBS = ("torchvision", "timm", "hf")


def hub_spec(name, input_shapes, batch, loss):
    """(build, make_inputs, loss_fn, batch) of a model named by a hub's id,
    with random weights (nothing downloaded), or None for another name:
    torchvision:NAME (torchvision.models.get_model), timm:NAME
    (timm.create_model), hf:PATH (a Hugging Face config.json or its
    folder: AutoModelForCausalLM.from_config, else AutoModel). Inputs as
    --input-shape says, else an image batch (3,224,224) or 128 token ids
    (hf); the loss as a factory's (exporter's --loss)."""
    hub, _, ident = name.partition(":")
    if hub not in HUBS or not ident:
        return None
    try:
        if hub == "torchvision":
            import torchvision
            if ident not in torchvision.models.list_models():
                raise UsageError("--model %s: torchvision %s has no model %r" % (name, torchvision.__version__, ident))

            def factory():
                return torchvision.models.get_model(ident, weights=None)
            default = ["3,224,224"]
        elif hub == "timm":
            import timm
            if not timm.is_model(ident):
                raise UsageError("--model %s: timm %s has no model %r" % (name, timm.__version__, ident))

            def factory():
                return timm.create_model(ident, pretrained=False)
            default = ["3,224,224"]
        else:
            import transformers
            path = ident[:-len("config.json")] if ident.endswith("config.json") else ident
            if not os.path.exists(os.path.join(path or ".", "config.json")):
                raise UsageError("--model %s: no config.json at %s (hf: takes a local config; nothing is downloaded)" %
                                 (name, path or "."))
            cfg = transformers.AutoConfig.from_pretrained(path or ".")

            def factory():
                try:
                    return transformers.AutoModelForCausalLM.from_config(cfg)
                except ValueError:
                    return transformers.AutoModel.from_config(cfg)
            default = ["128:int64"]
    except ImportError as e:
        raise UsageError("--model %s: %s is not installed in this python (%s)" % (name, hub, e))
    shapes = [exporter.parse_input_shape(t) for t in (input_shapes or default)]
    b = batch or 1

    def make_inputs():
        xs = tuple(torch.randn(b, *sh).to(dt) if dt.is_floating_point else torch.zeros((b,) + sh, dtype=dt)
                   for sh, dt in shapes)
        return xs, None
    return factory, make_inputs, exporter._custom_loss(loss), b


def main(argv=None):
    req = json.loads((argv or sys.argv)[1])
    try:
        return run(req)
    except UsageError as e:
        # One line, which placer prints as its own (exit 2).
        sys.stderr.write("error: %s\n" % e)
        return 2


def run(req):
    from . import zoo

    device = req.get("device") or "auto"
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: torch %s sees no CUDA device" % torch.__version__)
    precision = req.get("precision") or ("bf16" if device == "cuda" else "fp32")
    ex = execution(precision, device)
    if device == "cpu" and req.get("threads"):
        torch.set_num_threads(req["threads"])
    spec = hub_spec(req["model"], req.get("input_shapes") or [], req.get("batch") or 0,
                    req.get("loss") or "cross-entropy")
    if spec is None:
        spec = exporter.model_spec(req["model"], req.get("input_shapes") or [], req.get("batch") or 0,
                                   req.get("loss") or "cross-entropy", zoo.MODELS)
    build, make_inputs, loss, batch = spec
    opt = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[req.get("optimizer") or "adam"]
    kw = {"lr": 1e-3}
    if opt is torch.optim.SGD:
        kw["momentum"] = 0.9
    cuda = device == "cuda"
    mem = torch.cuda.get_device_properties(0).total_memory if cuda else \
        os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    emit({"kind": "meta", "dtype": precision,
          "device": {"kind": device, "name": torch.cuda.get_device_name(0) if cuda else cpu_name(), "count": 1,
                     "memory_bytes": mem, "threads": 0 if cuda else torch.get_num_threads(),
                     "cores": os.cpu_count() or 0},
          "software": {"torch": torch.__version__, "framework": "pytorch",
                       "cuda": (torch.version.cuda or "") if cuda else "", "driver": driver() if cuda else ""}})
    start = time.monotonic()
    say("exporting %s at batch %d (%s)" % (req["model"], batch, precision))
    graph, meta = exporter.export_training_step(build, make_inputs, loss, opt, kw, None,
                                                name=req.get("name") or "model", seed=req.get("seed") or 0,
                                                batch_dim=0, execution=ex)
    say("exported %d ops in %.1f s" % (len(graph["ops"]), time.monotonic() - start))
    emit({"kind": "graph", "batch": batch, "graph": graph, "meta": meta})
    steps, warmup = req.get("steps") or 5, req.get("warmup", 3)
    say("timing %d steps on %s after %d warm-up steps" % (steps, device, warmup))
    start = time.monotonic()
    for k, times in enumerate(profiling.step_times(graph, build, make_inputs, loss, opt, kw, device=device, steps=steps,
                                                   warmup=warmup, seed=req.get("seed") or 0, execution=ex)):
        emit({"kind": "step", "ops": [[i, t, -1 if d is None else d] for i, (t, d) in sorted(times.items())]})
        say("step %d/%d: %d ops timed (%.1f s)" % (k + 1, steps, len(times), time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
