#!/usr/bin/env python3
"""The held-out models' quality table (docs/held-out.md): on each model the
held-out check uses (tools/dev/torchplan/heldout.py: thirteen models no one
here wrote, tiny configurations) and for each GPU count and topology,
placer search's answer (go-scored, the default) against the best strategy
row a user would run (ddp, fsdp, zero2, gpipe, 1f1b, pipedream: the
table's rows, all in the same search process) and against the ablation:
the same anchored local search without the GO network's scores
(--method local-search-anchored), at the same CPU budget and seed.

    python3 tools/dev/torchplan/quality.py --gpus 4,8 --topology pcie,nvswitch --cpu 10s --json out/quality.json

Prints one row per model x GPUs x topology: the best strategy row and its
step, the answer's, the ablation's, and the ratios best-row / answer and
ablation / answer (above 1: the answer is faster); then their geometric
means per GPUs x topology. The graphs are exported (or reused) in --work
as the held-out check does; every figure is placer's prediction (its
default hardware, v100), the step the exported plan runs to the bit
(TestSearchPredictsThePlan).
"""

import argparse
import json
import math
import os
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import heldout

STRATEGY_ROWS = ("ddp", "fsdp", "zero2", "gpipe", "1f1b", "pipedream")


def search(placer, graph, gpus, topology, cpu, method):
    """(answer step, {row: step}) of one placer search, or (None, reason)."""
    cmd = [placer, "search", "--graph", graph, "--gpus", str(gpus), "--topology", topology, "--cpu", cpu,
           "--method", method, "--json"]
    ok, out, why, _ = heldout.sh(cmd, 600)
    if not ok:
        return None, why
    d = json.loads(out)
    rows = {m["method"]: m["step_time_s"] for m in d["comparison"]["methods"] if m.get("feasible")}
    return d["result"]["step_time_s"], rows


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(heldout.HELD_OUT))
    ap.add_argument("--gpus", default="4,8")
    ap.add_argument("--topology", default="pcie,nvswitch")
    ap.add_argument("--cpu", default="10s", help="placer search --cpu, the answer's and the ablation's each")
    ap.add_argument("--placer", default=os.path.join(ROOT, "bin", "placer"))
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "held-out"))
    ap.add_argument("--json", help="write the cells to this file (after each)")
    a = ap.parse_args(argv)
    d = heldout.Driver(argparse.Namespace(placer=a.placer, work=a.work, reuse=True, timeout_export=600))
    cells = []
    for name in a.models.split(","):
        if name not in heldout.MODELS:
            ap.error("--models: %s is not a held-out model (%s)" % (name, ",".join(heldout.HELD_OUT)))
        graph, why, _ = d.export(name)
        for gpus in [int(g) for g in a.gpus.split(",")]:
            for topo in a.topology.split(","):
                c = {"model": name, "gpus": gpus, "topology": topo}
                if graph is None:
                    c["error"] = "export: " + why
                else:
                    ans, rows = search(a.placer, graph, gpus, topo, a.cpu, "go-scored")
                    abl, _ = search(a.placer, graph, gpus, topo, a.cpu, "local-search-anchored")
                    if ans is None:
                        c["error"] = "search: " + rows
                    else:
                        best = min(((rows[r], r) for r in STRATEGY_ROWS if r in rows), default=(None, None))
                        c.update(answer_s=ans, best_row=best[1], best_row_s=best[0], single_s=rows.get("single"),
                                 ablation_s=abl if isinstance(abl, float) else None)
                        if best[0]:
                            c["row_over_answer"] = best[0] / ans
                        if c["ablation_s"]:
                            c["ablation_over_answer"] = c["ablation_s"] / ans
                cells.append(c)
                print(json.dumps(c), flush=True)
                if a.json:
                    with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(os.path.abspath(a.json)) or ".",
                                                     delete=False) as f:
                        json.dump({"cpu": a.cpu, "cells": cells}, f, indent=1)
                    os.replace(f.name, a.json)
    print("\n| model | GPUs | topology | best row | its step (ms) | answer (ms) | ablation (ms) | row / answer | ablation / answer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        if "error" in c:
            print("| %s | %d | %s | %s |  |  |  |  |  |" % (c["model"], c["gpus"], c["topology"], c["error"]))
            continue
        ms = lambda v: "%.4f" % (1e3 * v) if v else "-"  # noqa: E731
        print("| %s | %d | %s | %s | %s | %s | %s | %.3f | %s |" % (
            c["model"], c["gpus"], c["topology"], c["best_row"], ms(c["best_row_s"]), ms(c["answer_s"]),
            ms(c["ablation_s"]), c.get("row_over_answer", float("nan")),
            "%.3f" % c["ablation_over_answer"] if "ablation_over_answer" in c else "-"))
    print("\n| GPUs | topology | geomean row / answer | geomean ablation / answer | models |")
    print("|---|---|---|---|---|")
    for gpus in [int(g) for g in a.gpus.split(",")]:
        for topo in a.topology.split(","):
            cs = [c for c in cells if c["gpus"] == gpus and c["topology"] == topo and "error" not in c]
            print("| %d | %s | %.3f | %.3f | %d |" % (gpus, topo, geomean([c.get("row_over_answer") for c in cs]),
                                                   geomean([c.get("ablation_over_answer") for c in cs]), len(cs)))


if __name__ == "__main__":
    main()
