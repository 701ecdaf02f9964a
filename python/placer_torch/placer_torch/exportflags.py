"""The export command's flag values and the checks that need no torch
(docs/import.md): torchexport parses and checks its flags with this module
alone, so that a typo, a bad output path or an unknown zoo model is one
line on stderr before `import torch` (about 2 CPU s) runs. The exporter
(placer_torch.exporter) and the zoo (placer_torch.zoo) take their names
from here: one definition each."""

import os

# The zoo's models (placer_torch.zoo.MODELS, in this order), by name.
ZOO_MODELS = ("mlp", "cnn", "resnet50", "inception_v3", "vit_b_16", "regnet_y_1_6gf", "bert_base", "gpt2_small")
# --loss for a model of the user's (exporter._custom_loss).
LOSSES = ("cross-entropy", "mse", "sum")
# --attention: scaled_dot_product_attention as one fused op or the math path.
ATTENTION = ("fused", "math")
# --autocast: off, bf16, f16 (exporter.AUTOCAST maps them to torch's dtypes).
AUTOCAST_NAMES = ("off", "bf16", "f16")
# --compile: torch.compile's modes.
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune")
# --optimizer-impl: the optimizer's implementation.
OPTIMIZER_IMPLS = ("for-loop", "foreach", "fused")


class UsageError(Exception):
    """Bad input on the command line: main prints it as one line."""


def check_out(flag, path):
    """Raise UsageError unless a file can be written at path (its folder
    exists and takes a new file, and path is not a folder), in placer's
    words (atomicfile.CheckFile)."""
    if os.path.isdir(path):
        raise UsageError("%s %s: is a folder" % (flag, path))
    folder = os.path.dirname(path) or "."
    if not os.path.exists(folder):
        raise UsageError("%s %s: folder %s does not exist" % (flag, path, folder))
    if not os.path.isdir(folder):
        raise UsageError("%s %s: %s is not a folder" % (flag, path, folder))
    if not os.access(folder, os.W_OK):
        raise UsageError("%s %s: cannot write in %s: permission denied" % (flag, path, folder))


def check_zoo_name(name, zoo_names):
    """Raise UsageError where name (--model without a colon) is none of
    zoo_names."""
    if ":" not in name and name not in zoo_names:
        raise UsageError("--model %r: not a zoo model (%s) nor package.module:factory" % (
            name, ", ".join(sorted(zoo_names))))


def check_flags(a, zoo_names):
    """The export's flags that need no torch (a: torchexport's parsed
    flags): the files it writes, sizes, flags that need --profile, the zoo
    model's name. Raises UsageError on the first that is wrong."""
    check_out("-o", a.out)
    if a.cost_table:
        check_out("--cost-table", a.cost_table)
    if a.batch < 0:
        raise UsageError("--batch %d: want a positive size" % a.batch)
    if a.profile_steps < 1:
        raise UsageError("--profile-steps %d: want at least 1" % a.profile_steps)
    if (a.cost_table or a.profile_device) and not a.profile:
        raise UsageError("--cost-table and --profile-device need --profile")
    check_zoo_name(a.model, zoo_names)
