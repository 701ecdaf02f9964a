package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/inputs"
	"github.com/spf13/cobra"
)

// TestChooseWorld: the world of a command line is decided once, from its
// workload: a built-in op graph or a graph file is an op graph, a
// transformer (hf:, llama:, gpt: or a preset) is at cluster scale; a flag
// of the other world is refused in one line naming it and why, read off
// the flag (worldflags.Bind: the product whose binder alone takes it),
// whatever the command (eval, search, export). A
// pod (--cluster) with an op graph is refused by its flag; before, the
// pod made the op graph a transformer, refused as one ("workload
// "trxl2": want gpt:..." or "--graph does not apply to a transformer at
// cluster scale (--workload )"). A command line that names no workload is
// left to say what is missing.
func TestChooseWorld(t *testing.T) {
	const (
		gpt       = "gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8"
		llama     = "llama:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8"
		hf        = "hf:../../graph/transformer/testdata/hf/llama3-8b.json:seq=4096,batch=64"
		preset    = "llama3-8b:seq=4096,batch=32"
		podRefuse = "--cluster does not apply to an op graph: it is for a transformer at cluster scale (--workload gpt:... or llama:...)"
	)
	cases := []struct {
		name string
		cmd  string // eval, search or export
		args []string
		want inputs.World
		err  string // the whole line ("" = none)
	}{
		{"built-in op graph", "eval", []string{"--workload", "trxl2", "--gpus", "2", "--fusion", "default"}, inputs.OpGraph, ""},
		{"graph file", "search", []string{"--graph", example, "--method", "go", "--hardware", "a100"}, inputs.OpGraph, ""},
		{"ops profile", "eval", []string{"--profile", "ops.json", "--gpus", "2"}, inputs.OpGraph, ""},
		{"hf", "search", []string{"--workload", hf, "--cluster", "dgx-h100:1", "--strategy", "tp=2", "--for", "torchtitan"}, inputs.ClusterScale, ""},
		{"llama", "eval", []string{"--workload", llama, "--gpus", "8", "--memory-margin", "0.1", "--strategy", "tp=2"}, inputs.ClusterScale, ""},
		{"gpt", "export", []string{"--workload", gpt, "--cluster", "dgx-h100:1"}, inputs.ClusterScale, ""},
		{"preset", "eval", []string{"--workload", preset, "--cluster", "dgx-h100:1", "--plan", "p.json"}, inputs.ClusterScale, ""},
		{"pod with a built-in op graph", "eval", []string{"--workload", "trxl2", "--cluster", "dgx-h100:4"}, inputs.OpGraph, podRefuse},
		{"pod with a graph file", "eval", []string{"--graph", example, "--cluster", "dgx-h100:1"}, inputs.OpGraph, podRefuse},
		{"pod with an op graph, export", "export", []string{"--workload", "trxl2", "--cluster", "dgx-h100:4"}, inputs.OpGraph, podRefuse},
		{"margin with an op graph", "eval", []string{"--workload", "trxl2", "--memory-margin", "0.1"}, inputs.OpGraph,
			"--memory-margin does not apply to an op graph: it is for a transformer at cluster scale (--workload gpt:... or llama:...)"},
		{"search's --strategy with an op graph", "search", []string{"--workload", "gnmt8", "--strategy", "dp=2"}, inputs.OpGraph,
			"--strategy does not apply to an op graph: it is for a transformer at cluster scale (--workload gpt:... or llama:...)"},
		{"method at cluster scale", "search", []string{"--workload", preset, "--method", "go"}, inputs.ClusterScale,
			"--method does not apply to a transformer at cluster scale (--workload " + preset + "): the search there tries every plan of its degrees: it has no method, policy or baselines to choose (docs/cluster-scale.md)"},
		{"budget at cluster scale", "search", []string{"--workload", preset, "--cpu", "5s"}, inputs.ClusterScale,
			"--cpu does not apply to a transformer at cluster scale (--workload " + preset + "): the search there tries every plan of its degrees, exhaustively: it takes no budget (docs/cluster-scale.md)"},
		{"hardware at cluster scale", "eval", []string{"--workload", gpt, "--topology", "nvlink"}, inputs.ClusterScale,
			"--topology does not apply to a transformer at cluster scale (--workload " + gpt + "): the pod's node sets the hardware (--cluster PRESET:NODES) (docs/cluster-scale.md)"},
		{"first in name order", "eval", []string{"--workload", gpt, "--trace", "t.json", "--expert", "e.json"}, inputs.ClusterScale,
			"--expert does not apply to a transformer at cluster scale (--workload " + gpt + "): it is an op graph's option (a placement's, its schedule's, fusion's or evaluation's) (docs/cluster-scale.md)"},
		{"no workload named", "eval", []string{"--cluster", "dgx-h100:4", "--hardware", "h100"}, inputs.OpGraph, ""},
	}
	for _, c := range cases {
		s := &streams{In: strings.NewReader(""), Out: new(bytes.Buffer), Err: new(bytes.Buffer)}
		cmd := map[string]func(*streams) *cobra.Command{"eval": newEvalCmd, "search": newSearchCmd, "export": newExportCmd}[c.cmd](s)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		workload, _ := cmd.Flags().GetString("workload")
		w, err := worldflags.Check(cmd, workload)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if w != c.want || got != c.err {
			t.Errorf("%s: %s %v: world %s, error %q; want %s, %q", c.name, c.cmd, c.args, w, got, c.want, c.err)
		}
	}
}

// TestPodWithOpGraph: a pod (--cluster) given with an op graph is refused
// by its flag, in one line, exit 2, for eval, search and export alike;
// and a command line naming no workload says so, whatever else it
// names. Before, the pod made the op graph a transformer: `eval
// --workload trxl2 --cluster dgx-h100:4` said "workload "trxl2": want
// gpt:key=value,...", `eval --graph g.json --cluster dgx-h100:1` said
// "--graph does not apply to a transformer at cluster scale (--workload
// )", `eval --cluster dgx-h100:4 --hardware h100` "--hardware does
// not apply to a transformer at cluster scale (--workload )", and `eval
// --profile p.json --cluster cpu` (a CPU profile, no workload) 'workload
// "": want gpt:key=value,...'.
func TestPodWithOpGraph(t *testing.T) {
	const pod = "placer: --cluster does not apply to an op graph: it is for a transformer at cluster scale (--workload gpt:... or llama:...)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--workload", "trxl2", "--cluster", "dgx-h100:4"}, pod},
		{[]string{"search", "--workload", "trxl2", "--cluster", "dgx-h100:4", "--evals", "10"}, pod},
		{[]string{"export", "--workload", "trxl2", "--cluster", "dgx-h100:4", "--to", "megatron"}, pod},
		{[]string{"eval", "--graph", example, "--cluster", "dgx-h100:1"}, pod},
		{[]string{"eval", "--profile", "p.json", "--cluster", "cpu"}, pod},
		{[]string{"eval", "--cluster", "dgx-h100:4", "--hardware", "h100"}, "placer: give --graph FILE or --workload NAME (or --profile FILE, placer profile --model's)"},
	} {
		code, _, stderr := placer(t, c.args...)
		if got := strings.TrimSpace(stderr); code != 2 || got != c.want {
			t.Errorf("%v: exit %d, %q; want exit 2, %q", c.args, code, got, c.want)
		}
	}
}

// TestExportFlagsOfOneWorld: export refuses, in one line, exit 2, a flag
// of the other world, as eval and search do. Before, export wrote the
// plan of a transformer with --stages, --meta or --expert, and an op
// graph's placement with --allow-over, each silently ignored.
func TestExportFlagsOfOneWorld(t *testing.T) {
	const llama8B = "llama3-8b:seq=4096,batch=32"
	scale := []string{"export", "--workload", llama8B, "--cluster", "dgx-h100:4", "--to", "torch-plan", "--strategy", "tp=8,pp=4"}
	opGraph := "it is an op graph's option (a placement's, its schedule's, fusion's or evaluation's) (docs/cluster-scale.md)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(scale), "--stages", "2"), "placer: --stages does not apply to a transformer at cluster scale (--workload " + llama8B + "): " + opGraph},
		{append(slices.Clone(scale), "--meta", "x.meta.json"), "placer: --meta does not apply to a transformer at cluster scale (--workload " + llama8B + "): " + opGraph},
		{append(slices.Clone(scale), "--expert", "e.json"), "placer: --expert does not apply to a transformer at cluster scale (--workload " + llama8B + "): " + opGraph},
		{[]string{"export", "--workload", "trxl2", "--gpus", "2", "--to", "decision", "--allow-over"},
			"placer: --allow-over does not apply to an op graph: it is for a transformer at cluster scale (--workload gpt:... or llama:...)"},
	} {
		code, _, stderr := placer(t, c.args...)
		if got := strings.TrimSpace(stderr); code != 2 || got != c.want {
			t.Errorf("%v: exit %d, %q; want exit 2, %q", c.args, code, got, c.want)
		}
	}
}

// TestFlagsOfBothWorlds: a flag both products take reads the value typed
// (or the default) on the command line, which Choose hands to the chosen
// product's options alone (worldflags' TestChooseHands), and a malformed
// number is refused with pflag's own line for an int flag.
func TestFlagsOfBothWorlds(t *testing.T) {
	s := &streams{In: strings.NewReader(""), Out: new(bytes.Buffer), Err: new(bytes.Buffer)}
	for _, c := range []struct {
		cmd  func(*streams) *cobra.Command
		args []string
		flag string
		want string // the line's value
	}{
		{newEvalCmd, []string{"--gpus", "16"}, "gpus", "16"},
		{newEvalCmd, []string{"--gpus", "0x10"}, "gpus", "16"}, // as pflag reads an int: base prefixes too
		{newEvalCmd, []string{"--workload", "trxl2"}, "workload", "trxl2"},
		{newEvalCmd, nil, "placement", "single"},
		{newEvalCmd, []string{"--plan", "p.json"}, "plan", "p.json"},
		{newEvalCmd, []string{"--strategy", "tp=8"}, "strategy", "tp=8"},
		{newSearchCmd, []string{"-o", "r.json"}, "out", "r.json"},
		{newSearchCmd, []string{"--profile", "p.json"}, "profile", "p.json"},
		{newExportCmd, []string{"--gpus", "8"}, "gpus", "8"},
	} {
		cmd := c.cmd(s)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		fl := cmd.Flags().Lookup(c.flag)
		if got := fl.Value.String(); got != c.want || fl.Annotations["placer_world"] != nil {
			t.Errorf("%s %v: --%s reads %q (world %v), want %q in both worlds", cmd.Name(), c.args, c.flag, got, fl.Annotations["placer_world"], c.want)
		}
	}
	err := newEvalCmd(s).ParseFlags([]string{"--gpus", "x"})
	if want := `invalid argument "x" for "--gpus" flag: strconv.ParseInt: parsing "x": invalid syntax`; err == nil || err.Error() != want {
		t.Errorf("--gpus x: %v, want %q", err, want)
	}
}
