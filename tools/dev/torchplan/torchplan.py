"""Run a placer torch plan: pipeline stages x data-parallel replicas with
torch.distributed (docs/torch-plan.md).

The command python3 -m placer_torch.torchplan (python/placer_torch: its
flags, then placer_torch.torchplan.run, or for a placer-transformer-plan
placer_torch.transformer, with experts placer_torch.experts) run from a
checkout by path: this folder's placer_torch link finds the package,
nothing installed.

    python3 tools/dev/torchplan/torchplan.py --plan plan.json --model transformers:GPT2LMHeadModel \\
        --config n_layer=4,n_embd=32,n_head=2,vocab_size=64 --input input_ids=8:int:64 --target 8:int:64 --check
"""

import sys

from placer_torch.torchplan import main

if __name__ == "__main__":
    sys.exit(main())
