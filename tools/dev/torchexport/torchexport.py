"""Export one PyTorch training step as a placer graph (docs/import.md).

The command python3 -m placer_torch.torchexport (python/placer_torch:
its flags, the export with placer_torch.exporter and, with --profile, the
measurements of placer_torch.profiling) run from a checkout by path: this
folder's placer_torch link finds the package, nothing installed. The zoo's
models (placer_torch.zoo) are named by --model without a colon.

    python3 tools/dev/torchexport/torchexport.py --model resnet50 --batch 32 -o resnet50.json
    python3 tools/dev/torchexport/torchexport.py --model mypkg.models:build --input-shape 3,224,224 --batch 32 -o m.json

The exporter's functions are placer_torch.exporter's; importing this file
as the module torchexport still reaches them (torchexport.export_training_step,
torchexport.model_spec).
"""

import sys

from placer_torch.torchexport import main


def __getattr__(name):
    """torchexport.X for the exporter's X (placer_torch.exporter), imported
    on first use: main checks its flags before torch is imported."""
    from placer_torch import exporter
    try:
        return getattr(exporter, name)
    except AttributeError:
        raise AttributeError("module %r has no attribute %r" % (__name__, name)) from None


if __name__ == "__main__":
    sys.exit(main())
