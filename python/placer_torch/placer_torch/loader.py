"""What a command line names by MODULE:NAME: one rule for every command
of placer_torch (tools/dev/torchexport's --model, tools/dev/torchplan's --model
and --loss).

MODULE is a module on the import path with the current directory on it
(mymodel:SmallCNN for ./mymodel.py, package.module), or a file by its
path (path/to/file.py), loaded from there with its folder on the import
path for its own imports. The folder is appended to the import path
(sys.path), after the installed packages: a name that is both the user's
and an installed package's imports the installed one. NAME is an attribute of
it, dotted for a nested one (module:Class.build). No torch import.
"""

import importlib
import importlib.util
import os
import sys


class LoadError(ValueError):
    """A MODULE:NAME that names nothing loadable: one line, naming it."""


def import_spec(spec, flag, want="package.module:factory"):
    """(module, MODULE, NAME) of spec 'MODULE:NAME' given to flag: the
    module imported (or the file loaded), as the module docstring says.
    LoadError where spec is not MODULE:NAME (want says the form), the file
    is missing, or the import fails (its exception's first line)."""
    mod_name, sep, attr = spec.partition(":")
    if not sep or not mod_name or not attr:
        raise LoadError("%s %r: want %s" % (flag, spec, want))
    try:
        if mod_name.endswith(".py"):
            if not os.path.isfile(mod_name):
                raise LoadError("%s %r: no such file %s" % (flag, spec, mod_name))
            on_import_path(os.path.dirname(os.path.abspath(mod_name)))
            ms = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(mod_name))[0], mod_name)
            module = importlib.util.module_from_spec(ms)
            ms.loader.exec_module(module)
        else:
            on_import_path(os.getcwd())
            module = importlib.import_module(mod_name)
    except LoadError:
        raise
    except Exception as e:  # ImportError, or the module's own failure
        raise LoadError("%s %r: cannot import %s: %s: %s" % (flag, spec, mod_name, type(e).__name__,
                                                            str(e).splitlines()[0] if str(e) else ""))
    return module, mod_name, attr


def on_import_path(folder):
    """folder on the import path (appended; once) for the user's own
    modules, which placer_torch imports by name."""
    if folder not in sys.path:
        sys.path.append(folder)


def attribute(module, attr):
    """module's attribute attr (dotted: a nested one), or None where it
    has none."""
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj
