"""Apply a placer module map to an nn.Module (docs/import.md).

`placer export --to module-map` writes

    {"format": "placer-module-map", "version": 1, "graph": "mlp", "devices": 2,
     "modules": {"": 0, "fc1": 0, "fc2": 1},
     "pipeline": {"stages": [["", "fc1"], ["fc2"]], "split_points": {"fc2": "BEGINNING"}}}

"modules" maps each module path (fully qualified name; "" is the root) to a
device index. apply_module_map moves every module's own parameters and
buffers (not its children's: they have their own entries) to the torch
device its index stands for. "pipeline" is present when the placement is a
contiguous pipeline: split_points is the split_spec of
torch.distributed.pipelining (module path -> SplitPoint name).

A map need not be a pipeline: a module's children may sit on other devices
than the module. apply_module_map therefore also registers transfer hooks
(add_transfer_hooks): on every mapped module a forward pre-hook that moves
its tensor arguments to the module's device, and, on a module whose device
differs from its nearest mapped ancestor's, a forward hook that moves its
outputs back to that ancestor's device (the ancestor's own ops, such as a
residual add, read them there). The price is a round trip through the
ancestor's device for each module placed away from it; a contiguous
pipeline runs without it through placer_torch.apply_plan (placer export
--to torch-plan; tools/dev/torchplan is its command line).
"""

import json

import torch


def load_module_map(path):
    """Reads a module-map file and returns its "modules" dict."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") != "placer-module-map":
        raise ValueError("%s: not a placer module map (format %r)" % (path, doc.get("format")))
    return {k: int(v) for k, v in doc["modules"].items()}


def cuda_devices(k):
    """The default meaning of device index k: cuda:k."""
    return torch.device("cuda", k)


def _device(device_of, k):
    return torch.device(device_of[k]) if isinstance(device_of, dict) else torch.device(device_of(k))


def apply_module_map(model, module_map, device_of=cuda_devices, hooks=True):
    """Moves each mapped module's own parameters and buffers to
    device_of(index). module_map is a dict {path: index} or a file path.
    With hooks (the default), also registers the transfer hooks of
    add_transfer_hooks, so that the forward pass runs whatever the map.
    Returns the model. Modules the map does not name stay where they are;
    a path the model does not have is an error."""
    if isinstance(module_map, str):
        module_map = load_module_map(module_map)
    modules = dict(model.named_modules())
    for path, k in sorted(module_map.items()):
        if path not in modules:
            raise KeyError("module map names %r, which the model does not have" % path)
        mod = modules[path]
        dev = _device(device_of, k)
        with torch.no_grad():
            for name, p in list(mod._parameters.items()):
                if p is not None and p.device != dev:
                    mod._parameters[name] = torch.nn.Parameter(p.to(dev), requires_grad=p.requires_grad)
            for name, b in list(mod._buffers.items()):
                if b is not None and b.device != dev:
                    mod._buffers[name] = b.to(dev)
    if hooks:
        add_transfer_hooks(model, module_map, device_of)
    return model


def _to(value, dev):
    if isinstance(value, torch.Tensor):
        return value.to(dev)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
        return type(value)(*(_to(v, dev) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_to(v, dev) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, dev) for k, v in value.items()}
    return value


def add_transfer_hooks(model, module_map, device_of=cuda_devices):
    """Registers the hooks that make a module map run (see the module's
    doc): a forward pre-hook on every mapped module moving its tensor
    arguments (positional; torch 1.13's pre-hooks see no keyword
    arguments) to its device, and a forward hook moving the outputs of a
    module whose device differs from its nearest mapped ancestor's to that
    ancestor's device. Hooks registered earlier by this function are
    removed first. Returns the list of (module path, "pre" or "post",
    device) registered."""
    if isinstance(module_map, str):
        module_map = load_module_map(module_map)
    for h in getattr(model, "_placer_transfer_hooks", []):
        h.remove()
    modules = dict(model.named_modules())
    handles, registered = [], []
    for path, k in sorted(module_map.items()):
        mod = modules[path]
        dev = _device(device_of, k)

        def pre(_, args, dev=dev):
            return _to(args, dev)

        handles.append(mod.register_forward_pre_hook(pre))
        registered.append((path, "pre", str(dev)))
        up = path
        while up:
            up = up.rsplit(".", 1)[0] if "." in up else ""
            if up in module_map:
                break
        if path and up in module_map and _device(device_of, module_map[up]) != dev:
            back = _device(device_of, module_map[up])

            def post(_, args, out, back=back):
                return _to(out, back)

            handles.append(mod.register_forward_hook(post))
            registered.append((path, "post", str(back)))
    model._placer_transfer_hooks = handles
    return registered


def check_module_map(model, module_map, device_of=cuda_devices):
    """Returns the list of (module path, tensor name, device, wanted device)
    that are not where the map says; empty when every mapped module's own
    parameters and buffers are in place."""
    if isinstance(module_map, str):
        module_map = load_module_map(module_map)
    modules = dict(model.named_modules())
    bad = []
    for path, k in sorted(module_map.items()):
        mod = modules[path]
        want = _device(device_of, k)
        for name, t in list(mod._parameters.items()) + list(mod._buffers.items()):
            if t is not None and t.device != want:
                bad.append((path, name, str(t.device), str(want)))
    return bad
