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


def apply_module_map(model, module_map, device_of=cuda_devices):
    """Moves each mapped module's own parameters and buffers to
    device_of(index). module_map is a dict {path: index} or a file path.
    Returns the model. Modules the map does not name stay where they are;
    a path the model does not have is an error."""
    if isinstance(module_map, str):
        module_map = load_module_map(module_map)
    modules = dict(model.named_modules())
    for path, k in sorted(module_map.items()):
        if path not in modules:
            raise KeyError("module map names %r, which the model does not have" % path)
        mod = modules[path]
        dev = torch.device(device_of(k)) if not isinstance(device_of, dict) else torch.device(device_of[k])
        with torch.no_grad():
            for name, p in list(mod._parameters.items()):
                if p is not None and p.device != dev:
                    mod._parameters[name] = torch.nn.Parameter(p.to(dev), requires_grad=p.requires_grad)
            for name, b in list(mod._buffers.items()):
                if b is not None and b.device != dev:
                    mod._buffers[name] = b.to(dev)
    return model


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
        want = torch.device(device_of(k)) if not isinstance(device_of, dict) else torch.device(device_of[k])
        for name, t in list(mod._parameters.items()) + list(mod._buffers.items()):
            if t is not None and t.device != want:
                bad.append((path, name, str(t.device), str(want)))
    return bad
