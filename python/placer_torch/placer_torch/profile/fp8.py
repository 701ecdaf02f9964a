"""FP8 linears for placer profile --fp8 RECIPE (docs/profile.md, "FP8").

A layer under an FP8 recipe is layers.py's Block with its four linears
(qkv, proj, gate_up, down) run as the user's framework runs them:

- Transformer Engine importable and the GPU able to run FP8 (its own
  check): each linear a transformer_engine.pytorch.Linear of the same
  shape, the layer's forward under TE's autocast (fp8_autocast in a TE
  without it) with the recipe's object (transformer_engine.common.recipe: DelayedScaling,
  Float8CurrentScaling, Float8BlockScaling; their defaults);
- otherwise the path torchtitan takes through torchao's Float8Linear
  with its default tensorwise recipe, built here (no torchao needed):
  each GEMM's operands cast to FP8 with one scale a tensor from the
  tensor's current amax (dynamic scaling), the GEMM by torch._scaled_mm
  in a higher-precision output. The forward's input and weight are
  e4m3, the backward's grad_output e5m2 (torchao/float8/config.py,
  Float8LinearConfig.__post_init__: input and weight default to e4m3,
  grad_output to e5m2); the scale is e4m3's (or e5m2's) largest finite
  value over the amax, clamped below at 1e-12 (float8_utils.amax_to_scale),
  the scaled tensor clamped to the finite range before the cast (its
  to_fp8_saturated). As torchao's autograd function does, the forward
  keeps the high-precision input and weight and the backward casts them
  again for its two GEMMs (grad_input = grad_output @ weight, grad_weight
  = grad_output^T @ input), so every amax, scale and cast kernel of the
  three GEMMs is inside the timed loop. Only current scaling: a delayed
  or blockwise recipe without Transformer Engine is refused (plan).

Which GEMMs run in FP8 (convert): every linear of the block but the
router's (Megatron-Core's TopKRouter.gating runs its own
router_gating_linear outside Transformer Engine, in the input's dtype or
FP32: NVIDIA/Megatron-LM core_v0.16.0 3bec9aa,
megatron/core/transformer/moe/router.py), so the attention's projections
(latent attention's too), the MLP's, the shared experts' and the
experts' GEMMs; the attention core, the norms, the rotary embedding, the
router's softmax and top-k and the activation stay in the profile's dtype.

A linear's bias: Transformer Engine passes it to the FP8 GEMM, added in
cuBLAS's epilogue in BF16 (transformer_engine/pytorch/module/linear.py,
_Linear.forward, v2.9 70f5366: "cuBLAS does not support FP8 GEMM with
FP32 bias, so we cast to BF16"), its gradient fused into the cast of
grad_output (the backward's bgrad_quantize); torchao adds it after the
FP8 GEMM in the output's dtype (torchao/float8/float8_linear.py,
Float8Linear.forward, v0.18.0-rc1-48 36027d8: output + bias.to(output.dtype)),
which Linear here does. A row-parallel linear's bias (layers.py's
proj_bias, down_bias, the experts' w2_bias) is added after the reduction
in either.

The experts (layers.Experts.fc, FC1 and FC2 of every local expert):
- Transformer Engine's GroupedLinear, as Megatron-Core's TEGroupedMLP
  runs them (core_v0.16.0 experts.py): one GEMM per local expert, each
  with its own quantizers (one scale per expert's input and weight:
  tex.split_quantize of the input by m_splits), the bias in the grouped
  GEMM's epilogue (grouped_linear.py, _GroupedLinear.forward, v2.9);
  each expert's tokens padded to a multiple of 16 first (TEGroupedMLP's
  Fp8Padding; 16 for per-tensor and block scaling, fp8_padding.py v2.9);
- without it, torchao's FP8 grouped GEMM as torchtitan converts the
  experts (Float8GroupedMMConverter, torchtitan v0.2.2 73a0e69,
  torchtitan/components/quantization/float8.py: "dynamic float8
  rowwise quantization + scaled grouped GEMMs", token groups padded to
  16): torchao/prototype/moe_training/fp8_grouped_mm.py
  (_Float8GroupedMM, 36027d8): e4m3 for every operand, gradients
  included; scales from the current amax rounded down to a power of 2,
  one a token of the input (rowwise) and one an output column of each
  expert's weight; backward grad_input with one a token of grad_output
  and one an input column of each expert's weight, grad_weight with one
  a column of each expert's grad_output and of its input over that
  expert's tokens; all three by torch._scaled_grouped_mm, fast
  accumulation on (grouped). Where _scaled_grouped_mm does not run (a
  CPU; a GPU that torch's FP8 grouped kernel does not take) the same
  casts and scales feed one torch._scaled_mm per expert, and the
  profile's software.fp8 says so (experts_note).
"""

import torch
from torch import nn

E4M3 = getattr(torch, "float8_e4m3fn", None)
E5M2 = getattr(torch, "float8_e5m2", None)
EPS = 1e-12


def scale_for(amax, dtype):
    """The factor that maps amax onto dtype's largest finite value (FP32)."""
    return (torch.finfo(dtype).max / amax.float().clamp(min=EPS)).float()


def quantize(x, dtype, scale=None):
    """x in dtype with one scale for the whole tensor (from its amax now,
    unless scale is given): the FP8 bits and the inverse scale that
    _scaled_mm multiplies back."""
    if scale is None:
        scale = scale_for(x.detach().abs().amax(), dtype)
    top = torch.finfo(dtype).max
    bits = (x.float() * scale).clamp(-top, top).to(dtype)
    return bits, scale.reciprocal()


def _col(t):
    """t laid out column-major (what _scaled_mm's second operand needs on
    a GPU): the same values, its transpose made contiguous."""
    return t.t().contiguous().t()


class _Matmul(torch.autograd.Function):
    """x [M, K] @ w[N, K]^T in FP8, current (tensorwise) scaling."""

    @staticmethod
    def forward(ctx, x, w, out_dtype):
        xq, xs = quantize(x, E4M3)
        wq, ws = quantize(w, E4M3)
        ctx.save_for_backward(x, w)
        # torchao's default: fast accumulation for the output's GEMM,
        # not the gradients' (Float8LinearConfig's gemm_config_*).
        return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=out_dtype, use_fast_accum=True)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gq, gs = quantize(g, E5M2)
        wq, ws = quantize(w, E4M3)
        dx = torch._scaled_mm(gq, _col(wq), scale_a=gs, scale_b=ws, out_dtype=x.dtype)
        xq, xs = quantize(x, E4M3)
        dw = torch._scaled_mm(gq.t().contiguous(), _col(xq), scale_a=gs, scale_b=xs, out_dtype=w.dtype)
        return dx, dw, None


def fp8_linear(x, w):
    """F.linear(x, w) (no bias) with its three GEMMs in FP8 as above; the
    output in autocast's dtype where autocast is on (torchao casts the
    input to it first), else x's."""
    dev = x.device.type
    out = x.dtype
    if torch.is_autocast_enabled(dev):
        out = torch.get_autocast_dtype(dev)
    with torch.autocast(dev, enabled=False):
        y = _Matmul.apply(x.reshape(-1, x.shape[-1]).to(out), w, out)
    return y.view(*x.shape[:-1], w.shape[0])


class Linear(nn.Module):
    """An nn.Linear whose forward is fp8_linear, its bias (where it has
    one) added after in the output's dtype, as torchao's Float8Linear
    adds it (its weight and bias the same parameters)."""

    def __init__(self, lin):
        super().__init__()
        self.weight = lin.weight
        self.bias = lin.bias

    def forward(self, x):
        y = fp8_linear(x, self.weight)
        return y if self.bias is None else y + self.bias.to(y.dtype)


LINEARS = ("qkv", "proj", "gate_up", "down")

# The linear a block keeps in its dtype: the MoE router's (Megatron-Core's
# router_gating_linear, outside Transformer Engine).
KEPT = ("router",)


def linears(block):
    """(parent, name, linear) for every nn.Linear of block that an FP8
    recipe runs in FP8: all but KEPT's."""
    out = []
    for _, parent in block.named_modules():
        for name, child in parent.named_children():
            if isinstance(child, nn.Linear) and name not in KEPT:
                out.append((parent, name, child))
    return out


def _torch_block(block, grouped=""):
    """block with its linears in FP8 (Linear) and its experts' GEMMs
    (torch_experts): through torch._scaled_grouped_mm where grouped is
    "", else one torch._scaled_mm per expert."""
    for parent, name, lin in linears(block):
        setattr(parent, name, Linear(lin))
    moe = getattr(block, "moe", None)
    if moe is not None:
        moe.fp8_fc = TorchExperts(moe, grouped == "")
    return block


class _TEBlock(nn.Module):
    """A Block whose linears are Transformer Engine's (the router's
    kept), its experts' GEMMs TE's GroupedLinear (TEExperts), its
    forward under TE's autocast with recipe (te_autocast)."""

    def __init__(self, block, recipe, te):
        super().__init__()
        self.inner, self.recipe, self.te = block, recipe, te
        for parent, name, lin in linears(block):
            t = te.Linear(lin.in_features, lin.out_features, bias=lin.bias is not None, params_dtype=lin.weight.dtype)
            setattr(parent, name, t)
        moe = getattr(block, "moe", None)
        if moe is not None:
            moe.fp8_fc = TEExperts(moe, te)

    @property
    def recompute_core(self):
        return self.inner.recompute_core

    @recompute_core.setter
    def recompute_core(self, v):
        self.inner.recompute_core = v

    def forward(self, x, cos, sin):
        with te_autocast(self.te, self.recipe):
            return self.inner(x, cos, sin)


# The experts' GEMMs.

ALIGN = 16  # an expert's tokens padded to a multiple of this (Fp8Padding's, torchtitan's PAD_MULTIPLE)


def pow2_floor(scale):
    """scale rounded down to a power of 2 (torchao's
    round_scales_to_power_of_2: the cast then loses no mantissa bit to
    the scale)."""
    return torch.exp2(torch.floor(torch.log2(scale)))


def quantize_along(x, dim, dtype=E4M3):
    """x in dtype with one scale per slice across dim (the amax over dim,
    kept as a dimension of 1), rounded down to a power of 2: the FP8 bits
    and the inverse scales."""
    scale = pow2_floor(scale_for(x.detach().abs().amax(dim=dim, keepdim=True), dtype))
    top = torch.finfo(dtype).max
    return (x.float() * scale).clamp(-top, top).to(dtype), scale.reciprocal()


def _col3(t):
    """[E, K, N] with each expert's matrix column-major (what
    _scaled_grouped_mm's second operand needs)."""
    return t.transpose(-2, -1).contiguous().transpose(-2, -1)


def scaled_gmm(a, b, sa, sb, out_dtype, grouped, offs=True):
    """a [E, M, K] @ b [E, K, N] expert by expert from FP8 bits, with the
    inverse scales sa [E, M, 1] (one a row of a) and sb [E, 1, N] (one a
    column of b): torch._scaled_grouped_mm where grouped (a flattened to
    [E M, K] with its groups' offsets, as torchao's forward and
    grad_input run it, or offs False: 3-D by 3-D, the grad_weight of
    equal groups), else one torch._scaled_mm per expert. [E, M, N]."""
    E, M, K = a.shape
    N = b.shape[-1]
    if not grouped:
        return torch.stack([torch._scaled_mm(a[e].contiguous(), _col(b[e]), scale_a=sa[e].contiguous(), scale_b=sb[e].contiguous(),
                                             out_dtype=out_dtype, use_fast_accum=True) for e in range(E)])
    if offs:
        o = torch.arange(1, E + 1, device=a.device, dtype=torch.int32) * M
        y = torch._scaled_grouped_mm(a.reshape(E * M, K), _col3(b), sa.reshape(E * M), sb.reshape(E, N).contiguous(), o,
                                     out_dtype=out_dtype, use_fast_accum=True)
        return y.view(E, M, N)
    return torch._scaled_grouped_mm(a.contiguous(), _col3(b), sa.reshape(E, M), sb.reshape(E, N).contiguous(),
                                    out_dtype=out_dtype, use_fast_accum=True)


class _GroupedMatmul(torch.autograd.Function):
    """x [E, R, K] @ w [E, K, N] expert by expert in FP8 with torchao's
    rowwise scales (the module's docstring), R a multiple of ALIGN."""

    @staticmethod
    def forward(ctx, x, w, out_dtype, grouped):
        ctx.save_for_backward(x, w)
        ctx.out_dtype, ctx.grouped = out_dtype, grouped
        xq, xs = quantize_along(x, -1)  # one a token
        wq, ws = quantize_along(w, -2)  # one an output column of each expert
        return scaled_gmm(xq, wq, xs, ws, out_dtype, grouped)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        out, grouped = ctx.out_dtype, ctx.grouped
        gq, gs = quantize_along(g, -1)  # one a token
        wt = w.transpose(-2, -1)
        wq, ws = quantize_along(wt, -2)  # one an input column of each expert
        dx = scaled_gmm(gq, wq, gs, ws, out, grouped)
        gt = g.transpose(-2, -1)
        gtq, gts = quantize_along(gt, -1)  # one a column of grad_output, over the expert's tokens
        xq, xs = quantize_along(x, -2)  # one a column of the input, over the expert's tokens
        dw = scaled_gmm(gtq, xq, gts, xs, out, grouped, offs=False).transpose(-2, -1)
        return dx.to(x.dtype), dw.to(w.dtype), None, None


def padded(fc, xs):
    """fc over xs [E, R, K] with each expert's R tokens padded with zero
    rows to a multiple of ALIGN (an FP8 grouped GEMM's groups must be),
    the padding's rows dropped from the result."""
    R = xs.shape[1]
    pad = -R % ALIGN
    if pad:
        xs = torch.nn.functional.pad(xs, (0, 0, 0, pad))
    y = fc(xs)
    return y[:, :R] if pad else y


class TorchExperts:
    """An Experts' fc (layers.py) with the experts' GEMMs in FP8 as
    torchao's grouped GEMM runs them (_GroupedMatmul), the bias added
    after in the output's dtype; grouped False: one _scaled_mm per
    expert."""

    def __init__(self, moe, grouped):
        self.moe, self.grouped = moe, grouped

    def __call__(self, i, xs):
        m = self.moe
        w, b = (m.w1, m.w1_bias) if i == 1 else (m.w2, None)
        dev = xs.device.type
        out = torch.get_autocast_dtype(dev) if torch.is_autocast_enabled(dev) else xs.dtype
        with torch.autocast(dev, enabled=False):
            y = padded(lambda t: _GroupedMatmul.apply(t.to(out), w, out, self.grouped), xs)
        return y if b is None else y + b.to(y.dtype)


class TEExperts(nn.Module):
    """An Experts' fc with FC1 and FC2 Transformer Engine GroupedLinear
    modules of its local experts (FC1 with the experts' bias where they
    have one), in place of its batched weights, each expert's tokens
    padded to ALIGN as Megatron-Core's TEGroupedMLP pads them."""

    def __init__(self, moe, te):
        super().__init__()
        L, h, f2 = moe.w1.shape
        fe, dt = moe.w2.shape[1], moe.w1.dtype
        self.fc1 = te.GroupedLinear(L, h, f2, bias=moe.w1_bias is not None, params_dtype=dt)
        self.fc2 = te.GroupedLinear(L, fe, h, bias=False, params_dtype=dt)
        moe.w1 = moe.w2 = moe.w1_bias = None  # TE's weights stand for them

    def forward(self, i, xs):
        fc = self.fc1 if i == 1 else self.fc2

        def run(t):
            L, R, K = t.shape
            return fc(t.reshape(L * R, K), [R] * L).view(L, R, -1)
        return padded(run, xs)


def torch_grouped(dev):
    """'' where torch._scaled_grouped_mm runs _GroupedMatmul's three
    forms on dev (2 experts of 16 tokens, 16 x 16 weights), else why
    not, in one line."""
    if not hasattr(torch, "_scaled_grouped_mm"):
        return "torch %s has no torch._scaled_grouped_mm" % torch.__version__
    try:
        x = torch.ones(2, ALIGN, ALIGN, device=dev, requires_grad=True)
        w = torch.ones(2, ALIGN, ALIGN, device=dev, requires_grad=True)
        _GroupedMatmul.apply(x.to(torch.bfloat16), w, torch.bfloat16, True).sum().backward()
    except Exception as e:  # noqa: BLE001 (each backend refuses in its own words)
        # The first sentence: a missing kernel's message goes on to list
        # every backend that has one.
        return "torch._scaled_grouped_mm fails on %s: %s" % (dev, _first_line(e).split(". ")[0])
    return ""


def experts_note(grouped_why):
    """What runs the experts' GEMMs on the torch path, for software.fp8."""
    if not grouped_why:
        return "experts: torch._scaled_grouped_mm, rowwise scales rounded to powers of 2 (torchao's FP8 grouped GEMM)"
    return "experts: one torch._scaled_mm per expert, rowwise scales rounded to powers of 2 (%s)" % grouped_why


def te_autocast(te, recipe):
    """TE's quantization context for recipe: autocast(recipe=) where TE
    has it (2.9 on; fp8_autocast is deprecated there, quantization.py),
    else fp8_autocast(fp8_recipe=)."""
    if hasattr(te, "autocast"):
        return te.autocast(enabled=True, recipe=recipe)
    return te.fp8_autocast(enabled=True, fp8_recipe=recipe)


TE_RECIPES = {"current": "Float8CurrentScaling", "delayed": "DelayedScaling", "blockwise": "Float8BlockScaling"}


def te_recipe(name):
    """TE's recipe object for name (its defaults), or None where this TE
    has no such recipe."""
    from transformer_engine.common import recipe as r
    cls = getattr(r, TE_RECIPES[name], None)
    return cls() if cls is not None else None


def _first_line(e):
    t = str(e).strip()
    return t.splitlines()[0] if t else type(e).__name__


def te_module():
    """transformer_engine.pytorch where it imports and says this GPU runs
    FP8 (per-tensor scaling), else None and why."""
    if not torch.cuda.is_available():
        return None, "no GPU"
    try:
        import transformer_engine.pytorch as te
    except Exception as e:  # noqa: BLE001 (an import of a compiled extension fails many ways)
        return None, "Transformer Engine does not import (%s)" % _first_line(e)
    try:
        if hasattr(te, "is_fp8_available"):
            ok, why = te.is_fp8_available(return_reason=True)
        else:
            from transformer_engine.pytorch.fp8 import check_fp8_support
            ok, why = check_fp8_support()
    except Exception as e:  # noqa: BLE001
        return None, "Transformer Engine's FP8 check failed (%s)" % _first_line(e)
    return (te, "") if ok else (None, why)


def te_refusal(te, recipes):
    """'' where TE runs every recipe here, else the one-line refusal."""
    for r in recipes:
        if te_recipe(r) is None:
            return "--fp8 %s: this Transformer Engine has no %s recipe" % (r, TE_RECIPES[r])
        if r == "blockwise" and hasattr(te, "is_fp8_block_scaling_available"):
            ok, why = te.is_fp8_block_scaling_available(return_reason=True)
            if not ok:
                return "--fp8 blockwise: Transformer Engine's Float8BlockScaling does not run on this GPU (%s)" % why
    return ""


def torch_fp8(dev):
    """'' where torch has the FP8 dtypes and _scaled_mm runs on dev (a
    16 x 16 GEMM, e4m3 by e4m3 and e5m2 by e4m3), else why not."""
    if E4M3 is None or E5M2 is None or not hasattr(torch, "_scaled_mm"):
        return "torch %s has no float8 dtypes or torch._scaled_mm" % torch.__version__
    try:
        a = torch.ones(16, 16, device=dev)
        one = torch.ones((), device=dev)
        torch._scaled_mm(a.to(E4M3), _col(a.to(E4M3)), scale_a=one, scale_b=one, out_dtype=torch.float32)
        torch._scaled_mm(a.to(E5M2), _col(a.to(E4M3)), scale_a=one, scale_b=one, out_dtype=torch.float32)
    except Exception as e:  # noqa: BLE001 (each backend refuses in its own words)
        return "torch._scaled_mm fails on %s (torch %s): %s" % (dev, torch.__version__, _first_line(e))
    return ""


def plan(recipes, dev, model=None):
    """How recipes run on dev for the layer of config model (None: a
    dense one): (framework, maker(recipe) or None, error). framework
    names what measures them (the profile's software.fp8); error, where
    not empty, is the one-line refusal."""
    experts = bool(model and model.get("experts"))
    te, te_why = None, "no GPU"
    if dev.type == "cuda":
        te, te_why = te_module()
    if te is not None:
        import transformer_engine as tem
        framework = "transformer-engine %s" % getattr(tem, "__version__", "?")
        why = te_refusal(te, recipes)
        if not why and experts and not hasattr(te, "GroupedLinear"):
            why = "--fp8 with experts: this Transformer Engine has no GroupedLinear (Megatron-Core's TEGroupedMLP runs the experts' FP8 GEMMs through it)"
        if why:
            return "", None, why
        if experts:
            framework += " (experts: GroupedLinear)"

        def make_te(recipe):
            rec = te_recipe(recipe)
            return lambda *a, **k: _TEBlock(_block(*a, **k), rec, te)
        return framework, make_te, ""
    why = torch_fp8(dev)
    if why:
        return "", None, "--fp8: this device has no FP8: " + why
    for r in recipes:
        if r != "current":
            return "", None, ("--fp8 %s: measured only through Transformer Engine's %s, not available here (%s); "
                              "without it the profile runs torchao's tensorwise scaling: --fp8 current" % (r, TE_RECIPES[r], te_why))
    framework = "torchao-style (torch._scaled_mm, tensorwise current scaling, torch %s)" % torch.__version__
    grouped = ""
    if experts:
        grouped = torch_grouped(dev)
        framework = framework[:-1] + "; " + experts_note(grouped) + ")"
    return framework, lambda recipe: (lambda *a, **k: _torch_block(_block(*a, **k), grouped)), ""


def _block(*a, **k):
    from . import layers
    return layers.Block(*a, **k)

