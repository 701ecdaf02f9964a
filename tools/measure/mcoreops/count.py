"""Count what Megatron-Core's MoE layer issues on the host, on a CPU.

Builds Megatron-Core 0.16.1's MoELayer (and, as the control, the dense
MLP and the whole TransformerLayer) through placer_torch's mcore.py, with
a model's real expert count, top k and router settings but a small
hidden width and few tokens, and counts per forward and per backward:
  - aten ops dispatched (a TorchDispatchMode: every op that reaches a
    backend kernel, views included);
  - autograd nodes the backward runs (walking grad_fn from the output);
  - Python function calls (sys.setprofile's "call" events), forward.
Each count is taken at two expert counts (E and E/2, the same top k and
tokens): SequentialMLP's loop over its local experts (experts.py,
SequentialMLP.forward) is exactly linear in them, so per expert =
(count(E) - count(E/2)) / (E/2) and per layer = count(E) - E x per expert.

Run: PYTHONPATH=python/placer_torch:$HOME/.cache/placer/megatron \
  $HOME/.cache/placer/torch-venv/bin/python tools/measure/mcoreops/count.py [--json]
"""

import argparse
import collections
import json
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# The models' MoE layers as their Megatron recipes set them (placer's
# presets, graph/transformer/presets.go; the router settings as
# workloads/export/plans/megatron_model.go writes them): Qwen3-30B-A3B 128
# experts top 8, softmax after the top k, aux_loss 1e-3; GPT-OSS 120B
# 128 experts top 4, no load-balancing loss, biases on the experts.
MODELS = {
    "qwen3-30b-a3b": dict(experts=128, topk=8, lb="aux_loss", aux=1e-3, bias=False),
    # GPT-OSS's biases are left off: with them SequentialMLP's expert
    # (mlp.py MLP.forward, "output += output_bias.unsqueeze(0) *
    # per_token_scale.unsqueeze(-1)") adds in place to the output of
    # _ReduceFromModelParallelRegion, which at one rank is its input
    # returned as is, and autograd refuses it (0.16.1, a CPU at TP 1).
    # They are per-expert ops (a multiply and an add forward).
    "gpt-oss-120b": dict(experts=128, topk=4, lb="none", aux=0.0, bias=False, glu=dict(
        activation_func_clamp_value=7.0, glu_linear_offset=1.0)),
}
HIDDEN, FFN, TOKENS = 64, 32, 256  # shrunk: kernels cost ~nothing


# Ops that make a view or an alias of their input's storage: no kernel
# on a GPU (ATen's view ops, native_functions.yaml).
VIEWS = {"view", "_unsafe_view", "t", "transpose", "permute", "expand", "slice", "select", "split", "split_with_sizes",
         "unsqueeze", "squeeze", "as_strided", "alias", "detach", "unbind", "reshape", "narrow", "chunk"}


class Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket.__name__)] += 1
        return func(*args, **(kwargs or {}))


def autograd_nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        n = todo.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        todo.extend(f for f, _ in n.next_functions)
    return collections.Counter(type(n).__name__ for n in seen)


def python_calls(fn):
    n = [0]

    def prof(frame, event, arg):
        if event == "call":
            n[0] += 1
    sys.setprofile(prof)
    try:
        out = fn()
    finally:
        sys.setprofile(None)
    return out, n[0]


def config(m, experts, dispatcher):
    from megatron.core.transformer.transformer_config import TransformerConfig
    import torch.nn.functional as F
    kw = dict(num_layers=1, hidden_size=HIDDEN, num_attention_heads=4, num_query_groups=2, kv_channels=16,
              ffn_hidden_size=FFN, gated_linear_unit=True, activation_func=F.silu, normalization="RMSNorm",
              layernorm_epsilon=1e-5, add_bias_linear=m["bias"], attention_dropout=0.0, hidden_dropout=0.0,
              use_cpu_initialization=True, gradient_accumulation_fusion=False, masked_softmax_fusion=False,
              bias_activation_fusion=False, bias_dropout_fusion=False, persist_layer_norm=False,
              apply_rope_fusion=False)
    if m.get("glu"):
        from megatron.core.fusions.fused_bias_geglu import quick_gelu
        kw.update(m["glu"], activation_func=quick_gelu)
    if experts:
        kw.update(num_moe_experts=experts, moe_router_topk=m["topk"], moe_ffn_hidden_size=FFN,
                  moe_token_dispatcher_type=dispatcher, moe_router_load_balancing_type=m["lb"],
                  moe_aux_loss_coeff=m["aux"], moe_grouped_gemm=False, moe_permute_fusion=False,
                  moe_router_fusion=False, expert_model_parallel_size=1, expert_tensor_parallel_size=1)
    return TransformerConfig(**kw)


class _Stream:
    """A stand-in for the CUDA stream and event the alltoall dispatcher
    copies its counts on (token_dispatcher.py, MoEAlltoAllTokenDispatcher.
    _maybe_dtoh_and_synchronize): on a CPU the copy is a plain one."""

    def wait_stream(self, s):
        pass

    def record_event(self):
        return self

    def synchronize(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def alltoall_cpu_shims():
    """The alltoall dispatcher on a CPU: its side stream is _Stream, the
    current stream the same one (so no record_stream on CPU tensors)."""
    from megatron.core.transformer.moe import token_dispatcher as td
    one = _Stream()
    td.MoEAlltoAllTokenDispatcher.cuda_dtoh_stream = one
    torch.cuda.current_stream = lambda *a, **k: one
    torch.cuda.stream = lambda s: s


def build(m, experts, dispatcher, whole):
    from megatron.core.models.gpt import gpt_layer_specs as s
    from megatron.core.transformer.spec_utils import build_module
    from placer_torch.profile import mcore
    mcore.no_te_shims()
    mcore.cpu_shims()
    alltoall_cpu_shims()
    cfg = config(m, experts, dispatcher)
    sp = s.get_gpt_layer_local_spec(num_experts=experts or None, moe_grouped_gemm=False, normalization="RMSNorm")
    pg = mcore.groups(None)
    if whole:
        return mcore.MCoreLayer(build_module(sp, config=cfg, layer_number=1, pg_collection=pg), cfg, 1, False)
    mlp = sp.submodules.mlp
    # layer_number as TransformerLayer passes it: the router logs its
    # aux loss to the tracker only with one (moe_utils.py
    # save_to_aux_losses_tracker).
    return build_module(mlp, config=cfg, pg_collection=pg, layer_number=1) if experts else build_module(mlp, config=cfg, tp_group=mcore.one_rank_group())


def count(m, experts, dispatcher, whole):
    torch.manual_seed(0)
    mod = build(m, experts, dispatcher, whole)
    x = torch.randn(TOKENS, 1, HIDDEN, requires_grad=True)
    run = lambda: mod(x)
    run()[0].sum().backward() if not whole else run().sum().backward()  # warm: lazy inits off the count
    with Ops() as f:
        y, calls = python_calls(run)
    y = y[0] if isinstance(y, tuple) else y
    nodes = autograd_nodes(y)
    loss = y.sum()
    for p in mod.parameters():  # the backward writes .grad afresh, as after zero_grad(set_to_none=True)
        p.grad = None
    with Ops() as b:
        loss.backward()
    return dict(fwd_ops=sum(f.ops.values()), bwd_ops=sum(b.ops.values()), bwd_nodes=sum(nodes.values()),
                fwd_py_calls=calls, fwd_by_op=dict(f.ops), bwd_by_op=dict(b.ops), nodes=dict(nodes))


def split(m, dispatcher, whole):
    E = m["experts"]
    a, h = count(m, E, dispatcher, whole), count(m, E // 2, dispatcher, whole)
    out = {}
    for k in ("fwd_ops", "bwd_ops", "bwd_nodes", "fwd_py_calls"):
        per = (a[k] - h[k]) / (E - E // 2)
        out[k] = dict(total=a[k], per_expert=per, per_layer=a[k] - E * per)
    for k in ("fwd_by_op", "bwd_by_op", "nodes"):
        per = {o: (a[k].get(o, 0) - h[k].get(o, 0)) / (E - E // 2) for o in set(a[k]) | set(h[k])}
        out[k] = {o: dict(per_expert=per[o], per_layer=a[k].get(o, 0) - E * per[o]) for o in per}
    for k in ("fwd", "bwd"):
        kern = {o: v for o, v in out[k + "_by_op"].items() if o not in VIEWS}
        out[k + "_kernels"] = dict(total=a[k + "_ops"] - sum(a[k + "_by_op"].get(o, 0) for o in VIEWS),
                                   per_expert=sum(v["per_expert"] for v in kern.values()),
                                   per_layer=sum(v["per_layer"] for v in kern.values()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dispatchers", default="allgather,alltoall")
    a = ap.parse_args()
    import torch.distributed as dist
    from placer_torch.profile import mcore
    mcore.one_rank_group()
    res = {}
    for name, m in MODELS.items():
        for d in a.dispatchers.split(","):
            try:
                res[f"{name} moe {d}"] = split(m, d, False)
            except Exception as e:  # a dispatcher that needs CUDA: said, not hidden
                res[f"{name} moe {d}"] = dict(error=f"{type(e).__name__}: {e}"[:300])
        res[f"{name} dense mlp"] = {k: dict(total=v) for k, v in count(m, 0, None, False).items() if not k.endswith("op") and k != "nodes"}
        res[f"{name} dense layer"] = {k: dict(total=v) for k, v in count(m, 0, None, True).items() if not k.endswith("op") and k != "nodes"}
    if a.json:
        json.dump(res, sys.stdout, indent=1)
        return
    for k, v in res.items():
        if "error" in v:
            print(f"{k}: {v['error']}")
            continue
        print(k + ": " + ", ".join(f"{q} " + "/".join(str(round(x, 2)) for x in w.values()) for q, w in v.items() if not q.endswith("by_op") and q != "nodes"))


if __name__ == "__main__":
    main()
