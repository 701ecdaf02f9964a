#!/usr/bin/env python3
"""Published training throughputs of code bases other than NVIDIA's MLPerf
recipes (issue 91, item 2), read from fetched git mirrors at named commits
into measurements/<codebase>/runs.csv.

Each reader takes a bare git mirror (or checkout), reads one published file
at a pinned commit with `git show COMMIT:PATH`, parses its tables and writes
one row per measured figure, with the part of the bench (development or
validation) each row is in by the rule its README states. The rule is the
reader's, written down before any row was predicted; no figure is typed by
hand.

Python 3 standard library only.

    python3 tools/codebases/codebases_bench.py --out measurements \\
        --internevo /work/.mirror/InternLM+InternEvo/repo
"""

import argparse
import csv
import os
import re
import subprocess
import sys

# InternEvo's train_performance.md: the file and commit read (the last
# commit that changed it; HEAD of the mirror on 2026-11-29, c628a8c, holds
# the same bytes).
INTERNEVO_FILE = "doc/en/train_performance.md"
INTERNEVO_COMMIT = "34fc28d760282c11a2aba552d5b21ffefed3e188"

COLUMNS = [
    "id", "codebase", "source", "commit", "table", "sweep", "part",
    "gpu", "gpus", "gpus_per_node", "host_nics", "host_nic_gbps",
    "tp", "pp", "zero1", "micro_bsz", "micro_num", "seq_len",
    "pack_sample_into_one", "activation_ckpt", "global_tokens",
    "measured_tgs", "published_tflops",
]


def git_show(mirror, commit, path):
    """The bytes of path at commit in mirror (bare or checkout), as text."""
    gitdir = mirror if os.path.isfile(os.path.join(mirror, "HEAD")) else os.path.join(mirror, ".git")
    out = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"],
                         capture_output=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"codebases_bench: {mirror}: cannot read {path} at {commit}: "
                         f"{out.stderr.decode().strip()}")
    return out.stdout.decode()


def md_tables(text):
    """Each markdown table of text as (heading, paragraph before it, rows),
    rows a list of cell lists, the header first, separator lines dropped."""
    tables, cur, heading, para = [], None, "", []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) or c == "" for c in cells):
                continue
            if cur is None:
                cur = (heading, " ".join(para), [])
                tables.append(cur)
            cur[2].append(cells)
            continue
        cur = None
        if s.startswith("#"):
            heading, para = s.lstrip("#").strip(), []
        elif s:
            para.append(s)
    return tables


# The validation part of InternEvo's rows, chosen on 2026-11-29 before any
# of them was predicted (measurements/internevo/README.md): the
# throughput table's tensor-parallel rows (tp=2, both ZeRO-1 ranges: 16
# rows, two sweeps). Every other row is development.
def internevo_part(table, tp):
    return "validation" if table == "throughput" and tp == 2 else "development"


def internevo_rows(mirror):
    text = git_show(mirror, INTERNEVO_COMMIT, INTERNEVO_FILE)
    tables = md_tables(text)
    # The hardware table: A100 SXM4 80 GB, 4 x 100 Gb RoCE a node.
    hw = next(t for t in tables if t[2][0][0] == "Hardware")
    hwd = {r[0]: r[1] for r in hw[2][1:]}
    if hwd.get("GPU") != "nvidia_a100-sxm4-80gb":
        raise SystemExit(f"codebases_bench: {INTERNEVO_FILE}: GPU {hwd.get('GPU')!r}, want nvidia_a100-sxm4-80gb")
    m = re.fullmatch(r"(\d+) \* (\d+)Gb RoCE", hwd.get("Inter-machine bandwidth", ""))
    if not m:
        raise SystemExit(f"codebases_bench: {INTERNEVO_FILE}: inter-machine bandwidth {hwd.get('Inter-machine bandwidth')!r} not read")
    nics, gbps = int(m.group(1)), int(m.group(2))
    # The hyperparameter table of the throughput test: micro_num,
    # micro_bsz and seq_len for tp=1 and tp=2.
    hp = next(t for t in tables if t[2][0][0] == "Hyperparameters")
    cols = hp[2][0][1:]
    hyper = {c: {r[0]: int(r[1 + i]) for r in hp[2][1:]} for i, c in enumerate(cols)}
    base = dict(codebase="internevo", source=INTERNEVO_FILE, commit=INTERNEVO_COMMIT, gpu="A100-SXM4-80GB",
                gpus_per_node=8, host_nics=nics, host_nic_gbps=gbps, pp=1)
    rows = []
    # The throughput table: pack_sample_into_one False, checkpoint False.
    tp_tab = next(t for t in tables if t[2][0][0] == "Parallel Configuration")
    gpus = [int(re.match(r"(\d+) GPUs", c).group(1)) for c in tp_tab[2][0][1:]]
    for r in tp_tab[2][1:]:
        m = re.fullmatch(r"\(tp=(\d+), zero1=(-?\d+)\)", r[0])
        if not m:
            raise SystemExit(f"codebases_bench: {INTERNEVO_FILE}: configuration {r[0]!r} not read")
        tp, zero1 = int(m.group(1)), int(m.group(2))
        h = hyper[f"tp={tp}"]
        for g, v in zip(gpus, r[1:]):
            rows.append(dict(base, table="throughput", sweep=f"InternEvo throughput: 7B, tp={tp}, zero1={zero1}, 8 to 1024 A100s",
                             part=internevo_part("throughput", tp), gpus=g, tp=tp, zero1=zero1,
                             micro_bsz=h["micro_bsz"], micro_num=h["micro_num"], seq_len=h["seq_len"],
                             pack_sample_into_one=0, activation_ckpt=0,
                             global_tokens=h["micro_bsz"] * h["micro_num"] * h["seq_len"] * g // tp,
                             measured_tgs=int(v), published_tflops=""))
    # The two FLOPS tables (pack_sample_into_one True), activation
    # checkpointing on and off.
    for t in tables:
        if t[2][0][:4] != ["TP", "Zero1", "Pack Sample Into One", "Activation Ckpt"]:
            continue
        hdr = t[2][0]
        for r in t[2][1:]:
            d = dict(zip(hdr, r))
            ckpt = {"TRUE": 1, "FALSE": 0}[d["Activation Ckpt"]]
            g, mb, mn, seq = int(d["GPU Num"]), int(d["Micro Bsz"]), int(d["Micro Num"]), int(d["Seq Len"])
            tp = int(d["TP"])
            tokens = mb * mn * seq * g // tp
            gb = d["Global Bsz"]
            want = float(gb.rstrip("M")) * 2**20
            if abs(tokens - want) > 1:
                raise SystemExit(f"codebases_bench: {INTERNEVO_FILE}: global batch {gb} is not {tokens} tokens (row {r})")
            table = "flops-ckpt" if ckpt else "flops-no-ckpt"
            rows.append(dict(base, table=table,
                             sweep=f"InternEvo FLOPS test: 7B, packed, activation checkpointing {'on' if ckpt else 'off'}, 8 to 1024 A100s",
                             part=internevo_part(table, tp), gpus=g, tp=tp, zero1=int(d["Zero1"]),
                             micro_bsz=mb, micro_num=mn, seq_len=seq, pack_sample_into_one=1, activation_ckpt=ckpt,
                             global_tokens=tokens, measured_tgs=int(d["TGS"]), published_tflops=int(d["TFLOPS"])))
    for i, r in enumerate(rows):
        r["id"] = f"internevo-{i + 1:03d}"
    return rows


def write(outdir, codebase, rows):
    d = os.path.join(outdir, codebase)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    parts = {}
    for r in rows:
        parts[r["part"]] = parts.get(r["part"], 0) + 1
    print(f"{codebase}: {len(rows)} rows ({', '.join(f'{k} {v}' for k, v in sorted(parts.items()))})")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="measurements/ (each code base under its own folder)")
    ap.add_argument("--internevo", help="a mirror of InternLM/InternEvo")
    a = ap.parse_args(argv)
    done = 0
    if a.internevo:
        write(a.out, "internevo", internevo_rows(a.internevo))
        done += 1
    if not done:
        raise SystemExit("codebases_bench: no mirror given (--internevo)")


if __name__ == "__main__":
    main(sys.argv[1:])
