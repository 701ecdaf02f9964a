"""DeepSpeed 0.19.8 training placer's exported plan on CPU processes with
gloo (make test-frameworks-run; docs/frameworks.md), and the unsplit
model's steps to compare it with.

    python -m torch.distributed.run --nproc-per-node N ds_run.py CONFIG.json OUT.json [PIPELINE.py]
    python ds_run.py --unsplit BATCH OUT.json

The model is a tiny one of the plan's shape: the module paths of the
zoo's BERT (tok, pos, layers.0 .. layers.11, norm, head; the plans of
tools/dev/frameworks/test_exports.py), 32 wide, 2 heads, 64-wide FFN, 128
tokens, 16 positions, no dropout, the same weights in every process
(seeded). Its pos adds the position embeddings to its input, so that its
modules run one after the other and the exported module's
stage_layers(model) is its pipeline. Sample i of the data is 16 tokens
seeded by i; step s's global batch is samples sB .. sB + B - 1.

With PIPELINE (the exported _pipeline.py) the engine is DeepSpeed's
PipelineEngine of pipeline_module(stage_layers(model), loss_fn=...),
stepped with engine.train_batch (its 1F1B, TrainSchedule); without, the
model is DeepSpeed's engine (ZeRO as CONFIG says) stepped by hand:
engine(ids), engine.backward(loss), engine.step() per micro-batch. The
optimizer is torch's SGD (lr 0.5), whose step shows a gradient's scale
(Adam's first step would not); ZeRO takes it with
"zero_allow_untested_optimizer": true, the one key added to the
exported configuration. OUT.json: [loss of step 1, loss of step 2] (the
mean over the global batch, as DeepSpeed reports it) from global rank 0
(the pipeline's from its last stage, broadcast by DeepSpeed).

DeepSpeed runs on its CPU accelerator (DS_ACCELERATOR=cpu; no
intel_extension_for_pytorch: 0.19's CPU accelerator needs none, and its
communication backend falls back to gloo without oneCCL) with
deepspeed.init_distributed(dist_backend="gloo"). Its communication
wrapper builds a shared-memory all-reduce op when it starts (a C++
build with ninja, about 30 s, cached under ~/.cache/torch_extensions)
that only its inference all-reduce uses: the module
deepspeed.comm.torch's build_shm_op answers None here.
"""

import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, SEQ, WIDTH, HEADS, FFN, LAYERS, LR = 128, 16, 32, 2, 64, 12, 0.5


class Positions(nn.Embedding):
    """The zoo model's pos embedding as a layer: h + pos(0 .. seq-1)."""

    def forward(self, h):
        return h + super().forward(torch.arange(h.shape[1]))


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = Positions(SEQ, WIDTH)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(WIDTH, HEADS, FFN, dropout=0.0, activation="gelu", batch_first=True)
                                    for _ in range(LAYERS))
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, ids):
        h = self.pos(self.tok(ids))
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h))


def loss_fn(logits, labels):
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


def samples(first, n):
    ids, labels = [], []
    for i in range(first, first + n):
        t = torch.randint(0, VOCAB, (SEQ + 1,), generator=torch.Generator().manual_seed(2000 + i))
        ids.append(t[:-1])
        labels.append(t[1:])
    return torch.stack(ids), torch.stack(labels)


def unsplit(batch, out):
    model = Tiny()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(2):
        ids, labels = samples(step * batch, batch)
        loss = loss_fn(model(ids), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with open(out, "w") as f:
        json.dump(losses, f)


def run(config_path, out, pipeline=None):
    import deepspeed

    # deepspeed.comm.torch the module (the package's name torch is torch itself)
    sys.modules["deepspeed.comm.torch"].build_shm_op = lambda: None
    deepspeed.init_distributed(dist_backend="gloo")
    with open(config_path) as f:
        config = json.load(f)
    B, M, A = config["train_batch_size"], config["train_micro_batch_size_per_gpu"], config["gradient_accumulation_steps"]
    model = Tiny()
    losses = []
    if pipeline:
        import importlib.util

        spec = importlib.util.spec_from_file_location("placer_ds_pipeline", pipeline)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        net = mod.pipeline_module(mod.stage_layers(model), loss_fn=loss_fn)
        engine, _, _, _ = deepspeed.initialize(model=net, config=config, optimizer=torch.optim.SGD(net.parameters(), lr=LR))
        R, r = engine.dp_world_size, engine.grid.get_data_parallel_rank()
        for step in range(2):
            # replica r's micro-batches: its B/R samples of the step, M at a time
            first = step * B + r * (B // R)
            it = iter([samples(first + k * M, M) for k in range(A)])
            losses.append(engine.train_batch(it).item())
    else:
        config["zero_allow_untested_optimizer"] = True
        engine, _, _, _ = deepspeed.initialize(model=model, config=config, optimizer=torch.optim.SGD(model.parameters(), lr=LR))
        R, r = engine.dp_world_size, torch.distributed.get_rank()
        for step in range(2):
            first = step * B + r * (B // R)
            total = torch.zeros(())
            for k in range(A):
                ids, labels = samples(first + k * M, M)
                loss = loss_fn(engine(ids), labels)
                engine.backward(loss)
                engine.step()
                total += loss.detach() / A
            torch.distributed.all_reduce(total)
            losses.append((total / R).item())
    if torch.distributed.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(losses, f)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1] == "--unsplit":
        unsplit(int(sys.argv[2]), sys.argv[3])
    else:
        run(*sys.argv[1:])
