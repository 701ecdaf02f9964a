"""A child Python process that runs one of placer_torch's modules
(python -m placer_torch.X) and imports the same placer_torch as its
parent, wherever that one lies: a checkout, an editable install, the
temporary folder the placer binary unpacks it to. No torch import."""

import os
import sys

# The folder that holds the package placer_torch (python/placer_torch in
# a checkout).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def env(base=None):
    """base (default os.environ) with ROOT first on PYTHONPATH."""
    e = dict(os.environ if base is None else base)
    e["PYTHONPATH"] = os.pathsep.join([ROOT] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    return e


def command(module, *args):
    """The command line that runs module (placer_torch.profile.runs) under
    this Python with args."""
    return [sys.executable, "-m", module] + list(args)
