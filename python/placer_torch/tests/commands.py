"""What the tests run beside themselves: the placer binary and the
package's command lines in a child python.

PLACER names the binary (make sets it to the one it built), else
bin/placer of this checkout. command(name, ...) is python -m
placer_torch.NAME in the python that runs the tests, and env(...) the
environment that lets that child import this checkout's placer_torch
whichever python it is (the virtualenv's, where make venv-test installs the
package editable, or Debian's, where nothing installs it): PYTHONPATH is
python/placer_torch, then the folders given (a test's own models), then
the caller's PYTHONPATH."""

import os
import sys

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/placer_torch
ROOT = os.path.dirname(os.path.dirname(PACKAGE_ROOT))  # the repository
PLACER = os.environ.get("PLACER", os.path.join(ROOT, "bin", "placer"))


def command(name, *args):
    """python -m placer_torch.NAME ARGS in this python."""
    return [sys.executable, "-m", "placer_torch." + name] + list(args)


def env(*folders):
    """os.environ with PYTHONPATH: the package's folder, folders, then the
    caller's PYTHONPATH."""
    paths = [PACKAGE_ROOT] + list(folders) + [p for p in [os.environ.get("PYTHONPATH")] if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
