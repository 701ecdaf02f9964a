"""timm's published training benchmark as placer's test bench (make
timm-bench; docs/timm-bench.md, measurements/timm/README.md).

timm (huggingface/pytorch-image-models) published the training step time
of 834 models measured by its benchmark.py on one GeForce RTX 3090
(PyTorch 1.12, CUDA 11.3, timm 0.6.6 code; commit c865028c, 2022-07-27):
results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv and its
channels-last twin -nhwc-, copied unchanged into
measurements/timm/published/. What one step of that benchmark holds
(benchmark.py at c865028c, TrainBenchmarkRunner): the model built with
timm.create_model (random weights, drop rates at the model's defaults),
model.train(), input torch.randn(batch, 3, img, img) (channels_last with
--channels-last, the model too), torch.cuda.amp.autocast() (FP16) around
forward, nn.CrossEntropyLoss and backward (no GradScaler), then
optimizer.step() of create_optimizer_v2(opt='sgd', lr=1e-4): timm's 'sgd'
is torch.optim.SGD with momentum 0.9 and nesterov=True, weight decay 0
(the benchmark passes neither), one for-loop optimizer (PyTorch 1.12's
SGD default, foreach off); cudnn.benchmark on; PyTorch 1.12's TF32
defaults (matmuls off, cuDNN on); train_step_time is the mean of 40
steps, milliseconds, from after zero_grad to a synchronize after step.

Subcommands (all take --dir, the committed measurements/timm):

  sample   writes sample.csv: the population is every model in both
           files; its family is the timm 1.0.31 module that registers it
           (timm.models.<module>; deprecated names map to their module;
           a name timm 1.0.31 no longer has is family "unregistered");
           the validation part is every family whose
           sha256("placer-timm-val:" + family) is 0 mod 3, whole; the
           sample is, in each family, the ceil(0.4 n) models first by
           sha256("placer-timm-sample:" + model). --check compares
           with the committed file instead of writing it.
  export   exports each sampled model's step in each format (nchw, nhwc)
           as benchmark.py runs it, with placer_torch's exporter, one
           child process at a time, into the cache
           ${XDG_CACHE_HOME:-~/.cache}/placer/timm/<fingerprint>/ (the
           fingerprint: the exporter's sources, torch's and timm's
           versions and this file's export settings), skipping what is
           there; a model that cannot be exported gets its one-line
           reason there.
  report   predicts each exported step with placer eval --hardware rtx3090
           --gpus 1 --memory-format (its format) (--host=false: "strict",
           and --host) and compares it
           with train_step_time; writes results.csv (every sampled
           model and format: dev rows with figures, validation rows too,
           which the printed table leaves out) and summary.json, and
           prints the development rows and both parts' aggregates
           (mean |error| and Spearman over models), validation's only as
           aggregates. With --measured CSV (a measure run's) and
           --hardware (the GPU it ran on: h100, h200) the same figures
           against those steps, written to --out (the committed files
           stay as they are).
  measure  times each sampled model of a part (default the validation
           part) on this machine's GPU as benchmark.py trained it, at
           the 3090 files' batch and image size, into a CSV (make gpu's
           named step timm-val; tools/measure/gpu/run.sh), within a time budget,
           in the sample's hash order.
"""

import argparse
import csv
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PKG = os.path.join(ROOT, "python", "placer_torch")
DEFAULT_DIR = os.path.join(ROOT, "measurements", "timm")
PUBLISHED = {
    "nchw": "published/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv",
    "nhwc": "published/benchmark-train-amp-nhwc-pt112-cu113-rtx3090.csv",
}
FORMATS = ("nchw", "nhwc")
VAL_SALT = "placer-timm-val:"
SAMPLE_SALT = "placer-timm-sample:"
SAMPLE_SHARE = 0.4
TIMM_PIN = "1.0.31"
# The export settings (benchmark.py's train step); part of the cache key.
SETTINGS = {"optimizer": "sgd", "lr": 1e-4, "momentum": 0.9, "nesterov": True, "weight_decay": 0.0,
            "autocast": "f16", "optimizer_impl": "for-loop", "tf32_matmul": False, "tf32_cudnn": True,
            "attention": "timm-explicit", "loss": "cross-entropy", "device": "cuda", "version": 1}
# timm 1.0.31 maps these deprecated names to resnext101_32x8d (its
# resnet.py's deprecation map, 'ig_resnext101_32x16d', '_32x32d' and
# '_32x48d' all -> 'resnext101_32x8d.fb_wsl_ig1b_ft_in1k'); timm 0.6.6,
# which the benchmark ran, built each at its own width: the architecture
# the name says is built.
# ecaresnext50t_32x4d: timm 0.6.6 built it with ResNet layers (2, 2, 2, 2)
# ("technically a 28 layer ResNet", its docstring), the arguments of
# ecaresnext26t_32x4d; timm 1.0.31 builds it with (3, 4, 6, 3). The
# benchmark's 460 ms beside seresnext26t_32x4d's 454 ms at the same batch
# agrees with the smaller model.
RENAMED = {"ig_resnext101_32x16d": "resnext101_32x16d", "ig_resnext101_32x32d": "resnext101_32x32d",
           "ig_resnext101_32x48d": "resnext101_32x48d", "ecaresnext50t_32x4d": "ecaresnext26t_32x4d"}
SAMPLE_FIELDS = ("model", "family", "part", "nchw_batch", "nchw_img", "nchw_ms", "nhwc_batch", "nhwc_img", "nhwc_ms")


def h8(s):
    """The first 8 hex digits of sha256(s) as an integer."""
    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16)


def part_of(family):
    """The part a family is in: "val" when sha256(VAL_SALT + family) is 0
    mod 3, else "dev"."""
    return "val" if h8(VAL_SALT + family) % 3 == 0 else "dev"


def read_published(d):
    """{format: {model: row}} of the committed published files."""
    out = {}
    for fmt, rel in PUBLISHED.items():
        with open(os.path.join(d, rel)) as f:
            out[fmt] = {r["model"]: r for r in csv.DictReader(f)}
    return out


def choose(models_by_family, share=SAMPLE_SHARE):
    """The sample: in each family its ceil(share x n) models first by
    sha256(SAMPLE_SALT + model), the whole sorted by family then model."""
    out = []
    for fam in sorted(models_by_family):
        ms = sorted(models_by_family[fam], key=lambda m: (h8(SAMPLE_SALT + m), m))
        out.extend((fam, m) for m in sorted(ms[:math.ceil(share * len(ms))]))
    return out


def family_of(name):
    """The timm module that registers model name ("unregistered" where
    the pinned timm has none)."""
    import timm
    from timm.models import _registry
    if not timm.is_model(name):
        return "unregistered"
    return _registry._model_to_module.get(name, "unregistered").split(".")[-1]


def cmd_sample(a):
    import timm
    if timm.__version__ != TIMM_PIN:
        sys.exit("timmbench: timm %s: the families are timm %s's modules (make venv-test)" % (timm.__version__, TIMM_PIN))
    pub = read_published(a.dir)
    models = sorted(set(pub["nchw"]) & set(pub["nhwc"]))
    by_fam = {}
    for m in models:
        by_fam.setdefault(family_of(m), []).append(m)
    rows = []
    for fam, m in choose(by_fam):
        row = {"model": m, "family": fam, "part": part_of(fam)}
        for fmt in FORMATS:  # a format's own batch: benchmark.py retried a smaller one after running out of memory
            p = pub[fmt][m]
            row.update({fmt + "_batch": p["train_batch_size"], fmt + "_img": p["train_img_size"],
                        fmt + "_ms": p["train_step_time"]})
        rows.append(row)
    path = os.path.join(a.dir, "sample.csv")
    text = to_csv(rows, SAMPLE_FIELDS)
    if a.check:
        with open(path) as f:
            if f.read() != text:
                sys.exit("timmbench: %s differs from the rule's sample (timmbench.py sample writes it)" % path)
        print("%s: the rule's sample, %d models" % (path, len(rows)))
        return
    write_atomic(path, text)
    fams = {r["family"] for r in rows}
    val = [r for r in rows if r["part"] == "val"]
    print("%s: %d of %d models, %d families (%d validation families, %d models)" % (
        path, len(rows), len(models), len(fams), len({r["family"] for r in val}), len(val)))


def to_csv(rows, fields):
    import io
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in fields})
    return buf.getvalue()


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def read_sample(d):
    with open(os.path.join(d, "sample.csv")) as f:
        return list(csv.DictReader(f))


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "placer", "timm")


def fingerprint(py):
    """The cache's key: the exporter's sources, torch's and timm's
    versions (as py imports them) and SETTINGS."""
    h = hashlib.sha256()
    for rel in ("exporter.py", "semantics.py", "exportflags.py"):
        with open(os.path.join(PKG, "placer_torch", rel), "rb") as f:
            h.update(f.read())
    vers = subprocess.run([py, "-c", "import torch, timm; print(torch.__version__, timm.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    h.update(vers.encode())
    h.update(json.dumps(SETTINGS, sort_keys=True).encode())
    return h.hexdigest()[:16], vers


def key(r, fmt):
    """An export's name in the cache: the model, its format, batch and
    image size, and the timm model built for it where RENAMED maps it
    (a changed map is a new export, never a stale one)."""
    k = "%s-%s-b%s-i%s" % (r["model"], fmt, r[fmt + "_batch"], r[fmt + "_img"])
    if r["model"] in RENAMED:
        k += "-as-" + RENAMED[r["model"]]
    return k


def cmd_export(a):
    fp, vers = fingerprint(sys.executable)
    cdir = os.path.join(cache_root(), fp)
    os.makedirs(cdir, exist_ok=True)
    rows = read_sample(a.dir)
    if a.models:
        want = set(a.models.split(","))
        rows = [r for r in rows if r["model"] in want]
    formats = a.formats.split(",")
    todo = [(r, f) for r in rows for f in formats if not os.path.exists(os.path.join(cdir, key(r, f) + ".status.json"))]
    print("timmbench export: cache %s (torch, timm %s); %d of %d exports to do" % (
        cdir, vers, len(todo), len(rows) * len(formats)), flush=True)
    # In an order that spreads a partial run over the families: NCHW first,
    # then by sha256 of the model's name.
    todo.sort(key=lambda x: (FORMATS.index(x[1]), h8(SAMPLE_SALT + x[0]["model"])))
    if a.limit:
        todo = todo[:a.limit]
    start = time.monotonic()
    done = 0
    while todo:
        if a.budget and time.monotonic() - start > a.budget:
            print("timmbench export: time budget of %d s spent; %d left for the next run" % (a.budget, len(todo)))
            break
        batch, todo = todo[:a.per_process], todo[a.per_process:]
        jobs = [{"model": r["model"], "format": fmt, "batch": int(r[fmt + "_batch"]), "img": int(r[fmt + "_img"]),
                 "base": os.path.join(cdir, key(r, fmt))} for r, fmt in batch]
        # One child exports a batch of models (torch and timm imported
        # once: 5 of a small model's 7 CPU s), one at a time, writing each
        # one's status; a child that dies leaves the rest without one.
        fd, jobfile = tempfile.mkstemp(prefix="timmbench-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"jobs": jobs, "timeout": a.timeout}, f)
        cmd = [sys.executable, os.path.abspath(__file__), "export-batch", jobfile]
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=PKG + os.pathsep + os.environ.get("PYTHONPATH", "")))
        for line in p.stderr:
            if line.startswith("timmbench-done "):
                st = json.loads(line[len("timmbench-done "):])
                done += 1
                print("[%d] %s-%s: %s, %.1f CPU s%s" % (done, st["model"], st["format"], st["status"], st["cpu_s"],
                                                         ("; " + st["reason"]) if "reason" in st else ""), flush=True)
        rc = p.wait()
        os.remove(jobfile)
        left = [j for j in jobs if not os.path.exists(j["base"] + ".status.json")]
        if left:  # the child died in left[0]'s export: that one is refused, the rest go back in line
            j = left[0]
            st = {"model": j["model"], "format": j["format"], "cpu_s": 0, "status": "refused",
                  "reason": "the export process died (exit status %d)" % rc}
            write_atomic(j["base"] + ".status.json", json.dumps(st) + "\n")
            done += 1
            print("[%d] %s-%s: refused; %s" % (done, j["model"], j["format"], st["reason"]), flush=True)
            back = {(x["model"], x["format"]) for x in left[1:]}
            todo = [(r, fmt) for r, fmt in batch if (r["model"], fmt) in back] + todo


def cmd_export_batch(a):
    """The export subcommand's child: each job of the job file exported in
    this process, one after another, each one's status file written and
    one line "timmbench-done STATUS" on stderr."""
    import signal
    import warnings
    warnings.filterwarnings("ignore")
    import logging
    logging.disable(logging.WARNING)
    import torch
    torch.set_num_threads(1)
    with open(a.jobfile) as f:
        spec = json.load(f)

    def alarm(signum, frame):
        raise TimeoutError("export took over %d s (timed out)" % spec["timeout"])
    signal.signal(signal.SIGALRM, alarm)
    for j in spec["jobs"]:
        t0, c0 = time.monotonic(), time.process_time()
        signal.alarm(spec["timeout"])
        try:
            export_one(j["model"], j["format"], j["batch"], j["img"], j["base"] + ".json")
            st = {"status": "ok"}
        except Exception as e:  # the reason is the table's: one line
            text = str(e).strip().splitlines()
            st = {"status": "refused", "reason": ("%s: %s" % (type(e).__name__, text[0] if text else ""))[:300]}
            for p in (j["base"] + ".json", j["base"] + ".meta.json"):
                if os.path.exists(p):
                    os.remove(p)
        finally:
            signal.alarm(0)
        st.update(model=j["model"], format=j["format"], cpu_s=round(time.process_time() - c0, 1),
                  wall_s=round(time.monotonic() - t0, 1))
        write_atomic(j["base"] + ".status.json", json.dumps(st) + "\n")
        print("timmbench-done " + json.dumps(st), file=sys.stderr, flush=True)


def one_line(err):
    """The last meaningful line of a child's stderr: the error, one line."""
    lines = [l.strip() for l in (err or "").splitlines() if l.strip()]
    for l in reversed(lines):
        if l.startswith("timmbench:") or "Error" in l or "error" in l:
            return l[:300]
    return (lines[-1] if lines else "exited without a message")[:300]


def export_one(model, fmt, batch, img, out):
    """Exports model's training step as benchmark.py runs it (the module's
    doc) to out; raises on what cannot be exported."""
    import torch
    import timm
    import timm.layers
    from placer_torch.classifier import channels_last_in_place, image_inputs
    from placer_torch.exporter import export_training_step
    cl = fmt == "nhwc"
    # Attention as timm 0.6.6 on PyTorch 1.12 ran it (neither had fused
    # attention): timm's explicit q @ k^T, softmax, @ v, whose matmuls
    # autocast runs in FP16 and its softmax in FP32 (autocast's FP32
    # list). timm 1.0.31 calls scaled_dot_product_attention instead,
    # whose math path upcasts FP16 to FP32 throughout (bmm, softmax and
    # their casts) unless allow_fp16_bf16_reduction_math_sdp: that is
    # set too, for attention timm does not write itself
    # (nn.MultiheadAttention, which PyTorch 1.12 ran in FP16 bmms).
    timm.layers.set_fused_attn(False)
    torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)

    def build():
        m = timm.create_model(RENAMED.get(model, model), pretrained=False)
        return channels_last_in_place(m) if cl else m

    make_inputs = image_inputs(batch, img, cl)

    execution = {"device": SETTINGS["device"], "optimizer_impl": SETTINGS["optimizer_impl"],
                 "autocast": SETTINGS["autocast"], "tf32_matmul": SETTINGS["tf32_matmul"],
                 "tf32_cudnn": SETTINGS["tf32_cudnn"]}
    kw = {"lr": SETTINGS["lr"], "momentum": SETTINGS["momentum"], "nesterov": SETTINGS["nesterov"],
          "weight_decay": SETTINGS["weight_decay"]}
    export_training_step(build, make_inputs, torch.nn.functional.cross_entropy, torch.optim.SGD, kw,
                         out=out, name=os.path.basename(out)[:-len(".json")], fake=True, batch_dim=None,
                         attention="math", execution=execution)


MEASURE_FIELDS = ("model", "family", "part", "format", "batch", "img", "step_ms", "steps", "peak_gb", "status", "reason",
                  "device", "torch", "timm")


def measure_order(rows, part, limit=0):
    """The sampled models measure times, in the order it takes them: the
    part's (or all) by sha256(SAMPLE_SALT + model), so that a run stopped
    by its budget has spread over the families."""
    rows = [r for r in rows if part == "all" or r["part"] == part]
    rows.sort(key=lambda r: (h8(SAMPLE_SALT + r["model"]), r["model"]))
    return rows[:limit] if limit else rows


def cmd_measure(a):
    """Times each sampled model's training step on this machine's GPU as
    benchmark.py ran it (the module's doc: timm.create_model, train(),
    FP16 autocast around forward and loss, cross-entropy, backward,
    SGD's step with momentum 0.9 and Nesterov; attention as exported),
    at the batch and image size of timm's 3090 files, a row a model and
    format written to --output after each one (a run stopped by its
    budget or its limit keeps what it measured). A model that runs out
    of memory is a row too ("oom"), as is one that fails (its one-line
    reason)."""
    import torch
    import timm
    import timm.layers
    timm.layers.set_fused_attn(False)
    dev = torch.device(a.device)
    if dev.type == "cuda":
        torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)
        torch.backends.cuda.matmul.allow_tf32 = SETTINGS["tf32_matmul"]
        torch.backends.cudnn.allow_tf32 = SETTINGS["tf32_cudnn"]
        torch.backends.cudnn.benchmark = True
        name = torch.cuda.get_device_name(dev)
    else:
        name = "cpu"
    # FP16 autocast as the benchmark; on a CPU (the plumbing) BF16.
    amp = torch.float16 if dev.type == "cuda" else torch.bfloat16
    rows = measure_order(read_sample(a.dir), a.part, a.limit)
    out, start = [], time.monotonic()
    for r in rows:
        for fmt in a.formats.split(","):
            if time.monotonic() - start > a.budget:
                print("timmbench measure: budget of %.0f s spent; %d rows measured" % (a.budget, len(out)), flush=True)
                return
            b, img = (2 if a.quick else int(r[fmt + "_batch"])), int(r[fmt + "_img"])
            row = {"model": r["model"], "family": r["family"], "part": r["part"], "format": fmt, "batch": b, "img": img,
                   "device": name, "torch": torch.__version__, "timm": timm.__version__}
            try:
                ms, peak = measure_one(torch, timm, dev, amp, RENAMED.get(r["model"], r["model"]), fmt == "nhwc", b, img,
                                       1 if a.quick else a.warmup, 1 if a.quick else a.steps)
                row.update(status="ok", step_ms="%.3f" % ms, steps=1 if a.quick else a.steps, peak_gb="%.2f" % peak)
            except torch.cuda.OutOfMemoryError:
                row.update(status="oom", reason="out of memory at batch %d" % b)
            except Exception as e:  # one line, as export's
                text = str(e).strip().splitlines()
                row.update(status="failed", reason=("%s: %s" % (type(e).__name__, text[0] if text else ""))[:300])
            finally:
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
            out.append(row)
            write_atomic(a.output, to_csv(out, MEASURE_FIELDS))
            print("[%d] %s-%s: %s %s" % (len(out), r["model"], fmt, row["status"], row.get("step_ms", row.get("reason", ""))),
                  flush=True)


def measure_one(torch, timm, dev, amp, model, channels_last, batch, img, warmup, steps):
    """One model's mean training step (ms) over steps after warmup, and
    its peak memory (GB; 0 on a CPU)."""
    m = timm.create_model(model, pretrained=False).to(dev)
    x = torch.randn(batch, 3, img, img, device=dev)
    if channels_last:
        m = m.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    m.train()
    y = torch.randint(0, m.num_classes, (batch,), device=dev)
    opt = torch.optim.SGD(m.parameters(), lr=SETTINGS["lr"], momentum=SETTINGS["momentum"], nesterov=SETTINGS["nesterov"],
                          weight_decay=SETTINGS["weight_decay"], foreach=False)
    loss_fn = torch.nn.CrossEntropyLoss()

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    def step():
        opt.zero_grad(set_to_none=False)
        with torch.autocast(dev.type, dtype=amp):
            loss = loss_fn(m(x), y)
        loss.backward()
        opt.step()
    try:
        for _ in range(warmup):
            step()
        sync()
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        ms = (time.perf_counter() - t0) / steps * 1e3
        return ms, (torch.cuda.max_memory_allocated(dev) / 1e9 if dev.type == "cuda" else 0.0)
    finally:
        del m, opt, x, y


def spearman(xs, ys):
    """Spearman's rank correlation of two equal-length lists (ties take
    their mean rank)."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0 + 1
            i = j + 1
        return r
    n = len(xs)
    if n < 2:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def predict(placer, graph, host, fmt, hardware="rtx3090"):
    """placer eval's one-GPU step time of graph on hardware (the rtx3090
    of timm's files unless a measure run's GPU) in memory format fmt
    (nchw, nhwc: cuDNN's layout transposes or none), seconds."""
    cmd = [placer, "eval", "--graph", graph, "--hardware", hardware, "--gpus", "1", "--json",
           "--memory-format", fmt, "--host=%s" % ("true" if host else "false")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(one_line(p.stderr) or "placer eval exited %d" % p.returncode)
    return float(json.loads(p.stdout)["step_time_s"])


def aggregate(rows, field):
    """n, mean |error| and Spearman over the rows that have field's prediction."""
    ok = [r for r in rows if r.get(field + "_ms") not in (None, "")]
    if not ok:
        return {"n": 0}
    errs = [abs(float(r[field + "_ms"]) / float(r["measured_ms"]) - 1) for r in ok]
    return {"n": len(ok), "mean_abs_error": sum(errs) / len(errs),
            "spearman": spearman([float(r[field + "_ms"]) for r in ok], [float(r["measured_ms"]) for r in ok])}


RESULT_FIELDS = ("model", "family", "part", "format", "batch", "img", "measured_ms", "strict_ms", "strict_err",
                 "host_ms", "host_err", "ops", "export_cpu_s", "status", "reason")


def read_measured(path):
    """{(model, format): step ms} of a measure run's CSV, its rows that
    ran; and the GPU it ran on."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    got = {(r["model"], r["format"]): r["step_ms"] for r in rows if r.get("status") == "ok"}
    return got, ({r.get("device", "") for r in rows} - {""})


def cmd_report(a):
    # Another GPU's measurements (measure): the committed files stay as
    # they are; the figures go to --out.
    if a.measured and (not a.out or os.path.abspath(a.out) == os.path.abspath(a.dir)):
        sys.exit("timmbench report: --measured needs --out, a folder other than --dir (%s): the committed results stay" % a.dir)
    placer = os.path.abspath(a.placer)
    fp, vers = fingerprint(a.python or sys.executable)
    cdir = os.path.join(cache_root(), fp)
    formats = a.formats.split(",")
    out = []
    measured, outdir = None, a.out or a.dir
    if a.measured:
        measured, devices = read_measured(a.measured)
        if not measured:
            sys.exit("timmbench report: %s: no row that ran (status ok)" % a.measured)
        os.makedirs(a.out, exist_ok=True)
        print("timmbench report: %d steps measured on %s, predicted on placer's %s" % (
            len(measured), ", ".join(sorted(devices)) or "?", a.hardware), flush=True)
    hwtag = "" if a.hardware == "rtx3090" else "-" + a.hardware
    cached = os.path.join(cdir, "predictions-%s%s.json" % (hashlib.sha256(open(placer, "rb").read()).hexdigest()[:16], hwtag))
    memo = {}
    if os.path.exists(cached):
        with open(cached) as f:
            memo = json.load(f)
    for r in read_sample(a.dir):
        for fmt in formats:
            k = key(r, fmt)
            row = {"model": r["model"], "family": r["family"], "part": r["part"], "format": fmt,
                   "batch": r[fmt + "_batch"], "img": r[fmt + "_img"], "measured_ms": r[fmt + "_ms"]}
            if measured is not None:
                if (r["model"], fmt) not in measured:
                    continue
                row["measured_ms"] = measured[(r["model"], fmt)]
            sp = os.path.join(cdir, k + ".status.json")
            if not os.path.exists(sp):
                row["status"] = "not exported yet"
                out.append(row)
                continue
            with open(sp) as f:
                st = json.load(f)
            row["export_cpu_s"] = st.get("cpu_s", "")
            if st["status"] != "ok":
                row["status"], row["reason"] = "refused", st.get("reason", "")
                out.append(row)
                continue
            g = os.path.join(cdir, k + ".json")
            try:
                if k not in memo:
                    with open(g) as f:
                        nops = len(json.load(f)["ops"])
                    memo[k] = {"strict": predict(placer, g, False, fmt, a.hardware),
                               "host": predict(placer, g, True, fmt, a.hardware), "ops": nops}
                pr = memo[k]
            except (RuntimeError, ValueError, KeyError) as e:
                row["status"], row["reason"] = "refused", "placer eval: %s" % e
                out.append(row)
                continue
            meas = float(row["measured_ms"])
            row.update(status="ok", ops=pr["ops"], strict_ms="%.3f" % (pr["strict"] * 1e3),
                       host_ms="%.3f" % (pr["host"] * 1e3),
                       strict_err="%+.3f" % (pr["strict"] * 1e3 / meas - 1), host_err="%+.3f" % (pr["host"] * 1e3 / meas - 1))
            out.append(row)
    write_atomic(cached, json.dumps(memo))
    write_atomic(os.path.join(outdir, "results.csv"), to_csv(out, RESULT_FIELDS))
    cpu = [float(x["export_cpu_s"]) for x in out if x.get("export_cpu_s") not in (None, "")]
    summary = {"placer": a.placer_version or "", "torch_timm": vers, "cache": fp, "parts": {}, "hardware": a.hardware,
               "measured": os.path.basename(a.measured) if a.measured else "timm's published RTX 3090 files",
               "export_cpu_s": {"exports": len(cpu), "total": round(sum(cpu), 1),
                                "mean": round(sum(cpu) / len(cpu), 2) if cpu else 0, "max": max(cpu) if cpu else 0}}
    for part in ("dev", "val"):
        pr = [x for x in out if x["part"] == part]
        s = {"models": len({x["model"] for x in pr}), "rows": len(pr),
             "exported": sum(1 for x in pr if x.get("status") == "ok"),
             "refused": sum(1 for x in pr if x.get("status") == "refused"),
             "not_exported_yet": sum(1 for x in pr if x.get("status") == "not exported yet")}
        for fmt in formats:
            fr = [x for x in pr if x["format"] == fmt and x.get("status") == "ok"]
            s[fmt] = {"strict": aggregate(fr, "strict"), "host": aggregate(fr, "host")}
        summary["parts"][part] = s
    write_atomic(os.path.join(outdir, "summary.json"), json.dumps(summary, indent=1, sort_keys=True) + "\n")
    if a.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
        return
    if a.rows:
        print("%-34s %-18s %-4s %5s %4s %9s %9s %7s %9s %7s" % ("model (development part)", "family", "fmt", "batch",
                                                                "img", "meas ms", "strict", "err", "host", "err"))
        for x in out:
            if x["part"] != "dev" or x.get("status") == "not exported yet":
                continue
            if x.get("status") == "ok":
                print("%-34s %-18s %-4s %5s %4s %9s %9s %7s %9s %7s" % (
                    x["model"][:34], x["family"][:18], x["format"], x["batch"], x["img"], x["measured_ms"],
                    x["strict_ms"], x["strict_err"], x["host_ms"], x["host_err"]))
            else:
                print("%-34s %-18s %-4s %s%s" % (x["model"][:34], x["family"][:18], x["format"], x.get("status"),
                                                 (": " + x["reason"]) if x.get("reason") else ""))
        print()
    e = summary["export_cpu_s"]
    print("exports: %d, %.0f CPU s in all, %.2f a step (the most %.1f)" % (e["exports"], e["total"], e["mean"], e["max"]))
    print("%-5s %-4s %6s %6s %7s %7s | %-22s | %-22s" % ("part", "fmt", "models", "ok", "refused", "to do",
                                                         "strict |err|  Spearman", "--host |err|  Spearman"))
    for part in ("dev", "val"):
        s = summary["parts"][part]
        for fmt in formats:
            f = s[fmt]
            ok = f["strict"]["n"]

            def cell(g):
                return "%9.1f%%  %8.3f" % (100 * g["mean_abs_error"], g["spearman"]) if g["n"] else "%22s" % "-"
            n = {st: sum(1 for x in out if x["part"] == part and x["format"] == fmt and x.get("status") == st)
                 for st in ("refused", "not exported yet")}
            print("%-5s %-4s %6d %6d %7d %7d | %s | %s" % (part, fmt, s["models"], ok, n["refused"],
                                                           n["not exported yet"], cell(f["strict"]), cell(f["host"])))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--check", action="store_true")
    e = sub.add_parser("export")
    e.add_argument("--formats", default="nchw,nhwc")
    e.add_argument("--models", default="", help="comma-separated: only these sampled models")
    e.add_argument("--limit", type=int, default=0, help="at most this many exports this run")
    e.add_argument("--budget", type=int, default=0, help="stop starting exports after this many seconds")
    e.add_argument("--timeout", type=int, default=900, help="seconds one export may take")
    e.add_argument("--per-process", type=int, default=25, help="exports one child process makes (default 25)")
    o = sub.add_parser("export-batch")
    o.add_argument("jobfile")
    r = sub.add_parser("report")
    r.add_argument("--placer", default=os.path.join(ROOT, "bin", "placer"))
    r.add_argument("--placer-version", default="")
    r.add_argument("--python", default="", help="the python whose torch and timm made the exports (default this one)")
    r.add_argument("--formats", default="nchw,nhwc")
    r.add_argument("--rows", action="store_true", help="print the development part's rows too")
    r.add_argument("--json", action="store_true")
    r.add_argument("--measured", default="", help="a measure run's CSV: its steps instead of timm's 3090 files (needs --out)")
    r.add_argument("--hardware", default="rtx3090", help="placer's hardware preset the steps are predicted on")
    r.add_argument("--out", default="", help="where results.csv and summary.json go (default --dir)")
    m = sub.add_parser("measure")
    m.add_argument("--part", default="val", choices=("dev", "val", "all"))
    m.add_argument("--formats", default="nchw")
    m.add_argument("--device", default="cuda")
    m.add_argument("--budget", type=float, default=240, help="stop starting models after this many seconds")
    m.add_argument("--warmup", type=int, default=5)
    m.add_argument("--steps", type=int, default=20)
    m.add_argument("--limit", type=int, default=0, help="at most this many models")
    m.add_argument("--quick", action="store_true", help="batch 2, one step: the plumbing (make gpu-check), figures meaningless")
    m.add_argument("-o", "--output", required=True, help="the CSV written (after every model)")
    for q in (s, e, r, m):
        q.add_argument("--dir", default=DEFAULT_DIR)
    a = p.parse_args(argv)
    return {"sample": cmd_sample, "export": cmd_export, "export-batch": cmd_export_batch, "report": cmd_report,
            "measure": cmd_measure}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main() or 0)
