#!/usr/bin/env python3
"""Read NVIDIA DeepLearningExamples' PyTorch README tables into a bench table.

Reads the per-example README.md files of NVIDIA/DeepLearningExamples (a bare
git mirror, as the project's fetch leaves under /work/.mirror, at a named
commit) and writes measurements/dle/rows.csv: one row per published
training throughput (model, GPUs, batch per GPU, precision) and per
published inference latency (batch, precision), with the GPU the table's
heading names, the example's script and flags as its README and configs
state them (code_path), the README's path and the commit read.

    python3 tools/measure/dle/dle_bench.py --mirror /work/.mirror/NVIDIA+DeepLearningExamples/repo \\
        --commit 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd --out measurements/dle

Standard library and PyYAML (Debian's python3-yaml: the ConvNets batch
sizes are in configs.yml, not in the tables). The validation part is fixed
in measurements/dle/README.md (whole models chosen by a hash of the model
name, before any prediction); the part column is written from that rule.
"""

import argparse
import csv
import hashlib
import io
import os
import re
import subprocess
import sys

try:
    import yaml
except ImportError:  # pragma: no cover - reported as one line
    yaml = None

COLUMNS = ["id", "part", "model", "variant", "example", "kind", "gpu", "gpu_mem_gb", "system",
           "gpus", "batch", "precision", "value", "unit", "metric", "settings", "code_path",
           "readme", "line", "commit"]

# The examples read: README directory -> (model, code path as its README's
# benchmark section states it). Rows of other READMEs are not read.
EXAMPLES = {
    "PyTorch/Translation/GNMT": ("gnmt",
        "train.py (torch.distributed.launch; --math fp32|tf32|fp16; apex FusedAdam, DDP)"),
    "PyTorch/Translation/Transformer": ("transformer_nmt",
        "train.py (fairseq-based; --amp; apex FusedAdam, fused layer norm)"),
    "PyTorch/LanguageModeling/Transformer-XL": ("transformer_xl",
        "run_wt103_{base,large}.sh train --config trainbench [--fp16] (apex AMP, Lamb/Adam, DDP)"),
    "PyTorch/LanguageModeling/BERT": ("bert",
        "scripts/run_pretraining.sh | run_squad.sh (fp16|tf32; apex FusedLAMB/BertAdam, fused GELU)"),
    "PyTorch/LanguageModeling/BART": ("bart",
        "scripts/run_summarization.sh (fp16|bf16|tf32)"),
    "PyTorch/Classification/ConvNets/resnet50v1.5": ("resnet50",
        "launch.py --model resnet50 --mode benchmark_training (configs.yml: AMP + memory_format nhwc)"),
    "PyTorch/Classification/ConvNets/resnext101-32x4d": ("resnext101_32x4d",
        "launch.py --model resnext101-32x4d --mode benchmark_training (configs.yml: AMP + memory_format nhwc)"),
    "PyTorch/Classification/ConvNets/se-resnext101-32x4d": ("se_resnext101_32x4d",
        "launch.py --model se-resnext101-32x4d --mode benchmark_training (configs.yml: AMP + memory_format nhwc)"),
    "PyTorch/Classification/ConvNets/efficientnet": ("efficientnet",
        "launch.py --model efficientnet-<v> --mode benchmark_training (configs.yml: AMP + memory_format nhwc)"),
    "PyTorch/SpeechSynthesis/Tacotron2": ("tacotron2",
        "train.py -m Tacotron2|WaveGlow --cudnn-enabled [--amp] (multiproc DDP)"),
    "PyTorch/SpeechSynthesis/FastPitch": ("fastpitch",
        "scripts/train.sh [--amp] (DDP, FusedLAMB)"),
    "PyTorch/SpeechSynthesis/HiFiGAN": ("hifigan",
        "scripts/train_benchmark.sh [--amp] (DDP)"),
    "PyTorch/SpeechRecognition/Jasper": ("jasper",
        "scripts/train_benchmark.sh (AMP=true|false; DALI; apex FusedNovoGrad)"),
    "PyTorch/SpeechRecognition/QuartzNet": ("quartznet",
        "scripts/train_benchmark.sh (AMP=true|false; DALI; apex FusedNovoGrad)"),
    "PyTorch/SpeechRecognition/wav2vec2": ("wav2vec2",
        "scripts/pretrain_base_benchmark.sh (--fp16|--bf16; DDP)"),
    "PyTorch/Detection/SSD": ("ssd300",
        "main.py --mode benchmark-training [--amp] (torchrun DDP, DALI, apex FusedSGD)"),
    "PyTorch/Detection/Efficientdet": ("efficientdet",
        "train.py --benchmark [--amp] (DDP)"),
    "PyTorch/Recommendation/NCF": ("ncf",
        "ncf.py --epochs 5 [--amp] (torch.distributed.launch, FusedAdam)"),
    "PyTorch/Recommendation/DLRM": ("dlrm",
        "dlrm/scripts/main.py --mode train [--amp] (hybrid parallel)"),
    "PyTorch/Segmentation/MaskRCNN": ("maskrcnn",
        "scripts/train_benchmark.sh <float16|tf32|float32> <gpus> <NHWC> <hybrid dataloader>"),
    "PyTorch/Segmentation/nnUNet": ("nnunet",
        "scripts/benchmark.py --mode train [--amp] (PyTorch Lightning, DALI)"),
    "PyTorch/Forecasting/TFT": ("tft",
        "scripts/benchmark.sh [--amp] (DDP)"),
    "PyTorch/DrugDiscovery/SE3Transformer": ("se3transformer",
        "scripts/benchmark_train.sh [--amp] (DDP)"),
    "PyTorch/DrugDiscovery/MoFlow": ("moflow",
        "scripts/benchmark_training.sh [--amp] (DDP)"),
}

# The unit where a table's header and cells name none: the README's prose
# ("Performance numbers (in ... per second)") above the table.
DEFAULT_UNIT = {
    "PyTorch/SpeechRecognition/Jasper": "sequences/s",
    "PyTorch/SpeechRecognition/QuartzNet": "sequences/s",
    "PyTorch/SpeechRecognition/wav2vec2": "tokens/s",
    "PyTorch/Detection/SSD": "images/s",
    "PyTorch/Detection/Efficientdet": "images/s",
    "PyTorch/Forecasting/TFT": "items/s",
    "PyTorch/Recommendation/DLRM": "items/s",
    "PyTorch/Recommendation/NCF": "samples/s",
    "PyTorch/DrugDiscovery/MoFlow": "molecules/s",
    "PyTorch/DrugDiscovery/SE3Transformer": "molecules/s",
    "PyTorch/SpeechSynthesis/FastPitch": "mel frames/s",
    "PyTorch/SpeechSynthesis/HiFiGAN": "mel frames/s",
    "PyTorch/Translation/Transformer": "tok/s",
    "PyTorch/Segmentation/MaskRCNN": "images/s",
    "PyTorch/Segmentation/nnUNet": "img/s",
    "PyTorch/LanguageModeling/BART": "sequences/s",
}

# ConvNets' tables give no batch: it is configs.yml's, by model, platform
# and precision (launch.py --platform).
CONVNETS_CONFIG = "PyTorch/Classification/ConvNets/configs.yml"

GPU_RE = re.compile(r"(A100|V100|H100|A30|A40|A10|T4|A6000|L4|L40S?|H200|GH200)(?:[- ](?:SXM\d?|PCIe))?(?:[ -]*(\d+)\s*G[Bi]?)?", re.I)


class Tree:
    """A bare git mirror read at one commit."""

    def __init__(self, path, commit):
        self.path = path
        self.commit = self._rev(commit)

    def _rev(self, commit):
        r = subprocess.run(["git", "--git-dir", self.path, "rev-parse", "--verify", commit + "^{commit}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"dle_bench: {self.path}: no commit {commit}")
        return r.stdout.strip()

    def read(self, rel):
        r = subprocess.run(["git", "--git-dir", self.path, "show", f"{self.commit}:{rel}"],
                           capture_output=True)
        if r.returncode != 0:
            return None
        return r.stdout.decode("utf-8", "replace")


def cells(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip().replace("**", "").replace("__", "").strip() for c in s.split("|")]


def is_rule(line):
    return bool(re.fullmatch(r"\|?[\s:|-]+\|?", line.strip())) and "-" in line


def tables(text):
    """Yields (headings, header cells, [(line no, cells)]) for every markdown table."""
    heads = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^(#{1,6})\s+(.*)$", ln)
        if m:
            lvl = len(m.group(1))
            heads = {k: v for k, v in heads.items() if k < lvl}
            heads[lvl] = m.group(2).strip()
            i += 1
            continue
        if ln.strip().startswith("|") and i + 1 < len(lines) and is_rule(lines[i + 1]):
            header = cells(ln)
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                rows.append((j + 1, cells(lines[j])))
                j += 1
            yield [heads[k] for k in sorted(heads)], header, rows
            i = j
            continue
        i += 1


def precision_of(s):
    t = s.lower()
    if "tf32" in t:
        return "TF32"
    if "fp32" in t or "float32" in t or "single" in t:
        return "FP32"
    if "bf16" in t:
        return "BF16"
    if "mixed" in t or "fp16" in t or "amp" in t or "float16" in t or "half" in t:
        return "AMP"
    return ""


def gpu_of(headings):
    """The GPU, its memory and the system from the innermost heading naming one."""
    for h in reversed(headings):
        ms = list(GPU_RE.finditer(h))
        if ms:
            m = next((x for x in ms if x.group(2)), ms[0])
            gpu = m.group(1).upper()
            mem = m.group(2) or ""
            sysm = re.search(r"(DGX[- ]?(?:1|2H?|A100|H100|H200|Station))", h, re.I)
            return gpu, mem, (sysm.group(1) if sysm else "")
    return "", "", ""


def number(s):
    s = s.replace(",", "").strip()
    m = re.match(r"^~?\s*([0-9]+(?:\.[0-9]+)?)([kKM])?(?:\s*([A-Za-z/%\-]+(?:/[A-Za-z]+)?))?\s*$", s)
    if not m:
        return None, ""
    scale = {"k": 1e3, "K": 1e3, "M": 1e6}.get(m.group(2) or "", 1.0)
    return float(m.group(1)) * scale, (m.group(3) or "")


def unit_of(header):
    m = re.search(r"\(([^)]*?(?:/s|/sec|per second|s)[^)]*)\)", header)
    if m and not precision_of(m.group(1)):
        return m.group(1).strip()
    m = re.search(r"(tok/s|img/s|images/s|sequences/s(?:ec)?|samples/s(?:ec)?|mels/s|frames/s)", header, re.I)
    return m.group(1) if m else ""


def batch_for(cell, header, prec):
    """The batch per GPU for one precision from a cell such as '128', '128 and 256'
    (header '(TF32 and FP16)') or '104@FP16, 48@FP32'."""
    c = cell.replace(",", ", ").strip()
    if "@" in c:
        for part in re.split(r"[,;]", c):
            m = re.match(r"\s*(\d+)\s*@\s*(\w+)", part)
            if m and precision_of(m.group(2)) == prec:
                return int(m.group(1))
        return None
    m = re.fullmatch(r"(\d+)\s*(?:and|,)\s*(\d+)", cell.strip())
    if m:
        order = re.search(r"\((\w+)\s*(?:and|,)\s*(\w+)\)", header)
        if not order:
            return None
        a, b = precision_of(order.group(1)), precision_of(order.group(2))
        if prec == a:
            return int(m.group(1))
        if prec == b:
            return int(m.group(2))
        return None
    v, u = number(cell.replace("k", "K"))
    if v is not None and not u and v == int(v):
        return int(v if not re.search(r"[kK]$", cell.strip()) else v / 1000 * 1024)
    return None


def col(header, *pats, exclude=()):
    for i, h in enumerate(header):
        hl = h.lower()
        if any(re.search(p, hl) for p in pats) and not any(re.search(x, hl) for x in exclude):
            return i
    return None


NOT_VALUE = (r"speed ?-?up", r"scaling", r"time", r"accuracy", r"loss", r"ratio", r"latency",
             r"batch", r"gpus", r"model", r"percentile", r"bleu", r"perplexity")

SETTING_COLS = (r"model size", r"dataset", r"sequence length", r"grad(ient)? accumulation", r"accumulat", r"concat",
                r"beam", r"input length", r"wn channels", r"duration", r"audio", r"max ?len")


def training_rows(example, model, code_path, headings, header, rows, convnets):
    joined = " / ".join(headings)
    inner = next((h for h in reversed(headings)
                  if re.search(r"performance|throughput|inference|accuracy|stability|loss", h, re.I)), "")
    kind_head = inner if (re.search(r"performance|throughput", inner, re.I)
                          and not re.search(r"inference|accuracy|stability|loss", inner, re.I)) else None
    if kind_head is None or re.search(r"multi-node|qat|time to train|expected", joined, re.I):
        return []
    gpus_c = col(header, r"^(number of )?gpus$", r"^gpus$", r"^#gpus$")
    if gpus_c is None:
        return []
    batch_c = col(header, r"batch", exclude=(r"accumulat", r"concat"))
    model_c = col(header, r"^model$")
    vals = []
    for i, h in enumerate(header):
        hl = h.lower()
        if i in (gpus_c, batch_c, model_c):
            continue
        if any(re.search(x, hl) for x in NOT_VALUE):
            continue
        if not ("throughput" in hl or "number of" in hl or re.fullmatch(r"(tf32|fp32|fp16|bf16|mixed precision|amp)", hl)):
            continue
        p = precision_of(h)
        if p:
            vals.append((i, p))
    sets = [i for i, h in enumerate(header) if any(re.search(x, h.lower()) for x in SETTING_COLS)
            and i not in (gpus_c, batch_c, model_c)]
    out = []
    sub = headings[-1] if headings and headings[-1] != kind_head else ""
    for lineno, cs in rows:
        if len(cs) < len(header):
            continue
        g, _ = number(cs[gpus_c])
        if g is None:
            continue
        variant = cs[model_c] if model_c is not None else ""
        settings = ";".join(f"{header[i]}={cs[i]}" for i in sets)
        if sub and not re.search(r"training (performance|throughput)", sub, re.I):
            settings = (sub + (";" + settings if settings else ""))
        for i, p in vals:
            v, u = number(cs[i])
            if v is None:
                continue
            if batch_c is not None:
                b = batch_for(cs[batch_c], header[batch_c], p)
            else:
                b = convnets(variant or model, p) if convnets else None
            out.append(dict(kind="train", variant=variant, gpus=int(g), batch=b if b is not None else "",
                            precision=p, value=v, unit=unit_of(header[i]) or u, metric="throughput",
                            settings=settings, line=lineno))
    return out


def inference_rows(example, model, headings, header, rows):
    joined = " / ".join(headings)
    if not re.search(r"inference (performance|latency)", joined, re.I) or re.search(r"triton|tensorrt|onnx", joined, re.I):
        return []
    batch_c = col(header, r"^batch( size)?$", r"^batch size")
    lat_c = col(header, r"latency avg", r"^avg latency", r"^avg \(ms\)", r"^avg\. latency", r"^latency avg")
    if batch_c is None or lat_c is None:
        return []
    prec_c = col(header, r"^precision$")
    model_c = col(header, r"^model$")
    sets = [i for i, h in enumerate(header) if any(re.search(x, h.lower()) for x in SETTING_COLS)
            and i not in (batch_c, lat_c)]
    head_prec = ""
    for h in reversed(headings):
        head_prec = precision_of(h)
        if head_prec:
            break
    lat_unit = "s" if re.search(r"\(s\)", header[lat_c]) else "ms"
    out = []
    for lineno, cs in rows:
        if len(cs) < len(header):
            continue
        b, _ = number(cs[batch_c])
        v, u = number(cs[lat_c])
        if b is None or v is None:
            continue
        p = precision_of(cs[prec_c]) if prec_c is not None else head_prec
        if not p:
            continue
        out.append(dict(kind="infer", variant=cs[model_c] if model_c is not None else "", gpus=1,
                        batch=int(b), precision=p, value=v, unit=u or lat_unit, metric="latency_avg",
                        settings=";".join(f"{header[i]}={cs[i]}" for i in sets), line=lineno))
    return out


def convnets_batches(tree):
    if yaml is None:
        raise SystemExit("dle_bench: PyYAML is needed to read " + CONVNETS_CONFIG + " (Debian: python3-yaml)")
    text = tree.read(CONVNETS_CONFIG)
    if text is None:
        return {}
    return yaml.safe_load(text).get("models", {})


CONVNETS_NAME = {"resnet50": "resnet50", "resnext101_32x4d": "resnext101-32x4d",
                 "se_resnext101_32x4d": "se-resnext101-32x4d"}


def convnets_lookup(cfg, gpu, mem):
    plat = {"V100": "DGX1V-32G" if mem == "32" else "DGX1V-16G", "A100": "DGXA100"}.get(gpu)

    def look(name, prec):
        arch = CONVNETS_NAME.get(name, name).replace("EfficientNet-", "efficientnet-").lower()
        m = cfg.get(arch, {}).get(plat or "", {}).get(prec, {})
        return m.get("batch_size")
    return look


def convnets_flags(cfg, name, gpu, mem, prec):
    plat = {"V100": "DGX1V-32G" if mem == "32" else "DGX1V-16G", "A100": "DGXA100"}.get(gpu, "")
    arch = CONVNETS_NAME.get(name, name).lower()
    m = cfg.get(arch, {}).get(plat, {}).get(prec, {})
    if not m:
        return ""
    keys = ("memory_format", "data_backend", "image_size", "batch_size")
    return f"--platform {plat} --precision {prec} " + " ".join(f"--{k.replace('_', '-')} {m[k]}" for k in keys if k in m)


SEED_MODELS = ("gnmt", "transformer_xl", "transformer_xl_large")


def part_of(model):
    """measurements/dle/README.md's rule: a model is validation when the first 8 hex
    digits of sha256("placer-dle-val:" + model) are 0 mod 4; the seeds' own
    models (GNMT, Transformer-XL base and large) are development whole, since
    the seeds' comparison prints their rows against placer's gnmt/trxl graphs."""
    if model in SEED_MODELS:
        return "development"
    h = hashlib.sha256(("placer-dle-val:" + model).encode()).hexdigest()[:8]
    return "validation" if int(h, 16) % 4 == 0 else "development"


def model_name(model, variant, settings):
    """The row's model: the example's, or its variant (EfficientNet-B0, WaveGlow,
    BERT phase) where one README holds several networks."""
    if model == "efficientnet" and variant:
        return variant.lower().replace(" ", "")
    if model == "tacotron2" and re.search(r"samples", settings, re.I):
        return "waveglow"
    if model == "transformer_xl" and re.search(r"large", settings, re.I):
        return "transformer_xl_large"
    return model


def build(tree):
    cfg = convnets_batches(tree)
    out = []
    for example in sorted(EXAMPLES):
        model, code = EXAMPLES[example]
        text = tree.read(example + "/README.md")
        if text is None:
            continue
        for headings, header, rows in tables(text):
            gpu, mem, system = gpu_of(headings)
            if not gpu:
                continue
            look = convnets_lookup(cfg, gpu, mem) if "/ConvNets/" in example else None
            got = training_rows(example, model, code, headings, header, rows, look)
            got += inference_rows(example, model, headings, header, rows)
            for r in got:
                unit_hint = r["unit"] or (DEFAULT_UNIT.get(example, "") if r["kind"] == "train" else "")
                if model == "tacotron2" and r["kind"] == "train":
                    unit_hint = "samples/s" if "samples" in " ".join(header).lower() else "mels/s"
                name = model_name(model, r["variant"], r["settings"] + " " + " ".join(header) + " " + " ".join(headings))
                cp = code
                if look is not None and r["kind"] == "train":
                    f = convnets_flags(cfg, r["variant"] or model, gpu, mem, r["precision"])
                    cp = code + (" " + f if f else "")
                out.append(dict(
                    model=name, variant=r["variant"], example=example, kind=r["kind"], gpu=gpu,
                    gpu_mem_gb=mem, system=system, gpus=r["gpus"], batch=r["batch"],
                    precision=r["precision"], value=r["value"], unit=unit_hint, metric=r["metric"],
                    settings=r["settings"], code_path=cp, readme=example + "/README.md",
                    line=r["line"], commit=tree.commit))
    seen = {}
    for r in out:
        key = (r["model"], r["kind"], r["gpu"], r["gpu_mem_gb"], r["gpus"], r["batch"], r["precision"], r["settings"])
        n = seen.get(key, 0)
        seen[key] = n + 1
        r["id"] = "-".join(str(x) for x in (r["model"], r["kind"], r["gpu"] + r["gpu_mem_gb"], f"{r['gpus']}g",
                                             f"b{r['batch']}", r["precision"])) + (f"-{n + 1}" if n else "")
        r["part"] = part_of(r["model"])
    return out


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("%g" % r[k] if isinstance(r[k], float) else r[k]) for k in COLUMNS})


def summary(rows):
    """Counts by part only: never a validation row."""
    by = {}
    for r in rows:
        d = by.setdefault(r["part"], {"rows": 0, "models": set(), "gpus": set(), "train": 0, "infer": 0})
        d["rows"] += 1
        d["models"].add(r["model"])
        d["gpus"].add(r["gpu"])
        d[r["kind"]] += 1
    lines = []
    for p in sorted(by):
        d = by[p]
        lines.append(f"{p}: {d['rows']} rows ({d['train']} training, {d['infer']} inference), "
                     f"{len(d['models'])} models, GPUs {','.join(sorted(d['gpus']))}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror/NVIDIA+DeepLearningExamples/repo",
                    help="bare git mirror of NVIDIA/DeepLearningExamples")
    ap.add_argument("--commit", default="729963dd47e7c8bd462ad10bfac7a7b0b604e6dd",
                    help="the commit read (default: the one measurements/dle holds)")
    ap.add_argument("--out", default="measurements/dle", help="folder for rows.csv")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.mirror):
        print(f"dle_bench: {a.mirror}: no such mirror (fetch github:NVIDIA/DeepLearningExamples)", file=sys.stderr)
        return 2
    tree = Tree(a.mirror, a.commit)
    rows = build(tree)
    os.makedirs(a.out, exist_ok=True)
    write_csv(os.path.join(a.out, "rows.csv"), rows)
    print(f"dle_bench: {len(rows)} rows from {tree.commit[:12]} into {a.out}/rows.csv")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
