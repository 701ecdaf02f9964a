"""fp8.py on layers with biases and experts, on the CPU: which GEMMs of a
converted layer run in FP8 and which in the profile's dtype (read off
the ATen ops the layer's forward and backward dispatch, against lists
worked by hand), the experts' FP8 GEMM (torchao's rowwise scales rounded
to powers of 2) against FP32 within the bounds of test_fp8.py, its three
torch._scaled_grouped_mm calls against torch's own shape checks (meta
tensors: the GPU's path, which a CPU cannot run), and Transformer
Engine's path wired through a stand-in of its modules. Run by make
test-python-venv."""

import contextlib
import unittest
from unittest import mock

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from placer_torch.profile import fp8, layers

FWD, BWD = 2.0 ** -3, 2.0 ** -2

# A Qwen2-style layer (query, key and value biases) and a GPT-OSS-style
# one (every linear biased, 4 experts, top 2, one shared expert), 24
# tokens: each expert gets 24 x 2 / 4 = 12 token copies, padded to 16.
QWEN2 = {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 128, "vocab": 256, "seq": 24, "qkv_bias": 1}
OSS = {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 128, "vocab": 256, "seq": 24,
       "experts": 4, "topk": 2, "expert_ffn": 32, "shared": 1, "linear_bias": 1}

GEMMS = {"mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "_scaled_grouped_mm"}


class Gemms(TorchDispatchMode):
    """The GEMMs dispatched inside it: (op, first operand's shape, second's)."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in GEMMS:
            shapes = [tuple(a.shape) for a in args if isinstance(a, torch.Tensor)]
            if name in ("addmm", "baddbmm"):
                shapes = shapes[1:]  # the bias first
            self.ops.append((name,) + tuple(shapes[:2]))
        return func(*args, **(kwargs or {}))


def gemms(c):
    """The GEMMs of c's layer under --fp8 current on the CPU, forward and
    backward, each sorted."""
    _, maker, err = fp8.plan(["current"], torch.device("cpu"), c)
    assert err == "", err
    torch.manual_seed(0)
    block = maker("current")(c, layers.Shard())
    cos, sin = layers.rope_for(c)
    x = torch.randn(c["seq"], 1, c["hidden"], requires_grad=True)
    with Gemms() as f:
        y = block(x, cos, sin)
    with Gemms() as b:
        y.sum().backward()
    return sorted(f.ops), sorted(b.ops)


def linear(m, k, n):
    """A linear of m tokens, k in, n out in FP8: its forward, and its
    backward's grad_input and grad_weight."""
    fwd = [("_scaled_mm", (m, k), (k, n))]
    bwd = [("_scaled_mm", (m, n), (n, k)), ("_scaled_mm", (n, m), (m, k))]
    return fwd, bwd


def total(*parts):
    f, b = [], []
    for pf, pb in parts:
        f += pf
        b += pb
    return sorted(f), sorted(b)


@unittest.skipIf(fp8.torch_fp8(torch.device("cpu")), "this torch has no FP8 on the CPU")
class GemmListTest(unittest.TestCase):
    def test_biased_dense_layer(self):
        # 24 tokens; head 64/4 = 16; qkv (4 + 2 x 2) x 16 = 128 wide, its
        # bias added after; the attention core is SDPA's (no GEMM op).
        want = total(linear(24, 64, 128), linear(24, 64, 64), linear(24, 64, 256), linear(24, 128, 64))
        self.assertEqual(gemms(QWEN2), want)

    def test_moe_layer_with_biases(self):
        # The router stays in the profile's dtype (FP32 on a CPU): addmm
        # with its bias, its backward two mm. The experts: 12 copies each,
        # padded to 16, FC1 64 -> 2 x 32, FC2 32 -> 64, one _scaled_mm an
        # expert (no grouped kernel on a CPU); the shared expert's two
        # linears over the 24 tokens.
        router = ([("addmm", (24, 64), (64, 4))], [("mm", (24, 4), (4, 64)), ("mm", (4, 24), (24, 64))])
        experts = [linear(16, 64, 64), linear(16, 32, 64)] * 4
        want = total(linear(24, 64, 128), linear(24, 64, 64), router, *experts, linear(24, 64, 64), linear(24, 32, 64))
        self.assertEqual(gemms(OSS), want)

    def test_router_kept_every_other_linear_converted(self):
        _, maker, _ = fp8.plan(["current"], torch.device("cpu"), OSS)
        block = maker("current")(OSS, layers.Shard())
        kinds = {n: type(m).__module__ for n, m in block.named_modules() if isinstance(m, (nn.Linear, fp8.Linear))}
        self.assertEqual(kinds, {"qkv": fp8.__name__, "proj": fp8.__name__, "moe.router": "torch.nn.modules.linear",
                                 "moe.shared.0": fp8.__name__, "moe.shared.1": fp8.__name__})
        self.assertIsInstance(block.moe.fp8_fc, fp8.TorchExperts)
        self.assertFalse(block.moe.fp8_fc.grouped)


def grouped_errors(seed=0, E=3, R=16, K=64, N=48):
    """The experts' FP8 GEMM's forward, grad_input and grad_weight errors
    against FP32's, relative to the FP32 results' norms."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(E, R, K, generator=g, requires_grad=True)
    w = (torch.randn(E, K, N, generator=g) * K ** -0.5).requires_grad_()
    dy = torch.randn(E, R, N, generator=g)
    y = fp8._GroupedMatmul.apply(x, w, torch.float32, False)
    y.backward(dy)
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    r = torch.bmm(x2, w2)
    r.backward(dy)

    def rel(a, b):
        return ((a - b).norm() / b.norm()).item()
    return rel(y, r), rel(x.grad, x2.grad), rel(w.grad, w2.grad)


@unittest.skipIf(fp8.torch_fp8(torch.device("cpu")), "this torch has no FP8 on the CPU")
class GroupedTest(unittest.TestCase):
    def test_rowwise_power_of_two_by_hand(self):
        x = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
        bits, inv = fp8.quantize_along(x, -1)
        # Row 1: amax 2, 448 / 2 = 224, down to 128; row 2: amax 3,
        # 149.3, down to 128 too: every value exact in e4m3.
        self.assertEqual(bits.float().tolist(), [[128.0, -256.0], [64.0, 384.0]])
        self.assertEqual(inv.flatten().tolist(), [1 / 128, 1 / 128])
        # Across the rows (one scale a column): column 1 amax 1 -> 448 ->
        # 256; column 2 amax 3 -> 128.
        bits, inv = fp8.quantize_along(x, -2)
        self.assertEqual(inv.flatten().tolist(), [1 / 256, 1 / 128])
        self.assertEqual(bits.float().tolist(), [[256.0, -256.0], [128.0, 384.0]])

    def test_within_bounds(self):
        for seed in range(2):
            f, dx, dw = grouped_errors(seed)
            with self.subTest(seed=seed):
                # e4m3 throughout (the gradients too): the forward's bound
                # for each, and not FP32 passed through.
                self.assertLess(f, FWD)
                self.assertLess(dx, FWD)
                self.assertLess(dw, FWD)
                self.assertGreater(min(f, dx, dw), 2.0 ** -8)

    def test_wrong_scale_fails(self):
        right = fp8.pow2_floor
        for factor in (64.0, 2.0 ** -30):
            with self.subTest(factor=factor), mock.patch.object(fp8, "pow2_floor", lambda s, f=factor: right(s) * f):
                f, dx, dw = grouped_errors()
                self.assertGreater(f, FWD)
                self.assertGreater(dx, FWD)
                self.assertGreater(dw, FWD)

    def test_grouped_calls_pass_torchs_shape_checks(self):
        # The GPU's three torch._scaled_grouped_mm calls on meta tensors:
        # torch's meta function checks the operands', scales' and
        # offsets' shapes as the CUDA kernel takes them.
        E, R, K, N = 3, 32, 64, 48
        x = torch.empty(E, R, K, device="meta", dtype=torch.bfloat16, requires_grad=True)
        w = torch.empty(E, K, N, device="meta", requires_grad=True)
        y = fp8._GroupedMatmul.apply(x, w, torch.bfloat16, True)
        self.assertEqual((tuple(y.shape), y.dtype), ((E, R, N), torch.bfloat16))
        y.backward(torch.empty(E, R, N, device="meta", dtype=torch.bfloat16))
        self.assertEqual(tuple(x.grad.shape), (E, R, K))
        self.assertEqual((tuple(w.grad.shape), w.grad.dtype), ((E, K, N), torch.float32))

    def test_padding_rows_dropped(self):
        seen = []

        def fc(t):
            seen.append(tuple(t.shape))
            return t * 2
        xs = torch.randn(2, 12, 8)
        y = fp8.padded(fc, xs)
        self.assertEqual(seen, [(2, 16, 8)])
        self.assertTrue(torch.equal(y, xs * 2))

    def test_cpu_says_how_its_experts_run(self):
        why = fp8.torch_grouped(torch.device("cpu"))
        self.assertIn("torch._scaled_grouped_mm", why)
        self.assertNotIn("\n", why)
        framework, _, err = fp8.plan(["current"], torch.device("cpu"), OSS)
        self.assertEqual(err, "")
        self.assertIn("experts: one torch._scaled_mm per expert", framework)
        framework, _, _ = fp8.plan(["current"], torch.device("cpu"), QWEN2)
        self.assertNotIn("experts", framework)

    def test_bias_gradient_is_the_sum_of_grad_output(self):
        # The bias added after the FP8 GEMM in the output's dtype: its
        # gradient is grad_output summed over the tokens, exactly.
        torch.manual_seed(0)
        lin = fp8.Linear(nn.Linear(32, 16))
        x = torch.randn(5, 32)
        dy = torch.randn(5, 16)
        lin(x).backward(dy)
        self.assertTrue(torch.equal(lin.bias.grad, dy.sum(0)))


class FakeTE:
    """Transformer Engine's modules as fp8.py calls them, in plain
    PyTorch (a CPU has no TE): Linear, GroupedLinear (one linear a split
    of the input's rows) and an autocast that does nothing."""

    splits = []

    class Linear(nn.Linear):
        def __init__(self, i, o, bias=True, params_dtype=None):
            super().__init__(i, o, bias=bias, dtype=params_dtype)

    class GroupedLinear(nn.Module):
        def __init__(self, n, i, o, bias=True, params_dtype=None):
            super().__init__()
            self.lins = nn.ModuleList(nn.Linear(i, o, bias=bias, dtype=params_dtype) for _ in range(n))

        def forward(self, inp, m_splits):
            FakeTE.splits.append(list(m_splits))
            return torch.cat([lin(t) for lin, t in zip(self.lins, inp.split(m_splits))])

    @staticmethod
    def autocast(enabled=True, recipe=None):
        return contextlib.nullcontext()


class RefusalTest(unittest.TestCase):
    """What plan still refuses, each in one line: a recipe the device
    lacks, a device with no FP8, experts under a TE without
    GroupedLinear."""

    def test_refusals(self):
        cpu, cuda = torch.device("cpu"), torch.device("cuda", 0)
        no_grouped = type("OldTE", (), {"Linear": FakeTE.Linear})  # a TE without GroupedLinear
        te = {"transformer_engine": type("M", (), {"__version__": "1.0"})}
        cases = [
            # (recipes, device, model, the TE plan sees, the torch FP8 check's reason, the refusal)
            (["delayed"], cpu, OSS, None, "", "--fp8 delayed: measured only through Transformer Engine's DelayedScaling"),
            (["current", "blockwise"], cpu, QWEN2, None, "", "--fp8 blockwise: measured only through Transformer Engine's Float8BlockScaling"),
            (["current"], cpu, OSS, None, "torch 2.0 has no float8 dtypes or torch._scaled_mm",
             "--fp8: this device has no FP8: torch 2.0 has no float8 dtypes"),
            (["current"], cuda, OSS, no_grouped, "", "--fp8 with experts: this Transformer Engine has no GroupedLinear"),
            (["current"], cuda, QWEN2, no_grouped, "", ""),
            (["current"], cpu, OSS, None, "", ""),
        ]
        for recipes, dev, model, fake, torch_why, want in cases:
            with self.subTest(recipes=recipes, dev=dev.type, experts=bool(model.get("experts")), te=fake is not None), \
                    mock.patch.object(fp8, "te_module", lambda f=fake: (f, "" if f else "no GPU")), \
                    mock.patch.object(fp8, "te_refusal", lambda te, r: ""), \
                    mock.patch.object(fp8, "torch_fp8", lambda d, w=torch_why: w), \
                    mock.patch.dict("sys.modules", te):
                _, maker, err = fp8.plan(recipes, dev, model)
                if not want:
                    self.assertEqual(err, "")
                    self.assertIsNotNone(maker)
                    continue
                self.assertTrue(err.startswith(want), err)
                self.assertNotIn("\n", err)
                self.assertIsNone(maker)


class TEPathTest(unittest.TestCase):
    def test_te_block_with_experts_and_biases(self):
        FakeTE.splits = []
        torch.manual_seed(0)
        block = fp8._TEBlock(layers.Block(OSS, layers.Shard()), None, FakeTE)
        inner = block.inner
        self.assertIsInstance(inner.qkv, FakeTE.Linear)
        self.assertIsNotNone(inner.qkv.bias)
        self.assertIsInstance(inner.moe.shared[0], FakeTE.Linear)
        self.assertNotIsInstance(inner.moe.router, FakeTE.Linear)
        self.assertIsInstance(inner.moe.fp8_fc, fp8.TEExperts)
        self.assertIsNone(inner.moe.w1)
        self.assertIsNotNone(inner.moe.fp8_fc.fc1.lins[0].bias)
        self.assertIsNone(inner.moe.fp8_fc.fc2.lins[0].bias)
        cos, sin = layers.rope_for(OSS)
        y = block(torch.randn(24, 1, 64), cos, sin)
        y.sum().backward()
        # FC1 and FC2 over 4 experts of 12 copies each, padded to 16.
        self.assertEqual(FakeTE.splits, [[16] * 4, [16] * 4])
        self.assertTrue(all(p.grad is not None for p in block.parameters() if p.requires_grad))


if __name__ == "__main__":
    unittest.main()
