"""One inference step recorded as placer's op graph: the model in eval
mode, its forward under torch.no_grad() (and torch.autocast where the
execution says), then what the caller's loop computes from the output
(a loss, top-k accuracy), with no backward and no optimizer update.

It records with exporter.py's machinery (the same ATen recorder, fake
tensors, autocast's casts and module attribution) and writes the same
graph format, so `placer eval --graph` predicts it as it predicts a
training step: with --host, each op's issue on the host as eager PyTorch
dispatches it (a forward op's, evaluate/roofline's MeasuredIssue), the
step bound by the host where its kernels are small.

    from placer_torch.inference import export_inference_step
    export_inference_step(build_model, make_inputs, after=None, out="g.json",
                          execution={"device": "cuda", "autocast": "f16"})
"""

import contextlib

import torch

from placer_torch import exporter as ex


def export_inference_step(build_model, make_inputs, after=None, out=None, meta_out=None, name="model",
                          fake=True, seed=0, execution=None):
    """Records one inference step and returns (graph, meta) as dicts.

    build_model() returns the nn.Module (called under fake tensors when
    fake is true); make_inputs() returns (inputs, target), inputs a tensor
    or a tuple of tensors for the model. The model runs in eval mode under
    torch.no_grad(), under torch.autocast("cuda", dtype) where execution's
    autocast says; after(output, target), when given, is recorded after
    the forward under the same modes (what the loop computes from the
    output: a loss, accuracy; it must not read a tensor's value, which
    fake tensors cannot). execution is exporter.execution_settings' (its
    optimizer settings are not written: there is no update). The graph
    has no batch information (each batch is its own export) and no
    backward op; its parameters and buffers are state ops (Parameter,
    Buffer) holding their bytes, no gradient or optimizer state.
    """
    execution = ex.execution_settings(**(execution or {}))
    autocast = execution.get("autocast")
    torch.manual_seed(seed)
    x = ex.Exporter(fake and ex.FakeTensorMode is not None)
    fm = ex.FakeTensorMode() if x.fake else None
    if fm is not None:
        fm.__deepcopy__ = lambda memo: fm  # as exporter._record: a deep copy keeps the recording's mode
    x.fm = fm
    x.opt_name = ""
    with contextlib.ExitStack() as stack:
        if fm is not None:
            stack.enter_context(ex._quiet_fake_log())
            stack.enter_context(fm)
        model = build_model()
        model.eval()
        inputs, target = make_inputs()
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        x.phase = "input"
        for i, t in enumerate(list(inputs) + list(ex._tensors(target))):
            op = x.add_op("input%d" % i, "Input", "datamove", ex._DTYPES.get(t.dtype, "f32"), t.shape, "", "input")
            x.produce(op, t)
        x.phase = "parameter"
        params = []
        for n, p in model.named_parameters():
            mod = n.rsplit(".", 1)[0] if "." in n else ""
            op = x.add_op("param:" + n, "Parameter", "datamove", ex._DTYPES.get(p.dtype, "f32"), p.shape, mod,
                          "parameter", param_bytes=ex._nbytes(p), coloc=ex._group(mod), alias=True, param=n)
            x.produce(op, p)
            params.append({"name": n, "module": mod, "shape": list(p.shape), "dtype": ex._DTYPES.get(p.dtype, "f32"),
                           "bytes": ex._nbytes(p), "grad_bytes": 0, "state_bytes": 0, "slot_bytes": 0,
                           "op": x.ops[op]["name"]})
        buffers = []
        for n, b in model.named_buffers():
            mod = n.rsplit(".", 1)[0] if "." in n else ""
            op = x.add_op("buffer:" + n, "Buffer", "datamove", ex._DTYPES.get(b.dtype, "f32"), b.shape, mod, "buffer",
                          param_bytes=ex._nbytes(b), coloc=ex._group(mod), alias=True)
            x.produce(op, b)
            buffers.append({"name": n, "module": mod, "bytes": ex._nbytes(b)})
        pre, post = ex._module_hooks(x, model)
        x.phase = "forward"
        ac = ex.AUTOCAST[autocast or "off"]
        try:
            x.autocast = ex._Autocast(ac) if ac is not None else None
            with torch.no_grad(), (x.autocast or contextlib.nullcontext()), ex._cpu_autocast(ac), ex._Recorder(x):
                output = model(*inputs)
                if not isinstance(output, torch.Tensor) and hasattr(output, "logits"):
                    output = output.logits
                if isinstance(output, tuple):
                    output = output[0]
                if after is not None:
                    x.module_stack.append("")
                    x.call_stack.append(0)
                    after(output, target)
                    x.module_stack.pop()
                    x.call_stack.pop()
            x.autocast = None
        finally:
            for h in pre + post:
                h.remove()
    graph, meta = ex._assemble(x, name, params, buffers, model)
    graph = ex._with_execution(graph, execution, x)
    del graph["execution"]["optimizer"], graph["execution"]["optimizer_impl"]
    meta["execution"] = dict(execution)
    meta["inference"] = True
    meta["fake"] = bool(x.fake)
    if out is not None:
        ex._write_json(out, graph)
        ex._write_json(meta_out or ex._meta_path(out), meta)
    return graph, meta


def topk_accuracy(output, target, topk=(1, 5)):
    """The top-k accuracy (percent) of output against target for each k in
    topk, on the GPU: the computation image classifiers' validation loops
    run on each batch (top-k indices, transposed, compared with the
    targets, the first k rows counted and scaled), before the host reads
    the figures back with .item()."""
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    hit = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [hit[:k].float().sum().mul_(100.0 / target.size(0)) for k in topk]
