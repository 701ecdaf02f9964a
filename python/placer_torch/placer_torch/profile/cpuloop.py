"""Profile, then predict, then run, on CPU (make test-profile-cpu and
make bench-profile-cpu; docs/profile.md, "The CPU loop").

1. placer profile a tiny Llama, and a tiny mixture of experts, on PROCS
   gloo CPU processes (THREADS torch threads each, the same in the
   runs): 4 where the cores give each its own, else 2;
2. placer eval --profile each plan on the profile's cpu pod;
3. placer_torch.profile.runs runs every plan in one launch, in
   interleaved rounds (plan A, B, C, ..., A, B, C, ...), each plan's time
   the median of its steps, and its first step's loss.

Two modes:

- the path (make test-profile-cpu, in make test): once, at the least
  that times every plan (the profile's medians of --repeats 1, one round
  of one step), and checked by loopcheck's rules (path_problems): the profile
  written and complete, every plan predicted and run, every plan's loss
  the untrained model's (the same across plans), predicted/measured
  within 10x either way. Nothing here depends on how fast the machine
  is while it runs; exits 1 on a failed check.
- the benchmark (--bench N, make bench-profile-cpu): N repeats of
  profile then runs (A B A B ...: a neighbour's load falls on both
  halves of a repeat, and on every repeat), each repeat's figures (the
  dense plans' Spearman rank correlation, the median |error|, and the
  median |error| of each plan's predicted/measured against its model's
  geometric mean of them, where a load common to a model's plans
  cancels), printed with their median, range and spread over the
  repeats; exits 1 when a figure misses its limit (Spearman >= 0.8,
  ratio error <= 20%, error <= 60%) by more than its own spread
  (loopcheck.verdict), and on a failed path check.

Protocol against this machine's noise: one process a core (4 processes
of one thread on 2 cores time the kernel's scheduler: a 128 KiB
all-reduce between two of them after compute took 2.98 ms against 1.00
ms with 2 processes, docs/profile.md), medians of 3 interleaved rounds of
2 steps (a load falls on every plan alike), and the error also given
against the model's plans measured in the same rounds (a load that slows
every plan cancels in it).

Usage: python -m placer_torch.profile.cpuloop PLACER [--out DIR] [--bench N]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

from .. import child
from . import loopcheck

MODEL = {"layers": 4, "hidden": 256, "heads": 4, "kv_heads": 4, "ffn": 512, "vocab": 1024, "seq": 256, "batch": 8}
# A tiny mixture of experts (8 experts, top 2, Mixtral's layer): its
# plans data-parallel with and without expert parallelism, and a pipeline.
MOE = dict(MODEL, experts=8, topk=2, expert_ffn=256)
MOE_PLANS = {2: ["tp=1,pp=1,dp=2,mbs=1", "tp=1,pp=1,dp=2,ep=2,mbs=1", "tp=1,pp=2,dp=1,mbs=1"],
             4: ["tp=1,pp=1,dp=4,mbs=1", "tp=1,pp=1,dp=4,ep=2,mbs=1", "tp=1,pp=1,dp=4,ep=4,mbs=1", "tp=1,pp=2,dp=2,ep=2,mbs=1"]}
# The plans run: DDP, FSDP, tensor parallelism with and without sequence
# parallelism, 1F1B pipelines, full recomputation and a larger
# micro-batch, over 2 or 4 processes (as many as the cores: 4 processes
# of one thread on 2 cores time the kernel's scheduler, not the plan;
# docs/profile.md).
PLANS = {
    2: ["tp=1,pp=1,dp=2,mbs=1", "tp=1,pp=1,dp=2,mbs=4", "tp=1,pp=1,dp=2,mbs=1,fsdp=on",
        "tp=1,pp=1,dp=2,mbs=1,recompute=full", "tp=1,pp=2,dp=1,mbs=1", "tp=1,pp=2,dp=1,mbs=4",
        "tp=2,pp=1,dp=1,mbs=1", "tp=2,pp=1,dp=1,mbs=1,sp=on"],
    4: ["tp=1,pp=1,dp=4,mbs=1", "tp=1,pp=1,dp=4,mbs=1,fsdp=on", "tp=1,pp=2,dp=2,mbs=1", "tp=1,pp=4,dp=1,mbs=1",
        "tp=2,pp=1,dp=2,mbs=1", "tp=2,pp=1,dp=2,mbs=1,sp=on", "tp=4,pp=1,dp=1,mbs=1",
        "tp=1,pp=1,dp=4,mbs=1,recompute=full"],
}


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def ranks(x):
    order = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    for k, i in enumerate(order):
        r[i] = float(k)
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb)


median = loopcheck.median


def measure(a, models, out):
    """One repeat: each model profiled, its plans predicted, then run.
    Returns the rows (model, plan, predicted_s, measured_s, loss,
    sources), the profiles' paths, and the seconds the profiles and the
    runs took."""
    rows, profiles, t_prof, t_runs = [], [], 0.0, 0.0
    for name, model, plans, shapes in models:
        work = "llama:" + ",".join("%s=%d" % (k, v) for k, v in model.items())
        prof = os.path.join(out, name + ".profile.json")
        # --force: this run's profile replaces the last run's (else a
        # budget cut would go to FILE.partial and the plans be predicted
        # from a stale one); the path check then finds it incomplete.
        t = time.time()
        subprocess.run([a.placer, "profile", "--workload", work, "--device", "cpu", "--procs", str(a.procs),
                        "--threads", str(a.threads), "--cp", "1", *shapes,
                        "--repeats", str(a.repeats), "--budget", a.budget, "--force", "--out", prof], check=True)
        t_prof += time.time() - t
        profiles.append(prof)
        pred = {}
        for plan in plans:
            d = json.loads(subprocess.run([a.placer, "eval", "--workload", work, "--profile", prof, "--strategy", plan, "--json"],
                                          check=True, capture_output=True, text=True).stdout)
            pred[plan] = (d["step_s"], d.get("sources"))
        t = time.time()
        req = {"model": model, "procs": a.procs, "threads": a.threads, "rounds": a.rounds, "steps": a.steps, "plans": plans}
        lines = subprocess.run(child.command("placer_torch.profile.runs", json.dumps(req)), env=child.env(),
                               check=True, capture_output=True, text=True).stdout.splitlines()
        t_runs += time.time() - t
        meas = {d["plan"]: d for d in map(json.loads, (x for x in lines if x.startswith("{")))}
        for plan in plans:
            m = meas.get(plan, {})
            rows.append({"model": name, "plan": plan, "predicted_s": pred[plan][0], "measured_s": m.get("step_s"),
                         "loss": m.get("loss"), "sources": pred[plan][1]})
    return rows, profiles, t_prof, t_runs


def figures(rows):
    """A repeat's figures: each row's error and ratio error (against its
    model's geometric mean of predicted/measured), the Spearman rank
    correlation per model (the first model's, the dense plans', is the
    one held to a limit), the median |error| and |ratio error|."""
    models = []
    for r in rows:
        if r["model"] not in models:
            models.append(r["model"])
    gm = {}
    for name in models:
        logs = [math.log(r["predicted_s"] / r["measured_s"]) for r in rows if r["model"] == name]
        gm[name] = math.exp(sum(logs) / len(logs))
    for r in rows:
        r["error"] = r["predicted_s"] / r["measured_s"] - 1
        r["ratio_error"] = r["predicted_s"] / r["measured_s"] / gm[r["model"]] - 1
    rho = {}
    for name in models:
        ix = [r for r in rows if r["model"] == name]
        rho[name] = spearman([r["predicted_s"] for r in ix], [r["measured_s"] for r in ix]) if len(ix) > 2 else float("nan")
    return {"spearman": rho[models[0]], "spearman_by_model": rho,
            "median_abs_error": median([abs(r["error"]) for r in rows]),
            "median_abs_ratio_error": median([abs(r["ratio_error"]) for r in rows])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("placer")
    ap.add_argument("--out", default="out/profile-cpu")
    ap.add_argument("--procs", type=int, default=0, help="processes (default 4 where the cores allow, else 2)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bench", type=int, default=0,
                    help="repeats of profile then runs, the accuracy's figures with their spread (default 0: the path check only, once)")
    ap.add_argument("--repeats", type=int, default=0, help="the profile's loops a figure is the median of (default 1, 3 with --bench)")
    ap.add_argument("--rounds", type=int, default=0, help="the runs' interleaved rounds (default 1, 3 with --bench)")
    ap.add_argument("--steps", type=int, default=0, help="timed steps a plan a round (default 1, 2 with --bench)")
    ap.add_argument("--budget", default="10m",
                    help="placer profile's --budget: a hang guard (a profile it cuts is incomplete, which fails the check)")
    ap.add_argument("--min-spearman", type=float, default=0.8)
    ap.add_argument("--max-error", type=float, default=0.6, help="median |error| allowed (--bench)")
    ap.add_argument("--max-ratio-error", type=float, default=0.2,
                    help="median |error| of each plan's predicted/measured over its model's geometric mean of them (--bench)")
    ap.add_argument("--plans", default="", help="plans separated by ';' (default: the process count's)")
    ap.add_argument("--json", default="", help="the summary (default OUT/summary.json)")
    a = ap.parse_args()
    bench = a.bench > 0
    a.repeats = a.repeats or (3 if bench else 1)
    a.rounds = a.rounds or (3 if bench else 1)
    a.steps = a.steps or (2 if bench else 1)
    if a.procs <= 0:
        a.procs = 4 if cores() >= 4 * a.threads else 2
    dense = a.plans.split(";") if a.plans else PLANS[a.procs]
    models = [("tiny", MODEL, dense, ["--tp", ",".join(str(t) for t in (1, 2, 4) if t <= a.procs),
                                      "--mbs", "1,4", "--recompute", "none,full"])]
    if not a.plans:
        models.append(("tiny-moe", MOE, MOE_PLANS[a.procs], ["--ep", ",".join(str(e) for e in (1, 2, 4) if e <= a.procs),
                                                           "--mbs", "1", "--recompute", "none"]))
    os.makedirs(a.out, exist_ok=True)
    t0, load = time.time(), os.getloadavg()[0]
    repeats, problems, t_prof, t_runs = [], [], 0.0, 0.0
    for k in range(max(a.bench, 1)):
        rows, profiles, tp, tr = measure(a, models, a.out)
        t_prof, t_runs = t_prof + tp, t_runs + tr
        for prof in profiles:
            problems += ["repeat %d: %s" % (k + 1, x) if bench else x for x in loopcheck.profile_problems(prof)]
        bad = loopcheck.row_problems(rows, MODEL["vocab"])
        problems += ["repeat %d: %s" % (k + 1, x) if bench else x for x in bad]
        fig = figures(rows) if not bad else {}
        repeats.append({"figures": fig, "plans": rows})
        for r in rows:
            print("%s%-45s predicted %7.1f ms  measured %7.1f ms  %+6.1f%%  (against its model's mean %+6.1f%%)  loss %.3f"
                  % ("repeat %d: " % (k + 1) if bench else "", "%s %s" % (r["model"], r["plan"]), 1e3 * (r["predicted_s"] or 0),
                     1e3 * (r["measured_s"] or 0), 100 * r.get("error", float("nan")), 100 * r.get("ratio_error", float("nan")),
                     r["loss"] if r["loss"] is not None else float("nan")))
        if fig:
            print("%sSpearman %.3f (%s), median |error| %.1f%%, median |ratio error| %.1f%%"
                  % ("repeat %d: " % (k + 1) if bench else "", fig["spearman"],
                     ", ".join("%s %.3f" % kv for kv in fig["spearman_by_model"].items()),
                     100 * fig["median_abs_error"], 100 * fig["median_abs_ratio_error"]))
    summary = {"mode": "bench" if bench else "path", "repeats": repeats, "profile_s": t_prof, "runs_s": t_runs,
               "total_s": time.time() - t0, "load_average": [load, os.getloadavg()[0]], "problems": problems,
               "loss_want": loopcheck.untrained_loss(MODEL["vocab"]), "loss_tolerance": loopcheck.LOSS_TOL,
               "ratio_bound": loopcheck.RATIO_BOUND}
    ok = not problems
    if bench and ok:
        figs = [r["figures"] for r in repeats]
        lines = []
        for key, name, limit, at_least, pct in (("spearman", "Spearman (the dense plans)", a.min_spearman, True, False),
                                                ("median_abs_ratio_error", "median |ratio error|", a.max_ratio_error, False, True),
                                                ("median_abs_error", "median |error|", a.max_error, False, True)):
            vals = [f[key] for f in figs]
            good, line = loopcheck.describe(name, vals, limit, at_least, pct)
            _, bound, (med, lo, hi, sp) = loopcheck.verdict(vals, limit, at_least)
            summary[key] = {"median": med, "lowest": lo, "highest": hi, "spread": sp, "limit": limit, "bound": bound,
                            "repeats": vals, "ok": good}
            ok = ok and good
            lines.append(line)
        for name in figs[0]["spearman_by_model"]:
            _, _, (med, lo, hi, sp) = loopcheck.verdict([f["spearman_by_model"][name] for f in figs], 0, True)
            lines.append("Spearman %-23s %.3f (%.3f to %.3f, spread %.3f; printed, not held)" % (name, med, lo, hi, sp))
        # Each plan's error over the repeats.
        for i, r in enumerate(repeats[0]["plans"]):
            errs = [rep["plans"][i]["error"] for rep in repeats]
            med, lo, hi, sp = loopcheck.spread(errs)
            lines.append("  %-45s error %+6.1f%% (%+.1f%% to %+.1f%%, spread %.1f%%)" % (
                "%s %s" % (r["model"], r["plan"]), 100 * med, 100 * lo, 100 * hi, 100 * sp))
        print("\n".join(lines))
    print("cpuloop: %s, %d repeat%s; profiles %.1f s, runs %.1f s, total %.1f s; load average %.1f before, %.1f after"
          % ("benchmark" if bench else "path check", len(repeats), "" if len(repeats) == 1 else "s", t_prof, t_runs,
             time.time() - t0, load, os.getloadavg()[0]))
    with open(a.json or os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for x in problems:
        print("cpuloop: " + x, file=sys.stderr)
    if not ok:
        print("cpuloop: FAILED (%s)" % ("a path check" if problems else "a figure outside its bound"), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
