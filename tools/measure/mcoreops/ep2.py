"""Megatron-Core 0.16.1's MoE layer at expert degree 2 on 2 gloo
processes: the aten ops rank 0 dispatches per forward and backward,
split per local expert and per layer as count.py splits them (16 and
32 experts: 8 and 16 local), for the alltoall and allgather
dispatchers, each of count.MODELS' routers. What runs at EP 2
and not at EP 1: the counts' all-gather, the splits' sums, the
all-to-alls or gathers, sort_chunks_by_idxs.

On a CPU the alltoall dispatcher's split sizes are tensors where the
GPU's path hands numpy arrays (token_dispatcher.py
_maybe_dtoh_and_synchronize, maybe_move_tensor_to_cpu as_numpy on
CUDA tensors): gloo's all_to_all_single wants lists, so they are made
numpy arrays here, as the GPU's path makes them, and lists for gloo
(a .tolist() of a tensor shows as _local_scalar_dense ops, a CPU
artefact, left out of the kernels below with the allocations).

Run: PYTHONPATH=python/placer_torch:$HOME/.cache/placer/megatron \
  $HOME/.cache/placer/torch-venv/bin/python tools/measure/mcoreops/ep2.py [PORT]
"""
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
# Not kernels: allocations, and the split sizes' .tolist() (above).
SKIP = {"empty", "new_empty", "_local_scalar_dense"}

def run(rank, name, E, d, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[1] if len(sys.argv) > 1 else "29517")
    dist.init_process_group("gloo", rank=rank, world_size=2)
    import count
    from placer_torch.profile import mcore
    from megatron.core import parallel_state
    from megatron.core.process_groups_config import ProcessGroupCollection
    from megatron.core.models.gpt import gpt_layer_specs as s
    from megatron.core.transformer.spec_utils import build_module
    mcore.no_te_shims(); mcore.cpu_shims(); count.alltoall_cpu_shims()
    a2a = dist.all_to_all_single
    lst = lambda v: v.tolist() if hasattr(v, "tolist") else v
    def a2a_lists(out, inp, output_split_sizes=None, input_split_sizes=None, **k):
        return a2a(out, inp, output_split_sizes=lst(output_split_sizes), input_split_sizes=lst(input_split_sizes), **k)
    torch.distributed.all_to_all_single = a2a_lists
    # The splits as the GPU's path hands them: numpy arrays
    # (moe_utils.maybe_move_tensor_to_cpu(as_numpy=True) on a CUDA
    # tensor), so that mappings.py's sum(output_split_sizes) is numpy's
    # and not aten adds (its .to("cpu") copy is then not counted: one
    # _to_copy per split on a GPU).
    from megatron.core.transformer.moe import token_dispatcher as td
    mv = td.maybe_move_tensor_to_cpu
    td.maybe_move_tensor_to_cpu = lambda t, as_numpy=False, record_stream=False: (
        t.detach().numpy() if as_numpy and torch.is_tensor(t) else mv(t, as_numpy, record_stream))
    if parallel_state._GLOBAL_MEMORY_BUFFER is None:
        parallel_state._set_global_memory_buffer()
    world = dist.group.WORLD
    one = dist.new_group([rank], use_local_synchronization=True)
    pg = ProcessGroupCollection(tp=one, cp=one, pp=one, tp_cp=one, ep=world, expt_tp=one, tp_ep=world, expt_dp=one, dp=one, dp_cp=one, tp_dp_cp=one)
    m = count.MODELS[name]
    cfg = count.config(m, E, d)
    cfg.expert_model_parallel_size = 2
    sp = s.get_gpt_layer_local_spec(num_experts=E, moe_grouped_gemm=False, normalization="RMSNorm")
    torch.manual_seed(0)
    mod = build_module(sp.submodules.mlp, config=cfg, pg_collection=pg, layer_number=1)
    x = torch.randn(count.TOKENS, 1, count.HIDDEN, requires_grad=True)
    mod(x)[0].sum().backward()
    with count.Ops() as f:
        y = mod(x)[0]
    for p in mod.parameters(): p.grad = None
    with count.Ops() as b:
        y.sum().backward()
    if rank == 0:
        q.put((dict(f.ops), dict(b.ops)))

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    import count
    for name in count.MODELS:
        out = {}
        for E in (16, 32):
            for d in ("alltoall", "allgather"):
                q = ctx.Queue()
                mp.spawn(run, args=(name, E, d, q), nprocs=2)
                out[f"{E} {d}"] = q.get()
        for d in ("alltoall", "allgather"):
            (fa, ba), (fb, bb) = out[f"16 {d}"], out[f"32 {d}"]
            for what, A, B in (("fwd", fa, fb), ("bwd", ba, bb)):
                # 16 experts: 8 local; 32: 16 local
                per = {o: (B.get(o, 0) - A.get(o, 0)) / 8 for o in set(A) | set(B)}
                lay = {o: A.get(o, 0) - 8 * per[o] for o in per}
                k = {o: v for o, v in lay.items() if v and o not in count.VIEWS and o not in SKIP}
                print(name, d, what, "per layer kernels", sum(k.values()), "per local expert",
                      sum(v for o, v in per.items() if o not in count.VIEWS and o not in SKIP), sorted(k.items()))
