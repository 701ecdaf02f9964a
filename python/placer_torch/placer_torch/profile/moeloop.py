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
--etp, --ep; medians of 9 loops, not cpuloop.py's 3: on this shared
2-core machine one layer's time in place, its collectives run, went
from 15.6 to 34.3 ms between profiles of 3 loops, 17.3 and 18.0 with
9), placer eval --profile for each plan, then runs.py runs
the plans in one launch in interleaved rounds (medians of each plan's
steps). Prints a table (plan, predicted, measured, error, and the
prediction's parts: compute, exposed data-parallel, expert-parallel
and tensor-parallel communication, the pipeline's bubble), writes it
to --json, and exits 1 when the median |error| over every plan is
above --max-error. Spearman's rank correlation is printed per model
but not gated: over 3 plans it takes only the values -1, -0.5, 0.5
and 1, and one swapped pair of plans within a few percent of each
other moves it from 1 to 0.5.

Usage: python -m placer_torch.profile.moeloop PLACER [--out DIR] [--json FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import time

from .. import child
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
                    "--repeats", str(a.repeats), "--budget", "120s", "--force", "--out", path], check=True)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("placer")
    ap.add_argument("--out", default="out/profile-cpu-moe")
    ap.add_argument("--json", default="", help="the table as JSON (default OUT/summary.json)")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=9,
                    help="the profile's loops a figure is the median of (a layer's in place varied from 15.6 to 34.3 ms over 3, 17.3 to 18.0 over 9)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--max-error", type=float, default=0.2)
    a = ap.parse_args()
    if a.procs != 2:
        raise SystemExit("moeloop: its plans are of 2 processes (--procs 2)")
    os.makedirs(a.out, exist_ok=True)
    load = os.getloadavg()
    t0 = time.time()
    rows, rho, t_prof, t_runs = [], {}, 0.0, 0.0
    for name, model, plans, shapes in MODELS:
        t = time.time()
        prof = profile(a.placer, name, model, shapes, a.out, a)
        t_prof += time.time() - t
        pred = {plan: predict(a.placer, model, prof, plan) for plan in plans}
        t = time.time()
        meas = run(model, plans, a)
        t_runs += time.time() - t
        for plan in plans:
            p, m = pred[plan]["step_s"], meas[plan]["step_s"]
            parts = {k: pred[plan].get(key, 0.0) for k, key in PARTS}
            rows.append({"model": name, "plan": plan, "predicted_s": p, "measured_s": m, "error": p / m - 1,
                         "parts_s": parts, "sources": pred[plan].get("sources"), "steps_s": meas[plan]["steps"]})
        rho[name] = spearman([pred[x]["step_s"] for x in plans], [meas[x]["step_s"] for x in plans])
    print("%-14s %-40s %10s %10s %8s   %s" % ("model", "plan", "predicted", "measured", "error",
                                                "predicted parts (ms): " + " ".join(k for k, _ in PARTS)))
    for r in rows:
        print("%-14s %-40s %7.1f ms %7.1f ms %+7.1f%%   %s" % (
            r["model"], r["plan"], r["predicted_s"] * 1e3, r["measured_s"] * 1e3, 100 * r["error"],
            " ".join("%.1f" % (r["parts_s"][k] * 1e3) for k, _ in PARTS)))
    med = median([abs(r["error"]) for r in rows])
    total = time.time() - t0
    print("median |error| %.1f%%; Spearman (not gated, 3 plans each) %s; profiles %.1f s, runs %.1f s, total %.1f s; "
          "load average %.1f before, %.1f after" % (100 * med, ", ".join("%s %.2f" % kv for kv in rho.items()),
                                                     t_prof, t_runs, total, load[0], os.getloadavg()[0]))
    summary = {"median_abs_error": med, "spearman_by_model": rho, "max_error": a.max_error, "profile_s": t_prof,
               "runs_s": t_runs, "total_s": total, "load_average": [load[0], os.getloadavg()[0]], "plans": rows}
    with open(a.json or os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    if med > a.max_error:
        print("moeloop: median |error| %.1f%% (at most %.0f%% wanted)" % (100 * med, 100 * a.max_error), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
