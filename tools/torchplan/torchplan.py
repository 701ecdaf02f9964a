"""Run a placer torch plan: pipeline stages x data-parallel replicas with
torch.distributed (docs/torch-plan.md).

A thin command line on placer_torch (python/placer_torch): its flags, then
placer_torch.torchplan.run, which starts the plan's R x S processes on
this machine (gloo, or nccl with CUDA), builds the model in each from the
same seed, places it with placer_torch.apply_plan and runs one step of a
random batch; --check also runs the unsplit model's step and compares the
loss and every gradient (exit 1 beyond rtol 1e-5, atol 1e-6). A
placer-transformer-plan goes to megatron.py, or with experts to
experts.py.

    python3 tools/torchplan/torchplan.py --plan plan.json --model transformers:GPT2LMHeadModel \\
        --config n_layer=4,n_embd=32,n_head=2,vocab_size=64 --input input_ids=8:int:64 --target 8:int:64 --check
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

from placer_torch import torchplan as command
from placer_torch.plan import is_experts_plan, is_transformer_plan


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run one training step of a placer torch plan (docs/torch-plan.md).")
    ap.add_argument("--plan", required=True, help="the plan (placer export --to torch-plan)")
    ap.add_argument("--model", help="module:callable that builds the model (torchvision.models:resnet18, "
                    "transformers:GPT2LMHeadModel, timm:vit_tiny_patch16_224)")
    ap.add_argument("--config", default="", help="key=value,... passed to the model's builder (or its config class)")
    ap.add_argument("--input", action="append", default=[],
                    help="[name=]D1,D2,...[:float|:int:HIGH]: one sample's shape of a forward input (repeat; "
                         "name=: a keyword argument); default 3,224,224")
    ap.add_argument("--target", default="", help="the target's spec, as --input (default: --classes labels)")
    ap.add_argument("--classes", type=int, default=1000, help="classes of the random targets")
    ap.add_argument("--tokens", default="", help="VOCAB,SEQ: token inputs and targets (language models)")
    ap.add_argument("--loss", default="cross-entropy", help="cross-entropy, mse or module:callable(output, target)")
    ap.add_argument("--batch", type=int, default=0, help="global batch (default: the plan's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=("train", "eval"), default="train")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                    help="the step's precision: float64 tells a split that is wrong from float32 rounding (a model "
                         "with random weights whose activations grow through it: the zoo's inception_v3)")
    ap.add_argument("--check", action="store_true",
                    help="compare the loss and every gradient with the unsplit model's step (exit 1 beyond rtol "
                         "1e-5, atol 1e-6)")
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plan")
    plan_path = pre.parse_known_args(argv)[0].plan
    if is_transformer_plan(plan_path):  # a transformer in 3D parallelism
        with open(plan_path) as f:
            has_experts = is_experts_plan(json.load(f))
        if has_experts:  # with experts: data x expert parallel (experts.py)
            import experts
            return experts.main(argv)
        import megatron
        return megatron.main(argv)
    return command.run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
