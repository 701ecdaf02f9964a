"""The command line of the transformer plan runner (placer_torch.transformer:
tensor x pipeline x data parallelism of a tiny GPT; docs/torch-plan.md,
"Transformer plans"). torchplan.py hands a placer-transformer-plan here.

That runner is a check of placer's arithmetic on CPU, where no real engine
(torchtitan, DeepSpeed, Megatron-LM) runs, not what a user trains with.

    python3 tools/torchplan/megatron.py --plan gpt.plan.json [--check] [--seed N]
"""

import argparse
import sys


from placer_torch import transformer


def parse(argv, description):
    """A transformer plan runner's flags (this file's and experts.py's):
    --plan, --check, --seed; torchplan.py's module-plan options are
    ignored."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--plan", required=True, help="the plan (placer export --to torch-plan)")
    ap.add_argument("--check", action="store_true", help="compare loss and gradients with the unsplit model")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_known_args(argv)[0]


def main(argv=None):
    a = parse(argv, "Run one training step of a placer transformer plan "
                    "(tensor x pipeline x data parallel GPT; docs/torch-plan.md).")
    return transformer.run(a.plan, a.check, a.seed)


if __name__ == "__main__":
    sys.exit(main())
