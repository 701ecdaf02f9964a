#!/usr/bin/env python3
"""Published training throughputs of code bases other than NVIDIA's MLPerf
recipes (DESIGN.md §14, "The bench's reach"), read from fetched git mirrors at named commits
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
    "measured_tgs", "published_tflops", "fused_loss",
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
    # The loss: configs/7B_sft.py's parallel_output=True makes
    # internlm/model/loss.py's FlashGPTLMLoss flash_attn's fused
    # cross-entropy with inplace_backward=True.
    cfg = git_show(mirror, INTERNEVO_COMMIT, "configs/7B_sft.py")
    loss = git_show(mirror, INTERNEVO_COMMIT, "internlm/model/loss.py")
    fused = int(re.search(r"parallel_output=True", cfg) is not None and "inplace_backward=True" in loss
                and "FlashCrossEntropyLoss(" in loss)
    base = dict(codebase="internevo", source=INTERNEVO_FILE, commit=INTERNEVO_COMMIT, gpu="A100-SXM4-80GB",
                gpus_per_node=8, host_nics=nics, host_nic_gbps=gbps, pp=1, fused_loss=fused)
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


# flash-attention's training code (training/, Lightning + Hydra):
# training/README.md's GPT3 table of tokens a second on 8 A100 80 GB, at
# the commit that last changed it, and each model's experiment config at
# the same commit.
FLASHATTN_FILE = "training/README.md"
FLASHATTN_COMMIT = "88173a1aafe8e2796fcfc9433160838138f0dfc1"
FLASHATTN_CONFIGS = {  # the table's model -> training/configs/experiment/pile/<name>.yaml (its README's commands)
    "GPT3-125M": "gpt3s-flash", "GPT3-355M": "gpt3m-flash", "GPT3-760M": "gpt3l-flash",
    "GPT3-1.3B": "gpt3xl-flash", "GPT3-2.7B": "gpt3-2.7B-flash-hdim128",
}
FLASHATTN_COLUMNS = ["id", "codebase", "source", "commit", "sweep", "part", "gpu", "gpus", "model", "config",
                     "layers", "hidden", "heads", "seq_len", "micro_bsz", "global_batch", "zero1", "fused_loss",
                     "batch_tokens_published", "measured_tokens_per_s", "measured_tgs"]


# The validation part of flash-attention's rows, chosen on 2026-11-29
# before any was predicted (measurements/flashattn/README.md): the 1M-token
# batch rows (GPT3-1.3B and 2.7B: ZeRO-1 with gradient accumulation).
def flashattn_part(global_tokens):
    return "validation" if global_tokens >= 2**20 else "development"


def yaml_scalar(text, key):
    """The first `key: value` of text at any indent, as a string."""
    m = re.search(r"^\s*" + re.escape(key) + r":\s*(.+?)\s*(#.*)?$", text, re.M)
    return m.group(1) if m else None


def flashattn_batch(expr, gpu_mem):
    """The per-GPU batch of a config's `${eval:"a if ${train.gpu_mem} < x else (...)"}` at gpu_mem."""
    m = re.fullmatch(r'\$\{eval:"(.*)"\}', expr)
    if not m:
        return int(expr)
    py = m.group(1).replace("${train.gpu_mem}", str(gpu_mem))
    if not re.fullmatch(r"[0-9 ()<>=ifelse.]+", py):
        raise SystemExit(f"codebases_bench: flash-attention batch {expr!r} not read")
    return int(eval(py))  # noqa: S307 (digits, comparisons and if/else only, checked above)


def flashattn_config(mirror, name, gpu_mem):
    """A pile experiment's model shape, per-GPU batch, global batch and
    whether its strategy is ZeRO-1, following its defaults chain."""
    out, chain = {}, []
    cur = f"training/configs/experiment/pile/{name}.yaml"
    while cur:
        text = git_show(mirror, FLASHATTN_COMMIT, cur)
        chain.append(text)
        m = re.search(r"^\s*-\s*/experiment/pile/([\w.-]+?)(\.yaml)?\s*$", text, re.M)
        cur = f"training/configs/experiment/pile/{m.group(1)}.yaml" if m else None
    # The model: gpt2model override (the nearest in the chain) then n_* keys.
    for text in reversed(chain):  # base first, the experiment last
        m = re.search(r"override /model/gpt2model:\s*([\w-]+)", text)
        if m:
            g = git_show(mirror, FLASHATTN_COMMIT, f"training/configs/model/gpt2model/{m.group(1)}.yaml")
            for k in ("n_embd", "n_head", "n_layer"):
                out[k] = int(yaml_scalar(g, k))
        for k in ("n_embd", "n_head", "n_layer"):
            v = yaml_scalar(text, k)
            if v is not None and "$" not in v:
                out[k] = int(v)
        v = yaml_scalar(text, "batch_size")
        if v is not None:
            out["batch"] = flashattn_batch(v, gpu_mem)
        v = yaml_scalar(text, "global_batch_size")
        if v is not None:
            out["global"] = int(v)
        if "ddp_zero1.DDPStrategyZero1" in text:
            out["zero1"] = 1
        if "_target_: flash_attn.losses.cross_entropy.CrossEntropyLoss" in text:
            out["fused_loss"] = int(re.search(r"inplace_backward:\s*True", text) is not None)
    out.setdefault("zero1", 0)
    out.setdefault("fused_loss", 0)
    return out


def flashattn_rows(mirror):
    text = git_show(mirror, FLASHATTN_COMMIT, FLASHATTN_FILE)
    if "8 x A100 80GB SXM4 80GB (400W)" not in text:
        raise SystemExit(f"codebases_bench: {FLASHATTN_FILE}: the 8 x A100 80GB SXM4 (400W) node not stated")
    base = git_show(mirror, FLASHATTN_COMMIT, "training/configs/experiment/pile/base.yaml")
    seq = int(yaml_scalar(base, "max_length"))
    devices = int(yaml_scalar(base, "devices"))
    # train.gpu_mem: nvidia-smi's memory.total in MiB / 1000, rounded: an
    # A100 80 GB reports 81,920 MiB.
    gpu_mem = round(81920 / 1000)
    tab = next(t for t in md_tables(text) if t[2][0][0] == "Model")
    rows = []
    for r in tab[2][1:]:
        model, btok, tput = r[0], r[1], r[2]
        cfg = flashattn_config(mirror, FLASHATTN_CONFIGS[model], gpu_mem)
        m = re.fullmatch(r"([\d.]+)k", tput)
        tps = int(round(float(m.group(1)) * 1000))
        mb = re.fullmatch(r"([\d.]+)M", btok)
        tokens = cfg["global"] * seq
        if abs(tokens - float(mb.group(1)) * 2**20) > 1:
            raise SystemExit(f"codebases_bench: {FLASHATTN_FILE}: {model}: batch {btok} is not {cfg['global']} x {seq} tokens")
        rows.append(dict(codebase="flashattn", source=FLASHATTN_FILE, commit=FLASHATTN_COMMIT,
                         sweep="flash-attention training: GPT3 125M to 2.7B on 8 A100s" if flashattn_part(tokens) == "development" else "flash-attention training: GPT3 1.3B and 2.7B on 8 A100s (1M-token batch)",
                         part=flashattn_part(tokens), gpu="A100-SXM4-80GB", gpus=devices, model=model, config=FLASHATTN_CONFIGS[model],
                         layers=cfg["n_layer"], hidden=cfg["n_embd"], heads=cfg["n_head"], seq_len=seq, micro_bsz=cfg["batch"],
                         global_batch=cfg["global"], zero1=cfg["zero1"], fused_loss=cfg["fused_loss"], batch_tokens_published=btok,
                         measured_tokens_per_s=tps, measured_tgs=round(tps / devices, 1)))
    for i, r in enumerate(rows):
        r["id"] = f"flashattn-{i + 1:03d}"
    return rows


# torchtitan's Llama 3.1 8B runs on H200 by Trainy on WhiteFiber (June
# 2025): benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md, with the
# llama3_8b.toml of the torchtitan commit the page names.
TITANH200_FILE = "benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md"
TITANH200_COMMIT = "4a61bd87d3c7e92bcfeb5d5464d9e6bd13ef440a"
TITANH200_COLUMNS = ["id", "codebase", "source", "commit", "torchtitan_commit", "sweep", "part", "gpu", "gpus", "nodes",
                     "nic_gbps_per_gpu", "local_batch_size", "seq_len", "ac_mode", "ac_option", "compile", "float8",
                     "fsdp_float8_all_gather", "measured_tgs", "memory_gib"]


# The validation part, chosen on 2026-11-29 before either row was
# predicted (measurements/torchtitan-h200/README.md): the 8-node row.
def titanh200_part(nodes):
    return "validation" if nodes == 8 else "development"


def titanh200_rows(mirror):
    text = git_show(mirror, TITANH200_COMMIT, TITANH200_FILE)
    tt = re.search(r"\| torchtitan \| \[(\w+)\]", text)
    if not tt:
        raise SystemExit(f"codebases_bench: {TITANH200_FILE}: torchtitan commit not read")
    cmd = text[text.index("torchrun"):text.index("```", text.index("torchrun"))]
    lb = int(re.search(r"--training\.local_batch_size=(\d+)", cmd).group(1))
    toml = git_show(mirror, tt.group(1), "torchtitan/models/llama3/train_configs/llama3_8b.toml")
    seq = int(yaml_scalar(toml.replace(" = ", ": "), "seq_len"))
    mode = yaml_scalar(toml.replace(" = ", ": "), "mode").strip('"')
    opt = yaml_scalar(toml.replace(" = ", ": "), "selective_ac_option").strip('"')
    m = re.search(r"(\d+)Gb/s \(Mellanox CX-7\) per GPU", text)
    tab = next(t for t in md_tables(text) if t[2][0][0] == "NUM_NODES")
    rows = []
    for r in tab[2][1:]:
        nodes = int(r[0])
        rows.append(dict(codebase="torchtitan-h200", source=TITANH200_FILE, commit=TITANH200_COMMIT, torchtitan_commit=tt.group(1),
                         sweep=f"torchtitan on H200 (Trainy, 2025-06): Llama 3.1 8B FSDP, {nodes} nodes", part=titanh200_part(nodes),
                         gpu="H200", gpus=8 * nodes, nodes=nodes, nic_gbps_per_gpu=int(m.group(1)), local_batch_size=lb, seq_len=seq,
                         ac_mode=mode, ac_option=opt, compile=int("--training.compile" in cmd), float8=int(re.search(r'--model\.converters="[\w.]*float8"', cmd) is not None),
                         fsdp_float8_all_gather=int("float8.enable_fsdp_float8_all_gather" in cmd),
                         measured_tgs=int(r[1]), memory_gib=float(r[2])))
    for i, r in enumerate(rows):
        r["id"] = f"torchtitan-h200-{i + 1:03d}"
    return rows


def write(outdir, codebase, rows, columns=COLUMNS):
    d = os.path.join(outdir, codebase)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
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
    ap.add_argument("--flashattn", help="a mirror of Dao-AILab/flash-attention")
    ap.add_argument("--torchtitan", help="a mirror of pytorch/torchtitan")
    a = ap.parse_args(argv)
    done = 0
    if a.internevo:
        write(a.out, "internevo", internevo_rows(a.internevo))
        done += 1
    if a.flashattn:
        write(a.out, "flashattn", flashattn_rows(a.flashattn), FLASHATTN_COLUMNS)
        done += 1
    if a.torchtitan:
        write(a.out, "torchtitan-h200", titanh200_rows(a.torchtitan), TITANH200_COLUMNS)
        done += 1
    if not done:
        raise SystemExit("codebases_bench: no mirror given (--internevo, --flashattn, --torchtitan)")


if __name__ == "__main__":
    main(sys.argv[1:])
