"""The command line of the transformer plan runner (placer_torch.transformer:
tensor x pipeline x data parallelism of a tiny GPT; docs/torch-plan.md,
"Transformer plans"). torchplan.py runs a placer-transformer-plan the same
way.

That runner is a check of placer's arithmetic on CPU, where no real engine
(torchtitan, DeepSpeed, Megatron-LM) runs, not what a user trains with.

    python3 tools/dev/torchplan/megatron.py --plan gpt.plan.json [--check] [--seed N]
"""

import sys

from placer_torch import transformer
from placer_torch.torchplan import transformer_flags


def main(argv=None):
    a = transformer_flags(argv, "Run one training step of a placer transformer plan "
                                "(tensor x pipeline x data parallel GPT; docs/torch-plan.md).")
    return transformer.run(a.plan, a.check, a.seed)


if __name__ == "__main__":
    sys.exit(main())
