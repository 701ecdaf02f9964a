#!/usr/bin/env python3
"""Read MLPerf Training results repositories into placer's bench table.

Reads mlcommons' training_results_v3.0 ... v4.1 (a bare git mirror, as the
project's fetch leaves under /work/.mirror, or a plain checkout) and writes
one row per submission of GPT-3 175B pretraining (gpt3) and Llama 2 70B
LoRA fine-tuning (llama2_70b_lora) on NVIDIA GPUs: the system, the
software release, the plan and recipe from the config_*.sh the run used
(with the defaults its Hydra YAML gives for what the script leaves unset),
and the step time measured from its result logs, with the paths of every
file read for provenance. A second table has one row per result file (per
run). Standard library only: runs with Debian's python3.

    python3 tools/measure/mlperf/mlperf_bench.py --out measurements/mlperf \\
        /work/.mirror/mlcommons+training_results_v3.0/repo ...

Rounds v5.1 and later are held out of the project: the script refuses them.
"""

import argparse
import csv
import glob
import io
import json
import os
import re
import statistics
import subprocess
import sys

BENCHMARKS = ("gpt3", "llama2_70b_lora", "bert", "llama31_405b")

# HELD_OUT_FROM is the first round kept out of view (measurements/mlperf/
# README.md: rounds v5.1 and later are the final check, never read).
HELD_OUT_FROM = (5, 1)

# The columns of runs.csv, in order (measurements/mlperf/README.md says what
# each holds).
COLUMNS = [
    "id", "round", "part", "submitter", "system", "benchmark", "division", "status",
    "accelerator", "gpu", "gpu_mem_gib", "gpus", "nodes", "gpus_per_node",
    "framework", "container", "te_revision", "nemo_revision", "megatron_revision",
    "host_cpu", "host_sockets", "host_nics", "host_nic_gbps", "host_networking",
    "gpu_interconnect", "gpu_host_link",
    "tp", "pp", "vp", "cp", "cp_comm_type", "sp", "dp", "mbs", "gbs", "seq_len",
    "fp8", "fp8_format", "fp8_amax_history", "fp8_amax_algo", "fp8_reduce_amax",
    "amax_dp_interval", "amax_async",
    "fp8_params", "fp8_dpa", "fp8_activation",
    "recompute_granularity", "recompute_method", "recompute_layers",
    "cuda_graph", "cpu_offload", "alloc_conf",
    "lora_rank", "lora_alpha", "lora_targets",
    "no_transpose_cache", "hidden_dropout", "lora_dropout", "lora_a2a", "lora_dropout_recompute", "cpu_offload_layers",
    "dist_optimizer", "tp_comm_overlap", "tp_overlap_ag", "tp_overlap_rs",
    "overlap_param_sync", "sharp", "connections", "pp_embed_layer", "pp_loss_layer", "mcore_cuda_graph",
    "grad_accum", "packing", "precision", "optimizer", "fused_mha", "unpad", "dense_seq_output",
    "cuda_graph_mode", "graph_iterations", "ddp", "recipe_flags",
    "step_s", "step_s_min", "step_s_max", "n_results", "absent_results", "step_method", "same_logs_as",
    "config_match", "config_path", "yaml_defaults", "from_log_config", "result_paths",
]

RUN_COLUMNS = ["id", "round", "part", "submitter", "system", "benchmark", "result_path",
               "step_s", "step_method", "n_steps"]


# ---------------------------------------------------------------- sources

class Tree:
    """A results repository: a bare git directory or a plain directory."""

    def __init__(self, path):
        self.path = path
        self.git = os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects"))
        self._files = None
        self._cat = None

    def files(self):
        if self._files is None:
            if self.git:
                out = subprocess.run(["git", "--git-dir", self.path, "ls-tree", "-r", "--name-only", "-z", "HEAD"],
                                     check=True, capture_output=True).stdout
                self._files = sorted(p.decode("utf-8", "replace") for p in out.split(b"\0") if p)
            else:
                fs = []
                for root, _, names in os.walk(self.path):
                    for n in names:
                        fs.append(os.path.relpath(os.path.join(root, n), self.path).replace(os.sep, "/"))
                self._files = sorted(fs)
        return self._files

    def read(self, rel):
        if not self.git:
            with open(os.path.join(self.path, rel), "rb") as f:
                return f.read().decode("utf-8", "replace")
        if self._cat is None:
            self._cat = subprocess.Popen(["git", "--git-dir", self.path, "cat-file", "--batch"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._cat.stdin.write(("HEAD:" + rel + "\n").encode())
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().decode()
        if header.endswith("missing\n"):
            raise FileNotFoundError(rel)
        size = int(header.split()[2])
        data = self._cat.stdout.read(size)
        self._cat.stdout.read(1)
        return data.decode("utf-8", "replace")

    def close(self):
        if self._cat is not None:
            self._cat.stdin.close()
            self._cat.wait()
            self._cat = None


def round_of(path):
    """The round a mirror holds, from its name (training_results_v4.1)."""
    m = re.search(r"training_results_v(\d+)\.(\d+)", path)
    if not m:
        raise ValueError(f"{path}: not a training_results_vX.Y mirror (the round is read from the name)")
    r = (int(m.group(1)), int(m.group(2)))
    if r >= HELD_OUT_FROM:
        raise ValueError(f"{path}: round v{r[0]}.{r[1]} is held out (v5.1 and later are not read)")
    return f"v{r[0]}.{r[1]}"


# ------------------------------------------------------------- validation

def part_of(round_, benchmark="", gpu=""):
    """Which part of the bench a row is in: "validation" or "development".

    The rule, chosen on 2026-11-28 before any row was predicted: round v4.1
    whole is the validation part (its newest systems, H200 and the B200
    preview, and the most submitters); v3.0, v3.1 and v4.0 are the
    development part. Round v5.0, added on 2026-11-29, chosen
    before any v5.0 row was read or predicted: its Llama 3.1 405B
    pretraining benchmark (`llama31_405b`), whole, every submitter, is the
    validation part; its other benchmarks (BERT, Llama 2 70B LoRA) are the
    development part. Round v5.0's AMD Instinct rows, added on 2026-11-29
    and chosen before any of them was read into the bench or predicted:
    the MI325X rows (one GPU generation, every submitter) are validation
    rows, the MI300X rows development rows.
    """
    if round_ == "v4.1":
        return "validation"
    if round_ == "v5.0" and benchmark == "llama31_405b":
        return "validation"
    if round_ == "v5.0" and gpu == "MI325X":
        return "validation"
    return "development"


# ------------------------------------------------------------- MLLOG logs

def mllog_events(text):
    """Every :::MLLOG record of a result file, in order (prefixes such as a
    rank's "0: " are ignored; a line that is not JSON is skipped)."""
    out = []
    for line in text.splitlines():
        i = line.find(":::MLLOG ")
        if i < 0:
            continue
        try:
            ev = json.loads(line[i + len(":::MLLOG "):])
        except ValueError:
            continue
        if isinstance(ev, dict) and "key" in ev:
            out.append(ev)
    return out


def run_span(events):
    """A run's first run_start and run_stop times (ms), or None."""
    t0 = [ev.get("time_ms") for ev in events if ev.get("key") == "run_start"]
    t1 = [ev.get("time_ms") for ev in events if ev.get("key") == "run_stop"]
    return (t0[0], t1[0]) if t0 and t1 else None


def _first(events, key):
    for ev in events:
        if ev.get("key") == key:
            return ev.get("value")
    return None


def log_facts(events):
    """What a result file says of its run besides timing."""
    return {k: _first(events, k) for k in ("global_batch_size", "max_sequence_length", "lora_rank", "lora_alpha",
                                            "submission_platform", "submission_org", "submission_division",
                                            "submission_status", "gradient_accumulation_steps")}


def step_time(events, benchmark, gbs, seq):
    """The step time of one run in seconds, the method, and the number of
    steps it rests on (None, reason, 0 where the log holds no timing).

    In order of preference:
    - train_step_timing: the median of the per-step times the framework
      logged (NeMo's tracked_stats "train_step_timing" / "train_step_timing in s");
    - throughput: the median of the samples/s logged at each block's end
      (NeMo's LoRA tracked_stats "throughput"), as global batch / throughput;
    - train_step_time: the median of the per-step times NVIDIA's v5.0
      llama31_405b callbacks log (tracked_stats "train_step_time");
    - train_loss_timestamps: the median over consecutive train_loss records
      of their time apart over the steps between them (samples_count / gbs);
    - block_timestamps: the median over training blocks after the first of
      (block_stop - block_start) over the steps the block ran, the steps from
      the samples (LoRA: samples_count at successive block_stops) or tokens
      (GPT-3: the block's epoch_count / (gbs x sequence)); the first block,
      which holds warm-up, is used only when it is the only one.
    """
    if benchmark == "bert":
        return bert_step_time(events, gbs)
    timings = []
    for ev in events:
        if ev.get("key") != "tracked_stats" or not isinstance(ev.get("value"), dict):
            continue
        v = ev["value"]
        for k in ("train_step_timing in s", "train_step_timing"):
            if isinstance(v.get(k), (int, float)):
                timings.append(float(v[k]))
    if timings:
        return statistics.median(timings), "train_step_timing", len(timings)
    thr = []
    for ev in events:
        v = ev.get("value")
        if ev.get("key") == "tracked_stats" and isinstance(v, dict) and isinstance(v.get("throughput"), (int, float)) and v["throughput"] > 0:
            thr.append(float(v["throughput"]))
    if thr and gbs:
        return gbs / statistics.median(thr), "throughput", len(thr)
    # NVIDIA's v5.0 llama31_405b custom_callbacks.py _log_throughputs:
    # each logged step's "train_step_time" (NeMo's timer, seconds). Its
    # tyche_ngpu256/512 GB200 logs hold no throughput and one block_stop
    # for five block_starts (the blocks' stops are eval_stops), which the
    # block method below would pair with the last block_start alone.
    st = [float(ev["value"]["train_step_time"]) for ev in events
          if ev.get("key") == "tracked_stats" and isinstance(ev.get("value"), dict)
          and isinstance(ev["value"].get("train_step_time"), (int, float)) and ev["value"]["train_step_time"] > 0]
    if st:
        return statistics.median(st), "train_step_time", len(st)
    if not gbs:
        return None, "no global_batch_size", 0
    losses = [(ev["time_ms"], (ev.get("metadata") or {}).get("samples_count")) for ev in events
              if ev.get("key") == "train_loss" and isinstance((ev.get("metadata") or {}).get("samples_count"), (int, float))]
    per = []
    for (t0, s0), (t1, s1) in zip(losses, losses[1:]):
        steps = (s1 - s0) / gbs
        if steps > 0 and t1 > t0:
            per.append(((t1 - t0) / 1000.0 / steps, steps))
    if len(per) >= 2:
        return statistics.median(p for p, _ in per), "train_loss_timestamps", int(sum(s for _, s in per))
    blocks = []
    start = None
    prev_stop_samples = 0
    for ev in events:
        md = ev.get("metadata") or {}
        if ev.get("key") == "block_start":
            start = ev
        elif ev.get("key") == "block_stop" and start is not None:
            dt = (ev["time_ms"] - start["time_ms"]) / 1000.0
            steps = None
            if isinstance(md.get("epoch_count"), (int, float)) and benchmark == "gpt3" and seq:
                steps = md["epoch_count"] / (gbs * seq)
            elif isinstance(md.get("samples_count"), (int, float)):
                steps = (md["samples_count"] - prev_stop_samples) / gbs
                prev_stop_samples = md["samples_count"]
            if steps and steps > 0 and dt > 0:
                blocks.append((dt / steps, steps))
            start = None
    if len(blocks) > 1:
        blocks = blocks[1:]
    if blocks:
        return statistics.median(p for p, _ in blocks), "block_timestamps", int(sum(s for _, s in blocks))
    return None, "no timing in log", 0


def eval_spans(events):
    """The (eval_start, eval_stop) time pairs (ms) of a log, in order; an
    eval_start with no eval_stop after it is dropped."""
    spans, start = [], None
    for ev in events:
        if ev.get("key") == "eval_start":
            start = ev.get("time_ms")
        elif ev.get("key") == "eval_stop" and start is not None:
            if isinstance(ev.get("time_ms"), (int, float)) and ev["time_ms"] >= start:
                spans.append((start, ev["time_ms"]))
            start = None
    return spans


def bert_steady(events, gbs):
    """A BERT run's steady step from its evaluation marks, or None.

    NVIDIA's run_pretraining.py (and every copy of it on the bench) runs the
    whole run as one block (block_start ... block_stop) and logs, after each
    evaluation, eval_accuracy with metadata epoch_num = the training samples
    seen so far (from v3.1 on also eval_start/eval_stop around it). The
    intervals between successive eval_accuracy marks are the run's training
    blocks; the first, from run_start to the first mark, holds the warm-up
    (the first graph captures and replays) and is left out. The step is
    gbs x (training time) / (samples) summed over the intervals after the
    first, each less the evaluation (eval_start to eval_stop) it holds where
    the log brackets it. Returns (step_s, method, steps) with method
    "steady_train_time" (every evaluation in the span bracketed and taken
    out) or "steady_eval_marks" (some evaluation in the span not bracketed:
    v3.0's logs, whose spans hold their evaluations); None where the log has
    fewer than two marks with growing sample counts."""
    marks = []
    for ev in events:
        md = ev.get("metadata") or {}
        if ev.get("key") == "eval_accuracy" and isinstance(ev.get("time_ms"), (int, float)) \
                and isinstance(md.get("epoch_num"), (int, float)):
            if not marks or (md["epoch_num"] > marks[-1][1] and ev["time_ms"] > marks[-1][0]):
                marks.append((ev["time_ms"], md["epoch_num"]))
    if len(marks) < 2 or not gbs:
        return None
    spans = eval_spans(events)
    train_ms, bracketed = 0.0, True
    for (ta, sa), (tb, sb) in zip(marks, marks[1:]):
        inside = [(a, b) for a, b in spans if ta < a and b <= tb]
        if not inside:
            bracketed = False
        train_ms += (tb - ta) - sum(b - a for a, b in inside)
    samples = marks[-1][1] - marks[0][1]
    if train_ms <= 0:
        return None
    method = "steady_train_time" if bracketed else "steady_eval_marks"
    return gbs * train_ms / 1000.0 / samples, method, int(round(samples / gbs))


def bert_step_time(events, gbs):
    """A BERT run's step time: its global batch (in samples, a packed
    sequence counting as the samples it holds) over its training rate, and
    the method, in order of preference:
    - steady_train_time / steady_eval_marks: the steady step after the
      first training block, as bert_steady reads it (the step placer
      predicts); the methods below are the fallbacks for a log without two
      evaluation marks.
    - train_time: train_samples over the run's time from run_start to
      run_stop less its evaluations, each eval_start to its eval_stop
      (NVIDIA's run_pretraining.py from v3.1 on logs both around each
      evaluation of 10,000 samples, forward only, made every 150,000-300,000
      samples). The training time keeps the run's first steps.
    - run_throughput: where a log has no eval_start/eval_stop (NVIDIA's v3.0
      code logs only eval_accuracy after each evaluation), the one
      tracked_stats "throughput" logged at the run's end: train_samples over
      run_stop - run_start, the evaluations in it.
    - run_timestamps: where a log holds neither (Dell's, Krai's,
      tinygrad's), train_samples over run_stop - run_start from the log's
      own records, the evaluations in it.
    The method names say per run whether its step holds the evaluations."""
    if not gbs:
        return None, "no global_batch_size", 0
    steady = bert_steady(events, gbs)
    if steady is not None:
        return steady
    samples = _first(events, "train_samples")
    steps = int(round(samples / gbs)) if isinstance(samples, (int, float)) else 0
    t0 = [ev["time_ms"] for ev in events if ev.get("key") == "run_start"]
    t1 = [ev["time_ms"] for ev in events if ev.get("key") == "run_stop"]
    have_span = bool(t0 and t1 and isinstance(samples, (int, float)) and samples > 0 and t1[-1] > t0[0])
    evals = [(a, b) for a, b in eval_spans(events) if have_span and t0[0] <= a and b <= t1[-1]]
    if evals:
        train_ms = (t1[-1] - t0[0]) - sum(b - a for a, b in evals)
        if train_ms > 0:
            return gbs * train_ms / 1000.0 / samples, "train_time", steps
    thr = [float(ev["value"]["throughput"]) for ev in events
           if ev.get("key") == "tracked_stats" and isinstance(ev.get("value"), dict)
           and isinstance(ev["value"].get("throughput"), (int, float)) and ev["value"]["throughput"] > 0]
    if thr:
        return gbs / statistics.median(thr), "run_throughput", steps
    if have_span:
        return gbs * (t1[-1] - t0[0]) / 1000.0 / samples, "run_timestamps", steps
    return None, "no timing in log", 0


# -------------------------------------------------------------- config_*.sh

_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_DEFAULT = re.compile(r"^\s*:\s*\"?\$\{([A-Za-z_][A-Za-z0-9_]*):?=([^}]*)\}\"?")
_SOURCE = re.compile(r"^\s*(?:source|\.)\s+(.+?)\s*(?:#.*)?$")


def _strip_comment(v):
    out, q = [], None
    for i, c in enumerate(v):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "#" and (i == 0 or v[i - 1] in " \t"):
            break
        out.append(c)
    return "".join(out).strip()


def _expand(v, env):
    """A shell word's value: quotes removed, ${X:=d} ${X:-d} ${X} $X expanded;
    command substitutions and arithmetic left as they are."""
    v = _strip_comment(v)
    if v.startswith("$(") or v.startswith("`"):
        return v
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        if v[0] == "'":
            return v[1:-1]
        v = v[1:-1]

    def sub(m):
        name, op, d = m.group(1), m.group(2), m.group(3)
        if op in (":=", "="):
            if not env.get(name):
                env[name] = d
            return env[name]
        if op in (":-", "-"):
            return env.get(name) or d
        return env.get(name, "")
    v = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}", sub, v)
    v = re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", lambda m: env.get(m.group(1), ""), v)
    return v


def _then_branches_with_else(lines):
    """The indices of lines in the `then` branch of an if that has an else:
    a condition (MLPERF_VERSION == v31 and the like) tests a variable the run
    leaves unset, so its else branch is the one that ran."""
    skip, stack = set(), []
    for i, line in enumerate(lines):
        if re.match(r"^if\b", line):
            stack.append([i, None])
        elif re.match(r"^(else|elif)\b", line) and stack:
            if stack[-1][1] is None:
                stack[-1][1] = i
        elif re.match(r"^fi\b", line) and stack:
            start, els = stack.pop()
            if els is not None:
                skip.update(range(start + 1, els))
    return skip


def parse_config(tree, path, env=None, depth=0):
    """The environment a config_*.sh leaves: each assignment in order, each
    `source`d file (resolved beside the script, or in configs/ beside it),
    `: "${X:=d}"` defaults. Shell logic is not run: a value set under a
    condition is taken as set, except that a file sourced in the then branch
    of an if with an else is not read (the else branch is the default path)."""
    env = {} if env is None else env
    if depth > 4:
        return env
    base = path.rsplit("/", 1)[0]
    try:
        text = tree.read(path)
    except (FileNotFoundError, OSError):
        return env
    lines = []
    for raw in text.splitlines():
        # `export ACG=full && export ACM=block && export ACL=21` (AMD's
        # v5.0 LoRA config_MI300X_1x8x1.sh): each assignment its own line
        parts = [x.strip() for x in raw.split("&&")]
        if len(parts) > 1 and all(x.startswith("export ") and _ASSIGN.match(x) for x in parts):
            lines.extend(parts)
        else:
            lines.append(raw.strip())
    skip = _then_branches_with_else(lines)
    for i, line in enumerate(lines):
        m = _SOURCE.match(line)
        if m:
            target = m.group(1).strip("\"'")
            name = target.rsplit("/", 1)[-1].strip("\"'")
            if "$" in name or i in skip:
                continue
            near = [c for c in (base + "/" + name, base + "/configs/" + name, base.rsplit("/", 1)[0] + "/" + name)
                    if c in tree_index(tree)]
            for cand in (near or sibling_source(tree, base, name))[:1]:
                parse_config(tree, cand, env, depth + 1)
            continue
        m = _DEFAULT.match(line)
        if m:
            if not env.get(m.group(1)):
                env[m.group(1)] = _expand(m.group(2), env)
            continue
        m = _ASSIGN.match(line)
        if m:
            env[m.group(1)] = _expand(m.group(2), env)
        elif line.startswith("unset "):
            for n in line.split()[1:]:
                env.pop(n, None)
    return env


def sibling_source(tree, base, name):
    """A sourced file its config's folder lacks, from the submitter's other
    implementations of the benchmark in the same container (the folder's
    name after its "_ngc": NVIDIA's v5.0 llama31_405b
    tyche_ngpu256_ngc25.04_nemo sources config_common_cg.sh, which only
    tyche_ngpu512_ngc25.04_nemo holds): the one path where every such
    sibling's file is the same text, else none."""
    parent, _, folder = base.rpartition("/")
    if "_ngc" not in folder or not parent.endswith("/implementations"):
        return ()
    tag = folder[folder.rindex("_ngc"):]
    found = sorted(p for p in _by_name(tree).get(name, ())
                   if p.startswith(parent + "/") and p.count("/") == base.count("/") + 1
                   and p[len(parent) + 1:].split("/", 1)[0].endswith(tag))
    if not found or len({tree.read(p) for p in found}) != 1:
        return ()
    return (found[0],)


_BY_NAME = {}


def _by_name(tree):
    """The tree's paths by file name."""
    key = id(tree)
    if key not in _BY_NAME:
        m = {}
        for p in tree_index(tree):
            m.setdefault(p.rsplit("/", 1)[-1], []).append(p)
        _BY_NAME[key] = m
    return _BY_NAME[key]


_INDEX = {}


def tree_index(tree):
    key = id(tree)
    if key not in _INDEX:
        _INDEX[key] = set(tree.files())
    return _INDEX[key]


# ------------------------------------------------------------- Hydra YAML

_PLAN_YAML_KEYS = None


def printed_config(text):
    """The resolved model config a NeMo run prints into its log (lines such
    as " 0:   tensor_model_parallel_size: 4"), for the plan's keys only:
    {yaml key: [value]} with the first literal value printed."""
    global _PLAN_YAML_KEYS
    if _PLAN_YAML_KEYS is None:
        _PLAN_YAML_KEYS = {yk for _, yks, _ in KEYS for yk in yks}
    out = {}
    lines = [re.sub(r"^\s*\d+:\s?", "", ln) for ln in text.splitlines() if ":::MLLOG" not in ln]
    for i, line in enumerate(lines):
        m = re.match(r"^(\s+)([a-z_0-9]+):(?:\s+(\S.*?))?\s*$", line)
        if not m or m.group(2) not in _PLAN_YAML_KEYS or m.group(2) in out:
            continue
        v = m.group(3)
        if v is None:
            # a block list: "key:" then "- item" lines below it
            items = []
            for nxt in lines[i + 1:]:
                li = re.match(r"^\s*-\s+(\S.*?)\s*$", nxt)
                if not li:
                    break
                items.append(li.group(1).strip("'\""))
            if not items:
                continue
            v = "[" + ", ".join(f"'{x}'" for x in items) + "]"
        if "${" in v:
            continue
        out[m.group(2)] = [v.strip("'\"") if not v.startswith("[") else v]
    return out

def _braced(s, i):
    """The index just past the brace that closes s[i] == '{'."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(s)


def resolve_yaml(expr, env, used_default=None):
    """A Hydra/OmegaConf value with the config's environment: ${oc.env:X,d}
    is env X or the default d (X appended to used_default when the default
    is taken), ${oc.decode:...} its inner value; any other interpolation
    (${multiply:...}, ${model.x}) resolves to None."""
    expr = expr.strip()
    if not expr.startswith("${"):
        if "${" in expr:
            return None
        return expr.strip("'\"")
    end = _braced(expr, 1)
    if end != len(expr):
        return None
    inner = expr[2:-1]
    if inner.startswith("oc.decode:"):
        return resolve_yaml(inner[len("oc.decode:"):], env, used_default)
    if inner.startswith("oc.env:"):
        rest = inner[len("oc.env:"):]
        if "," in rest:
            name, default = rest.split(",", 1)
        else:
            name, default = rest, None
        name = name.strip()
        if env.get(name, "") != "":
            return env[name]
        if default is None:
            return None
        if used_default is not None:
            used_default.append(name)
        return resolve_yaml(default, env, used_default)
    return None


def yaml_keys(text):
    """Each `key: value` line of a YAML file (the last word before the colon;
    comments dropped): {key: [value, ...]} in file order."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_.@]*)\s*:\s*(.*?)\s*$", line)
        if not m or not m.group(2):
            continue
        v = m.group(2)
        # drop a trailing comment outside braces
        depth = 0
        for i, c in enumerate(v):
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "#" and depth == 0 and i > 0 and v[i - 1] in " \t":
                v = v[:i].rstrip()
                break
        out.setdefault(m.group(1), []).append(v)
    return out


# The plan's keys: (column, YAML keys, environment variables). A value comes
# from the first environment variable the config sets; else from the YAML
# key's expression resolved with the config's environment (its default where
# the config leaves the variable unset: listed in yaml_defaults).
KEYS = [
    ("tp", ["tensor_model_parallel_size"], ["TENSOR_MODEL_PARALLEL", "TP"]),
    ("pp", ["pipeline_model_parallel_size"], ["PIPELINE_MODEL_PARALLEL", "PP"]),
    ("vp", ["virtual_pipeline_model_parallel_size"], ["INTERLEAVED_PIPELINE", "VP"]),
    ("cp", ["context_parallel_size"], ["CP"]),
    # Megatron-Core's --cp-comm-type as NeMo passes it to Transformer
    # Engine (model.cp_comm_type: NVIDIA's v4.1 b200_preview LoRA config's
    # ${oc.env:CP_COMM_TYPE,'a2a'}); "": the config does not set it (p2p).
    ("cp_comm_type", ["cp_comm_type"], ["CP_COMM_TYPE"]),
    ("sp", ["sequence_parallel"], ["SEQ_PARALLEL", "SP"]),
    ("mbs", ["micro_batch_size"], ["MICRO_BATCH_SIZE", "MBS"]),
    ("seq_len", ["encoder_seq_length"], ["MAX_SEQLEN", "SEQ_LEN"]),
    ("fp8", ["fp8"], ["FP8"]),
    ("fp8_hybrid", ["fp8_hybrid"], ["FP8_HYBRID"]),
    ("fp8_e4m3", ["fp8_e4m3"], ["FP8_E4M3"]),
    ("fp8_amax_history", ["fp8_amax_history_len"], ["FP8_AMAX_HISTORY"]),
    ("fp8_amax_algo", ["fp8_amax_compute_algo"], ["FP8_AMAX_ALGO"]),
    ("fp8_reduce_amax", ["reduce_amax"], ["FP8_REDUCE_AMAX"]),
    # Transformer Engine's amax reduction (TE release_v0.8 to 1.x fp8.py
    # global_amax_reduction, module.py): NVTE_DP_AMAX_REDUCE_INTERVAL (its
    # default 1: every reduction over the fp8 group, tensor x data; 0: the
    # tensor group only) and NVTE_ASYNC_AMAX_REDUCTION (its default 0: the
    # all-reduce waited for on the compute stream). "" where unset.
    ("amax_dp_interval", [], ["NVTE_DP_AMAX_REDUCE_INTERVAL"]),
    ("amax_async", [], ["NVTE_ASYNC_AMAX_REDUCTION"]),
    # NeMo's fp8_params, and FP8_PARAM_GATHER where a v5.0 llama31_405b
    # config sets that instead (IBM+CoreWeave+NVIDIA's and NVIDIA's GB200
    # configs: their pretrain.py passes optim.fp8_param_gather to
    # MegatronMixedPrecision where the H100 configs' passes
    # optim.fp8_params, NeMo 2's deprecated name of the same argument:
    # FP8 primary weights, gathered in FP8).
    ("fp8_params", ["fp8_params"], ["FP8_PARAMS", "FP8_PARAM_GATHER"]),
    ("fp8_dpa", ["fp8_dot_product_attention"], ["FP8_DPA"]),
    ("fp8_activation", ["activation_func_fp8_input_store"], ["FP8_ACTIVATION"]),
    ("recompute_granularity", ["activations_checkpoint_granularity"], ["ACT_CKPT_GRANULARITY", "ACG"]),
    ("recompute_method", ["activations_checkpoint_method"], ["ACT_CKPT_METHOD", "ACM"]),
    ("recompute_layers", ["activations_checkpoint_num_layers"], ["ACT_CKPT_NUM_LAYERS", "ACL"]),
    ("cuda_graph", ["enable_cuda_graph", "use_te_rng_tracker_cuda_graph"], ["LAYER_CUDA_GRAPH", "CUDA_GRAPH", "USE_CUDA_GRAPH", "ENABLE_CUDA_GRAPH"]),
    ("cpu_offload", ["cpu_offloading"], ["CPU_OFFLOADING", "CPU_OFFLOAD", "ACTIVATION_OFFLOAD"]),
    ("alloc_conf", [], ["PYTORCH_CUDA_ALLOC_CONF"]),
    ("lora_rank", ["adapter_dim"], ["LORA_DIM", "LORA_RANK"]),
    ("lora_alpha", ["alpha"], ["LORA_ALPHA"]),
    ("lora_targets", ["target_modules"], ["LORA_TARGETS"]),
    ("no_transpose_cache", ["disable_parameter_transpose_cache"], []),
    ("hidden_dropout", ["hidden_dropout"], ["HIDDEN_DROPOUT"]),
    ("lora_dropout", ["adapter_dropout"], ["LORA_DROPOUT"]),
    # NeMo's a2a_experimental (parallel_adapters.py: a row-parallel
    # adapter's output returned to the sequence shard by an all-to-all);
    # NVIDIA's v4.0 LoRA config_common.sh: LORA_A2A=1.
    ("lora_a2a", ["a2a_experimental"], ["LORA_A2A"]),
    # NeMo's dropout_recompute (the adapters' dropout under thunder.jit,
    # its mask drawn again in the backward); NVIDIA's v4.1 b200_preview
    # and v5.0 LoRA config_common.sh: NEMO_LORA_USE_THUNDER_DROPOUT=1.
    ("lora_dropout_recompute", ["dropout_recompute"], ["NEMO_LORA_USE_THUNDER_DROPOUT"]),
    ("cpu_offload_layers", ["cpu_offloading_num_layers"], ["CPU_OFFLOADING_NUM_LAYERS"]),
    ("dist_optimizer", [], ["USE_DIST_OPTIMIZER"]),
    ("tp_comm_overlap", ["ub_tp_comm_overlap"], ["TP_COMM_OVERLAP"]),
    ("tp_overlap_ag", ["tp_comm_overlap_ag"], ["MC_TP_OVERLAP_AG"]),
    ("tp_overlap_rs", ["tp_comm_overlap_rs"], ["MC_TP_OVERLAP_RS"]),
    ("overlap_param_sync", ["overlap_param_sync"], ["MCORE_OPTIM_OVERLAP_PARAM_SYNC"]),
    ("sharp", ["sharp"], ["SHARP"]),
    # CUDA_DEVICE_MAX_CONNECTIONS as the config scripts export it: the
    # hardware queues a process's streams share ("" where the scripts
    # do not set it: CUDA's default, 8). NVIDIA's GPT-3 config_common.sh
    # (v3.0, v3.1, v4.0) and its LoRA config_*.sh (v4.0) export 1, as
    # Megatron-Core asks with sequence parallelism (megatron/core/
    # tensor_parallel/layers.py: "we rely on CUDA_DEVICE_MAX_CONNECTIONS=1
    # to ensure that the gather is scheduled before" the GEMM). Read as
    # written, a whole number.
    ("connections", [], ["CUDA_DEVICE_MAX_CONNECTIONS"]),
    # Megatron-Core's account_for_embedding_in_pipeline_split and
    # account_for_loss_in_pipeline_split (NVIDIA's v5.0 llama31_405b
    # custom.yaml: ${oc.env:ASYM_PP_EMBED,False}, ${oc.env:ASYM_PP_LOSS,
    # False}; pretrain.py passes them to the model config): the embedding
    # and the loss each counted as a layer of the pipeline split.
    ("pp_embed_layer", ["account_for_embedding_in_pipeline_split"], ["ASYM_PP_EMBED"]),
    ("pp_loss_layer", ["account_for_loss_in_pipeline_split"], ["ASYM_PP_LOSS"]),
    # Megatron-Core's own per-layer CUDA graphs as NVIDIA's v5.0 scripts
    # set them (MCORE_CUDA_GRAPH; its LoRA YAML: enable_cuda_graph:
    # ${oc.env:MCORE_CUDA_GRAPH,False}, where LAYER_CUDA_GRAPH, the
    # cuda_graph column, sets external_cuda_graph: Transformer Engine's
    # make_graphed_callables). The environment only: earlier rounds' YAML
    # maps enable_cuda_graph to LAYER_CUDA_GRAPH.
    ("mcore_cuda_graph", [], ["MCORE_CUDA_GRAPH"]),
]


def plan_keys(env, yamls):
    """The plan's columns from a config's environment and its YAMLs' keys."""
    out, defaults = {}, []
    for col, ykeys, evars in KEYS:
        val = None
        for e in evars:
            if env.get(e, "") != "" and not env[e].startswith("$("):
                val = env[e]
                break
        if val is None:
            for yk in ykeys:
                for expr in yamls.get(yk, []):
                    used = []
                    r = resolve_yaml(expr, env, used)
                    if r is not None and r != "":
                        val = r
                        if used:
                            defaults.append(col)
                        break
                if val is not None:
                    break
        out[col] = "" if val is None else str(val).strip()
    return out, defaults


def normalize_bool(v):
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "on"):
        return "1"
    if s in ("0", "false", "no", "off", "none", "null", ""):
        return "0" if s != "" else ""
    return v


# ---------------------------------------------------------------- systems

# AMD's Instinct GPUs the reader writes: their Llama 2 70B LoRA rows only
# (AMD's and its partners' NeMo recipe, config_MI3*_1x8x1.sh and the
# NeMo PEFT YAML beside it).
AMD_GPUS = ("MI300X", "MI325X")


def gpu_of(name):
    """The GPU family of an accelerator name, or "" when not an NVIDIA GPU
    or an AMD Instinct MI300X or MI325X (placer's mi300x and mi325x pods)."""
    n = name.upper()
    for fam in ("MI325X", "MI300X", "GB200", "B200", "H200", "H100", "A100", "L40S", "GH200", "A30", "L40", "L4", "A5000", "RTX4090"):
        if fam in n.replace(" ", "").replace("-", ""):
            return fam
    return ""


def mem_gib(s):
    m = re.search(r"([\d.]+)\s*(MiB|GiB|GB|MB|TB)", s or "", re.I)
    if not m:
        return ""
    v, u = float(m.group(1)), m.group(2).lower()
    gib = {"mib": v / 1024, "mb": v * 1e6 / 2**30, "gib": v, "gb": v * 1e9 / 2**30, "tb": v * 1e12 / 2**30}[u]
    return f"{gib:.1f}"


# The labels a system description's host_networking puts before each of
# its networks ("Storage: 2x ConnectX-7 IB NDR 400Gb/s, Compute: 8x
# ConnectX-7 IB NDR 400Gb/s, Management: 100Gb/s Ethernet NIC").
_NET_LABEL = re.compile(r"(?=\b(?:Storage|Management|Compute)[A-Za-z+]*\s*:)")
# A NIC's line rate, Gb/s: "200Gb/Sec", "100 Gb / Sec", "400GbE", "200Gbe",
# "400Gbps", "100G"; never "GB/s" (bytes: "PCIe-NIC: 500 GB/s").
_NET_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*G(?:bps|bE|be|b)?(?![B\w])")
# A count of cards before the card: "2x ConnectX-6", "1 x ConnectX - 6",
# "2xBF3", "1 X 100G", "4x1Gb".
_NET_COUNT = re.compile(r"^\s*(\d+)\s*[xX](?=\s|\d|[A-Z])")


def compute_network(text):
    """(NICs a node, each one's Gb/s) of the compute network a system
    description's networking text states, or None where it states no line
    rate. The text after a "Compute:" label where there is one; else the
    card of the largest count x rate among the items (split at ",", "+",
    ";" and "and"): a node's compute fabric is its widest, the management
    and storage ports beside it narrower ("1x Ethernet 80Gb/Sec, 8x NVIDIA
    NDR (400Gb/s)": 8 x 400)."""
    text = str(text or "")
    segs = _NET_LABEL.split(text)
    compute = [s for s in segs if re.match(r"\s*Compute\s*:", s)]
    if compute:
        text = compute[0].split(":", 1)[1]
    best = None
    for item in re.split(r",|\+|;|\band\b", text):
        m = _NET_SPEED.search(item)
        if not m:
            continue
        gbps = float(m.group(1))
        c = _NET_COUNT.match(item)
        n = int(c.group(1)) if c and c.end() <= m.start() else 1
        if n < 1 or gbps <= 0:
            continue
        if best is None or (n * gbps, n) > (best[0] * best[1], best[0]):
            best = (n, gbps)
    return best


def host_network(sysjson):
    """(NICs a node, Gb/s each, the text read) from a system description:
    host_networking, else host_network_card_count, else
    host_networking_topology (HPE writes "Infiniband, Ethernet" in the first
    and "8x 200Gbe Infiniband, 2x 10GbE Ethernet" in the last); ("", "", "")
    where none states a line rate."""
    for field in ("host_networking", "host_network_card_count", "host_networking_topology"):
        text = str(sysjson.get(field, "") or "").strip()
        net = compute_network(text)
        if net:
            return net[0], net[1], text
    return "", "", ""


def _gbps(x):
    return f"{x:g}" if x != "" else ""


def _int(s, default=0):
    try:
        return int(float(str(s).strip()))
    except (TypeError, ValueError):
        return default


# ------------------------------------------------------------- the bench

def submissions(tree):
    """(submitter, system, benchmark, [result paths]) for every results
    directory of a benchmark this bench reads."""
    groups = {}
    for p in tree.files():
        parts = p.split("/")
        if len(parts) == 5 and parts[1] == "results" and parts[3] in BENCHMARKS and re.match(r"result.*\.txt$", parts[4]):
            groups.setdefault((parts[0], parts[2], parts[3]), []).append(p)
    return [(s, y, b, sorted(fs, key=_natural)) for (s, y, b), fs in sorted(groups.items())]


def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


# The folder names submitters give a benchmark's code under benchmarks/
# (benchmark/ in some submitters' folders: GIGABYTE's v3.0, GigaComputing's
# v3.1 and v4.0, Quanta Cloud Technology's v3.0-v4.0 BERT code).
BENCH_DIRS = {"gpt3": re.compile(r"^gpt3"), "llama2_70b_lora": re.compile(r"^(llama2_70b|llama2-70b|ft-llm)"),
              "bert": re.compile(r"^bert"), "llama31_405b": re.compile(r"^llama31_405b")}


def candidate_configs(tree, submitter, benchmark):
    pres = (f"{submitter}/benchmarks/", f"{submitter}/benchmark/")
    out = []
    for p in tree.files():
        if not p.startswith(pres):
            continue
        parts = p.split("/")
        if len(parts) < 4 or not BENCH_DIRS[benchmark].match(parts[2]):
            continue
        if any(v in parts for v in ("Megatron-LM", "NeMo", "TransformerEngine", "apex")):
            continue
        name = p.rsplit("/", 1)[-1]
        if not re.match(r"(?:packed_)?config_.*\.sh$" if benchmark == "bert" else r"config_.*\.sh$", name):
            continue
        if re.search(r"common|_fp8\.sh$|^config_fp8\.sh$", name):
            continue
        out.append(p)
    return out


def docker_revision(tree, config_path, name):
    """The revision of a package (TE: Transformer Engine, NEMO, MEGATRON)
    the Dockerfile beside a config installs (its `ARG <name>_REVISION=`),
    or "" where there is none."""
    if not config_path:
        return ""
    d = config_path.rsplit("/", 1)[0] if "/" in config_path else ""
    try:
        text = tree.read((d + "/" if d else "") + "Dockerfile")
    except (FileNotFoundError, OSError):
        return ""
    m = re.search(r"^\s*ARG\s+" + name + r"_REVISION=(\S+)", text, re.M)
    return m.group(1) if m else ""


def yamls_for(tree, config_path):
    """The YAML keys of the implementation a config belongs to (its folder's
    conf/ and any .yaml beside it); a model's main config wins a key over
    helper files (tp_overlap/, nccl/)."""
    parts = config_path.split("/")
    impl = "/".join(parts[:5] if len(parts) > 5 and parts[3] == "implementations" else parts[:4])
    if len(parts) == 4:
        impl = "/".join(parts[:3])  # a config directly under benchmarks/<benchmark>/ (Lenovo's v5.0 LoRA)
    vendored = ("/NeMo/", "/Megatron-LM/", "/TransformerEngine/", "/apex/", "/examples/", "/tests/")
    files = [p for p in tree.files() if p.startswith(impl + "/") and p.endswith(".yaml")
             and "/tp_overlap/" not in p and "/nccl/" not in p and "/data_prefix/" not in p
             and not any(v in p[len(impl):] for v in vendored)]
    # the model's config first (megatron_*config*.yaml, custom.yaml); a
    # preparation script's last (AMD's v5.0 LoRA scripts/megatron_llama_config.yaml,
    # convert_model.py's: encoder_seq_length 4096, not the run's)
    files.sort(key=lambda p: (3 if "/scripts/" in p[len(impl):] else 0 if p.endswith("/custom.yaml")
                              else 1 if re.search(r"/megatron_[^/]*\.yaml$", p) else 2, p))
    keys = {}
    for f in files:
        for k, vs in yaml_keys(tree.read(f)).items():
            keys.setdefault(k, []).extend(vs)
    return keys


# NVIDIA's MLPerf containers as submitters' run scripts and READMEs name
# them (nvcr.io/nvdlfwea/mlperftv50/llama2_70b_lora-amd:20250416): the
# image holds NVIDIA's implementation, its conf/ YAML included.
_NV_CONTAINER = re.compile(r"nvcr\.io/nvdlfwea/mlperftv\d+/")


def nvidia_yaml_for(tree, config_path, benchmark):
    """A config of NVIDIA's own implementation of benchmark in the same
    round, for a submitter's config whose folder holds no YAML but whose
    scripts or README name NVIDIA's MLPerf container (the image that holds
    NVIDIA's implementation and its YAML): the first of NVIDIA's configs,
    or "" where the folder names no such container or NVIDIA has none."""
    d = config_path.rsplit("/", 1)[0]
    named = False
    for p in tree.files():
        if p.startswith(d + "/") and p.count("/") == d.count("/") + 1 and \
                re.search(r"(README\.md|\.sub|\.sh)$", p):
            try:
                if _NV_CONTAINER.search(tree.read(p)):
                    named = True
                    break
            except (FileNotFoundError, OSError):
                continue
    if not named:
        return ""
    nv = sorted(candidate_configs(tree, "NVIDIA", benchmark))
    for c in nv:
        if yamls_for(tree, c):
            return c
    return ""


def config_gbs(env, gpus, benchmark=""):
    if benchmark == "bert":
        # BATCHSIZE packed sequences a GPU, GRADIENT_STEPS of them a step,
        # PACKING_FACTOR samples a sequence (1 where unset)
        b = _int(env.get("BATCHSIZE"), 0)
        if not b:
            return None
        return b * gpus * (_int(env.get("GRADIENT_STEPS"), 1) or 1) * (_int(env.get("PACKING_FACTOR"), 1) or 1)
    tp = _int(env.get("TENSOR_MODEL_PARALLEL") or env.get("TP"), 1) or 1
    pp = _int(env.get("PIPELINE_MODEL_PARALLEL") or env.get("PP"), 1) or 1
    cp = _int(env.get("CONTEXT_PARALLEL") or env.get("CP"), 1) or 1
    minibs = _int(env.get("MINIBS"), 0)
    if not minibs or gpus % (tp * pp * cp):
        return None
    return minibs * gpus // (tp * pp * cp)


def choose_config(tree, submitter, system, benchmark, nodes, gpn, gbs, logs_text, gpu=""):
    """The config_*.sh a submission ran, and how it was matched."""
    cands = candidate_configs(tree, submitter, benchmark)
    if not cands:
        return None, {}, "none: no config_*.sh in the submitter's implementation"
    names = {c.rsplit("/", 1)[-1]: c for c in cands}
    named = set()
    for t in logs_text:
        for m in re.finditer(r"config_[A-Za-z0-9_.\-]+?\.sh", t):
            if m.group(0) in names:
                named.add(m.group(0))
    if len(named) == 1:
        c = names[named.pop()]
        return c, parse_config(tree, c), "named in the log"
    fits = []
    for c in cands:
        env = parse_config(tree, c)
        n = _int(env.get("DGXNNODES"), -1)
        g = _int(env.get("DGXNGPU"), gpn)
        if n != nodes or g != gpn:
            continue
        cg = config_gbs(env, nodes * gpn, benchmark)
        if gbs and cg is not None and cg != gbs:
            continue
        fits.append((c, env))
    if not fits:
        loose = []
        for c in cands:
            env = parse_config(tree, c)
            if _int(env.get("DGXNNODES"), -1) == nodes and _int(env.get("DGXNGPU"), gpn) == gpn:
                loose.append((c, env))
        if len(loose) == 1:
            cg = config_gbs(loose[0][1], nodes * gpn, benchmark)
            return loose[0][0], loose[0][1], f"nodes and GPUs only: its global batch {cg}, the log's {gbs} (the log's taken)"
        return None, {}, f"none: no config of {nodes} nodes x {gpn} GPUs and global batch {gbs}"
    if len(fits) > 1 and gpu:
        by_gpu = [f for f in fits if gpu in f[0].rsplit("/", 1)[-1].upper()]
        if len(by_gpu) == 1:
            return by_gpu[0][0], by_gpu[0][1], f"nodes, GPUs, global batch; the GPU ({gpu}) in its name"
        if by_gpu:
            fits = by_gpu
    if len(fits) == 1:
        return fits[0][0], fits[0][1], "nodes, GPUs and global batch"
    same_impl = [f for f in fits if f"/implementations/{system}/" in f[0]]
    if len(same_impl) == 1:
        return same_impl[0][0], same_impl[0][1], "nodes, GPUs, global batch; the system's implementation folder"
    sysname = re.sub(r"[^a-z0-9]", "", system.lower())
    named = [f for f in fits if re.sub(r"[^a-z0-9]", "", f[0].rsplit("/", 1)[-1].lower())[6:-2] in sysname
             or sysname[:10] in re.sub(r"[^a-z0-9]", "", f[0].lower())]
    if len(named) == 1:
        return named[0][0], named[0][1], "nodes, GPUs, global batch; the system's name"
    # Ambiguous: the candidates must agree on the plan to be used at all.
    if benchmark == "bert":
        plans = {tuple(e.get(k, "") for k in ("BATCHSIZE", "GRADIENT_STEPS", "PACKING_FACTOR", "EXTRA_PARAMS", "USE_DDP"))
                 for _, e in fits}
    else:
        plans = {tuple(sorted(plan_keys(e, {})[0].items())) for _, e in fits}
    if len(plans) == 1:
        return fits[0][0], fits[0][1], f"nodes, GPUs, global batch: {len(fits)} configs, one plan"
    return fits[0][0], fits[0][1], f"ambiguous: {len(fits)} configs of different plans, the first taken"


# The flags of NVIDIA's BERT run_pretraining.py that its run_and_time.sh
# passes on every run (beside a config's EXTRA_PARAMS): read from that
# script where a config has one beside it (or in scripts/ beside it).
BERT_RUN_FLAGS = ("fp16", "bf16", "amp", "distributed_lamb", "allreduce_post_accumulation",
                  "allreduce_post_accumulation_fp16")


# The switches of NVIDIA's BERT run_pretraining.py that the bench reads,
# as its argparse Namespace prints them (each a store_true flag; the
# dest's underscores for the flag's dashes). The printed Namespace is the
# arguments the run parsed: where a config's EXTRA_PARAMS and the log
# disagree (a submitter's folder holding two configs of one size), the
# log says what ran.
BERT_LOG_FLAGS = ("fp16", "bf16", "amp", "distributed_lamb", "dwu-overlap-reductions",
                  "allreduce_post_accumulation", "allreduce_post_accumulation_fp16",
                  "dense_seq_output", "unpad", "unpad_fmha", "pad_fmha", "fused_mha", "packed_samples",
                  "exchange_padding", "fused_bias_fc", "fused_bias_mha", "fused_dropout_add",
                  "fused_gemm_gelu", "use_cuda_graph", "use_transformer_engine2")


def namespace_text(text):
    """The first printed argparse Namespace(...) in a log, whole: a
    multi-node job's launcher cuts a long line into pieces, each under the
    rank's prefix (" 0: "), other ranks' lines between them; "" where the
    log prints none or it does not close."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        at = ln.find("Namespace(")
        if at < 0:
            continue
        pre = re.match(r"\s*\d+: ", ln)
        prefix = pre.group(0) if pre and pre.end() <= at else ""
        buf = ln[at:].rstrip("\r\n")
        for nxt in lines[i + 1:i + 200]:
            if buf.count("(") <= buf.count(")"):
                break
            if prefix and nxt.startswith(prefix):
                buf += nxt[len(prefix):].rstrip("\r\n")
            elif not prefix:
                break
        buf = buf.rstrip()
        return buf if buf.count("(") == buf.count(")") else ""
    return ""


def bert_log_args(texts):
    """The store_true switches of BERT_LOG_FLAGS as the first log that
    prints run_pretraining.py's Namespace(...) gives them ({} where none
    does): flag -> True/False."""
    for t in texts:
        ns = namespace_text(t)
        m = re.search(r"Namespace\((.*)\)$", ns)
        if not m:
            continue
        args = dict(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=(True|False)\b", m.group(1)))
        out = {f: args[f.replace("-", "_")] == "True" for f in BERT_LOG_FLAGS if f.replace("-", "_") in args}
        mode = re.search(r"\bcuda_graph_mode='([A-Za-z_]+)'", m.group(1))
        if out and mode:
            out["cuda_graph_mode"] = mode.group(1)
        iters = re.search(r"\bmax_iterations_per_graph=(\d+)", m.group(1))
        if out and iters:
            out["max_iterations_per_graph"] = int(iters.group(1))
        return out
    return {}


def bert_recipe(tree, cfg, env, events, gbs, gpus, texts=()):
    """A BERT submission's recipe columns: the per-GPU batch and gradient
    accumulation as its log says them (d_batch_size,
    gradient_accumulation_steps), the packing factor they leave of its
    global batch, and the switches of its config's EXTRA_PARAMS and its
    run_and_time.sh, each of BERT_LOG_FLAGS as its log's printed
    Namespace says where it prints one ("" where neither a config was
    matched nor a log prints its arguments)."""
    d = _int(_first(events, "d_batch_size"), 0)
    ga = _int(_first(events, "gradient_accumulation_steps"), 0)
    out = {"tp": 1, "pp": 1, "dp": gpus or "", "mbs": d or "", "grad_accum": ga or ""}
    if d and ga and gpus and gbs and gbs % (d * ga * gpus) == 0:
        out["packing"] = gbs // (d * ga * gpus)
    if any(str(ev.get("key", "")).startswith("opt_lamb") for ev in events):
        out["optimizer"] = "lamb"
    logged = bert_log_args(texts)
    if not cfg and not logged:
        return out
    extra = env.get("EXTRA_PARAMS", "") if cfg else ""
    flags = set(re.findall(r"--([A-Za-z][A-Za-z0-9_\-]*)", extra))
    run_text = ""
    impl = cfg.rsplit("/", 1)[0] if cfg else ""
    # beside the config, or in scripts/ beside it (Lenovo's v3.1
    # SR675v3-8xH100_PCIe_80GB_350W: scripts/run_and_time.sh passes --fp16
    # --distributed_lamb, which its logs print as distributed_lamb=True)
    paths = (impl + "/" + d + name for d in ("", "scripts/") for name in ("run_and_time.sh", "run_and_time_multi.sh"))
    for path in paths if cfg else ():
        if path in tree_index(tree):
            run_text = "\n".join(ln for ln in tree.read(path).splitlines()
                                  if not ln.lstrip().startswith("#"))
            break
    for f in re.findall(r"--([A-Za-z][A-Za-z0-9_\-]*)", run_text):
        if f in BERT_RUN_FLAGS:
            flags.add(f)
    if "--max_seq_length=512" in run_text:
        out["seq_len"] = 512
    logged_mode = logged.pop("cuda_graph_mode", "")
    logged_iters = logged.pop("max_iterations_per_graph", 0)
    for f, on_ in logged.items():
        if on_:
            flags.add(f)
        else:
            flags.discard(f)
    if logged and (not cfg or flags != set(re.findall(r"--([A-Za-z][A-Za-z0-9_\-]*)", extra)) |
                   {f for f in re.findall(r"--([A-Za-z][A-Za-z0-9_\-]*)", run_text) if f in BERT_RUN_FLAGS}):
        out["from_log_config"] = "recipe_flags"
    out["recipe_flags"] = " ".join(sorted(flags))
    out["precision"] = "bf16" if "bf16" in flags else "fp16" if flags & {"fp16", "amp"} else ""
    on = lambda *names: "1" if flags & set(names) else "0"
    out["fused_mha"] = on("fused_mha", "unpad_fmha", "pad_fmha")
    out["unpad"] = on("unpad")
    out["dense_seq_output"] = on("dense_seq_output")
    out["cuda_graph"] = on("use_cuda_graph")
    m = re.search(r"--cuda_graph_mode[= ]+['\"]?([A-Za-z_]+)", extra)
    if out["cuda_graph"] == "1":
        out["cuda_graph_mode"] = m.group(1) if m else logged_mode
    if out["cuda_graph"] == "1" and out.get("cuda_graph_mode") == "full_iteration":
        # The steps of one whole-step graph: --max_iterations_per_graph as
        # the log prints it, else as EXTRA_PARAMS passes it, else
        # run_pretraining.py's argparse default, 4 (v3.0 and v3.1 alike).
        it = re.search(r"--max_iterations_per_graph[= ]+['\"]?(\d+)", extra)
        out["graph_iterations"] = logged_iters or (int(it.group(1)) if it else 4)
    out["dist_optimizer"] = on("distributed_lamb")
    if env.get("USE_DDP", "") != "":
        out["ddp"] = normalize_bool(env["USE_DDP"])
    if env.get("SBATCH_NETWORK", "") != "":
        out["sharp"] = "1" if env["SBATCH_NETWORK"] == "sharp" else "0"
    if not out.get("packing") and env.get("PACKING_FACTOR"):
        out["packing"] = env["PACKING_FACTOR"]
    return out


def build(trees):
    """The bench's rows and run rows from (round, Tree) pairs."""
    rows, runs = [], []
    seen_logs = {}
    for round_, tree in trees:
        for submitter, system, benchmark, results in submissions(tree):
            sysjson = {}
            sp = f"{submitter}/systems/{system}.json"
            if sp in tree_index(tree):
                try:
                    sysjson = json.loads(tree.read(sp))
                except ValueError:
                    sysjson = {}
            accel = str(sysjson.get("accelerator_model_name", ""))
            gpu = gpu_of(accel)
            if not gpu:
                continue  # not an NVIDIA GPU (TPU, Gaudi) or no system description
            if gpu in AMD_GPUS and benchmark != "llama2_70b_lora":
                continue  # tinycorp's v5.0 BERT on MI300X: tinygrad, no config the reader reads
            nodes = _int(sysjson.get("number_of_nodes"), 0)
            gpn = _int(sysjson.get("accelerators_per_node"), 0)
            texts, per = [], []
            facts = {}
            missing = []
            for rp in results:
                try:
                    t = tree.read(rp)
                except (FileNotFoundError, OSError):
                    missing.append(rp)  # listed in the mirror, its blob absent (a large file)
                    per.append((rp, None, "file absent from the mirror", 0))
                    continue
                texts.append(t)
                evs = mllog_events(t)
                f = log_facts(evs)
                for k, v in f.items():
                    if facts.get(k) is None and v is not None:
                        facts[k] = v
                gbs = _int(f.get("global_batch_size"), 0)
                seq = _int(f.get("max_sequence_length"), 0) or (2048 if benchmark == "gpt3" else 0)
                st, method, n = step_time(evs, benchmark, gbs, seq)
                per.append((rp, st, method, n))
            gbs = _int(facts.get("global_batch_size"), 0)
            rid = f"{round_}/{submitter}/{system}/{benchmark}"
            part = part_of(round_, benchmark, gpu)
            for rp, st, method, n in per:
                runs.append({"id": rid, "round": round_, "part": part, "submitter": submitter, "system": system,
                             "benchmark": benchmark, "result_path": rp,
                             "step_s": "" if st is None else f"{st:.4f}", "step_method": method, "n_steps": n})
            cfg, env, match = choose_config(tree, submitter, system, benchmark, nodes, gpn, gbs, texts, gpu)
            if benchmark == "bert":
                keys, defaults = {}, []
            else:
                ykeys = yamls_for(tree, cfg) if cfg else {}
                if cfg and not ykeys:
                    nv = nvidia_yaml_for(tree, cfg, benchmark)
                    if nv:
                        ykeys = yamls_for(tree, nv)
                        match += f"; YAML: none in the submitter's folder, which runs NVIDIA's container: NVIDIA's {nv.rsplit('/', 1)[0]}"
                keys, defaults = plan_keys(env, ykeys)
            printed = {}
            for t in texts if benchmark != "bert" else []:
                printed = printed_config(t)
                if printed:
                    break
            from_log = []
            for col, ykeys, _ in KEYS:
                for yk in ykeys:
                    v = printed.get(yk)
                    if v:
                        if keys.get(col, "") != v[0]:
                            keys[col] = v[0]
                        from_log.append(col)
                        if col in defaults:
                            defaults.remove(col)
                        break
            timed = [st for _, st, _, _ in per if st is not None]
            methods = sorted({m for _, st, m, _ in per if st is not None})
            row = {c: "" for c in COLUMNS}
            nics, gbps, nettext = host_network(sysjson)
            row.update({
                "host_cpu": str(sysjson.get("host_processor_model_name", "")).strip(),
                "host_sockets": _int(sysjson.get("host_processors_per_node"), 0) or "",
                "host_nics": nics, "host_nic_gbps": _gbps(gbps), "host_networking": nettext,
                "gpu_interconnect": str(sysjson.get("accelerator_interconnect", "")).strip(),
                "gpu_host_link": str(sysjson.get("accelerator_host_interconnect", "")).strip(),
            })
            row.update({
                "id": rid, "round": round_, "part": part, "submitter": submitter, "system": system,
                "benchmark": benchmark,
                "division": sysjson.get("division", facts.get("submission_division") or ""),
                "status": sysjson.get("status", ""),
                "accelerator": accel, "gpu": gpu,
                "gpu_mem_gib": mem_gib(str(sysjson.get("accelerator_memory_capacity", ""))),
                "gpus": nodes * gpn if nodes and gpn else "", "nodes": nodes or "", "gpus_per_node": gpn or "",
                "framework": str(sysjson.get("framework", "")).strip(),
                "container": str(sysjson.get("framework_name", "")).strip(),
                "gbs": gbs or "",
                "config_match": match, "config_path": cfg or "",
                "from_log_config": " ".join(from_log),
                "result_paths": ";".join(results),
                "n_results": len(timed),
                "absent_results": len(missing),
                "step_method": "+".join(methods) if methods else (per[0][2] if per else ""),
            })
            for col, arg in (("te_revision", "TE"), ("nemo_revision", "NEMO"), ("megatron_revision", "MEGATRON")):
                row[col] = docker_revision(tree, cfg, arg)
            # A submission whose runs are an earlier submission's (a system
            # resubmitted in a later round with its old runs, a submitter's
            # power folders holding its own runs again): every result file's
            # run_start and run_stop at the same millisecond.
            if texts and not missing:
                digest = tuple(run_span(mllog_events(t)) for t in texts)
                if any(sp is None for sp in digest):
                    digest = "\0".join(texts)
                first = seen_logs.setdefault(digest, rid)
                row["same_logs_as"] = first if first != rid else ""
            if timed:
                row["step_s"] = f"{statistics.median(timed):.4f}"
                row["step_s_min"] = f"{min(timed):.4f}"
                row["step_s_max"] = f"{max(timed):.4f}"
            for col, val in keys.items():
                if col in ("fp8_hybrid", "fp8_e4m3"):
                    continue
                row[col] = "" if val.lower() in ("null", "none") else val
            # The FP8 format: hybrid (E4M3 forward, E5M2 backward) or E4M3
            # ("" where the recipe does not say).
            if normalize_bool(keys.get("fp8", "")) == "1":
                if normalize_bool(keys.get("fp8_hybrid", "")) == "1":
                    row["fp8_format"] = "hybrid"
                elif normalize_bool(keys.get("fp8_e4m3", "")) == "1":
                    row["fp8_format"] = "e4m3"
            for b in ("sp", "fp8", "fp8_reduce_amax", "amax_async", "fp8_params", "fp8_dpa", "fp8_activation", "cuda_graph",
                      "cpu_offload", "dist_optimizer", "tp_comm_overlap", "tp_overlap_ag", "tp_overlap_rs",
                      "overlap_param_sync", "sharp", "no_transpose_cache", "lora_a2a", "lora_dropout_recompute", "pp_embed_layer", "pp_loss_layer", "mcore_cuda_graph"):
                row[b] = normalize_bool(row[b])
            for k in ("recompute_granularity", "recompute_method", "recompute_layers"):
                if row[k].lower() in ("null", "none"):
                    row[k] = ""
            for k in ("lora_rank", "lora_alpha"):
                if facts.get(k) is not None:
                    row[k] = facts[k]
                    if k in defaults:
                        defaults.remove(k)
            if benchmark != "llama2_70b_lora":
                row["lora_rank"] = row["lora_alpha"] = row["lora_targets"] = row["lora_dropout"] = row["lora_a2a"] = row["lora_dropout_recompute"] = ""
            if facts.get("max_sequence_length"):
                row["seq_len"] = facts["max_sequence_length"]
                if "seq_len" in defaults:
                    defaults.remove("seq_len")
            elif benchmark == "gpt3" and not row["seq_len"]:
                row["seq_len"] = 2048
            row["yaml_defaults"] = " ".join(defaults)
            # A whole training step captured in one CUDA graph: NVIDIA's
            # v5.0 llama31_405b GB200 configs source config_common_cg.sh
            # (FULL_CUDA_GRAPH=True; custom.yaml full_cuda_graph:
            # ${oc.env:FULL_CUDA_GRAPH,False}), and custom_callbacks.py
            # run_training_warmup captures trainer.model.training_step
            # (capture_cuda_graph=full_cuda_graph). Written as BERT's
            # full_iteration mode, the environment only.
            if benchmark != "bert" and normalize_bool(env.get("FULL_CUDA_GRAPH", "")) == "1":
                row["cuda_graph_mode"] = "full_iteration"
            if benchmark == "bert":
                evs0 = mllog_events(texts[0]) if texts else []
                for col, val in bert_recipe(tree, cfg, env, evs0, gbs, nodes * gpn, texts).items():
                    row[col] = val
            g = row["gpus"]
            if g and benchmark != "bert":
                tp, pp, cp = _int(row["tp"], 1) or 1, _int(row["pp"], 1) or 1, _int(row["cp"], 1) or 1
                if g % (tp * pp * cp) == 0:
                    row["dp"] = g // (tp * pp * cp)
            rows.append(row)
    return rows, runs


def write_csv(path, columns, rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in columns})
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)


def find_mirrors():
    return sorted(glob.glob("/work/.mirror/*training_results_v*/repo"))


def main(argv=None):
    ap = argparse.ArgumentParser(description="MLPerf Training submissions (gpt3, llama2_70b_lora on NVIDIA GPUs) into measurements/mlperf/runs.csv")
    ap.add_argument("mirrors", nargs="*", help="training_results_vX.Y repositories (bare git or checkout); default: /work/.mirror/*training_results_v*/repo")
    ap.add_argument("--out", default="measurements/mlperf", help="folder for runs.csv and logs.csv")
    a = ap.parse_args(argv)
    paths = a.mirrors or find_mirrors()
    if not paths:
        print("mlperf_bench: no mirrors given and none under /work/.mirror", file=sys.stderr)
        return 2
    trees = []
    for p in paths:
        try:
            r = round_of(os.path.abspath(p))
        except ValueError as e:
            print(f"mlperf_bench: {e}", file=sys.stderr)
            return 2
        if not os.path.isdir(p):
            print(f"mlperf_bench: {p}: not a directory", file=sys.stderr)
            return 2
        trees.append((r, Tree(p)))
    trees.sort(key=lambda t: tuple(int(x) for x in t[0][1:].split(".")))
    rows, runs = build(trees)
    for _, t in trees:
        t.close()
    os.makedirs(a.out, exist_ok=True)
    write_csv(os.path.join(a.out, "runs.csv"), COLUMNS, rows)
    write_csv(os.path.join(a.out, "logs.csv"), RUN_COLUMNS, runs)
    timed = sum(1 for r in rows if r["step_s"])
    timed_logs = sum(1 for r in runs if r["step_s"])
    print(f"mlperf_bench: {len(rows)} submissions ({timed} with a step time), {len(runs)} result files ({timed_logs} timed) "
          f"from {len(trees)} rounds -> {a.out}/runs.csv, {a.out}/logs.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
