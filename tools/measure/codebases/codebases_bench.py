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

    python3 tools/measure/codebases/codebases_bench.py --out measurements \\
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


# nanotron's scaling benchmarks (the Ultra-Scale Playbook's runs on
# Hugging Face's H100 cluster): docs/benchmark_summary.svg, the README's
# "Benchmarks" figure, whose every number is a text comment of the
# matplotlib SVG; the models and the run's settings from
# scripts/scaling_benchmarks.py and examples/config_tiny_llama_bench.yaml.
NANOTRON_FILE = "docs/benchmark_summary.svg"
NANOTRON_COMMIT = "c252843039cc167ff8d6894b87172af4637eb14b"
NANOTRON_SCRIPT = ("scripts/scaling_benchmarks.py", "e24d2483a4e508e1298ed91b5f5abffa473dc647")
NANOTRON_BASE = ("examples/config_tiny_llama_bench.yaml", "67c5ebb6a925cb47026b22013af8bd1bb6c46d93")
NANOTRON_COLUMNS = ["id", "codebase", "source", "commit", "sweep", "part", "gpu", "gpus", "nodes", "model_b",
                    "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "tied", "seq_len",
                    "dp", "tp", "pp", "grad_accum", "micro_bsz", "global_batch", "zero_stage", "tp_mode",
                    "published_mfu_pct", "published_memory_gb", "model_flops_per_token", "peak_tflops", "measured_tgs"]
# H100 SXM's dense BF16 peak, TFLOP/s (NVIDIA's H100 datasheet: 1,979
# with sparsity): the MFU's denominator.
H100_PEAK_TFLOPS = 989.5


# The validation part of nanotron's rows, chosen on 2026-11-29 before any
# was predicted (measurements/nanotron/README.md): the 3.57B model's
# column (7 rows, 1 to 64 nodes). Every other row is development.
def nanotron_part(model_b):
    return "validation" if model_b == "3.57" else "development"


def nanotron_flops_per_token(layers, hidden, heads, kv_heads, ffn, vocab, seq):
    """nanotron's get_flops (src/nanotron/models/llama.py) for one token
    of a sequence of seq: 3 x (decoder + LM head) forward FLOPs."""
    d = hidden // heads
    dec = (2 * layers * seq * hidden * heads * d + 2 * layers * seq * hidden * 2 * kv_heads * d
           + 2 * layers * heads * seq * d * seq + 2 * layers * heads * seq * seq * d
           + 2 * layers * heads * seq * d * hidden + 4 * layers * seq * hidden * ffn + 2 * layers * seq * ffn * hidden)
    return 3 * (dec + 2 * seq * hidden * vocab) / seq


def nanotron_rows(mirror):
    svg = git_show(mirror, NANOTRON_COMMIT, NANOTRON_FILE)
    texts = [t.strip() for t in re.findall(r"<!-- (.*?) -->", svg)]
    script = git_show(mirror, NANOTRON_SCRIPT[1], NANOTRON_SCRIPT[0])
    base = git_show(mirror, NANOTRON_BASE[1], NANOTRON_BASE[0])
    # The models: scaling_benchmarks.py's model_configs (layers, hidden,
    # heads, intermediate), commented or not; embeddings tied below an
    # intermediate of 10,000; KV heads = heads (NUM_KEY_VALUE_HEADS None).
    models = {}
    for m in re.finditer(r'"(\d+B)": \((\d+), (\d+), (\d+), (\d+)\)', script):
        models[m.group(1)] = tuple(int(m.group(i)) for i in range(2, 6))
    if not re.search(r"^NUM_KEY_VALUE_HEADS = None", script, re.M):
        raise SystemExit(f"codebases_bench: {NANOTRON_SCRIPT[0]}: NUM_KEY_VALUE_HEADS is not None")
    seq = int(re.search(r"^\s*SEQUENCE_LENGTHS = \[(\d+)\]", script, re.M).group(1))
    vocab = int(re.search(r"^\s*VOCAB_SIZES = \[(\d+)\]", script, re.M).group(1))
    if "tie_word_embeddings\"] = True if intermediate_size < 10_000" not in script:
        raise SystemExit(f"codebases_bench: {NANOTRON_SCRIPT[0]}: the tied-embedding rule not found")
    for k, want in (("dtype", "bfloat16"), ("tp_mode", "REDUCE_SCATTER"), ("pp_engine", "1f1b"), ("accumulate_grad_in_fp32", "true")):
        if yaml_scalar(base, k) != want:
            raise SystemExit(f"codebases_bench: {NANOTRON_BASE[0]}: {k} {yaml_scalar(base, k)!r}, want {want!r}")

    def params(layers, hidden, heads, ffn):
        tied = ffn < 10000
        return (vocab * hidden * (1 if tied else 2) + layers * (3 * hidden * ffn + 4 * hidden * hidden)) / 1e9, tied
    by_size = {}
    for name, (layers, hidden, heads, ffn) in models.items():
        n, tied = params(layers, hidden, heads, ffn)
        by_size[f"{n:.2f}" if n < 10 else f"{n:.1f}"] = (name, layers, hidden, heads, ffn, tied)
    # The SVG's texts: axes 1 (x ticks: model sizes, y ticks: nodes, top
    # first; then MFU and memory a cell, row by row), axes 2 (the same
    # ticks, then each cell's configuration as three texts).
    i = texts.index("Model Size (Billion Parameters)")
    sizes = texts[:i]
    j = texts.index("Number of Nodes")
    nodes = [int(float(t)) for t in texts[i + 1:j]]
    k = texts.index("MFU and Memory Usage for Best Configurations")
    cells = texts[j + 1:k]
    mfu = [(float(cells[a]), float(cells[a + 1].rstrip("GB"))) for a in range(0, len(cells), 2)]
    c0 = texts.index("Number of Nodes", k) + 1
    c1 = texts.index("Best Configuration by Model Size and Number of Nodes")
    cfg = []
    for a in range(c0, c1, 3):
        m1 = re.fullmatch(r"DP: (\d+)\s+TP: (\d+)\s+PP: (\d+)", texts[a])
        m2 = re.fullmatch(r"GAS: (\d+)\s+MBS: (\d+)", texts[a + 1])
        m3 = re.fullmatch(r"ZeRO-(\d)", texts[a + 2])
        if not (m1 and m2 and m3):
            raise SystemExit(f"codebases_bench: {NANOTRON_FILE}: configuration {texts[a:a + 3]} not read")
        cfg.append(tuple(int(x) for x in m1.groups() + m2.groups() + m3.groups()))
    if len(cfg) != len(mfu):
        raise SystemExit(f"codebases_bench: {NANOTRON_FILE}: {len(cfg)} configurations, {len(mfu)} MFU cells")
    # Cells row by row (nodes, top first), the model sizes left to right;
    # a row holds a cell for each model size that ran at that node count:
    # the largest sizes are the ones missing (80B does not fit 1 or 2
    # nodes), checked by each configuration's GPU count.
    rows, at = [], 0
    for n in nodes:
        cnt = 0
        while at + cnt < len(cfg) and cfg[at + cnt][0] * cfg[at + cnt][1] * cfg[at + cnt][2] == 8 * n and cnt < len(sizes):
            cnt += 1
        for c in range(cnt):
            dp, tp, pp, gas, mbs, zero = cfg[at + c]
            (mf, mem), size = mfu[at + c], sizes[c]
            name, layers, hidden, heads, ffn, tied = by_size[size]
            gb = dp * gas * mbs
            if gb * seq != 2**20:
                raise SystemExit(f"codebases_bench: {NANOTRON_FILE}: {size}B on {n} nodes: global batch {gb} x {seq} is not 1M tokens")
            fpt = nanotron_flops_per_token(layers, hidden, heads, heads, ffn, vocab, seq)
            rows.append(dict(codebase="nanotron", source=NANOTRON_FILE, commit=NANOTRON_COMMIT,
                             sweep=f"nanotron scaling benchmarks: {size}B, best configuration, 1 to 64 H100 nodes",
                             part=nanotron_part(size), gpu="H100-SXM", gpus=8 * n, nodes=n, model_b=size, layers=layers, hidden=hidden,
                             heads=heads, kv_heads=heads, ffn=ffn, vocab=vocab, tied=int(tied), seq_len=seq, dp=dp, tp=tp, pp=pp,
                             grad_accum=gas, micro_bsz=mbs, global_batch=gb, zero_stage=zero, tp_mode="REDUCE_SCATTER",
                             published_mfu_pct=mf, published_memory_gb=mem, model_flops_per_token=round(fpt),
                             peak_tflops=H100_PEAK_TFLOPS, measured_tgs=round(mf / 100 * H100_PEAK_TFLOPS * 1e12 / fpt, 1)))
        at += cnt
    if at != len(cfg):
        raise SystemExit(f"codebases_bench: {NANOTRON_FILE}: {len(cfg) - at} cells not placed on a node row")
    for i, r in enumerate(rows):
        r["id"] = f"nanotron-{i + 1:03d}"
    return rows


# IBM's fms-fsdp (FSDP pretraining of Llama 2 shapes): README.md's two
# tables of tokens a second per GPU on 128 A100s and 96 H100s, eager (the
# last commit before the compile numbers) and under torch.compile, each
# with its MFU/HFU table.
FMS_FILE = "README.md"
FMS_COMMITS = {"eager": "4ffb9bdfa30e957e339ccfbb617a589fd07c495e", "compile": "ed74fd5ddec00e309eac20f478de883464c86526"}
FMS_COLUMNS = ["id", "codebase", "source", "commit", "sweep", "part", "gpu", "gpus", "node_gbps", "model", "layers", "hidden",
               "heads", "kv_heads", "ffn", "vocab", "seq_len", "sharding", "compile", "ac", "ac_fraction", "micro_bsz",
               "published_mfu", "published_hfu", "measured_tgs"]
# fms_fsdp/utils/config_utils.py get_model_config: (layers, hidden, heads,
# kv heads, ffn); 7b is fms's LLaMAConfig() default (Llama 2 7B).
FMS_MODELS = {"7b": (32, 4096, 32, 32, 11008), "13b": (40, 5120, 40, 40, 13824),
              "34b": (48, 8192, 64, 8, 22016), "70b": (80, 8192, 64, 8, 28672)}
# fms's LLaMAConfig src_vocab_size default (Llama 2's tokenizer), which
# training.py's vocab_size (where it has one) passes on.
FMS_VOCAB = 32000


# The validation part of fms-fsdp's rows, chosen on 2026-11-29 before any
# was predicted (measurements/fms-fsdp/README.md): the compiled table's
# H100 column (4 rows). Every other row is development.
def fms_part(table, gpu):
    return "validation" if table == "compile" and gpu == "H100" else "development"


def fms_rows(mirror):
    rows = []
    for table, commit in FMS_COMMITS.items():
        text = git_show(mirror, commit, FMS_FILE)
        cu = git_show(mirror, commit, "fms_fsdp/utils/config_utils.py")
        for v, (layers, hidden, heads, kv, ffn) in FMS_MODELS.items():
            if v != "7b" and not re.search(rf'model_variant == "{v}":\s*llama_config = LLaMAConfig\(\s*emb_dim={hidden},[^)]*nheads={heads},'
                                           + (rf'\s*kvheads={kv},' if kv != heads else "") + rf'\s*nlayers={layers},\s*hidden_grow_factor={ffn} / {hidden},', cu):
                raise SystemExit(f"codebases_bench: fms_fsdp/utils/config_utils.py at {commit}: variant {v} not as read")
        tc = git_show(mirror, commit, "fms_fsdp/config/training.py")
        seq, vocab = int(re.search(r"seq_length: int = (\d+)", tc).group(1)), FMS_VOCAB
        m = re.search(r"vocab_size: int = (\d+)", tc)
        if m and int(m.group(1)) != vocab:
            raise SystemExit(f"codebases_bench: fms_fsdp/config/training.py at {commit}: vocab_size {m.group(1)}, want {vocab}")
        tabs = [t for t in md_tables(text) if t[2][0][0] == "Model Size"]
        tput, util = tabs[0][2], tabs[1][2]
        hdr = tput[0]
        cols = {}
        for ci, h in enumerate(hdr):
            m = re.search(r"(A100|H100)(?: 80G)? (\d+) GPUs with (\d+) ?Gbps", h)
            if m:
                cols[m.group(1)] = (ci, int(m.group(2)), int(m.group(3)))
        uh = util[0]
        for r in tput[1:]:
            d = dict(zip(hdr, r))
            v = r[0].strip()
            layers, hidden, heads, kv, ffn = FMS_MODELS[v]
            u = next(x for x in util[1:] if x[0].strip().lower() == v)
            ud = dict(zip(uh, u))
            ac = d["Activation Checkpointing"].strip()
            for gpu, (ci, gpus, gbps) in cols.items():
                mfu, hfu = float(ud[f"MFU ({gpu} 80G)"]), float(ud[f"HFU ({gpu} 80G)"])
                # The fraction of blocks checkpointed (ac_handler's p):
                # none for "No AC", all for "Full AC"; "Selective AC" the
                # table's own HFU/MFU = (3 + p) / 3, to the nearest block.
                frac = {"No AC": 0.0, "Full AC": 1.0}.get(ac)
                if frac is None:
                    if ac != "Selective AC":
                        raise SystemExit(f"codebases_bench: {FMS_FILE} at {commit}: activation checkpointing {ac!r} not read")
                    frac = min(1.0, max(0.0, round(3 * (hfu / mfu - 1) * layers) / layers))
                rows.append(dict(codebase="fms-fsdp", source=FMS_FILE, commit=commit,
                                 sweep=f"fms-fsdp: Llama 2 7B to 70B, {'torch.compile' if table == 'compile' else 'eager'}, {gpus} {gpu}s",
                                 part=fms_part(table, gpu), gpu=gpu, gpus=gpus, node_gbps=gbps, model=v, layers=layers, hidden=hidden,
                                 heads=heads, kv_heads=kv, ffn=ffn, vocab=vocab, seq_len=seq, sharding=d["Sharding Strategy"].strip(),
                                 compile=int(table == "compile"), ac=ac, ac_fraction=round(frac, 4), micro_bsz=int(d["Batch Size"]),
                                 published_mfu=mfu, published_hfu=hfu, measured_tgs=int(r[ci])))
    for i, r in enumerate(rows):
        r["id"] = f"fms-fsdp-{i + 1:03d}"
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
    ap.add_argument("--nanotron", help="a mirror of huggingface/nanotron")
    ap.add_argument("--fms-fsdp", dest="fms", help="a mirror of foundation-model-stack/fms-fsdp")
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
    if a.nanotron:
        write(a.out, "nanotron", nanotron_rows(a.nanotron), NANOTRON_COLUMNS)
        done += 1
    if a.fms:
        write(a.out, "fms-fsdp", fms_rows(a.fms), FMS_COLUMNS)
        done += 1
    if not done:
        raise SystemExit("codebases_bench: no mirror given (--internevo, --flashattn, --torchtitan, --nanotron, --fms-fsdp)")


if __name__ == "__main__":
    main(sys.argv[1:])
