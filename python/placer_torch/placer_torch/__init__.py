"""placer_torch: run a placer torch plan (docs/torch-plan.md) in your own
training loop.

    placed = placer_torch.apply_plan(model, plan, loss_fn, example_inputs=(x,))
    opt = placed.optimizer(torch.optim.AdamW, lr=1e-3)
    for x, y in data:                      # this replica's batch, on every rank
        loss = placed.schedule.step(x, target=y)
        opt.step(); opt.zero_grad()

torch.distributed must be initialised with the plan's R x S ranks
(rank = replica * S + stage). Tested with torch 2.14.1 and 1.13 (FSDP2
needs torch 2.4 or later).

The package holds every runner and the exporter, with their command
lines (python -m placer_torch.torchplan, python -m placer_torch.torchexport;
tools/dev/torchplan and tools/dev/torchexport run them from a checkout;
docs/torch-plan.md):

    plan, runner, check   a placer-torch-plan read, run (apply_plan) and
                          checked against the unsplit model
    torchplan             the torch-plan command: its flags, its step
    transformer, experts  the hand-written tensor/pipeline/data and expert
                          runners of a placer-transformer-plan: a check of
                          placer's arithmetic on CPU, where no real engine
                          (torchtitan, DeepSpeed, Megatron-LM) runs, not a
                          trainer
    exporter, profiling   a training step as a placer graph
                          (docs/import.md), and its ops' measured times
    torchexport           the export command: its flags, its export
    placement             apply_module_map: a placer module map on one
                          process
    semantics             the modules whose train-mode result a plan
                          changes (batch statistics, random draws), as
                          the runner and the exporter find them
    collectives           tensor, sequence and expert parallelism's
                          collectives with autograd, which the
                          transformer and experts runners and
                          profile.layers share
    zoo                   the zoo's models (--model NAME)
    opprofile, profile    placer profile's measurements (--model's ops;
                          --workload's layers and collectives, and the
                          CPU loops that check their predictions), with
                          measuring (their lines to placer) and child
                          (a child python on this package)

Importing placer_torch imports plan only (no torch); runner, and torch
with it, is imported on the first use of one of its names here
(placer_torch.apply_plan; PEP 562's module __getattr__, Python 3.7): the
command lines (python -m placer_torch.torchexport) then check their flags
before torch's import, about 2 CPU s, runs.
"""

from .plan import PlanError, load_plan, module_stages

_RUNNER = ("Placed", "RankDied", "apply_plan", "schedule_order", "launch", "free_port")


def __getattr__(name):
    """placer_torch.NAME for runner's names (_RUNNER), imported on first
    use."""
    if name in _RUNNER:
        from . import runner
        return getattr(runner, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = ["PlanError", "load_plan", "module_stages", "Placed", "RankDied", "apply_plan", "schedule_order",
           "launch", "free_port"]
