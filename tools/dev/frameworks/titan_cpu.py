"""torchtitan 0.2.2's own trainer on CPU processes with gloo (make
test-frameworks-run, tools/dev/frameworks/test_run.py; docs/frameworks.md).

    python -m torch.distributed.run --standalone --nproc-per-node N titan_cpu.py \\
        --job.config_file PLAN.toml --experimental.custom_import titan_cpu \\
        --model.name llama3_cpu --model.flavor placer_tiny \\
        --training.mixed_precision_param float32 ...

As the script: torchtitan's device bound to the CPU, then torchtitan's
own main (torchtitan.train.main(Trainer)). torchtitan binds its device
when it is imported (torchtitan.tools.utils: `device_type =
_get_available_device_type() or "cuda"`, which parallel_dims,
distributed.utils and components.metrics copy as they import; torchtitan's
package __init__ imports them), so before the job's custom_import can
run: on a machine without a GPU, torchtitan.train stops at
`torch.cuda.set_device`, "Found no NVIDIA driver on your system". Here
torchtitan is imported while torch's device query
(torch._utils._get_available_device_type, _get_device_module) answers
"cpu" and a device module that is torch.cpu plus the memory calls
torchtitan makes of a CUDA-like module; torch's query is restored after
the import. With device type "cpu" torchtitan's own init_distributed
picks gloo (torch's default backend for the CPU).

As the job's --experimental.custom_import (torchtitan's hook, imported
when the Trainer starts, before the train spec is looked up): registers
train specs (register_train_spec, torchtitan's extension point) that are
torchtitan's own with

  - FSDP's gradient reduction forced to plain sums
    (FSDPModule.set_force_sum_reduction_for_comms, after the model's own
    parallelize function): llama3 sets the gradient divide factor to 1.0
    (its loss is already over the global token count), which FSDP turns
    into a pre-multiplied sum, which gloo does not have ("RuntimeError:
    Cannot use ReduceOp.PREMUL_SUM with Gloo"); with the flag FSDP
    reduce-scatters with SUM and divides after (by 1);
  - no tokenizer and a synthetic token dataset (torchtitan's c4_test
    lives in its repository's tests/assets, not in the package, and its
    tokenizer is a Hugging Face download): sample i is seeded by i, step
    s's global batch of G samples is samples sG .. sG + G - 1, and
    data-parallel rank r of W reads the r-th G/W of them in order, so a
    step reads the same samples at every data-parallel degree (the
    unsplit run's included) and rank r's local batches are the unsplit
    run's micro-batches rA .. rA + A - 1 at the same local batch size
    (A = its accumulation steps: float8's per-tensor scales then see the
    same samples); through torchtitan's ParallelAwareDataloader;
  - every rank's logged loss and gradient norm written at full precision
    to {job.dump_folder}/placer_losses/rank{RANK}.json (a
    MetricsProcessor whose log records them first).

The specs: llama3_cpu (llama3's Transformer, pipelining, AdamW, loss;
its flavors plus placer_tiny) and qwen3_cpu (qwen3's, plus the mixture
of experts placer_tiny_moe).
"""

import dataclasses
import json
import os

import torch

from titan_device import Tokens, cpu_as_device


def _register():
    from torch.distributed.fsdp import FSDPModule

    from torchtitan.components.dataloader import ParallelAwareDataloader
    from torchtitan.components.metrics import MetricsProcessor
    from torchtitan.models import llama3
    from torchtitan.protocols.train_spec import get_train_spec, register_train_spec
    from torchtitan.tools.utils import device_type

    assert device_type == "cpu", "titan_cpu: torchtitan was imported before its device was bound (run titan_cpu.py, not torchtitan.train)"

    class Recorded(MetricsProcessor):
        def log(self, step, global_avg_loss, global_max_loss, grad_norm, extra_metrics=None):
            out = os.path.join(self.job_config.job.dump_folder, "placer_losses")
            os.makedirs(out, exist_ok=True)
            path = os.path.join(out, "rank%s.json" % os.environ.get("RANK", "0"))
            rows = []
            if os.path.exists(path):
                with open(path) as f:
                    rows = json.load(f)
            rows.append({"step": step, "loss": float(global_avg_loss), "grad_norm": float(grad_norm)})
            with open(path, "w") as f:
                json.dump(rows, f)
            return super().log(step, global_avg_loss, global_max_loss, grad_norm, extra_metrics=extra_metrics)

    def cpu_spec(spec, extra_flavors):
        flavors = dict(spec.model_args, **extra_flavors)

        def parallelize(model, parallel_dims, job_config):
            model = spec.parallelize_fn(model, parallel_dims, job_config)
            for m in model.modules():
                if isinstance(m, FSDPModule):
                    m.set_force_sum_reduction_for_comms(True)
            return model

        def build_dataloader(dp_world_size, dp_rank, tokenizer, job_config, **_):
            t = job_config.training
            glob = t.global_batch_size if t.global_batch_size > 0 else t.local_batch_size * dp_world_size
            data = Tokens(flavors[job_config.model.flavor].vocab_size, t.seq_len, glob // dp_world_size, dp_rank, dp_world_size)
            return ParallelAwareDataloader(data, dp_rank=dp_rank, dp_world_size=dp_world_size, batch_size=t.local_batch_size)

        return dataclasses.replace(spec, model_args=flavors, parallelize_fn=parallelize, build_tokenizer_fn=None,
                                   build_dataloader_fn=build_dataloader, build_validator_fn=None,
                                   build_metrics_processor_fn=lambda job_config, parallel_dims, model_args=None, tag=None:
                                   Recorded(job_config, parallel_dims, tag))

    # placer_tiny: llama3's debugmodel narrowed (64 wide, 4 layers, 4 heads,
    # 256 tokens) so that 4 processes start and step in seconds on 2 cores,
    # and 4 layers split into 2 stages x 2 virtual stages.
    register_train_spec("llama3_cpu", cpu_spec(get_train_spec("llama3"), {
        "placer_tiny": llama3.TransformerModelArgs(dim=64, n_layers=4, n_heads=4, vocab_size=256, rope_theta=500000)}))
    # placer_tiny_moe: qwen3's debugmodel_moe narrowed (64 wide, 2 layers, 4
    # experts of 64, 2 per token), for expert parallelism, which stops on
    # the CPU (docs/frameworks.md says where).
    qwen3 = get_train_spec("qwen3")
    moe = qwen3.model_args["debugmodel_moe"]
    register_train_spec("qwen3_cpu", cpu_spec(qwen3, {"placer_tiny_moe": dataclasses.replace(
        moe, vocab_size=256, head_dim=16, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, moe_inter_dim=64,
        moe_args=dataclasses.replace(moe.moe_args, num_experts=4, top_k=2))}))


if __name__ == "__main__":
    with cpu_as_device():
        import torchtitan.train
        import torchtitan.tools.utils

    assert torchtitan.tools.utils.device_type == "cpu"
    torchtitan.train.main(torchtitan.train.Trainer)
else:
    _register()
