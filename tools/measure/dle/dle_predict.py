#!/usr/bin/env python3
"""Predict measurements/dle/rows.csv's training rows at op level with placer.

Each training row of an example this script can build is exported as the
example trains it, with placer_torch's exporter (fake tensors, one child
process per step, cached under $XDG_CACHE_HOME/placer/dle), and its step
predicted with `placer eval --hardware v100|a100|a100-40gb --gpus N
[--strategy dp=N]` (DDP's 25 MiB buckets, eval's data-parallel model),
strict (--host=false) and with the host (--host). The published step is
batch x GPUs / throughput (seconds per step of each GPU).

    ~/.cache/placer/torch-venv/bin/python tools/measure/dle/dle_predict.py export
    ~/.cache/placer/torch-venv/bin/python tools/measure/dle/dle_predict.py report --placer bin/placer

Built (the nearest the exporter builds, said per model in NETS):
ConvNets' resnet50 (torchvision's ResNet-50 is v1.5, the example's),
resnext101_32x4d and se_resnext101_32x4d (timm's of the same names), and
EfficientNet B0/B4 (timm's efficientnet_b0/_b4; the example's WideSE
variants squeeze the expanded width, timm's the input's: the same
network otherwise, built as timm's, so said). The example's step:
torch.cuda.amp autocast FP16 with channels-last under AMP (configs.yml's
memory_format nhwc), NCHW otherwise, torch.optim.SGD with momentum (the
for-loop implementation of NGC 20.12-21.03's PyTorch 1.8), cross-entropy,
TF32 on for TF32 rows (PyTorch 1.8's default for matmuls and cuDNN).

The ConvNets' inference-latency rows at batch 1-8 (V100 and A100: no
t4 preset) are exported forward-only as the example's validate() runs
them (placer_torch.inference: eval mode, torch.no_grad(), autocast FP16
and channels-last under AMP, TF32 for TF32 rows; its label-smoothing
loss and top-1/top-5 accuracy after the forward; cached apart, under
infer-<key>) and predicted with `placer eval --gpus 1` strict and with
the host; the published latency is the README's average. They are a
part of their own in the report (results-infer.csv, summary.json's
"inference development" and "inference validation").

The report prints development rows one by one and validation as
aggregates only (measurements/dle/README.md).
"""

import argparse
import csv
import hashlib
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PKG = os.path.join(ROOT, "python", "placer_torch")
DIR = os.path.join(ROOT, "measurements", "dle")

# model -> (builder, the network built)
NETS = {
    "resnet50": ("torchvision:resnet50", "torchvision ResNet-50 (v1.5, the example's)"),
    "resnext101_32x4d": ("timm:resnext101_32x4d", "timm resnext101_32x4d"),
    "se_resnext101_32x4d": ("timm:seresnext101_32x4d", "timm seresnext101_32x4d"),
    "efficientnet-b0": ("timm:efficientnet_b0", "timm efficientnet_b0"),
    "efficientnet-b4": ("timm:efficientnet_b4", "timm efficientnet_b4"),
    "efficientnet-widese-b0": ("timm:efficientnet_b0", "timm efficientnet_b0 (the example's SE on the expanded width: nearer, not the same)"),
    "efficientnet-widese-b4": ("timm:efficientnet_b4", "timm efficientnet_b4 (the example's SE on the expanded width: nearer, not the same)"),
    "bert": ("hf:bert-large", "transformers BertForPreTraining, BERT-large (vocab 30528 as the example pads it), "
             "SDPA attention, AdamW foreach for FusedLAMBAMP; one micro-batch, the update and its all-reduce "
             "once per the row's accumulation steps"),
}

HARDWARE = {("V100", "16"): "v100", ("V100", "32"): "v100", ("A100", "80"): "a100", ("A100", "40"): "a100-40gb"}

SETTINGS_VERSION = 2  # 2: batch dimension recorded, the run's global batch (8-GPU rows: 8 x the batch per GPU)


def build_net(model, channels_last):
    """The example's network for model (NETS' torchvision or timm name),
    untrained, in channels-last memory where channels_last."""
    from placer_torch.classifier import channels_last_in_place
    kind, name = NETS[model][0].split(":")
    if kind == "torchvision":
        import torchvision
        m = getattr(torchvision.models, name)()
    else:
        import timm
        m = timm.create_model(name, pretrained=False)
    return channels_last_in_place(m) if channels_last else m


def read_rows(d=DIR):
    with open(os.path.join(d, "rows.csv")) as f:
        return list(csv.DictReader(f))


def image_size(row):
    m = re.search(r"--image-size (\d+)", row["code_path"])
    return int(m.group(1)) if m else 224


def bert_micro(row):
    """BERT's micro-batch per GPU and sequence length: the A100 table gives
    the micro-batch, the V100 table the accumulated batch (its batch /
    the row's accumulation steps); None for rows other than pre-training."""
    st = row["settings"]
    if not st.startswith("Pre-training"):
        return None
    m = re.search(r"Sequence length=(\d+)", st)
    seq = int(m.group(1)) if m else 128
    b = int(row["batch"])
    if "Accumulated Batch size" not in st:
        m = re.search(r"Accumulation steps \((\w+) and (\w+)\)=(\d+) and (\d+)", st)
        if not m:
            return None
        first = row["precision"] == ("AMP" if m.group(1) in ("FP16", "AMP") else m.group(1))
        b //= int(m.group(3) if first else m.group(4))
    return b, seq


def bert_accum(row):
    """The gradient accumulation steps of a BERT pre-training row at its
    precision (both tables give them: "Accumulation steps (TF32 and
    FP16)=64 and 32"); None for other rows."""
    if row["model"] != "bert" or not row.get("settings", "").startswith("Pre-training"):
        return None
    m = re.search(r"Accumulation steps \((\w+) and (\w+)\)=(\d+) and (\d+)", row["settings"])
    if not m:
        return None
    first = row["precision"] == ("AMP" if m.group(1) in ("FP16", "AMP") else m.group(1))
    return int(m.group(3) if first else m.group(4))


def micro_step(row):
    """The export of a BERT row's accumulation micro-step: one GPU at the
    micro-batch (run_pretraining.py runs it under model.no_sync(), no
    all-reduce, and without the update); None for other rows."""
    if bert_accum(row) is None:
        return None
    b, seq = bert_micro(row)
    return row["model"], b, seq, row["precision"]


def step_of(row):
    """The export's settings for a row: (model, global batch, image, precision).
    The graph holds the run's global batch (batch per GPU x GPUs); placer
    eval --strategy dp=N simulates one replica at batch / N (graph.AtBatch)."""
    if row["model"] == "bert":
        b, seq = bert_micro(row)
        return row["model"], b * int(row["gpus"]), seq, row["precision"]
    return row["model"], int(row["batch"]) * int(row["gpus"]), image_size(row), row["precision"]


def wanted(rows):
    out = []
    for r in rows:
        if r["kind"] != "train" or r["model"] not in NETS or not r["batch"]:
            continue
        if (r["gpu"], r["gpu_mem_gb"]) not in HARDWARE or r["gpus"] not in ("1", "8"):
            continue
        if r["model"] == "bert" and bert_micro(r) is None:
            continue
        out.append(r)
    return out


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "placer", "dle")


def fingerprint():
    h = hashlib.sha256()
    for rel in ("exporter.py", "exportflags.py"):
        p = os.path.join(PKG, "placer_torch", rel)
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f.read())
    h.update(str(SETTINGS_VERSION).encode())
    return h.hexdigest()[:16]


def graph_path(step, fp):
    """The cached graph of a step, named by the network built (two models
    built as the same network share their graphs)."""
    model, batch, img, prec = step
    net = NETS[model][0].replace(":", "-")
    return os.path.join(cache_root(), fp, f"{net}-b{batch}-i{img}-{prec}.json")


def export_bert(batch, seq, prec, out):
    import torch
    from placer_torch.exporter import export_training_step
    from transformers import BertConfig, BertForPreTraining
    cfg = BertConfig(vocab_size=30528, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                     intermediate_size=4096)

    def make_inputs():
        return (torch.zeros(batch, seq, dtype=torch.long),
                (torch.zeros(batch, seq, dtype=torch.long), torch.zeros(batch, dtype=torch.long)))

    def loss_fn(o, t):
        f = torch.nn.functional.cross_entropy
        return f(o.prediction_logits.reshape(-1, cfg.vocab_size), t[0].reshape(-1)) + f(o.seq_relationship_logits, t[1])

    tf32 = prec == "TF32"
    execution = {"device": "cuda", "optimizer_impl": "foreach", "autocast": "f16" if prec == "AMP" else None,
                 "tf32_matmul": tf32, "tf32_cudnn": tf32 or prec != "FP32"}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    export_training_step(lambda: BertForPreTraining(cfg), make_inputs, loss_fn, torch.optim.AdamW, {"lr": 6e-3},
                         out=out, name=os.path.basename(out)[:-len(".json")], fake=True, batch_dim=0,
                         execution=execution)


def export_one(model, batch, img, prec, out):
    if model == "bert":
        return export_bert(batch, img, prec, out)
    import torch
    from placer_torch.classifier import image_inputs
    from placer_torch.exporter import export_training_step
    cl = prec == "AMP"

    def build():
        return build_net(model, cl)

    make_inputs = image_inputs(batch, img, cl)

    tf32 = prec == "TF32"
    execution = {"device": "cuda", "optimizer_impl": "for-loop", "autocast": "f16" if cl else None,
                 "tf32_matmul": tf32, "tf32_cudnn": tf32 or prec != "FP32"}
    kw = {"lr": 0.1, "momentum": 0.875, "weight_decay": 3.0517578125e-05}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    export_training_step(build, make_inputs, torch.nn.functional.cross_entropy, torch.optim.SGD, kw,
                         out=out, name=os.path.basename(out)[:-len(".json")], fake=True, batch_dim=0,
                         execution=execution)


INFER_MAX_BATCH = 8  # the inference latency rows the bench holds to 20%: batch 1 to 8


def wanted_infer(rows):
    """The inference-latency rows predicted: the ConvNets' (the networks
    NETS builds but BERT's), batch 1-8, on a GPU placer has a preset of
    (the T4's rows are not: no t4 preset). Each gets its image size in
    "image": configs.yml's for the model (image_size, the same for every
    mode and platform), which the reader wrote into the model's training
    rows' code_path; the inference rows' code_path does not carry it."""
    sizes = {r["model"]: image_size(r) for r in rows if r["kind"] == "train" and "--image-size" in r["code_path"]}
    out = []
    for r in rows:
        if r["kind"] != "infer" or r["model"] not in NETS or r["model"] == "bert" or not r["batch"]:
            continue
        if int(r["batch"]) > INFER_MAX_BATCH or (r["gpu"], r["gpu_mem_gb"]) not in HARDWARE:
            continue
        out.append(dict(r, image=str(sizes.get(r["model"], 224))))
    return out


def infer_step_of(row):
    """The inference export's settings for a row: (model, batch, image,
    precision); one GPU (the examples' inference runs are one process)."""
    return row["model"], int(row["batch"]), int(row["image"]), row["precision"]


def infer_fingerprint():
    """The inference exports' cache key: the training exports' files and
    inference.py (a training export's key does not move with it)."""
    h = hashlib.sha256(fingerprint().encode())
    with open(os.path.join(PKG, "placer_torch", "inference.py"), "rb") as f:
        h.update(f.read())
    return "infer-" + h.hexdigest()[:16]


def infer_graph_path(step, fp):
    model, batch, img, prec = step
    net = NETS[model][0].replace(":", "-")
    return os.path.join(cache_root(), fp, f"{net}-infer-b{batch}-i{img}-{prec}.json")


def smoothed_loss(output, target, smoothing=0.1):
    """The ConvNets' label-smoothing loss (image_classification/smoothing.py
    LabelSmoothing, label_smoothing 0.1 in configs.yml): the log-softmax,
    the target's log-probability and the mean over classes, weighted
    (1 - smoothing, smoothing), averaged over the batch."""
    import torch
    lp = torch.nn.functional.log_softmax(output, dim=-1)
    nll = -lp.gather(dim=-1, index=target.unsqueeze(1)).squeeze(1)
    return ((1 - smoothing) * nll + smoothing * -lp.mean(dim=-1)).mean()


def export_infer_one(model, batch, img, prec, out):
    """One ConvNets inference step as the example's validate() runs it
    (image_classification/training.py: Executor._forward_fn under
    torch.no_grad() and autocast(enabled=amp) on the model in eval mode,
    its loss, then utils.accuracy's top-1 and top-5 on the GPU; the three
    .item() and the torch.cuda.synchronize() that end the timed span are
    host waits, not ops)."""
    from placer_torch.classifier import image_inputs
    from placer_torch.inference import export_inference_step, topk_accuracy
    cl = prec == "AMP"

    def build():
        return build_net(model, cl)

    def after(output, target):
        smoothed_loss(output, target)
        topk_accuracy(output, target, (1, 5))

    tf32 = prec == "TF32"
    execution = {"device": "cuda", "autocast": "f16" if cl else None,
                 "tf32_matmul": tf32, "tf32_cudnn": tf32 or prec != "FP32"}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    export_inference_step(build, image_inputs(batch, img, cl), after, out=out,
                          name=os.path.basename(out)[:-len(".json")], execution=execution)


def export_steps(steps, path_of, verb):
    """Exports each step not in the cache yet, one child process each
    (verb: export-one or export-infer-one); returns how many now."""
    done = 0
    for s in steps:
        out = path_of(s)
        if os.path.exists(out):
            continue
        cmd = ["nice", "-n", "10", sys.executable, os.path.abspath(__file__), verb,
               s[0], str(s[1]), str(s[2]), s[3], out]
        env = dict(os.environ, PYTHONPATH=PKG + os.pathsep + os.environ.get("PYTHONPATH", ""))
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            msg = (p.stderr.strip().splitlines() or ["exited %d" % p.returncode])[-1]
            print(f"dle_predict: {s}: export failed: {msg[:200]}", file=sys.stderr)
            continue
        done += 1
        print(f"dle_predict: exported {os.path.basename(out)}", file=sys.stderr)
    return done


def cmd_export(a):
    rows = wanted(read_rows(a.dir))
    fp = fingerprint()
    # development rows first (the figures mechanisms are chosen on)
    def needs(r):
        return [s for s in (step_of(r), micro_step(r)) if s]
    steps = sorted({s for r in rows for s in needs(r)},
                   key=lambda s: (all(s not in needs(r) or r["part"] != "development" for r in rows), s))
    if not a.infer_only:
        done = export_steps(steps, lambda s: graph_path(s, fp), "export-one")
        print(f"dle_predict: {len(steps)} steps, {done} exported now, cache {os.path.join(cache_root(), fp)}")
    irows = wanted_infer(read_rows(a.dir))
    ifp = infer_fingerprint()
    isteps = sorted({infer_step_of(r) for r in irows},
                    key=lambda s: (all(infer_step_of(r) != s or r["part"] != "development" for r in irows), s))
    done = export_steps(isteps, lambda s: infer_graph_path(s, ifp), "export-infer-one")
    print(f"dle_predict: {len(isteps)} inference steps, {done} exported now, cache {os.path.join(cache_root(), ifp)}")
    return 0


def grad_scaler(row):
    """Whether the row's step runs its update under torch.cuda.amp.GradScaler:
    the ConvNets' AMP rows (image_classification/training.py: Executor
    asserts a scaler when amp is on, Trainer.train_step calls
    scaler.step(optimizer)). BERT's run_pretraining.py steps through a
    GradScaler too, but its optimizer (lamb_amp_opt's FusedLAMBAMP) sets
    _step_supports_amp_scaling, so GradScaler.step hands the scaler to
    the optimizer's own step with no .item() before it: no host wait."""
    return row["model"] != "bert" and row["precision"] == "AMP"


def with_grad_scaler(path):
    """The graph at path with its execution object's grad_scaler set
    (graph.Execution.GradScaler: the host waits for the GPU before the
    update), written beside it once; the exporter does not record a
    GradScaler, the example's script has one."""
    out = path[:-len(".json")] + "-gradscaler.json"
    if not os.path.exists(out):
        with open(path) as f:
            g = json.load(f)
        g["execution"]["grad_scaler"] = True
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(g, f)
        os.replace(tmp, out)
    return out


def without_update(path):
    """The graph at path without its optimizer update (the ops from
    execution.optimizer_from on, and the tensors only they read or
    write), written beside it once: the forward and backward of a
    gradient accumulation micro-step."""
    out = path[:-len(".json")] + "-noupdate.json"
    if not os.path.exists(out):
        with open(path) as f:
            g = json.load(f)
        names = [o["name"] for o in g["ops"]]
        cut = names.index(g["execution"]["optimizer_from"])
        gone = set(names[cut:])
        tensors = []
        for t in g["tensors"]:
            if t["producer"] in gone:
                continue
            cons = [c for c in t["consumers"] if c not in gone]
            if t["consumers"] and not cons:
                continue
            tensors.append(dict(t, consumers=cons))
        g["ops"] = g["ops"][:cut]
        g["tensors"] = tensors
        del g["execution"]["optimizer_from"]
        g["execution"].pop("grad_scaler", None)
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(g, f)
        os.replace(tmp, out)
    return out


def amortized(full, micro, accum):
    """A micro-batch's step when the update (and its all-reduce) runs once
    every accum micro-batches: accum - 1 micro-steps without it, one with."""
    return micro + (full - micro) / accum


def predict(placer, graph, hardware, gpus, fmt, host, mem_gb=""):
    """placer eval's step time (s) and out-of-memory flag of graph on gpus
    GPUs of hardware (dp=gpus: DDP's buckets), the GPU's memory mem_gb GB
    where the row names it (the v100 preset holds 32)."""
    cmd = [placer, "eval", "--graph", graph, "--hardware", hardware, "--gpus", str(gpus), "--json",
           "--memory-format", fmt, "--host=%s" % ("true" if host else "false")]
    if mem_gb:
        cmd += ["--memory", str(int(mem_gb) * 1024 ** 3)]
    if gpus > 1:
        cmd += ["--strategy", f"dp={gpus}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or ["placer eval exited %d" % p.returncode])[-1])
    d = json.loads(p.stdout)
    return float(d["step_time_s"]), bool(d.get("oom"))


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r
    if len(xs) < 2:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


RESULT_FIELDS = ("id", "part", "model", "gpu", "gpu_mem_gb", "gpus", "batch", "precision", "hardware",
                 "published_ms", "strict_ms", "strict_err", "host_ms", "host_err", "oom", "net", "status")


def cmd_report(a):
    rows = wanted(read_rows(a.dir))
    fp = fingerprint()
    out = []
    for r in rows:
        s = step_of(r)
        g = graph_path(s, fp)
        hw = HARDWARE[(r["gpu"], r["gpu_mem_gb"])]
        gpus = int(r["gpus"])
        b = bert_micro(r)[0] if r["model"] == "bert" else int(r["batch"])
        pub = b * gpus / float(r["value"])
        row = {k: r[k] for k in ("id", "part", "model", "gpu", "gpu_mem_gb", "gpus", "batch", "precision")}
        row.update(hardware=hw, published_ms="%.3f" % (pub * 1e3), net=NETS[r["model"]][1])
        if not os.path.exists(g):
            row["status"] = "not exported"
            out.append(row)
            continue
        fmt = "graph" if r["model"] == "bert" else ("nhwc" if r["precision"] == "AMP" else "nchw")
        if grad_scaler(r):
            g = with_grad_scaler(g)
        ms = micro_step(r)
        if ms and not os.path.exists(graph_path(ms, fp)):
            row["status"] = "not exported"
            out.append(row)
            continue
        try:
            st, oom = predict(a.placer, g, hw, gpus, fmt, False, r["gpu_mem_gb"])
            ho, _ = predict(a.placer, g, hw, gpus, fmt, True, r["gpu_mem_gb"])
            if ms:
                mg = without_update(graph_path(ms, fp))
                st = amortized(st, predict(a.placer, mg, hw, 1, fmt, False, r["gpu_mem_gb"])[0], bert_accum(r))
                ho = amortized(ho, predict(a.placer, mg, hw, 1, fmt, True, r["gpu_mem_gb"])[0], bert_accum(r))
        except RuntimeError as e:
            row["status"] = "refused: " + str(e)[:200]
            out.append(row)
            continue
        row.update(strict_ms="%.3f" % (st * 1e3), strict_err="%.4f" % (st / pub - 1),
                   host_ms="%.3f" % (ho * 1e3), host_err="%.4f" % (ho / pub - 1), oom="yes" if oom else "no", status="ok")
        out.append(row)
    with open(os.path.join(a.dir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RESULT_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    iout = report_infer(a)
    with open(os.path.join(a.dir, "results-infer.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RESULT_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(iout)
    summary = {"placer": a.placer_version, "cache": fp, "infer_cache": infer_fingerprint(), "parts": {}}
    lines = []
    for kind, rows_ in (("train", out), ("infer", iout)):
        for part in ("development", "validation"):
            agg = aggregate(rows_, part)
            key = part if kind == "train" else "inference " + part
            summary["parts"][key] = agg
            within = "" if kind == "train" else "; within 20%% (host): %d of %d" % (agg["host_within_20"], agg["rows"])
            lines.append(f"{key}: {agg['rows']} rows predicted ({agg['refused_or_missing']} refused or not exported); "
                         f"strict mean |error| {fmt_pct(agg['strict_mean_abs_err'])}, Spearman (mean over sweeps) "
                         f"{agg['strict_spearman_mean']}; with host {fmt_pct(agg['host_mean_abs_err'])}, "
                         f"{agg['host_spearman_mean']}{within}")
    with open(os.path.join(a.dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    print("\n".join(lines))
    if a.rows:
        for title, rows_ in (("development rows", out), ("development inference rows (batch <= 8)", iout)):
            print("\n%s (published, strict, host step ms; errors):" % title)
            for x in rows_:
                if x["part"] != "development":
                    continue
                print("  %-44s %-9s %8s %8s %7s %8s %7s %s" % (x["id"], x["hardware"], x["published_ms"],
                      x.get("strict_ms", ""), x.get("strict_err", ""), x.get("host_ms", ""), x.get("host_err", ""),
                      "" if x["status"] == "ok" else x["status"]))
    return 0


def report_infer(a):
    """The inference rows at batch <= 8 predicted (strict and with the
    host) from their forward-only exports; one result dict a row."""
    fp = infer_fingerprint()
    out = []
    for r in wanted_infer(read_rows(a.dir)):
        g = infer_graph_path(infer_step_of(r), fp)
        hw = HARDWARE[(r["gpu"], r["gpu_mem_gb"])]
        pub = float(r["value"]) * (1e-3 if r["unit"] == "ms" else 1)
        row = {k: r[k] for k in ("id", "part", "model", "gpu", "gpu_mem_gb", "gpus", "batch", "precision")}
        row.update(hardware=hw, published_ms="%.3f" % (pub * 1e3), net=NETS[r["model"]][1])
        if not os.path.exists(g):
            row["status"] = "not exported"
            out.append(row)
            continue
        fmt = "nhwc" if r["precision"] == "AMP" else "nchw"
        try:
            st, oom = predict(a.placer, g, hw, 1, fmt, False, r["gpu_mem_gb"])
            ho, _ = predict(a.placer, g, hw, 1, fmt, True, r["gpu_mem_gb"])
        except RuntimeError as e:
            row["status"] = "refused: " + str(e)[:200]
            out.append(row)
            continue
        row.update(strict_ms="%.3f" % (st * 1e3), strict_err="%.4f" % (st / pub - 1),
                   host_ms="%.3f" % (ho * 1e3), host_err="%.4f" % (ho / pub - 1), oom="yes" if oom else "no", status="ok")
        out.append(row)
    return out


def aggregate(out, part):
    """A part's aggregates: rows, mean |error| strict and with the host,
    Spearman within each model's sweep (3 rows or more) and their mean,
    rows within 20% with the host; per model only for development."""
    pr = [x for x in out if x["part"] == part and x["status"] == "ok"]
    agg = {"rows": len(pr), "refused_or_missing": sum(1 for x in out if x["part"] == part and x["status"] != "ok")}
    for fld in ("strict", "host"):
        errs = [abs(float(x[fld + "_err"])) for x in pr]
        agg[fld + "_mean_abs_err"] = round(sum(errs) / len(errs), 4) if errs else None
        agg[fld + "_within_20"] = sum(1 for e in errs if e <= 0.20)
        sweeps = {}
        for x in pr:
            sweeps.setdefault(x["model"], []).append(x)
        rhos = {}
        for k, xs in sorted(sweeps.items()):
            if len(xs) >= 3:
                rhos[k] = round(spearman([float(x["published_ms"]) for x in xs],
                                         [float(x[fld + "_ms"]) for x in xs]), 3)
        agg[fld + "_spearman_by_sweep"] = rhos if part == "development" else None
        vals = [v for v in rhos.values() if not math.isnan(v)]
        agg[fld + "_spearman_mean"] = round(sum(vals) / len(vals), 3) if vals else None
        by_model = {}
        for x in pr:
            by_model.setdefault(x["model"], []).append(abs(float(x[fld + "_err"])))
        agg[fld + "_mean_abs_err_by_model"] = ({m: round(sum(v) / len(v), 4) for m, v in sorted(by_model.items())}
                                               if part == "development" else None)
    return agg


def fmt_pct(v):
    return "-" if v is None else "%.1f%%" % (100 * v)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("--dir", default=DIR)
    e.add_argument("--infer-only", action="store_true", help="export the inference steps only")
    o = sub.add_parser("export-one")
    o.add_argument("model")
    o.add_argument("batch", type=int)
    o.add_argument("img", type=int)
    o.add_argument("precision")
    o.add_argument("out")
    oi = sub.add_parser("export-infer-one")
    for k in ("model", "batch", "img", "precision", "out"):
        oi.add_argument(k, type=int if k in ("batch", "img") else str)
    r = sub.add_parser("report")
    r.add_argument("--dir", default=DIR)
    r.add_argument("--placer", default=os.path.join(ROOT, "bin", "placer"))
    r.add_argument("--placer-version", default="")
    r.add_argument("--rows", action="store_true", help="print the development rows")
    a = ap.parse_args(argv)
    if a.cmd == "export":
        return cmd_export(a)
    if a.cmd == "export-one":
        export_one(a.model, a.batch, a.img, a.precision, a.out)
        return 0
    if a.cmd == "export-infer-one":
        export_infer_one(a.model, a.batch, a.img, a.precision, a.out)
        return 0
    return cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
