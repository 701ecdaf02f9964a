package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestOneExitRule holds README's rule ("Exit codes") over every
// subcommand: a mistake on the command line (a name, a value, a plan, a
// workload's text, an output path) exits 2, a bad input file 1, each in
// one line, before any work. Every runnable command has a row of each kind
// it can have (a command that reads no file has no exit-1 row).
func TestOneExitRule(t *testing.T) {
	dir := t.TempDir()
	trunc := writeFile(t, "trunc.json", `{"a":`)
	arr := writeFile(t, "arr.json", `[1, 2]`)
	missing := filepath.Join(dir, "nodir", "x.json")
	hf := "hf:../../graph/transformer/testdata/hf/llama3-8b.json"
	gpt := "gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=8"
	opsProfile := filepath.Join("..", "..", "evaluate", "profile", "testdata", "ops.json")
	layersProfile := filepath.Join("..", "..", "evaluate", "profile", "testdata", "small.json")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"baselines", "--workload", "nosuch"}, 2, `--workload "nosuch": unknown workload`},
		{[]string{"baselines", "--graph", example, "--out", missing}, 2, "does not exist"},
		{[]string{"baselines", "--graph", trunc}, 1, "trunc.json: truncated JSON: the file ends at byte 5, inside a value"},
		{[]string{"calibrate", "--out", missing}, 2, "does not exist"},
		{[]string{"calibrate", "--from-profile", trunc}, 1, "truncated"},
		{[]string{"cluster", "slurm", "--dir", dir, "regal"}, 2, "give the report command after --"},
		{[]string{"cluster", "k8s", "--claim", "c", "--image", "i", "regal"}, 2, "give the report command after --"},
		{[]string{"cluster", "nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"completion", "fish", "extra"}, 2, `unknown command "extra"`},
		{[]string{"hw", "nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"regal", "nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"report", "nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"eval", "--workload", "llama3-8b", "--cluster", "dgx-h100:1"}, 2, "seq and batch missing"},
		{[]string{"eval", "--workload", hf, "--cluster", "dgx-h100:1"}, 2, "seq and batch missing"},
		{[]string{"eval", "--workload", hf + ":seq=4096,batch=8", "--cluster", "nosuch:4"}, 2, `unknown node "nosuch"`},
		{[]string{"eval", "--workload", hf + ":seq=4096,batch=8", "--cluster", "dgx-h100:1", "--strategy", "tp=3"}, 2, "tp=3 does not divide the 32 attention heads"},
		{[]string{"eval", "--workload", hf + ":seq=4096,batch=8", "--cluster", "dgx-h100:1", "--strategy", "tpp=2"}, 2, `unknown key "tpp"`},
		{[]string{"eval", "--workload", "llama:8b", "--cluster", "dgx-h100:1"}, 2, `"8b" is not key=value`},
		{[]string{"eval", "--workload", gpt, "--gpus", "24", "--cluster", "dgx-h100:2"}, 2, "disagree: 24 GPUs of dgx-h100's 8-GPU nodes are --cluster dgx-h100:3"},
		{[]string{"eval", "--workload", gpt, "--gpus", "512", "--cluster", "gb200-nvl72:7"}, 2, "are --cluster gb200-nvl72:8,per-node=64"},
		{[]string{"eval", "--workload", gpt, "--cluster", "gb200-nvl72:8,per-node=65"}, 2, "per-node=65: a node of gb200-nvl72 is hosts of 4 GPUs"},
		{[]string{"search", "--workload", gpt, "--cluster", "dgx-h100:1", "--method", "sa"}, 2, "--method does not apply"},
		{[]string{"eval", "--workload", gpt, "--cluster", "dgx-h100:1", "--trace", missing}, 2, "does not exist"},
		{[]string{"eval", "--workload", "hf:" + trunc + ":seq=4096,batch=8", "--cluster", "dgx-h100:1"}, 1, "not JSON: unexpected end of JSON input"},
		{[]string{"eval", "--graph", example, "--hardware", arr}, 1, "hardware profile: line 1, column 2: want an object, got an array"},
		{[]string{"export", "--workload", gpt, "--cluster", "dgx-h100:1", "--strategy", "tp=8", "--to", "megatron-lm"}, 2, `--to megatron-lm: unknown format "megatron-lm"`},
		{[]string{"export", "--workload", gpt, "--cluster", "dgx-h100:1", "--to", "costgraph"}, 2, "--to costgraph: a transformer at cluster scale exports to torch-plan"},
		{[]string{"export", "--graph", example, "--to", "megatron"}, 2, "--to megatron: an op graph exports to tf-device-map"},
		{[]string{"export", "--workload", gpt, "--cluster", "dgx-h100:1", "--strategy", "tp=3", "--to", "megatron"}, 2, "tp=3 does not divide the 4 attention heads"},
		{[]string{"export", "--graph", example, "--placement", trunc, "--to", "decision"}, 1, "truncated"},
		{[]string{"profile", "--workload", "gnmt8", "--out", filepath.Join(dir, "p.json")}, 2, "want gpt:key=value"},
		{[]string{"profile", "--workload", gpt, "--mbs", "0", "--out", filepath.Join(dir, "p.json")}, 2, "--mbs 0: want at least 1"},
		{[]string{"profile", "--workload", gpt, "--out", missing}, 2, "does not exist"},
		{[]string{"eval", "--workload", gpt, "--cluster", "dgx-h100:1", "--profile", trunc}, 1, "truncated"},
		// Ops profiles (placer profile --model): a bad, foreign or
		// mismatched file 1, a flag beside it that does not go with it 2.
		{[]string{"eval", "--profile", trunc}, 1, "truncated"},
		{[]string{"eval", "--profile", opsProfile, "--hardware", "a100"}, 1, `of another device: cuda "NVIDIA H100 80GB HBM3" (torch 2.11.0), the run's a100`},
		{[]string{"eval", "--profile", layersProfile}, 1, "a transformer's layers"},
		{[]string{"eval", "--workload", gpt, "--cluster", "dgx-h100:1", "--profile", opsProfile}, 1, "an op graph (three), not a transformer's layers"},
		{[]string{"eval", "--profile", opsProfile, "--graph", example}, 2, "holds the graph it measured"},
		{[]string{"search", "--profile", opsProfile, "--hardware", "v100"}, 1, "of another device"},
		{[]string{"export", "--profile", arr, "--to", "decision"}, 1, "profile"},
		{[]string{"profile", "--model", "mlp", "--workload", gpt, "--out", filepath.Join(dir, "p.json")}, 2, "not both"},
		{[]string{"profile", "--model", "mlp", "--device", "cpu", "--precision", "bf16", "--out", filepath.Join(dir, "p.json")}, 2, "a CPU profile is fp32"},
		{[]string{"profile", "--model", "mlp", "--precision", "fp16", "--out", filepath.Join(dir, "p.json")}, 2, `--precision "fp16": want fp32, tf32, bf16`},
		{[]string{"profile", "--model", "mlp", "--out", missing}, 2, "does not exist"},
		{[]string{"profile", "--batch", "4", "--workload", gpt, "--out", filepath.Join(dir, "p.json")}, 2, "are --model's"},
		{[]string{"finetune", "--workload", "nosuch"}, 2, "unknown workload"},
		{[]string{"finetune", "--graph", example, "--model", trunc}, 1, "is not a placer policy file"},
		{[]string{"hw", "bench", "--gpu", "99"}, 2, "out of range"},
		{[]string{"infer", "--workload", "nosuch"}, 2, "unknown workload"},
		{[]string{"infer", "--graph", example, "--model", trunc}, 1, "is not a placer policy file"},
		{[]string{"pretrain", "--workloads", "mlp"}, 2, "give --out MODEL"},
		{[]string{"regal", "imitate", "--workloads", "nosuch", "--out", filepath.Join(dir, "m.json")}, 2, "unknown workload"},
		{[]string{"regal", "train", "--workloads", "nosuch", "--out", filepath.Join(dir, "m.json")}, 2, "unknown workload"},
		{[]string{"regal", "train", "--workloads", "mlp", "--out", filepath.Join(dir, "m.json"), "--init", trunc}, 1, "is not a REGAL model file"},
		{[]string{"report", "equal-time", "--methods", "nosuch"}, 2, `unknown method "nosuch"`},
		{[]string{"report", "generalization", "--families", "nosuch"}, 2, `unknown family "nosuch"`},
		{[]string{"report", "layers", "--cluster", "nosuch", "--measured", trunc}, 2, `--cluster: cluster "nosuch": unknown node`},
		{[]string{"report", "layers", "--measured", trunc}, 1, "unexpected end of JSON input"},
		{[]string{"report", "learned", "--methods", "nosuch"}, 2, `unknown method "nosuch"`},
		{[]string{"report", "megatron", "--plot", filepath.Join(dir, "x.gif")}, 2, `unknown format "gif"`},
		{[]string{"report", "parallel", "--gpus-list", "1000"}, 2, "want 2 to 64"},
		{[]string{"report", "parallel", "--hardware", trunc, "--no-run", "--dir", dir}, 1, "truncated"},
		{[]string{"report", "regal", "--objectives", "nosuch"}, 2, `objective "nosuch"`},
		{[]string{"report", "sweeps", "extra"}, 2, `unknown command "extra"`},
		{[]string{"report", "bench", "extra"}, 2, `unknown command "extra"`},
		{[]string{"search", "--workload", "nosuch"}, 2, "unknown workload"},
		{[]string{"search", "--workload", "trxl2", "--gpus", "2", "--evals", "0"}, 2, "--evals 0: out of range [1, 1000000000]"},
		{[]string{"search", "--workload", "llama3-70:seq=8192,batch=512", "--cluster", "dgx-h100:4"}, 2, `--workload "llama3-70:seq=8192,batch=512": unknown workload (nearest: llama3-70b`},
		{[]string{"search", "--workload", "llama3-8b:seq=4096", "--cluster", "dgx-h100:1"}, 2, "batch missing"},
		{[]string{"search", "--workload", gpt, "--cluster", "dgx-h100:1", "--strategy", "tpp=2"}, 2, `unknown key "tpp"`},
		{[]string{"search", "--workload", "deepseek-v3:seq=4096,batch=64", "--cluster", "dgx-h100:8", "--strategy", "peft=lora"}, 2, "peft=lora with latent attention: LoRA's costs are modelled for standard attention only"},
		{[]string{"search", "--workload", "qwen3-30b-a3b:seq=4096,batch=64", "--cluster", "dgx-h100:1", "--strategy", "peft=lora"}, 1, "no plan keeping peft=lora runs under megatron"},
		{[]string{"search", "--workload", "mlp", "--out", missing}, 2, "does not exist"},
		{[]string{"search", "--workload", gpt, "--cluster", "dgx-h100:1", "--tie", "cheap"}, 2, `--tie "cheap": want fastest or cheapest`},
		{[]string{"search", "--graph", trunc}, 1, "trunc.json: truncated JSON: the file ends at byte 5, inside a value"},
		{[]string{"size", "--workload", gpt, "--tokens", "1e9", "--clusters", "nosuch:4"}, 2, `unknown node "nosuch"`},
		{[]string{"size", "--workload", gpt, "--tokens", "1e9", "--clusters", "dgx-h100"}, 2, "--clusters: \"dgx-h100\": write PRESET:NODES"},
		{[]string{"size", "--workload", gpt, "--tokens", "lots", "--clusters", "dgx-h100:1"}, 2, `--tokens: "lots" is not a number of tokens`},
		{[]string{"size", "--workload", gpt, "--tokens", "1e9", "--clusters", "dgx-h100:1", "--deadline", "soon"}, 2, `--deadline: "soon" is not a duration`},
		{[]string{"size", "--workload", gpt, "--phases", "seq=128", "--clusters", "dgx-h100:1"}, 2, "--phases: phase 1"},
		{[]string{"size", "--workload", gpt, "--tokens", "1e9", "--clusters", "dgx-h100:1", "--strategy", "tpp=2"}, 2, `unknown key "tpp"`},
		{[]string{"size", "--workload", gpt, "--tokens", "1e9", "--clusters", "dgx-h100:1", "--out", missing}, 2, "does not exist"},
		{[]string{"size", "--workload", gpt, "--tokens", "1e9", "--clusters", "dgx-h100:1", "--prices", trunc}, 1, "price table"},
		{[]string{"tune-brkga", "--objectives", "nosuch"}, 2, `objective "nosuch"`},
		{[]string{"tune-brkga", "--hardware", trunc}, 1, "truncated"},
		{[]string{"version", "extra"}, 2, `unknown command "extra"`},
		{[]string{"workloads", "export", "nosuch"}, 2, `unknown workload "nosuch"`},
		{[]string{"workloads", "list", "extra"}, 2, `unknown command "extra"`},
		{[]string{"workloads", "synth", "--count", "0"}, 2, "out of range"},
	}
	covered := map[string]bool{}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// A command that starts its work in spite of the mistake is
			// stopped (refusalGuard), and fails below.
			ctx, cancel := context.WithTimeout(context.Background(), refusalGuard)
			defer cancel()
			var out, errb bytes.Buffer
			code := runContext(ctx, tc.args, strings.NewReader(""), &out, &errb)
			errs := errb.String()
			if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "placer: ") {
				t.Errorf("exit %d, stderr %q; want exit %d, one line with %q", code, errs, tc.code, tc.want)
			}
		})
		covered[strings.Join(leafPath(tc.args), " ")] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Name() != "help" && !c.Hidden {
			if p := strings.TrimPrefix(c.CommandPath(), "placer "); !covered[p] {
				t.Errorf("placer %s has no row: add its mistakes", p)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&streams{}))
}

// leafPath is the command words at the head of args (up to the first flag
// or an argument that is not a subcommand), as CommandPath writes them.
func leafPath(args []string) []string {
	c := newRootCmd(&streams{})
	var path []string
	for _, a := range args {
		next, _, err := c.Find([]string{a})
		if err != nil || next == c || strings.HasPrefix(a, "-") {
			break
		}
		c = next
		path = append(path, a)
	}
	return path
}
