"""The command line of the runner of transformer plans with experts
(placer_torch.experts: data x expert parallelism of a tiny GPT whose MLPs
are mixtures of experts; docs/torch-plan.md, "Experts"). torchplan.py
runs a placer-transformer-plan with experts the same way.

That runner is a check of placer's arithmetic on CPU, where no real engine
(torchtitan, DeepSpeed, Megatron-LM) runs, not what a user trains with.

    python3 tools/dev/torchplan/experts.py --plan moe.plan.json [--check] [--seed N]
"""

import sys

from placer_torch import experts
from placer_torch.torchplan import transformer_flags


def main(argv=None):
    a = transformer_flags(argv, "Run one training step of a placer transformer plan with experts "
                                "(data x expert parallel; docs/torch-plan.md).")
    return experts.run(a.plan, a.check, a.seed)


if __name__ == "__main__":
    sys.exit(main())
