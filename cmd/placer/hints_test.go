package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// hintRule reads one kind of hint out of an error line and applies it
// to the command that printed it: the flags it names replace theirs.
type hintRule struct {
	re    *regexp.Regexp
	apply func(args []string, m []string) []string
}

// setFlag is args with flag set to v (added where args lack it).
func setFlag(args []string, flag, v string) []string {
	out := slices.Clone(args)
	if i := slices.Index(out, flag); i >= 0 {
		out[i+1] = v
		return out
	}
	return append(out, flag, v)
}

var hintRules = []hintRule{
	// more nodes (--cluster dgx-h100:4 or more); fewer nodes (--cluster
	// dgx-h100:64 finds a plan)
	{regexp.MustCompile(`--cluster (\S+) (?:or more|finds a plan)`), func(a, m []string) []string { return setFlag(a, "--cluster", m[1]) }},
	// LoRA fine-tuning (--strategy peft=lora --for megatron-bridge, ...)
	{regexp.MustCompile(`--strategy (\S+) --for (\S+),`), func(a, m []string) []string {
		return setFlag(setFlag(a, "--strategy", m[1]), "--for", m[2])
	}},
	// full recomputation (--strategy recompute=full)
	{regexp.MustCompile(`full recomputation \(--strategy (\S+)\)`), func(a, m []string) []string { return setFlag(a, "--strategy", m[1]) }},
	// export's: (placer search --workload W --cluster C --for F -o FILE
	// finds plans that fit, ...)
	{regexp.MustCompile(`placer (search --workload \S+ --cluster \S+ --for \S+) -o FILE`), func(_, m []string) []string { return strings.Fields(m[1]) }},
}

// TestHintsRun holds "every hint is a command that runs": each command
// below fails with hints; each hint, applied to it as written, is run
// and must get further (exit 0: a plan found), never fail the same way.
// Hints that would not (more nodes that still do not fit, recomputation
// under a framework that refuses it) are not offered: their rows name
// how many hints they expect.
func TestHintsRun(t *testing.T) {
	gemma := "hf:" + filepath.Join("..", "..", "graph", "transformer", "testdata", "hf", "gemma-3-12b.json") + ":seq=4096,batch=64"
	for _, tc := range []struct {
		args  []string
		hints int
		not   []string
	}{
		{[]string{"search", "--workload", "llama3-70b:seq=8192,batch=64", "--cluster", "dgx-h100:1"}, 2, nil},
		// DeepSpeed runs no full recomputation placer writes, and no pod
		// of up to 16 times the nodes fits 70B at seq 8192 under it:
		// LoRA alone.
		{[]string{"search", "--workload", "llama3-70b:seq=8192,batch=512", "--cluster", "dgx-h100:8", "--for", "deepspeed"}, 1, []string{"recompute=full", "more nodes"}},
		// A batch of 1 cannot be split over 1,024 GPUs.
		{[]string{"search", "--workload", "llama3-8b:seq=8192,batch=1", "--cluster", "dgx-h100:128"}, 1, []string{"plans tried"}},
		{[]string{"search", "--workload", "llama3-8b:seq=8192,batch=1", "--cluster", "dgx-h100:128", "--for", "any"}, 1, []string{"plans tried"}},
		{[]string{"export", "--workload", gemma, "--to", "megatron-bridge", "--strategy", "tp=2,dp=8", "--cluster", "dgx-h100:2"}, 1, nil},
	} {
		var out, errb bytes.Buffer
		args := append(slices.Clone(tc.args), "-q")
		if tc.args[0] == "export" {
			args = append(tc.args, "-o", filepath.Join(t.TempDir(), "x.py"))
		}
		code := runContext(context.Background(), args, strings.NewReader(""), &out, &errb)
		line := errb.String()
		if code == 0 {
			t.Errorf("%s: exit 0; want a failure with hints", strings.Join(args, " "))
			continue
		}
		for _, n := range tc.not {
			if strings.Contains(line, n) {
				t.Errorf("%s: %q; want no %q", strings.Join(args, " "), line, n)
			}
		}
		hints := 0
		for _, r := range hintRules {
			for _, m := range r.re.FindAllStringSubmatch(line, -1) {
				hints++
				next := r.apply(tc.args, m)
				if next[0] == "search" {
					next = append(next, "-q", "-o", filepath.Join(t.TempDir(), "r.json"))
				}
				var o2, e2 bytes.Buffer
				if c := runContext(context.Background(), next, strings.NewReader(""), &o2, &e2); c != 0 {
					t.Errorf("hint of %s\n  %s\nexit %d: %s", strings.Join(args, " "), strings.Join(next, " "), c, e2.String())
				}
			}
		}
		if hints != tc.hints {
			t.Errorf("%s: %d hints in %q; want %d", strings.Join(args, " "), hints, line, tc.hints)
		}
	}
}

// TestHelpLeadsWithClusterPlanner: search's help, its examples and the
// root's command list open with the cluster planner, as the README does
// , as the README does; the op-level placer comes second.
func TestHelpLeadsWithClusterPlanner(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runContext(context.Background(), []string{"search", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("search --help: exit %d, %s", code, errb.String())
	}
	help := out.String()
	cluster, op := strings.Index(help, "The cluster planner"), strings.Index(help, "The op-level placer")
	ex := help[strings.Index(help, "Examples:"):]
	if !strings.HasPrefix(help, "The cluster planner") || op < cluster || strings.Index(ex, "--cluster") > strings.Index(ex, "trxl2") {
		t.Errorf("search --help opens %q; want the cluster planner first, in its text and its examples", help[:min(len(help), 200)])
	}
	out.Reset()
	runContext(context.Background(), []string{"--help"}, strings.NewReader(""), &out, &errb)
	for _, c := range []string{"  search      Find the fastest plan of a transformer", "  eval        Predict one plan's training step on a cluster"} {
		if !strings.Contains(out.String(), c) {
			t.Errorf("placer --help: no %q", c)
		}
	}
}
