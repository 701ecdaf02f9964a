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
"""

from .plan import PlanError, load_plan, module_stages
from .runner import Placed, RankDied, apply_plan, schedule_order, launch, free_port

__all__ = ["PlanError", "load_plan", "module_stages", "Placed", "RankDied", "apply_plan", "schedule_order",
           "launch", "free_port"]
