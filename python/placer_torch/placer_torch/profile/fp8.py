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
    """A bias-free nn.Linear whose forward is fp8_linear (its weight the
    same parameter)."""

    def __init__(self, lin):
        super().__init__()
        self.weight = lin.weight

    def forward(self, x):
        return fp8_linear(x, self.weight)


LINEARS = ("qkv", "proj", "gate_up", "down")


def _torch_block(block):
    for name in LINEARS:
        setattr(block, name, Linear(getattr(block, name)))
    return block


class _TEBlock(nn.Module):
    """A Block whose linears are Transformer Engine's, its forward under
    TE's autocast with recipe (te_autocast)."""

    def __init__(self, block, recipe, te):
        super().__init__()
        self.inner, self.recipe, self.te = block, recipe, te
        for name in LINEARS:
            lin = getattr(block, name)
            t = te.Linear(lin.in_features, lin.out_features, bias=False, params_dtype=lin.weight.dtype)
            setattr(block, name, t.to(lin.weight.device))

    @property
    def recompute_core(self):
        return self.inner.recompute_core

    @recompute_core.setter
    def recompute_core(self, v):
        self.inner.recompute_core = v

    def forward(self, x, cos, sin):
        with te_autocast(self.te, self.recipe):
            return self.inner(x, cos, sin)


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


def plan(recipes, dev):
    """How recipes run on dev: (framework, maker(recipe) or None, error).
    framework names what measures them (the profile's software.fp8);
    error, where not empty, is the one-line refusal."""
    te, te_why = None, "no GPU"
    if dev.type == "cuda":
        te, te_why = te_module()
    if te is not None:
        import transformer_engine as tem
        framework = "transformer-engine %s" % getattr(tem, "__version__", "?")
        why = te_refusal(te, recipes)
        if why:
            return "", None, why

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
    return "torchao-style (torch._scaled_mm, tensorwise current scaling, torch %s)" % torch.__version__, \
        lambda recipe: (lambda *a, **k: _torch_block(_block(*a, **k))), ""


def _block(*a, **k):
    from . import layers
    return layers.Block(*a, **k)

