"""The command line of the runner of transformer plans with experts
(placer_torch.experts: data x expert parallelism of a tiny GPT whose MLPs
are mixtures of experts; docs/torch-plan.md, "Experts"). torchplan.py
hands a placer-transformer-plan with experts here.

That runner is a check of placer's arithmetic on CPU, where no real engine
(torchtitan, DeepSpeed, Megatron-LM) runs, not what a user trains with.

    python3 tools/torchplan/experts.py --plan moe.plan.json [--check] [--seed N]
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

import megatron  # the flags
from placer_torch import experts


def main(argv=None):
    a = megatron.parse(argv, "Run one training step of a placer transformer plan with experts "
                             "(data x expert parallel; docs/torch-plan.md).")
    return experts.run(a.plan, a.check, a.seed)


if __name__ == "__main__":
    sys.exit(main())
