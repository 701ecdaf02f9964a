"""What the CPU loops (cpuloop.py, moeloop.py) check, in make test and in
their benchmarks (docs/profile.md, "The CPU loop").

make test runs each loop once as a test of the whole path, with checks
that do not depend on how fast this machine is while they run
(profile_problems, row_problems):

- the profile is written, a placer profile of layers, complete, and
  holds a layer shape;
- every plan is predicted (a positive, finite step) and run (a positive,
  finite median step);
- every plan's loss, its first step's before any update (runs.py), is
  the untrained model's: ln(vocab) + 1/6, within LOSS_TOL. The output
  layer is nn.Linear at its default initialization (uniform within
  1/sqrt(hidden)) on the final norm's output (unit RMS), so each logit
  has variance hidden x 1/(3 hidden) = 1/3 and the cross-entropy's
  expectation is ln(vocab) + 1/3 / 2 (the log-sum-exp of V logits of
  small variance s^2 is ln V + s^2/2). On the tiny Llama (vocab 1024:
  7.098) the plans gave 7.089 to 7.143, each the same on every run (the
  seeds are fixed). The plans' weights are drawn per rank, so they are
  not the same model: the losses agree to the initialization's spread,
  which a loss summed over micro-batches instead of averaged (x M), a
  tensor-parallel loss summed over its ranks (x T) or a stage that never
  reaches the loss breaks by far;
- every plan's predicted/measured within RATIO_BOUND (10x either way): a
  wrong unit (ms for s) or a lost term (a layer's backward, a pipeline's
  stages) breaks it; a loaded machine, which stretched the measured steps
  30x at load 32 on 2 cores (2026-11-28), breaks it only where the load
  falls on the runs and not on the profile, so the check is that the two
  are within an order of magnitude, not that they agree.

The accuracy (Spearman, the median errors) is measured by the loops'
benchmarks (make bench-profile-cpu, bench-profile-cpu-moe): profile and
runs interleaved (A B A B ...), the figures with their spread over the
repeats (spread), each held to its limit widened by its own spread
(verdict).
"""

import json
import math

LOSS_TOL = 0.15
RATIO_BOUND = 10.0


def untrained_loss(vocab):
    """The cross-entropy of an untrained model whose logits have variance
    1/3 (see the module's doc): ln(vocab) + 1/6."""
    return math.log(vocab) + 1.0 / 6


def profile_problems(path):
    """What is wrong with the profile at path for the loop: not written,
    not a complete layers profile, no layer shape."""
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError) as e:
        return ["profile %s: %s" % (path, e)]
    out = []
    if p.get("format") != "placer-profile":
        out.append("profile %s: format %r, want placer-profile" % (path, p.get("format")))
    if p.get("kind", "layers") != "layers":
        out.append("profile %s: kind %r, want layers" % (path, p.get("kind")))
    if not p.get("complete"):
        out.append("profile %s: complete false" % path)
    layers = p.get("layers") or []
    if not layers:
        out.append("profile %s: no layer shape" % path)
    for l in layers:
        if not (l.get("forward_s", 0) > 0 and l.get("backward_s", 0) > 0):
            out.append("profile %s: layer %s: forward %s s, backward %s s" % (path, l, l.get("forward_s"), l.get("backward_s")))
            break
    return out


def finite_positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def row_problems(rows, vocab):
    """What is wrong with the loop's rows (model, plan, predicted_s,
    measured_s, loss) on the deterministic checks (the module's doc)."""
    out = []
    want = untrained_loss(vocab)
    for r in rows:
        name = "%s %s" % (r["model"], r["plan"])
        p, m, loss = r.get("predicted_s"), r.get("measured_s"), r.get("loss")
        if not finite_positive(p):
            out.append("%s: predicted step %r" % (name, p))
        if not finite_positive(m):
            out.append("%s: measured step %r" % (name, m))
        if finite_positive(p) and finite_positive(m) and not (1 / RATIO_BOUND <= p / m <= RATIO_BOUND):
            out.append("%s: predicted %.4g s against measured %.4g s, %.3gx: outside %gx either way (a wrong unit or a lost term)"
                       % (name, p, m, p / m, RATIO_BOUND))
        if not (isinstance(loss, (int, float)) and abs(loss - want) <= LOSS_TOL):
            out.append("%s: first step's loss %r, want the untrained model's %.3f (ln %d + 1/6) within %.2f"
                       % (name, loss, want, vocab, LOSS_TOL))
    return out


def median(x):
    s = sorted(x)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def spread(values):
    """A figure over the repeats: (median, lowest, highest, spread), the
    spread half the range (0 for one repeat)."""
    v = [x for x in values if isinstance(x, (int, float)) and math.isfinite(x)]
    if not v:
        return float("nan"), float("nan"), float("nan"), float("nan")
    return median(v), min(v), max(v), (max(v) - min(v)) / 2


def verdict(values, limit, at_least):
    """Whether a figure over the repeats holds its limit, widened by its
    own spread: at_least (Spearman), its median may fall below limit by
    its spread; else (an error) rise above it by its spread. A figure
    that misses only by less than the repeats differ among themselves is
    the machine's noise, not the model's; one that misses by more is a
    regression. Returns (ok, bound, (median, lowest, highest, spread))."""
    med, lo, hi, sp = spread(values)
    if not math.isfinite(med):
        return False, limit, (med, lo, hi, sp)
    bound = limit - sp if at_least else limit + sp
    return (med >= bound) if at_least else (med <= bound), bound, (med, lo, hi, sp)


def describe(name, values, limit, at_least, pct=False):
    """One line: the figure's median, range and spread over the repeats,
    its limit and bound, and whether it holds."""
    ok, bound, (med, lo, hi, sp) = verdict(values, limit, at_least)
    f = (lambda x: "%.1f%%" % (100 * x)) if pct else (lambda x: "%.3f" % x)
    return ok, "%-32s %s (%s to %s over %d repeats, spread %s); limit %s %s, bound %s: %s" % (
        name, f(med), f(lo), f(hi), len(values), f(sp), ">=" if at_least else "<=", f(limit), f(bound),
        "ok" if ok else "OUTSIDE")
