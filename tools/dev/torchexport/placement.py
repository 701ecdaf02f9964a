"""Apply a placer module map to an nn.Module (docs/import.md): the
functions are placer_torch.placement's (python/placer_torch); this file
keeps them where `placer export --to module-map`'s help names them.

    from placer_torch import placement   # python/placer_torch installed, or on PYTHONPATH
    placement.apply_module_map(model, "net.map.json")
"""

from placer_torch.placement import (add_transfer_hooks, apply_module_map, check_module_map,  # noqa: F401
                                    cuda_devices, load_module_map)
