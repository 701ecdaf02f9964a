"""Apply a placer module map to an nn.Module (docs/import.md): the
functions are placer_torch.placement's (python/placer_torch); this file
keeps them where `placer export --to module-map`'s help names them.

    import sys; sys.path.insert(0, "tools/torchexport")
    import placement
    placement.apply_module_map(model, "net.map.json")
"""

import os
import sys

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python",
                       "placer_torch")
if PACKAGE not in sys.path:
    sys.path.insert(0, PACKAGE)

from placer_torch.placement import (add_transfer_hooks, apply_module_map, check_module_map,  # noqa: E402,F401
                                    cuda_devices, load_module_map)
