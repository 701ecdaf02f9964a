"""The op-level fidelity table: every committed fidelity row of the lent
H100s and H200s (measurements/*/fidelity-MODEL.json, real_ms) against
`placer eval --graph G --hardware HW --gpus 1` as a user runs it
("default", no --host flag: the host model is on for a graph that
records an eager PyTorch run, as these do), with --host=false (the GPU
alone: "strict" in earlier tables) and with --host, by one or two placer
binaries (before and after a change), on the row's
graph without its measured times (time_s and dispatch_s taken out, as
tools/measure/fidelity's roofline column and jobs' TestFidelityH100Roofline take
them out).

The graphs: the profiled exports committed beside the rows
(measurements/*/graphs); a zoo row without one takes a graph exported
here on CPU fake tensors with the fidelity run's settings (torchexport
--device cuda --optimizer-impl for-loop --tf32-matmul off --tf32-cudnn
on, the row's batch) into --zoo-dir, once. The "unnamed" rows are the
models no one here tuned on (2026-11-26-h100-c); the rest are the zoo.

    python3 tools/measure/fidelity/oplevel_table.py --placer /tmp/placer-before --placer bin/placer \\
        --work /tmp/oplevel --zoo-dir /tmp/oplevel/zoo
"""

import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MEAS = os.path.join(ROOT, "measurements")
UNNAMED = "2026-11-26-h100-c"
ZOO = ("resnet50", "bert_base", "vit_b_16", "gpt2_small", "inception_v3")


def strip(src, dst):
    """Writes graph src (and its meta file) to dst without measured times."""
    with open(src) as f:
        g = json.load(f)
    for op in g["ops"]:
        op.pop("time_s", None)
        op.pop("dispatch_s", None)
    with open(dst, "w") as f:
        json.dump(g, f)
    meta = src[:-len(".json")] + ".meta.json"
    if os.path.exists(meta):
        with open(meta) as f:
            m = json.load(f)
        m.pop("profile", None)
        with open(dst[:-len(".json")] + ".meta.json", "w") as f:
            json.dump(m, f)


def committed_graph(model, batch):
    """A profiled export of model at batch committed anywhere in
    measurements/ (the same export settings on every machine), or None."""
    key = model.split(":")[-1].replace("/", "_")
    for path in sorted(glob.glob(os.path.join(MEAS, "*", "graphs", "*-b%d-fp32.json" % batch))):
        if key in os.path.basename(path):
            return path
    return None


def zoo_graph(python, model, batch, zoo_dir):
    out = os.path.join(zoo_dir, "%s-b%d-fp32.json" % (model, batch))
    if not os.path.exists(out):
        os.makedirs(zoo_dir, exist_ok=True)
        cmd = [python, os.path.join(ROOT, "tools", "dev", "torchexport", "torchexport.py"), "--model", model, "--batch",
               str(batch), "--optimizer", "adam", "-o", out, "--device", "cuda", "--optimizer-impl", "for-loop",
               "--tf32-matmul", "off", "--tf32-cudnn", "on"]
        subprocess.run(cmd, check=True, capture_output=True)
    return out


# The columns: eval's flags for each ("default": none, what a user gets).
MODES = (("default", []), ("--host=false", ["--host=false"]), ("--host", ["--host"]))


def step_ms(placer, graph, hw, flags):
    cmd = [placer, "eval", "--graph", graph, "--hardware", hw, "--gpus", "1", "--json"] + flags
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["step_time_s"] * 1e3


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--placer", action="append", required=True, help="a placer binary; twice: before and after")
    p.add_argument("--work", required=True, help="a folder for the graphs without measured times")
    p.add_argument("--zoo-dir", required=True, help="where zoo graphs are exported when none is committed")
    p.add_argument("--python", default=sys.executable, help="the Python with torch that exports the zoo graphs")
    args = p.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for path in sorted(glob.glob(os.path.join(MEAS, "*", "fidelity-*.json"))):
        run = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            doc = json.load(f)
        for r in doc["rows"]:
            model, batch = r["model"], r["batch"]
            short = model.split(":")[-1]
            if run != UNNAMED and short not in ZOO:
                continue
            graph = committed_graph(model, batch)
            if graph is None and short in ZOO:
                graph = zoo_graph(args.python, short, batch, args.zoo_dir)
            if graph is None:
                continue
            stripped = os.path.join(args.work, "%s--%s" % (run, os.path.basename(graph)))
            strip(graph, stripped)
            hw = "h200" if "h200" in run else "h100"
            rows.append(("unnamed" if run == UNNAMED else "zoo", run.replace("2026-11-26-", ""), short, batch, hw,
                         r["real_ms"], stripped))
    names = [m for m, _ in MODES] if len(args.placer) == 1 else [
        "%s %s" % (m, w) for m, _ in MODES for w in ("before", "after")]
    print("| set | run | model, batch | hw | real ms | " + " | ".join(names) + " |")
    print("|---|---|---|---|---|" + "---|" * len(names))
    acc = {}
    for s, run, model, batch, hw, real, graph in rows:
        errs = [100 * (step_ms(b, graph, hw, flags) / real - 1) for _, flags in MODES for b in args.placer]
        for n, e in zip(names, errs):
            acc.setdefault((s, n), []).append(abs(e))
        print("| %s | %s | %s %d | %s | %.2f | %s |" % (s, run, model, batch, hw, real,
                                                        " | ".join("%+.1f%%" % e for e in errs)))
    for s in ("unnamed", "zoo"):
        if (s, names[0]) in acc:
            print("| %s | mean \\|error\\| (%d rows) | | | | %s |" % (
                s, len(acc[(s, names[0])]), " | ".join("%.1f%%" % (sum(acc[(s, n)]) / len(acc[(s, n)])) for n in names)))


if __name__ == "__main__":
    main()
