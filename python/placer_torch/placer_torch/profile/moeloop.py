"""Profile, then predict, then run, on CPU: the mixtures of experts'
paths cpuloop.py does not run (make test-profile-cpu-moe; docs/profile.md).

Two tiny models on 2 gloo processes of one thread:

- a DeepSeek-like one (latent attention, one dense layer before the
  experts, 8 experts of top 2 and one shared, routing forced balanced)
  under data parallelism, data parallelism with expert parallelism 2,
  and a 1F1B pipeline of 2 stages;
- cpuloop.py's tiny MoE at tensor parallelism 2 with sequence
  parallelism, its experts at expert-tensor parallelism 1 (whole on
  each rank, the expert-data-parallel group the tensor group), 2 (each
  expert's FFN split, the tokens gathered and scattered over it), and
  at expert parallelism 2 with etp 1 (the all-to-all over the tensor
  group's ranks), as Megatron-Core's all-to-all dispatcher runs them.

For each model: placer profile at the shapes its plans run (--tp,
--etp, --ep; with --bench, medians of 9 loops, not cpuloop.py's 3: on
this shared 2-core machine one layer's time in place, its collectives
run, went from 15.6 to 34.3 ms between profiles of 3 loops, 17.3 and
18.0 with 9), placer eval --profile for each plan, then runs.py runs the
plans in one launch in interleaved rounds (medians of each plan's
steps). Prints a table (plan, predicted, measured, error, loss, and the
prediction's parts: compute, exposed data-parallel, expert-parallel and
tensor-parallel communication, the pipeline's bubble) and writes it to
--json.

As cpuloop.py: by default (make test-profile-cpu-moe) once, at the
least that times every plan, and checked on the path only (loopcheck:
the profiles complete, every plan predicted and run, the untrained
model's loss, predicted/measured within 10x); with --bench N (make
bench-profile-cpu-moe) N repeats of profiles then runs, the median
|error| over every plan given with its spread over the repeats, and
exit 1 when it is above --max-error by more than that spread. Spearman's
rank correlation is printed per model but not held to a limit: over 3
plans it takes only the values -1, -0.5, 0.5 and 1, and one swapped pair
of plans within a few percent of each other moves it from 1 to 0.5.

Usage: python -m placer_torch.profile.moeloop PLACER [--out DIR] [--json FILE] [--bench N]
"""

import argparse
import json
import os
import subprocess
import sys
import time

from .. import child
from . import loopcheck
from .cpuloop import MOE, median, spearman

# DeepSeek's layer shrunk: latent attention (query latent 128, key-value
# latent 64, heads of 64 + a rotary 32), the first layer dense (FFN
# 512), the others 8 experts of 256 top 2 and one shared expert.
DEEPSEEK = {"layers": 4, "hidden": 256, "heads": 4, "kv_heads": 4, "ffn": 512, "vocab": 1024, "seq": 256, "batch": 8,
            "head_dim": 64, "rope_dim": 32, "q_lora": 128, "kv_lora": 64,
            "experts": 8, "topk": 2, "expert_ffn": 256, "shared": 1, "dense_layers": 1}

# (name, model, plans, the profile's shapes: what the plans run).
MODELS = [
    ("tiny-deepseek", DEEPSEEK,
     ["tp=1,pp=1,dp=2,mbs=1", "tp=1,pp=1,dp=2,ep=2,mbs=1", "tp=1,pp=2,dp=1,mbs=1"],
     ["--tp", "1", "--ep", "1,2"]),
    ("tiny-moe-tp2", MOE,
     ["tp=2,pp=1,dp=1,mbs=1,sp=on,etp=1", "tp=2,pp=1,dp=1,mbs=1,sp=on,etp=2", "tp=2,pp=1,dp=1,mbs=1,sp=on,ep=2,etp=1"],
     ["--tp", "2", "--etp", "1,2", "--ep", "1,2"]),
]

# The prediction's parts printed beside its step (eval --json's keys).
PARTS = [("compute", "compute_s"), ("dp", "dp_exposed_s"), ("ep", "ep_exposed_s"), ("tp", "tp_exposed_s"),
         ("bubble", "bubble_s"), ("opt", "optimizer_s")]


def workload(model):
    return "llama:" + ",".join("%s=%d" % kv for kv in model.items())


def profile(placer, name, model, shapes, out, a):
    path = os.path.join(out, name + ".profile.json")
    # --force: this run's profile replaces the last run's even where the
    # budget cut it short (else the plans would be predicted from a stale one).
    subprocess.run([placer, "profile", "--workload", workload(model), "--device", "cpu", "--procs", str(a.procs),
                    "--threads", str(a.threads), "--cp", "1", "--mbs", "1", "--recompute", "none", *shapes,
                    "--repeats", str(a.repeats), "--budget", a.budget, "--force", "--out", path], check=True)
    return path


def predict(placer, model, prof, plan):
    """eval --profile's step for plan, its sources and its parts."""
    out = subprocess.run([placer, "eval", "--workload", workload(model), "--profile", prof, "--strategy", plan, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def run(model, plans, a):
    """runs.py's median step of each plan, the plans in interleaved rounds."""
    req = {"model": model, "procs": a.procs, "threads": a.threads, "rounds": a.rounds, "steps": a.steps, "plans": plans}
    lines = subprocess.run(child.command("placer_torch.profile.runs", json.dumps(req)), env=child.env(),
                           check=True, capture_output=True, text=True).stdout.splitlines()
    return {d["plan"]: d for d in map(json.loads, (x for x in lines if x.startswith("{")))}


def measure(a):
    """One repeat: each model profiled, predicted and run; the rows, the
    profiles' paths, the Spearman per model and the seconds taken."""
    rows, profiles, rho, t_prof, t_runs = [], [], {}, 0.0, 0.0
    for name, model, plans, shapes in MODELS:
        t = time.time()
        prof = profile(a.placer, name, model, shapes, a.out, a)
        t_prof += time.time() - t
        profiles.append(prof)
        pred = {plan: predict(a.placer, model, prof, plan) for plan in plans}
        t = time.time()
        meas = run(model, plans, a)
        t_runs += time.time() - t
        for plan in plans:
            m = meas.get(plan, {})
            p, ms = pred[plan]["step_s"], m.get("step_s")
            parts = {k: pred[plan].get(key, 0.0) for k, key in PARTS}
            rows.append({"model": name, "plan": plan, "predicted_s": p, "measured_s": ms,
                         "error": p / ms - 1 if loopcheck.finite_positive(ms) else float("nan"), "loss": m.get("loss"),
                         "parts_s": parts, "sources": pred[plan].get("sources"), "steps_s": m.get("steps")})
        if all(loopcheck.finite_positive(meas.get(x, {}).get("step_s")) for x in plans):
            rho[name] = spearman([pred[x]["step_s"] for x in plans], [meas[x]["step_s"] for x in plans])
    return rows, profiles, rho, t_prof, t_runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("placer")
    ap.add_argument("--out", default="out/profile-cpu-moe")
    ap.add_argument("--json", default="", help="the table as JSON (default OUT/summary.json)")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bench", type=int, default=0,
                    help="repeats of profiles then runs, the median |error| with its spread (default 0: the path check only, once)")
    ap.add_argument("--repeats", type=int, default=0,
                    help="the profile's loops a figure is the median of (default 1; 9 with --bench: a layer's in place varied from 15.6 to 34.3 ms over 3, 17.3 to 18.0 over 9)")
    ap.add_argument("--rounds", type=int, default=0, help="the runs' interleaved rounds (default 1, 3 with --bench)")
    ap.add_argument("--steps", type=int, default=0, help="timed steps a plan a round (default 1, 2 with --bench)")
    ap.add_argument("--budget", default="10m",
                    help="placer profile's --budget: a hang guard (a profile it cuts is incomplete, which fails the check)")
    ap.add_argument("--max-error", type=float, default=0.2, help="the median |error| allowed (--bench), widened by its spread")
    a = ap.parse_args()
    if a.procs != 2:
        raise SystemExit("moeloop: its plans are of 2 processes (--procs 2)")
    bench = a.bench > 0
    a.repeats = a.repeats or (9 if bench else 1)
    a.rounds = a.rounds or (3 if bench else 1)
    a.steps = a.steps or (2 if bench else 1)
    os.makedirs(a.out, exist_ok=True)
    load = os.getloadavg()
    t0 = time.time()
    repeats, problems, t_prof, t_runs = [], [], 0.0, 0.0
    for k in range(max(a.bench, 1)):
        rows, profiles, rho, tp, tr = measure(a)
        t_prof, t_runs = t_prof + tp, t_runs + tr
        tag = "repeat %d: " % (k + 1) if bench else ""
        for prof in profiles:
            problems += [tag + x for x in loopcheck.profile_problems(prof)]
        bad = loopcheck.row_problems(rows, MOE["vocab"])
        problems += [tag + x for x in bad]
        med = median([abs(r["error"]) for r in rows]) if not bad else float("nan")
        repeats.append({"median_abs_error": med, "spearman_by_model": rho, "plans": rows})
        print("%s%-14s %-40s %10s %10s %8s %7s   %s" % (tag, "model", "plan", "predicted", "measured", "error", "loss",
                                                      "predicted parts (ms): " + " ".join(k for k, _ in PARTS)))
        for r in rows:
            print("%s%-14s %-40s %7.1f ms %7.1f ms %+7.1f%% %7.3f   %s" % (
                tag, r["model"], r["plan"], r["predicted_s"] * 1e3, (r["measured_s"] or 0) * 1e3, 100 * r["error"],
                r["loss"] if r["loss"] is not None else float("nan"),
                " ".join("%.1f" % (r["parts_s"][k] * 1e3) for k, _ in PARTS)))
        print("%smedian |error| %.1f%%; Spearman (not held, 3 plans each) %s" % (
            tag, 100 * med, ", ".join("%s %.2f" % kv for kv in rho.items())))
    total = time.time() - t0
    summary = {"mode": "bench" if bench else "path", "max_error": a.max_error, "profile_s": t_prof, "runs_s": t_runs,
               "total_s": total, "load_average": [load[0], os.getloadavg()[0]], "problems": problems, "repeats": repeats,
               "loss_want": loopcheck.untrained_loss(MOE["vocab"]), "loss_tolerance": loopcheck.LOSS_TOL,
               "ratio_bound": loopcheck.RATIO_BOUND}
    ok = not problems
    if bench and ok:
        vals = [r["median_abs_error"] for r in repeats]
        good, line = loopcheck.describe("median |error| (every plan)", vals, a.max_error, False, True)
        _, bound, (med, lo, hi, sp) = loopcheck.verdict(vals, a.max_error, False)
        summary["median_abs_error"] = {"median": med, "lowest": lo, "highest": hi, "spread": sp, "limit": a.max_error,
                                       "bound": bound, "repeats": vals, "ok": good}
        ok = good
        print(line)
        for name in repeats[0]["spearman_by_model"]:
            m, lo, hi, sp = loopcheck.spread([r["spearman_by_model"].get(name, float("nan")) for r in repeats])
            print("Spearman %-23s %.3f (%.3f to %.3f, spread %.3f; printed, not held)" % (name, m, lo, hi, sp))
        for i, r in enumerate(repeats[0]["plans"]):
            m, lo, hi, sp = loopcheck.spread([rep["plans"][i]["error"] for rep in repeats])
            print("  %-55s error %+6.1f%% (%+.1f%% to %+.1f%%, spread %.1f%%)" % (
                "%s %s" % (r["model"], r["plan"]), 100 * m, 100 * lo, 100 * hi, 100 * sp))
    print("moeloop: %s, %d repeat%s; profiles %.1f s, runs %.1f s, total %.1f s; load average %.1f before, %.1f after"
          % ("benchmark" if bench else "path check", len(repeats), "" if len(repeats) == 1 else "s", t_prof, t_runs, total,
             load[0], os.getloadavg()[0]))
    with open(a.json or os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for x in problems:
        print("moeloop: " + x, file=sys.stderr)
    if not ok:
        print("moeloop: FAILED (%s)" % ("a path check" if problems else "the median |error| outside its bound"), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
