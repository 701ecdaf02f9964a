package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commandPaths lists, by hand, every runnable command's flags that read
// a file (inputs) and that write one (outputs). TestEveryFlagClassified
// holds it to the commands' flags, TestNoInputIsAnOutput runs each pair.
var commandPaths = []struct {
	cmd, inputs, outputs string
}{
	{"placer baselines", "cost-table expert graph hardware workload", "out output rows"},
	{"placer calibrate", "from-profile hardware", "out"},
	{"placer cluster", "", ""},
	{"placer cluster k8s", "placer", "out"},
	{"placer cluster slurm", "placer", "out"},
	{"placer eval", "cost-table expert fusion graph hardware placement plan profile schedule workload", "out output trace"},
	{"placer export", "cost-table expert graph meta placement plan profile workload", "out"},
	{"placer finetune", "cost-table expert graph hardware model workload", "out"},
	{"placer hw", "", ""},
	{"placer hw bench", "", "out profile"},
	{"placer infer", "cost-table expert graph hardware head model workload", "out"},
	{"placer pretrain", "graphs hardware policy", "out"},
	{"placer profile", "model python workload", "out"},
	{"placer regal", "", ""},
	{"placer regal imitate", "graphs hardware", "out"},
	{"placer regal train", "graphs hardware init", "out"},
	{"placer report", "", ""},
	{"placer report bench", "", ""},
	{"placer report equal-time", "graphs hardware head model", "plot"},
	{"placer report generalization", "graphs hardware policy test", "plot"},
	{"placer report layers", "kernelbench measured", ""},
	{"placer report learned", "graphs hardware", "plot-dir"},
	{"placer report megatron", "", "plot"},
	{"placer report parallel", "graphs hardware", "plot"},
	{"placer report regal", "graphs hardware", "plot"},
	{"placer report sweeps", "", ""},
	{"placer search", "cost-table expert graph hardware policy profile workload", "out plot rows trace"},
	{"placer size", "prices workload", "out plot"},
	{"placer tune-brkga", "hardware", "out output"},
	{"placer version", "", ""},
	{"placer workloads export", "", "out output"},
	{"placer workloads list", "", ""},
	{"placer workloads synth", "", "out output"},
}

// textFlag is whether f's value is text (a name, a path, a list), as
// opposed to a number, a duration or a switch: every such flag must be
// classified.
func textFlag(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "bool", "int", "int64", "uint64", "float64", "duration", "intSlice", "count":
		return false
	}
	return true
}

// TestEveryFlagClassified: every text flag of every command is
// classified (pathFlags, pathFlagsOf) as a file read, a file written,
// both on purpose or no file, so that a new flag cannot skip the rule
// "no input is ever an output"; the inputs and outputs of each command
// are commandPaths' lists, and every output is one checkOutputs checks.
func TestEveryFlagClassified(t *testing.T) {
	listed := map[string]int{}
	for i, c := range commandPaths {
		listed[c.cmd] = i
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && !c.Hidden {
			var ins, outs []string
			c.Flags().VisitAll(func(f *pflag.Flag) {
				k, ok := flagPathKind(c, f)
				if !ok {
					if textFlag(f) {
						t.Errorf("%s --%s (%s) is not classified: add it to pathFlags (a file read, written, both, or no file)", c.CommandPath(), f.Name, f.Value.Type())
					}
					return
				}
				switch k {
				case output:
					outs = append(outs, f.Name)
				case input, nameOrInput, listInput, workloadInput, mapInput:
					ins = append(ins, f.Name)
				}
				if written := outputFlags[f.Name] && f.Annotations[inputAnnotation] == nil; written != (k == output) {
					t.Errorf("%s --%s: checkOutputs says written %v, pathFlags %v", c.CommandPath(), f.Name, written, k == output)
				}
			})
			i, ok := listed[c.CommandPath()]
			if !ok {
				t.Errorf("%s is not in commandPaths", c.CommandPath())
			} else if got := (strings.Join(ins, " ") + " | " + strings.Join(outs, " ")); got != commandPaths[i].inputs+" | "+commandPaths[i].outputs {
				t.Errorf("%s reads | writes %q; commandPaths lists %q", c.CommandPath(), got, commandPaths[i].inputs+" | "+commandPaths[i].outputs)
			}
			delete(listed, c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&streams{}))
	for c := range listed {
		t.Errorf("commandPaths lists %s, which is no command", c)
	}
}

// spellInput is an input flag's value that reads file.
func spellInput(flag, file string) string {
	switch flag {
	case "workload":
		return "hf:" + file + ":seq=8,batch=8"
	case "test":
		return "gnmt=" + file
	}
	return file
}

// TestNoInputIsAnOutput: for every command, every pair of a flag that
// reads a file and one that writes one, given the same file, is refused
// before any work in one line naming both flags and the file, exit 2,
// and the file is left as it was; so are the three (an hf:
// config.json as -o, a plan exported over itself through a hard link, a
// decision traced over through a symbolic link).
func TestNoInputIsAnOutput(t *testing.T) {
	const content = `{"unchanged": true}`
	args := map[string][]string{"placer workloads export": {"mlp"}}
	type row struct {
		name, file string
		line       []string
		in, out    string
	}
	var rows []row
	for _, c := range commandPaths {
		for _, in := range strings.Fields(c.inputs) {
			for _, out := range strings.Fields(c.outputs) {
				f := writeFile(t, "x.json", content)
				line := append(strings.Fields(c.cmd)[1:], args[c.cmd]...)
				line = append(line, "--"+in, spellInput(in, f), "--"+out, f)
				rows = append(rows, row{c.cmd + " --" + in + " --" + out, f, line, in, out})
			}
		}
	}
	dir := t.TempDir()
	hard, sym := filepath.Join(dir, "hard.json"), filepath.Join(dir, "sym.json")
	q2, plan, tr := writeFile(t, "q2.json", content), writeFile(t, "p.json", content), writeFile(t, "tr.json", content)
	if err := os.Link(plan, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tr, sym); err != nil {
		t.Fatal(err)
	}
	rows = append(rows,
		row{"issue: hf config.json as -o", q2, []string{"search", "--workload", "hf:" + q2 + ":seq=8192,batch=256", "--cluster", "dgx-h100:4", "-o", q2}, "workload", "out"},
		row{"issue: plan over itself, a hard link", plan, []string{"export", "--plan", plan, "--to", "megatron", "-o", hard}, "plan", "out"},
		row{"issue: decision traced over, a symbolic link", tr, []string{"eval", "--graph", example, "--placement", tr, "--trace", sym}, "placement", "trace"},
	)
	if n := len(rows); n < 100 {
		t.Errorf("%d pairs, want every command's (at least 100)", n)
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), refusalGuard)
			defer cancel()
			var out, errb bytes.Buffer
			code := runContext(ctx, r.line, strings.NewReader(""), &out, &errb)
			errs := errb.String()
			want := "would overwrite --" + r.in + "'s input "
			if code != 2 || !strings.HasPrefix(errs, "placer: --"+r.out+" ") || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q; want exit 2, one line with --%s and %q", r.line, code, errs, r.out, want)
			}
			if b, err := os.ReadFile(r.file); err != nil || string(b) != content {
				t.Errorf("%v: %s now holds %q (%v)", r.line, r.file, b, err)
			}
		})
	}
	// Distinct files are no mistake: a name that is no file (a preset)
	// beside an output of the same text neither.
	graph, err := filepath.Abs(example)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	code := runContext(context.Background(), []string{"eval", "--graph", graph, "--placement", "single", "--trace", "single", "--hardware", "h100"}, strings.NewReader(""), &out, &errb)
	if code != 0 || slices.Contains(strings.Fields(errb.String()), "overwrite") {
		t.Errorf("eval --placement single --trace single: exit %d, %q; want 0", code, errb.String())
	}
}

// TestMissingInputOneWay: a file that is not there is told one way for
// every flag of every command that reads one (it was "placement: open
// X: ...", "plan file X: cannot read it: ...", "X: cannot read it: ...",
// "--cost-table: cost table: open X: ..."), before any work, exit 1; a
// program (--python, --placer) is looked up on PATH, not here, and a
// list's or map's items (--graphs, --test) and --policy (a network size
// or its file) are their command's to resolve.
func TestMissingInputOneWay(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.json")
	args := map[string][]string{"placer workloads export": {"mlp"}}
	n := 0
	for _, c := range commandPaths {
		for _, in := range strings.Fields(c.inputs) {
			if k, _ := flagPathKind(commandNamed(t, c.cmd), commandNamed(t, c.cmd).Flags().Lookup(in)); !mustExist(k, in) {
				continue // a program, a list's or a map's items, --policy: their command's own line
			}
			n++
			given := spellInput(in, missing)
			line := append(strings.Fields(c.cmd)[1:], args[c.cmd]...)
			line = append(line, "--"+in, given)
			want := "placer: --" + in + " " + given + ": cannot read it: no such file or directory\n"
			if given != missing {
				want = "placer: --" + in + " " + given + ": cannot read " + missing + ": no such file or directory\n"
			}
			t.Run(c.cmd+" --"+in, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), refusalGuard)
				defer cancel()
				var out, errb bytes.Buffer
				code := runContext(ctx, line, strings.NewReader(""), &out, &errb)
				if code != 1 || errb.String() != want {
					t.Errorf("%v: exit %d, stderr %q; want exit 1, %q", line, code, errb.String(), want)
				}
			})
		}
	}
	if n < 45 {
		t.Errorf("%d input flags, want every one (at least 45)", n)
	}
}

// TestProfileNotADecision: a profile (placer profile's) given where a
// decision or a plan goes says it is a profile and which flag takes it
// (it was `decision: json: unknown field "kind"`), exit 1.
func TestProfileNotADecision(t *testing.T) {
	ops := filepath.Join("..", "..", "evaluate", "profile", "testdata", "ops.json")
	layers := filepath.Join("..", "..", "evaluate", "profile", "testdata", "small.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--graph", example, "--placement", ops}, "decision: a profile (placer profile --model's measured op times), not a decision: give it to eval, search or export as --profile FILE"},
		{[]string{"eval", "--graph", example, "--placement", layers}, "decision: a profile (placer profile --workload's layers), not a decision: give it to eval or search as --profile FILE with its --workload and --cluster"},
		{[]string{"eval", "--graph", example, "--schedule", ops}, "not a decision: give it to eval, search or export as --profile FILE"},
		{[]string{"export", "--graph", example, "--placement", ops, "--to", "decision"}, "not a decision: give it to eval, search or export as --profile FILE"},
		{[]string{"eval", "--workload", "llama3-8b:seq=4096,batch=64", "--cluster", "dgx-h100:1", "--plan", ops}, "a profile (placer profile's), not a plan: give it as --profile FILE"},
	} {
		var out, errb bytes.Buffer
		code := runContext(context.Background(), c.args, strings.NewReader(""), &out, &errb)
		if errs := errb.String(); code != 1 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit 1, one line with %q", c.args, code, errs, c.want)
		}
	}
}

// commandNamed is the command of placer's tree at path ("placer eval").
func commandNamed(t *testing.T, path string) *cobra.Command {
	t.Helper()
	c, _, err := newRootCmd(&streams{}).Find(strings.Fields(path)[1:])
	if err != nil || c.CommandPath() != path {
		t.Fatalf("no command %q (%v)", path, err)
	}
	return c
}
