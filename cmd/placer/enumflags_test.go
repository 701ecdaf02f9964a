package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// freeText are the text flags whose value is no name of a fixed set
// (what a user names: a job, an image, a cell's number, a list of
// numbers, a strategy's or a cluster's keys, checked by their own rows
// elsewhere), or one checked only where the build has CUDA.
var freeText = map[string]string{
	"placer cluster k8s --claim": "a PersistentVolumeClaim's name", "placer cluster k8s --image": "an image",
	"placer cluster k8s --name": "the job's name", "placer cluster k8s --namespace": "a namespace",
	"placer cluster k8s --pod-memory": "a Kubernetes quantity", "placer cluster k8s --dir": "a path in the pod",
	"placer cluster slurm --name": "the job's name", "placer cluster slurm --partition": "a partition",
	"placer cluster slurm --sbatch": "an #SBATCH line", "placer cluster slurm --dir": "a folder",
	"placer profile --input-shape": "sizes (exitrule rows)", "placer workloads synth --nodes": "MIN-MAX",
	"placer pretrain --cell": "a number", "placer regal train --cell": "a number",
	"placer report equal-time --cell": "a number", "placer report generalization --cell": "a number",
	"placer report learned --cell": "a number", "placer report parallel --cell": "a number",
	"placer report regal --cell":         "a number",
	"placer report equal-time --budgets": "durations", "placer report learned --budgets": "durations",
	"placer report regal --budgets": "numbers", "placer report equal-time --seeds": "numbers",
	"placer report parallel --gpus-list": "numbers (exitrule row)",
	"placer eval --strategy":             "keys (exitrule rows)", "placer export --strategy": "keys (exitrule rows)",
	"placer search --strategy": "keys (exitrule rows)",
	"placer eval --cluster":    "a preset and keys (exitrule rows)", "placer export --cluster": "a preset and keys",
	"placer search --cluster":        "a preset and keys",
	"placer baselines --cost-device": "a device of --cost-table's file", "placer eval --cost-device": "a device of --cost-table's file",
	"placer export --cost-device": "a device of --cost-table's file", "placer search --cost-device": "a device of --cost-table's file",
	"placer finetune --cost-device": "a device of --cost-table's file", "placer infer --cost-device": "a device of --cost-table's file",
	"placer hw bench --base": "read with CUDA only", "placer calibrate --hardware": "read with CUDA only",
	"placer report generalization --test": "FAMILY=GRAPH (a workload or a file)",
	"placer report equal-time --graphs":   "workloads or files", "placer report learned --graphs": "workloads or files",
	"placer report parallel --graphs": "workloads, files or zoo models", "placer report regal --graphs": "workloads, files, synthetic",
	"placer pretrain --graphs": "folders", "placer report generalization --graphs": "a folder", "placer regal imitate --graphs": "a folder", "placer regal train --graphs": "a folder",
	"placer profile --model": "a zoo name, a factory, a hub id (run in Python)", "placer profile --python": "a program",
	"placer cluster k8s --placer": "a program", "placer cluster slurm --placer": "a program",
	"placer profile --workload": "a transformer's keys (exitrule rows)",
	"placer size --clusters":    "presets and node counts (exitrule rows)", "placer size --deadline": "a duration (exitrule row)",
	"placer size --phases": "keys (exitrule row)", "placer size --strategy": "keys (exitrule rows)",
	"placer size --tokens":    "a number (exitrule row)",
	"placer finetune --model": "a file", "placer infer --model": "a file", "placer report equal-time --model": "a file",
}

// TestEveryEnumFlagExit2 holds the exit rule over every flag whose value
// names one of a fixed set (a format, a framework, a task, a method, a
// preset): a name that does not exist exits 2 in one line naming it,
// before any work, as --to megatron-brige always did (--for
// megatron_bridge exited 1). Every text flag that reads no file is a row
// here or in freeText, so that a new one cannot skip the rule.
// refusalGuard is how long the refusal tests (here, exitrule_test.go,
// outputs_test.go, iopaths_test.go) let a command run before stopping
// it: a hang guard, not a speed. A command that takes the mistake runs
// on and is stopped (exit 130, a failure: the tests want 1 or 2); one
// that refuses it exits in milliseconds quiet, and took over the 2 s
// these guards were beside a CI and four sessions' builds (2026-11-28).
const refusalGuard = time.Minute

func TestEveryEnumFlagExit2(t *testing.T) {
	dir := t.TempDir()
	graphArgs := []string{"--graph", example}
	gpt := []string{"--workload", "gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=8", "--cluster", "dgx-h100:1"}
	size := []string{"--workload", gpt[1], "--tokens", "1e9", "--clusters", "dgx-h100:1"}
	noRun := []string{"--no-run", "--dir", filepath.Join(dir, "cells")}
	out := []string{"--out", filepath.Join(dir, "out.json")}
	train := append([]string{"--workloads", "gnmt2", "--gpus", "2"}, out...)
	gen := []string{"--dir", filepath.Join(dir, "gen")}
	rows := map[string][]string{
		"placer baselines --format": graphArgs, "placer baselines --objective": graphArgs, "placer baselines --tasks": graphArgs,
		"placer baselines --start": graphArgs, "placer baselines --topology": graphArgs, "placer baselines --methods": graphArgs,
		"placer baselines --hardware": graphArgs, "placer baselines --workload": nil,
		"placer eval --format": graphArgs, "placer eval --objective": graphArgs, "placer eval --topology": graphArgs,
		"placer eval --tf32": graphArgs, "placer eval --memory-format": graphArgs, "placer eval --placement": graphArgs, "placer eval --schedule": graphArgs,
		"placer eval --fusion": graphArgs, "placer eval --hardware": graphArgs, "placer eval --workload": nil,
		"placer export --to": graphArgs, "placer export --placement": append(graphArgs[:2:2], "--to", "decision"),
		"placer export --format":   append(graphArgs[:2:2], "--to", "decision"),
		"placer export --workload": nil,
		"placer search --for":      gpt, "placer search --tie": gpt, "placer search --method": graphArgs,
		"placer search --methods": graphArgs, "placer search --policy": graphArgs, "placer search --format": graphArgs,
		"placer search --objective": graphArgs, "placer search --topology": graphArgs, "placer search --tasks": graphArgs,
		"placer search --hardware": graphArgs, "placer search --workload": nil,
		"placer size --choose": size, "placer size --for": size, "placer size --provider": size,
		"placer size --workload":  size[2:],
		"placer finetune --tasks": graphArgs, "placer finetune --topology": graphArgs, "placer finetune --format": graphArgs,
		"placer finetune --hardware": graphArgs, "placer finetune --workload": nil,
		"placer infer --tasks": graphArgs, "placer infer --topology": graphArgs, "placer infer --format": graphArgs,
		"placer infer --hardware": graphArgs, "placer infer --workload": nil,
		"placer pretrain --tasks": train, "placer pretrain --topology": train,
		"placer pretrain --policy": train, "placer pretrain --hold-out": train,
		"placer pretrain --hardware": train, "placer pretrain --workloads": append(out, "--gpus", "2"),
		"placer profile --device": append([]string{"--model", "mlp"}, out...), "placer profile --optimizer": append([]string{"--model", "mlp"}, out...),
		"placer profile --loss": append([]string{"--model", "mlp"}, out...), "placer profile --precision": append([]string{"--model", "mlp"}, out...),
		"placer profile --framework": append(gpt[:2:2], out...), "placer profile --recompute": append(gpt[:2:2], out...),
		"placer profile --fp8":         append(gpt[:2:2], out...),
		"placer regal imitate --genes": train, "placer regal imitate --objective": train,
		"placer regal imitate --tasks": train, "placer regal imitate --topology": train,
		"placer regal imitate --hardware": train, "placer regal imitate --workloads": out,
		"placer regal train --objective": train, "placer regal train --tasks": train,
		"placer regal train --topology": train, "placer regal train --hardware": train,
		"placer regal train --workloads":  out,
		"placer report equal-time --lead": noRun, "placer report equal-time --methods": noRun, "placer report equal-time --objective": noRun,
		"placer report equal-time --topology": noRun, "placer report equal-time --hardware": noRun,
		"placer report generalization --families": gen, "placer report generalization --tasks": gen,
		"placer report generalization --topology": gen, "placer report generalization --train": gen,
		"placer report generalization --policy": gen, "placer report generalization --hardware": gen,
		"placer report layers --cluster":  {"--measured", example},
		"placer report learned --methods": noRun, "placer report learned --plot-format": noRun, "placer report learned --topology": noRun,
		"placer report learned --hardware":    noRun,
		"placer report parallel --topologies": noRun, "placer report parallel --hardware": noRun,
		"placer report regal --objectives": noRun, "placer report regal --tasks": noRun, "placer report regal --topology": noRun,
		"placer report regal --methods": noRun, "placer report regal --curve-methods": noRun, "placer report regal --hardware": noRun,
		"placer tune-brkga --objectives": nil, "placer tune-brkga --tasks": nil, "placer tune-brkga --topology": nil,
		"placer tune-brkga --hardware":    nil,
		"placer workloads synth --family": {"--out", filepath.Join(dir, "synth")},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			k, _ := flagPathKind(c, f)
			if !textFlag(f) || f.Hidden || k == output || k == input || k == readWrite {
				return
			}
			key := c.CommandPath() + " --" + f.Name
			if _, free := freeText[key]; free {
				return
			}
			base, ok := rows[key]
			if !ok {
				t.Errorf("%s: a name flag with no row: add one (a name that does not exist exits 2) or a freeText reason", key)
				return
			}
			delete(rows, key)
			t.Run(key, func(t *testing.T) {
				const bad = "nosuch_x"
				line := append(strings.Fields(c.CommandPath())[1:], base...)
				line = append(line, "--"+f.Name, bad)
				ctx, cancel := context.WithTimeout(context.Background(), refusalGuard)
				defer cancel()
				var stdout, errb bytes.Buffer
				code := runContext(ctx, line, strings.NewReader(""), &stdout, &errb)
				errs := errb.String()
				if code != 2 || !strings.Contains(errs, bad) || strings.Count(errs, "\n") != 1 {
					t.Errorf("%v: exit %d, stderr %q; want exit 2, one line naming %q", line, code, errs, bad)
				}
			})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&streams{}))
	for key := range rows {
		t.Errorf("row %s names no flag", key)
	}
}
