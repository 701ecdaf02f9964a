"""count.py's split of Megatron-Core's MoE layer into per-expert and
per-layer ops, on a CPU where megatron-core 0.16.1 is installed (make
venv-megatron; PLACER_MEGATRON names its folder), skipped otherwise.

The per-expert kernels are read from megatron-core 0.16.1's
transformer/mlp.py MLP.forward, which SequentialMLP (moe/experts.py)
runs once an expert, with the CPU's unfused activation (config's
bias_activation_fusion False) and a SwiGLU without biases. Forward, 6:
linear_fc1's mm, glu()'s silu, its "x_linear + glu_linear_offset" add,
their product, the per_token_scale (routing probability) multiply,
linear_fc2's mm (chunk, unsqueeze, the weight's t and the views make
no kernel). Backward, 11: each linear's data and weight gradient (4
mm), each product's two operand gradients (4 mul), silu_backward, the
chunk's backward (a cat) and the probabilities' gradient summed over
the hidden width (a sum).
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MEGATRON = os.environ.get("PLACER_MEGATRON") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "placer", "megatron")
PY = os.environ.get("PLACER_TORCH_PY") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "placer", "torch-venv", "bin", "python")


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python", "placer_torch"), MEGATRON, HERE])
    return e


def have_mcore():
    """Whether PY and megatron-core's MoE layer are there: files looked
    for, not imported (a python importing torch and megatron-core to find
    it cost 3 to 5 CPU s). An install that is there but does not import
    fails the test below rather than skipping it."""
    return os.path.exists(PY) and os.path.isfile(os.path.join(MEGATRON, "megatron", "core", "transformer", "moe",
                                                              "moe_layer.py"))


# Qwen3-30B-A3B's router (top 8 of E, aux_loss) at E = 16 and E = 32
# (two splits: 16 against 8, 32 against 16) in a process of its own
# (the CPU shims patch torch.cuda for the process).
SCRIPT = r"""
import json, count
from placer_torch.profile import mcore
mcore.one_rank_group()
out = {}
for E in (16, 32):
    m = dict(count.MODELS["qwen3-30b-a3b"], experts=E)
    for d in ("allgather", "alltoall"):
        s = count.split(m, d, False)
        out["%d %s" % (E, d)] = {k: s[k] for k in ("fwd_kernels", "bwd_kernels", "fwd_ops", "bwd_ops", "bwd_nodes")}
for d in ("allgather", "alltoall"):
    m = dict(count.MODELS["qwen3-30b-a3b"], experts=16, lb="none", aux=0.0)
    s = count.split(m, d, False)
    out["16 %s none" % d] = {k: s[k] for k in ("fwd_kernels", "bwd_kernels")}
print(json.dumps(out))
"""


@unittest.skipUnless(have_mcore(), "megatron-core is not installed (make venv-megatron)")
class CountTest(unittest.TestCase):
    def test_split(self):
        r = subprocess.run([PY, "-c", SCRIPT], env=env(), capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        got = json.loads(r.stdout.splitlines()[-1])
        for d in ("allgather", "alltoall"):
            a, b = got["16 " + d], got["32 " + d]
            self.assertEqual((a["fwd_kernels"]["per_expert"], a["bwd_kernels"]["per_expert"]), (6, 11), (d, a))
            # The per-layer part does not depend on the expert count:
            # the loop is all that grows with it.
            # The balancing loss unfused (moe_router_fusion off; megatron-
            # core 0.16.1 moe_utils.py): compute_routing_scores_for_aux_loss's
            # softmax, topk, zeros_like, .int(), scatter, .bool();
            # get_tokens_per_expert_and_token_count's sum;
            # switch_load_balancing_loss_func's sum over the tokens, product
            # with the counts, sum, scalar factor; attach_and_log's
            # loss / coeff: 12 forward. Backward: MoEAuxLossAutoScaler's
            # ones_like and multiply, the scalar factor's and the product's
            # multiplies, the sum's expand (no kernel) into the softmax's
            # backward, and its add to the router's gradient: 6.
            n = got["16 %s none" % d]
            self.assertEqual((a["fwd_kernels"]["per_layer"] - n["fwd_kernels"]["per_layer"],
                              a["bwd_kernels"]["per_layer"] - n["bwd_kernels"]["per_layer"]), (12, 6), (d, a, n))
            for k in a:
                self.assertEqual(a[k]["per_layer"], b[k]["per_layer"], (d, k, a[k], b[k]))
                self.assertEqual(a[k]["per_expert"], b[k]["per_expert"], (d, k, a[k], b[k]))


if __name__ == "__main__":
    unittest.main()
