"""torchtitan 0.3.0's own trainer (torchtitan.train.main) on CPU processes
with gloo: what a user without a GPU adds to run placer's --to torchtitan
module (make test-frameworks-run, tools/dev/frameworks/test_run.py;
docs/frameworks.md).

    python -m torch.distributed.run --standalone --nproc-per-node N titan03_cpu.py \\
        --module plan --config placer_plan [torchtitan.train's overrides ...]

takes torchtitan.train's arguments and runs its main, with four changes
and nothing else (no installed file is edited):

  - the device: torchtitan imported inside titan_device.cpu_as_device(),
    so that it binds "cpu" (and gloo) where it would bind "cuda" (0.2's
    --experimental.custom_import, which titan_cpu.py used, is gone in
    0.3, and the config module is imported after torchtitan binds);
  - attention: every FlexAttention (and VarlenAttention) of the model's
    config replaced by torchtitan's ScaledDotProductAttention, which is
    causal: on torch 2.14 FlexAttention's backward stops on the CPU
    ("NotImplementedError: FlexAttention does not support backward on
    CPU"), and with no "positions" in the batch (below) the trainer
    builds no masks for SDPA (FlexAttention without them stops at
    "attention_masks must be instance of BlockMask");
  - FSDP's gradient reduction as plain sums: llama3's parallelize sets
    FSDP's gradient divide factor to 1.0 (the loss is already over the
    global token count), which FSDP2 reduces as a pre-multiplied sum,
    which gloo has not ("Cannot use ReduceOp.PREMUL_SUM with Gloo");
    the model spec's parallelize function is llama3's followed by
    FSDPModule.set_force_sum_reduction_for_comms(True) on every FSDP
    module, as torchtitan's own enable_fsdp_symm_mem does
    (distributed/fsdp.py);
  - data without a tokenizer: torchtitan's c4_test is in its
    repository's tests/assets, not in the wheel, and its tokenizer is a
    Hugging Face download. The tokenizer is none (its vocabulary is the
    model's), and the data set synthetic: sample i is seq_len + 1 tokens
    seeded by i, step s's global batch of G samples is samples
    sG .. sG + G - 1, and data-parallel rank r of W reads the r-th G/W
    of them in order, so every data-parallel degree, the one-process
    run's included, sees the same samples each step;

and one for the tests: every rank's logged loss and gradient norm written
at full precision to {dump_folder}/placer_losses/rank{RANK}.json (a
MetricsProcessor whose log records them first).

The changes are made to the parsed Trainer.Config (ConfigManager's
parse_args, wrapped in this process), after the config function and the
command line's overrides.
"""

import dataclasses
import json
import os

import torch

from titan_device import Tokens, cpu_as_device


def on_cpu(config):
    """config (a parsed Trainer.Config) changed to run on CPU processes:
    SDPA attention, FSDP's sum reduction, no tokenizer, synthetic data,
    and the losses recorded."""
    from torch.distributed.fsdp import FSDPModule

    from torchtitan.components.dataloader import ParallelAwareDataloader
    from torchtitan.components.metrics import MetricsProcessor
    from torchtitan.components.tokenizer import BaseTokenizer
    from torchtitan.models.common.attention import FlexAttention, ScaledDotProductAttention, VarlenAttention

    spec = config.model_spec
    if spec is None:
        raise SystemExit("titan03_cpu: the config function set no model_spec")
    for cls in (FlexAttention.Config, VarlenAttention.Config):
        for _, _, parent, attr in list(spec.model.traverse(cls)):
            if isinstance(parent, list):
                parent[attr] = ScaledDotProductAttention.Config()
            else:
                setattr(parent, attr, ScaledDotProductAttention.Config())

    own = spec.parallelize_fn

    def parallelize(model, *args, **kwargs):
        model = own(model, *args, **kwargs)
        for m in model.modules():
            if isinstance(m, FSDPModule):
                m.set_force_sum_reduction_for_comms(True)
        return model

    config.model_spec = dataclasses.replace(spec, parallelize_fn=parallelize)

    class Synthetic(ParallelAwareDataloader):
        @dataclasses.dataclass(kw_only=True, slots=True)
        class Config(ParallelAwareDataloader.Config):
            vocab_size: int = 0
            global_batch_size: int = 0

        def __init__(self, config, *, dp_world_size, dp_rank, seq_len, local_batch_size, **_):
            data = Tokens(config.vocab_size, seq_len, config.global_batch_size // dp_world_size, dp_rank, dp_world_size)
            super().__init__(data, dp_rank=dp_rank, dp_world_size=dp_world_size, batch_size=local_batch_size)

    class NoTokenizer(BaseTokenizer):
        @dataclasses.dataclass(kw_only=True, slots=True)
        class Config(BaseTokenizer.Config):
            vocab_size: int = 0

        def __init__(self, config, **_):
            super().__init__()
            self.vocab_size = config.vocab_size

        def encode(self, *args, **kwargs):
            raise NotImplementedError("titan03_cpu: no tokenizer (synthetic tokens)")

        def decode(self, *args, **kwargs):
            raise NotImplementedError("titan03_cpu: no tokenizer (synthetic tokens)")

        def get_vocab_size(self):
            return self.vocab_size

    class Recorded(MetricsProcessor):
        @dataclasses.dataclass(kw_only=True, slots=True)
        class Config(MetricsProcessor.Config):
            pass

        def __init__(self, config, *, dump_folder="./outputs", **kwargs):
            super().__init__(config, dump_folder=dump_folder, **kwargs)
            self.placer_out = os.path.join(dump_folder, "placer_losses")

        def log(self, step, global_avg_loss, global_max_loss, grad_norm, extra_metrics=None):
            os.makedirs(self.placer_out, exist_ok=True)
            path = os.path.join(self.placer_out, "rank%s.json" % os.environ.get("RANK", "0"))
            rows = []
            if os.path.exists(path):
                with open(path) as f:
                    rows = json.load(f)
            rows.append({"step": step, "loss": float(global_avg_loss), "grad_norm": float(grad_norm)})
            with open(path + ".tmp", "w") as f:
                json.dump(rows, f)
            os.replace(path + ".tmp", path)
            return super().log(step, global_avg_loss, global_max_loss, grad_norm, extra_metrics=extra_metrics)

    vocab = spec.model.vocab_size
    t = config.training
    glob = t.global_batch_size
    if glob <= 0:
        raise SystemExit("titan03_cpu: training.global_batch_size must be set (placer's modules set it)")
    config.tokenizer = NoTokenizer.Config(vocab_size=vocab)
    config.dataloader = Synthetic.Config(vocab_size=vocab, global_batch_size=glob)
    config.metrics = Recorded.Config(**{f.name: getattr(config.metrics, f.name) for f in dataclasses.fields(MetricsProcessor.Config)})
    return config


def main():
    with cpu_as_device():
        import torchtitan.train
        import torchtitan.tools.utils
        from torchtitan.config import ConfigManager

    assert torchtitan.tools.utils.device_type == "cpu", torchtitan.tools.utils.device_type
    parse = ConfigManager.parse_args

    def parse_on_cpu(self, args=None):
        return on_cpu(parse(self, args))

    ConfigManager.parse_args = parse_on_cpu
    torchtitan.train.main()


if __name__ == "__main__":
    main()
