"""The held-out check (the project's must-hold table; docs/held-out.md): for
each model x GPUs, as subprocesses, each with its own timeout:

  export       tools/dev/torchexport/torchexport.py (the training step -> G.json + G.meta.json)
  search       placer search --graph G --gpus N --cpu 10s --out result.json --json
  export plan  placer export --graph G --placement result.json --to torch-plan
  eval         placer eval --graph G --placement result.json --json: its step
               time must equal the search's printed (JSON) step, to the bit
  run          tools/dev/torchplan/torchplan.py --plan P --model heldout:NAME --check
               (gloo CPU processes, replicas x stages of them, at most
               --max-procs: a bigger plan is "not run: N processes"); the loss
               and every gradient within rtol 1e-5, atol 1e-6 of the unsplit step
  GPUs         the plan's processes (replicas x stages) against the
               prediction's GPUs (replicas x the GPUs its placement uses)

and the same for every row of the search's table (--rows): the search
writes each row's decision (placer search --rows DIR: DIR/METHOD.json, a
result file each, and the index DIR/rows.json), and each is evaluated
(placer eval of the row's file == the row's figure in --json, to the bit),
exported and run as the answer is; a row without a decision, an export or
a run that refuses is one line in its cell. The search's own row, when it
is the answer, is the answer's cell.

One model's failure is one line in its cell (the first line of the error),
never the end of the run. Prints the table; --json writes every cell.

    python tools/dev/torchplan/heldout.py --gpus 2,4 --json out/held-out.json   # make held-out
    python tools/dev/torchplan/heldout.py --models gpt2,looped --gpus 2 --rows

The models are built here (random weights, no downloads, no dropout), the
same factory for the export and the runner (`heldout:NAME`): transformers'
models wrapped to return their logits (the exporter's loss reads a tensor).
Some are the runner tests' (python/placer_torch/tests/runner/
tiny_models.py), on the PYTHONPATH this gives its subprocesses; run
heldout's factories in a python of your own with that folder on PYTHONPATH
too (make test-python-debian does for test_heldout.py).
"""

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import torch
import torch.nn as nn

VOCAB, SEQ, BATCH = 64, 8, 8


# ---------------------------------------------------------------- models

class Logits(nn.Module):
    """A transformers model returning its logits tensor; m.* are its
    modules."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, *xs):
        return self.m(*xs).logits


class Seq2Seq(nn.Module):
    """T5: encoder ids and decoder ids, two positional inputs."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, dec):
        return self.m(input_ids=ids, decoder_input_ids=dec).logits


def gpt2():
    import tiny_models
    return Logits(tiny_models.gpt2(n_layer=2, vocab_size=VOCAB))


def _bert_cfg():
    import transformers
    return transformers.BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                                   vocab_size=VOCAB, max_position_embeddings=32, hidden_dropout_prob=0.0,
                                   attention_probs_dropout_prob=0.0, pad_token_id=0, num_labels=3)


def bert_mlm():
    import transformers
    return Logits(transformers.BertForMaskedLM(_bert_cfg()))


def bert_cls():
    import transformers
    return Logits(transformers.BertForSequenceClassification(_bert_cfg()))


def llama():
    import transformers
    cfg = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=32,
                                   use_cache=False, attention_dropout=0.0, pad_token_id=0, bos_token_id=0,
                                   eos_token_id=0)
    return Logits(transformers.LlamaForCausalLM(cfg))


def t5():
    import transformers
    cfg = transformers.T5Config(vocab_size=VOCAB, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2,
                                num_heads=2, dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0,
                                eos_token_id=1, use_cache=False)
    return Seq2Seq(transformers.T5ForConditionalGeneration(cfg))


def hf_vit():
    import transformers
    cfg = transformers.ViTConfig(image_size=32, patch_size=16, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=64, num_labels=10, hidden_dropout_prob=0.0,
                                 attention_probs_dropout_prob=0.0)
    return Logits(transformers.ViTForImageClassification(cfg))


def timm_vit():
    import tiny_models
    return tiny_models.vit(depth=2)


def timm_convnext():
    import timm
    return timm.create_model("convnext_atto", pretrained=False, num_classes=10, depths=(1, 1, 1, 1),
                             dims=(8, 16, 32, 64))


def timm_resnet18():
    import timm
    return timm.create_model("resnet18", pretrained=False, num_classes=10)


class Skip(nn.Module):
    """Skip connections: the first layer's output is added two layers
    later and again at the head (read three stages away in a 4-stage cut)."""

    def __init__(self, d=16, classes=5):
        super().__init__()
        self.inp = nn.Linear(8, d)
        self.l1 = nn.Linear(d, d)
        self.l2 = nn.Linear(d, d)
        self.l3 = nn.Linear(d, d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        a = torch.relu(self.inp(x))
        b = torch.relu(self.l1(a))
        c = torch.relu(self.l2(b)) + a
        d = torch.tanh(self.l3(c)) + b
        return self.head(d + a)


def skip():
    return Skip()


class Tied(nn.Module):
    """Tied weights: the output layer's weight is the token embedding."""

    def __init__(self, vocab=32, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids):
        h = self.emb(ids)
        h = h + torch.tanh(self.fc1(h))
        h = h + torch.tanh(self.fc2(h))
        return self.head(h)


def tied():
    return Tied()


def looped():
    import tiny_models
    return tiny_models.Looped()


def two_inputs():
    import tiny_models
    return tiny_models.TwoInputs()


def _zoo(name):
    def build():
        from placer_torch import zoo
        return zoo.MODELS[name].build()
    return build


zoo_mlp, zoo_cnn, zoo_resnet50, zoo_inception_v3, zoo_vit_b_16, zoo_regnet_y_1_6gf, zoo_bert_base, zoo_gpt2_small = (
    _zoo(n) for n in ("mlp", "cnn", "resnet50", "inception_v3", "vit_b_16", "regnet_y_1_6gf", "bert_base",
                      "gpt2_small"))

TOK = ["--input", "%d:int:%d" % (SEQ, VOCAB), "--target", "%d:int:%d" % (SEQ, VOCAB)]
IMG = ["--input", "3,32,32", "--classes", "10"]

# name -> (export args, runner args, note). Export args: --input-shape for
# heldout.py:NAME (batch BATCH), or ["zoo"] for the zoo model of that name.
MODELS = {
    "gpt2": (["--input-shape", "%d:int64" % SEQ], TOK, "transformers GPT2LMHeadModel, tied embeddings, 2 layers"),
    "bert_mlm": (["--input-shape", "%d:int64" % SEQ], TOK, "transformers BertForMaskedLM, tied, 2 layers"),
    "bert_cls": (["--input-shape", "%d:int64" % SEQ], ["--input", "%d:int:%d" % (SEQ, VOCAB), "--classes", "3"],
                 "transformers BertForSequenceClassification, 2 layers"),
    "llama": (["--input-shape", "%d:int64" % SEQ], TOK, "transformers LlamaForCausalLM, 2 layers, GQA 4/2"),
    "t5": (["--input-shape", "%d:int64" % SEQ, "--input-shape", "%d:int64" % SEQ],
           ["--input", "%d:int:%d" % (SEQ, VOCAB)] + TOK[:2] + TOK[2:],
           "transformers T5ForConditionalGeneration, 2+2 layers, tied"),
    "hf_vit": (["--input-shape", "3,32,32"], IMG, "transformers ViTForImageClassification, 32x32, 2 layers"),
    "timm_vit": (["--input-shape", "3,32,32"], IMG, "timm vit_tiny_patch16_224 at 32x32, depth 2"),
    "timm_convnext": (["--input-shape", "3,32,32"], IMG, "timm convnext_atto, depths 1,1,1,1, dims 8-64"),
    "timm_resnet18": (["--input-shape", "3,32,32"], IMG + ["--mode", "eval"],
                      "timm resnet18, 32x32; BatchNorm: run in eval mode (exported in train mode)"),
    "skip": (["--input-shape", "8"], ["--input", "8", "--classes", "5"], "skip connections"),
    "tied": (["--input-shape", "%d:int64" % SEQ], ["--input", "%d:int:32" % SEQ, "--target", "%d:int:32" % SEQ],
             "tied weights (embedding = output layer)"),
    "looped": (["--input-shape", "8"], ["--input", "8", "--classes", "5"], "a block applied three times"),
    "two_inputs": (["--input-shape", "3,4", "--input-shape", "4"], ["--input", "3,4", "--input", "4", "--classes", "5"],
                   "two inputs"),
    # The zoo (python/placer_torch/placer_torch/zoo.py) at its own batch; the runner's
    # batch and inputs are given here (smaller than the export's).
    "zoo_mlp": (["zoo"], ["--input", "32", "--classes", "10"], "zoo mlp, batch 16"),
    "zoo_cnn": (["zoo"], ["--input", "3,16,16", "--classes", "10", "--mode", "eval"],
                "zoo cnn, batch 8; BatchNorm: eval mode"),
    # resnet50 and inception_v3 with random weights and fresh BatchNorm
    # statistics grow their activations through the network (inception's
    # loss 2.1e9): their checks run in float64, so that float32 rounding of
    # the replicas' sums is not taken for a wrong split.
    "zoo_resnet50": (["zoo"], ["--input", "3,64,64", "--classes", "1000", "--mode", "eval", "--dtype", "float64"],
                     "torchvision resnet50, batch 32 exported; run at 64x64 in eval mode, float64"),
    "zoo_inception_v3": (["zoo"], ["--input", "3,96,96", "--classes", "1000", "--mode", "eval", "--dtype", "float64"],
                         "torchvision inception_v3, batch 32 exported (299x299); run at 96x96 in eval mode, float64"),
    "zoo_vit_b_16": (["zoo"], ["--input", "3,224,224", "--classes", "1000"], "torchvision vit_b_16, batch 32"),
    "zoo_regnet_y_1_6gf": (["zoo"], ["--input", "3,64,64", "--classes", "1000", "--mode", "eval"],
                           "torchvision regnet_y_1_6gf, batch 32 exported; run at 64x64 in eval mode"),
    # The zoo's Transformer has dropout 0.1: its runs are in eval mode.
    "zoo_bert_base": (["zoo"], ["--input", "128:int:30522", "--target", "128:int:30522", "--mode", "eval"],
                      "zoo bert_base, batch 16; dropout: run in eval mode"),
    "zoo_gpt2_small": (["zoo"], ["--input", "1024:int:50257", "--target", "1024:int:50257", "--mode", "eval"],
                       "zoo gpt2_small, batch 8; dropout: run in eval mode"),
}
HELD_OUT = [m for m in MODELS if not m.startswith("zoo_")]


# ---------------------------------------------------------------- steps

def first_line(text):
    """The error's first informative line (a traceback's last line)."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    if not lines:
        return ""
    ours = [l for l in lines if l.startswith(("torchplan:", "placer:", "torchexport:", "heldout:"))]
    if ours:  # the tools' own one-line errors, after any warnings
        return ours[-1][:300]
    if lines[0].startswith("Traceback"):
        return lines[-1][:300]
    for l in lines:
        if not l.startswith(("Warning", "warning", "UserWarning")) and "Warning:" not in l:
            return l[:300]
    return lines[0][:300]


def sh(cmd, timeout, env=None):
    """(ok, stdout, one-line reason, seconds)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # The whole group: the runner's spawned ranks outlive their parent.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.communicate()
        return False, "", "timed out after %d s" % timeout, time.monotonic() - t
    p.stdout, p.stderr = out, err
    dt = time.monotonic() - t
    if p.returncode != 0:
        return False, p.stdout, "exit %d: %s" % (p.returncode, first_line(p.stderr) or first_line(p.stdout)), dt
    return True, p.stdout, "", dt


class Driver:
    def __init__(self, a):
        self.a = a
        self.placer = os.path.abspath(a.placer)
        self.work = os.path.abspath(a.work)
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ)
        pp = [os.path.join(ROOT, "python", "placer_torch"), HERE, os.path.join(ROOT, "tools", "dev", "torchexport"),
              os.path.join(ROOT, "python", "placer_torch", "tests", "runner")]  # tiny_models
        self.env["PYTHONPATH"] = os.pathsep.join(pp + [p for p in [os.environ.get("PYTHONPATH")] if p])
        self.cells = []

    def path(self, *parts):
        return os.path.join(self.work, "_".join(str(p) for p in parts))

    def export(self, name):
        """The graph (cached in --work): (path or None, reason, seconds)."""
        g = self.path(name) + ".json"
        if self.a.reuse and os.path.exists(g) and os.path.exists(self.path(name) + ".meta.json"):
            return g, "", 0.0
        exp, _, _ = MODELS[name]
        cmd = [sys.executable, os.path.join(ROOT, "tools", "dev", "torchexport", "torchexport.py")]
        if exp == ["zoo"]:
            cmd += ["--model", name[len("zoo_"):]]
        else:
            cmd += ["--model", "%s:%s" % (os.path.abspath(__file__), name)] + exp + ["--batch", str(BATCH)]
        ok, out, why, dt = sh(cmd + ["-o", g], self.a.timeout_export, self.env)
        return (g if ok else None), why, dt

    def run_plan(self, name, plan_path, cell):
        """Runs the plan with --check if it fits: fills run, match, procs."""
        with open(plan_path) as f:
            plan = json.load(f)
        S = len(plan["stages"]) // max(1, plan.get("virtual", 1))
        procs = plan["replicas"] * S
        cell["procs"] = procs
        cell["plan"] = "R%d x S%d, M%d %s%s" % (plan["replicas"], S, plan["micro_batches"], plan["schedule"],
                                                (", " + plan["shard"]) if plan.get("shard") else "")
        cell["plan_gpus"] = plan.get("gpus")
        if procs > self.a.max_procs:
            cell["run"] = "not run: %d processes" % procs
            return
        if self.a.no_run or (name.startswith("zoo_") and name not in self.a.zoo_run):
            cell["run"] = "not run (%s)" % ("--no-run" if self.a.no_run else "zoo model not in --zoo-run")
            return
        _, run_args, _ = MODELS[name]
        cmd = [sys.executable, os.path.join(HERE, "torchplan.py"), "--plan", plan_path, "--model", "heldout:" + name,
               "--check"] + run_args
        if name.startswith("zoo_") and name in self.a.zoo_batch:
            cmd += ["--batch", str(self.a.zoo_batch[name])]
        ok, out, why, dt = sh(cmd, self.a.timeout_run, self.env)
        line = [l for l in out.splitlines() if l.startswith("check:")]
        for _ in range(self.a.retries):
            if ok or line:
                break
            # A process that died before the check (seen once: "terminate
            # called without an active exception" from a 4-process run
            # that passed when run again): run again, say so.
            cell["first_try"] = why
            ok, out, why, dt = sh(cmd, self.a.timeout_run, self.env)
            line = [l for l in out.splitlines() if l.startswith("check:")]
        cell["run_s"] = round(dt, 1)
        cell["check"] = line[-1] if line else ""  # the comparison (a line naming modules in eval mode before it)
        if ok and line and line[-1].endswith(": ok"):
            cell["run"], cell["match"] = "ok", True
            if cell.get("first_try"):
                cell["run"] = "ok on the second try (first: %s)" % cell["first_try"]
        else:
            cell["run"] = "ok" if (line and not ok) else ("failed: " + why)
            cell["match"] = False if line else None

    def answer(self, name, graph, gpus):
        cell = {"model": name, "gpus": gpus, "row": "answer"}
        self.cells.append(cell)
        res, rep = self.path(name, gpus, "result") + ".json", self.path(name, gpus, "search") + ".json"
        cmd = [self.placer, "search", "--graph", graph, "--gpus", str(gpus), "--cpu", self.a.cpu, "--seed", "1",
               "--out", res, "--json", "-q"]
        if self.a.rows:
            cmd += ["--rows", self.path(name, gpus, "rows")]
        ok, out, why, dt = sh(cmd, self.a.timeout_search)
        cell["search_s"] = round(dt, 1)
        if not ok:
            cell["search"] = "failed: " + why
            return None
        cell["search"] = "ok"
        with open(rep, "w") as f:
            f.write(out)
        report = json.loads(out)
        want = report["result"]["step_time_s"]
        cell["step_s"] = want
        with open(res) as f:
            dec = json.load(f)["decision"]
        st = dec.get("strategy") or {}
        cell["predicted_gpus"] = st.get("replicas", 1) * len(set(dec["device"]))
        cell["strategy"] = st
        self.plan_eval_run(name, graph, gpus, cell, ["--placement", res], want)
        return report

    def plan_eval_run(self, name, graph, gpus, cell, placement, want):
        tag = cell["row"].replace(" ", "").replace(",", "_").replace("=", "")
        plan = self.path(name, gpus, tag, "plan") + ".json"
        # As docs/torch-plan.md writes it, without --gpus: export takes the
        # GPUs from the file. A replicated answer's file is one replica's
        # (devices 1, R replicas), and export --gpus N refuses it ("made
        # for 1 devices, the cluster has N (use --gpus 1)"); eval --gpus N
        # accepts it. --export-gpus passes --gpus N anyway.
        gflag = ["--gpus", str(gpus)] if self.a.export_gpus else []
        ok, _, why, _ = sh([self.placer, "export", "--graph", graph] + gflag + placement +
                           ["--to", "torch-plan", "-o", plan], self.a.timeout_search)
        cell["export_plan"] = "ok" if ok else "failed: " + why
        ok2, out, why2, _ = sh([self.placer, "eval", "--graph", graph, "--gpus", str(gpus)] + placement + ["--json"],
                               self.a.timeout_search)
        if ok2:
            got = json.loads(out)["step_time_s"]
            cell["eval_s"] = got
            cell["eval_equal"] = got == want
            cell["eval_rel"] = abs(got - want) / want if want else 0.0
        else:
            cell["eval"] = "failed: " + why2
        if ok:
            if cell.get("predicted_gpus") is None:
                cell["predicted_gpus"] = None
            try:
                self.run_plan(name, plan, cell)
            except Exception as e:  # a plan the driver cannot read
                cell["run"] = "failed: %s: %s" % (type(e).__name__, first_line(str(e)))

    def rows(self, name, graph, gpus, report):
        """Every row of the table from the search's --rows folder: its
        file evaluated, exported and run as the answer is."""
        folder = self.path(name, gpus, "rows")
        with open(os.path.join(folder, "rows.json")) as f:
            index = json.load(f)
        table = dict((r["method"], r) for r in report["comparison"].get("methods", []))
        for e in index["rows"]:
            m = e["method"]
            if m == index.get("answer") and m == report["result"].get("method"):
                continue  # the search's own row: the answer
            r = table.get(m, {})
            cell = {"model": name, "gpus": gpus, "row": m, "step_s": r.get("step_time_s") or e.get("step_time_s")}
            self.cells.append(cell)
            if not e.get("file"):
                cell["search"] = "no decision: " + first_line(e.get("note") or r.get("error") or "none written")
                continue
            cell["search"] = "ok"
            if e.get("strategy"):
                cell["strategy"] = e["strategy"]
            path = os.path.join(folder, e["file"])
            with open(path) as f:
                dec = json.load(f)["decision"]
            st = dec.get("strategy") or {}
            cell["predicted_gpus"] = st.get("replicas", 1) * len(set(dec["device"]))
            if e.get("step_time_s") != r.get("step_time_s"):
                cell["index_differs"] = "index %r, table %r" % (e.get("step_time_s"), r.get("step_time_s"))
            self.plan_eval_run(name, graph, gpus, cell, ["--placement", path], r.get("step_time_s"))
            self.save()

    def save(self):
        if self.a.json:
            doc = {"date": self.date, "command": self.command, "cells": self.cells, "exports": self.exports}
            with open(self.a.json, "w") as f:
                json.dump(doc, f, indent=1)

    def go(self, models, gpus_list):
        self.date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.command = " ".join(sys.argv)
        self.exports = {}
        for name in models:
            graph, why, dt = self.export(name)
            self.exports[name] = {"export": "ok" if graph else "failed: " + why, "export_s": round(dt, 1),
                                  "note": MODELS[name][2]}
            print("%s: export %s (%.0f s)" % (name, self.exports[name]["export"], dt), file=sys.stderr, flush=True)
            if not graph:
                for g in gpus_list:
                    self.cells.append({"model": name, "gpus": g, "row": "answer", "search": "no graph"})
                self.save()
                continue
            for g in gpus_list:
                try:
                    report = self.answer(name, graph, g)
                    self.save()
                    print("  %s" % fmt(self.cells[-1]), file=sys.stderr, flush=True)
                    if report is not None and self.a.rows:
                        self.rows(name, graph, g, report)
                except Exception as e:  # never end the run on one model
                    self.cells.append({"model": name, "gpus": g, "row": "answer",
                                       "search": "driver failed: %s: %s" % (type(e).__name__, first_line(str(e)))})
                self.save()


# ---------------------------------------------------------------- the table

def fmt(c):
    def eq(c):
        if "eval_equal" not in c:
            return c.get("eval", "-")
        r = "equal" if c["eval_equal"] else "differs (rel %.1e)" % c["eval_rel"]
        return ("rebuilt (%s): " % c["rebuilt"] + r) if c.get("rebuilt") else r

    def g(c):
        if c.get("procs") is None or c.get("predicted_gpus") is None:
            return "-"
        return "%d / %d%s" % (c["procs"], c["predicted_gpus"], "" if c["procs"] == c["predicted_gpus"] else " !")
    match = {True: "yes", False: "NO", None: "-"}[c.get("match")]
    w = c.get("check", "").split(" of the tolerance")[0].rsplit(" ", 1)[-1] if "of the tolerance" in c.get(
        "check", "") else ""
    if w:
        match += " (%s of tol.)" % w
    return " | ".join([c["model"], str(c["gpus"]), c["row"], c.get("search", "-"),
                       ("%.4g ms" % (c["step_s"] * 1e3)) if c.get("step_s") else "-", c.get("export_plan", "-"),
                       c.get("plan", "-"), c.get("run", "-"), match, g(c), eq(c)])


HEADER = ["model", "GPUs", "row", "search", "step", "export plan", "plan", "run --check", "match 1e-5",
          "processes / predicted GPUs", "eval == printed step"]


def table(doc):
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for c in doc["cells"]:
        out.append("| " + fmt(c) + " |")
    ex = ["| model | export | s | what |", "|---|---|---|---|"]
    for n, e in doc["exports"].items():
        ex.append("| %s | %s | %s | %s |" % (n, e["export"], e["export_s"], e["note"]))
    return "\n".join(ex) + "\n\n" + "\n".join(out)


def summary(doc):
    """One line per model x GPUs: the answer's cells, then the rows
    (run and match; eval of the row's file against the row's figure, "="
    to the bit), and the rows without a decision."""
    H = ["model", "GPUs", "export", "search: step", "export plan", "plan", "run --check", "match 1e-5",
         "processes / predicted GPUs", "eval == printed step", "rows: run+match, eval vs row",
         "rows without a decision"]
    out = ["| " + " | ".join(H) + " |", "|" + "---|" * len(H)]
    keys = []
    for c in doc["cells"]:
        if (c["model"], c["gpus"]) not in keys:
            keys.append((c["model"], c["gpus"]))
    for k in keys:
        cs = [c for c in doc["cells"] if (c["model"], c["gpus"]) == k]
        a = [c for c in cs if c["row"] == "answer"][0]
        f = fmt(a).split(" | ")
        ex = doc["exports"].get(k[0], {}).get("export", "-")
        search = f[3] if f[3] != "ok" else "ok: " + f[4]
        rows, no = [], []
        for c in cs:
            if c["row"] == "answer":
                continue
            if c.get("export_plan") in (None, "decision not exported"):
                no.append(c["row"])
                continue
            if c.get("match"):
                run = "ok"
            elif not c["export_plan"].startswith("ok"):
                run = "export " + c["export_plan"][:120]
            else:
                run = (c.get("run") or "-")[:160]
            ev = "=" if c.get("eval_equal") else ("rel %.0e" % c["eval_rel"] if "eval_rel" in c else c.get("eval", "-"))
            rows.append("%s %s, %s" % (c["row"], run, ev))
        out.append("| " + " | ".join([k[0], str(k[1]), ex, search] + f[5:11] + ["; ".join(rows) or "-",
                                      ("%d (%s)" % (len(no), ", ".join(no))) if no else "-"]) + " |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description="The held-out check: export, search, export plan, eval and run with "
                                 "--check, per model x GPUs (docs/held-out.md).")
    ap.add_argument("--models", default=",".join(HELD_OUT),
                    help="comma-separated (default: the thirteen; 'zoo' adds the zoo's; 'all' both): " +
                    ", ".join(MODELS))
    ap.add_argument("--gpus", default="2,4")
    ap.add_argument("--rows", action="store_true",
                    help="also every row of the search's table (placer search --rows): evaluated, exported and run")
    ap.add_argument("--cpu", default="10s", help="placer search --cpu")
    ap.add_argument("--placer", default=os.path.join(ROOT, "bin", "placer"))
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "held-out"), help="where graphs and plans go")
    ap.add_argument("--reuse", action="store_true", help="reuse the graphs already in --work")
    ap.add_argument("--export-gpus", action="store_true", help="pass --gpus N to placer export too")
    ap.add_argument("--retries", type=int, default=1, help="runs again a run that died before its check")
    ap.add_argument("--max-procs", type=int, default=4, help="run plans of at most this many processes")
    ap.add_argument("--no-run", action="store_true", help="no runner (export, search, export plan, eval only)")
    ap.add_argument("--zoo-run", default="zoo_mlp,zoo_cnn", help="zoo models whose plans run")
    ap.add_argument("--zoo-batch", default="", help="NAME=B,...: the runner's batch for a zoo model")
    ap.add_argument("--timeout-export", type=int, default=600)
    ap.add_argument("--timeout-search", type=int, default=180)
    ap.add_argument("--timeout-run", type=int, default=300)
    ap.add_argument("--json", help="write every cell to this file (after each step)")
    ap.add_argument("--summary", action="store_true", help="with --table: one line per model x GPUs")
    ap.add_argument("--table", nargs="+", metavar="JSON", help="only print the table of these --json files")
    a = ap.parse_args(argv)
    if a.table:
        doc = {"cells": [], "exports": {}}
        for t in a.table:
            with open(t) as f:
                d = json.load(f)
            later = set((c["model"], c["gpus"]) for c in d["cells"])  # a later file's model x GPUs wins
            doc["cells"] = [c for c in doc["cells"] if (c["model"], c["gpus"]) not in later] + d["cells"]
            doc["exports"].update(d["exports"])
        print(summary(doc) if a.summary else table(doc))
        return 0
    models = []
    for m in a.models.split(","):
        models += HELD_OUT if m in ("held-out", "all") else []
        models += [n for n in MODELS if n.startswith("zoo_")] if m in ("zoo", "all") else []
        if m not in ("held-out", "all", "zoo"):
            if m not in MODELS:
                print("heldout: unknown model %r (%s)" % (m, ", ".join(MODELS)), file=sys.stderr)
                return 2
            models.append(m)
    a.zoo_run = set(x for x in a.zoo_run.split(",") if x)
    a.zoo_batch = dict((k, int(v)) for k, v in (x.split("=") for x in a.zoo_batch.split(",") if x))
    if not os.path.exists(a.placer):
        print("heldout: no %s (go build -o bin/placer ./cmd/placer)" % a.placer, file=sys.stderr)
        return 2
    d = Driver(a)
    d.go(models, [int(x) for x in a.gpus.split(",")])
    d.save()
    print(table({"cells": d.cells, "exports": d.exports}))
    bad = [c for c in d.cells if c.get("match") is False or c.get("eval_equal") is False]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
