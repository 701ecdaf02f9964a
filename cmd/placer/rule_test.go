package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// llama8B is Llama 3 8B's preset with a run: 32 heads, 8 key/value
// heads, 32 layers; on dgx-h100:4, 32 GPUs.
const llama8B = "llama3-8b:seq=4096,batch=512"

// TestStrategyOneRule: eval and search read --strategy by one rule. A key
// no plan can keep is refused by both with the same one line, exit 2,
// before anything is searched (search said "no plan keeping tp=3 fits
// ... (0 plans tried)", exit 1). A key written is never replaced: eval
// refuses dp=1 on 32 GPUs where tp and pp are left at 1 (it ran
// tp=1,pp=1,dp=32), naming the strategy (it was "strategy :" on a small
// model), and search keeps it.
func TestStrategyOneRule(t *testing.T) {
	dir := t.TempDir()
	both := []struct {
		strategy string
		want     string
	}{
		{"tp=3", "placer: strategy tp=3: tp=3 does not divide the 32 attention heads"},
		{"pp=5", "placer: strategy pp=5: pp=5 does not divide the 32 GPUs"},
		{"tp=2,pp=2,dp=2", "placer: strategy dp=2,tp=2,pp=2: tp=2 x pp=2 x dp=2 is 8 GPUs, the cluster has 32: give tp, cp and pp whose product with dp=2 is 32, or leave dp out (it is then what they leave)"},
		{"mbs=3", "placer: strategy mbs=3: the batch of 512 is not divisible by mbs=3"},
		{"ep=2", "placer: strategy ep=2: ep, etp, imbalance or epoverlap on a model without experts"},
	}
	for _, c := range both {
		for _, cmd := range []string{"eval", "search"} {
			r := runBinary(t, dir, time.Minute, nil, cmd, "--workload", llama8B, "--cluster", "dgx-h100:4", "--strategy", c.strategy, "-o", "plan.json")
			if got := strings.TrimSpace(r.stderr); r.code != 2 || got != c.want {
				t.Errorf("%s --strategy %s: exit %d, %q; want exit 2, %q", cmd, c.strategy, r.code, got, c.want)
			}
		}
	}
	evalOnly := []struct {
		workload, strategy string
		want               string
	}{
		{llama8B, "dp=1", "placer: strategy dp=1: tp=1 x pp=1 x dp=1 is 1 GPU, the cluster has 32: give tp, cp and pp whose product with dp=1 is 32, or leave dp out (it is then what they leave)"},
		{llama8B, "tp=8,dp=1", "placer: strategy dp=1,tp=8: tp=8 x pp=1 x dp=1 is 8 GPUs, the cluster has 32: give tp, cp and pp whose product with dp=1 is 32, or leave dp out (it is then what they leave)"},
		{"gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=16", "dp=1", "placer: strategy dp=1: tp=1 x pp=1 x dp=1 is 1 GPU, the cluster has 32: give tp, cp and pp whose product with dp=1 is 32, or leave dp out (it is then what they leave)"},
	}
	for _, c := range evalOnly {
		r := runBinary(t, dir, time.Minute, nil, "eval", "--workload", c.workload, "--cluster", "dgx-h100:4", "--strategy", c.strategy)
		if got := strings.TrimSpace(r.stderr); r.code != 2 || got != c.want {
			t.Errorf("eval --workload %s --strategy %s: exit %d, %q; want exit 2, %q", c.workload, c.strategy, r.code, got, c.want)
		}
	}
	// What eval takes with the keys left out at their defaults, search
	// keeps with the rest searched: dp=1, and a cp or an mbs outside the
	// degrees it tries unasked (it tried none: "0 plans tried").
	for _, c := range []struct {
		cmd, workload, strategy, want string
	}{
		{"eval", llama8B, "tp=8,pp=4,dp=1", "tp=8,pp=4,dp=1,"},
		{"search", llama8B, "dp=1", ",dp=1,"},
		{"search", llama8B, "cp=2", ",cp=2,"},
		{"search", "llama3-8b:seq=4096,batch=384", "mbs=3", ",mbs=3,"},
	} {
		args := []string{c.cmd, "--workload", c.workload, "--cluster", "dgx-h100:4", "--strategy", c.strategy, "--json"}
		if c.cmd == "search" {
			args = append(args, "-q")
		}
		r := runBinary(t, dir, time.Minute, nil, args...)
		var got struct {
			Strategy string `json:"strategy"`
			Best     struct {
				Strategy string `json:"strategy"`
			} `json:"best"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil {
			t.Errorf("%s --strategy %s: exit %d, %v: %s", c.cmd, c.strategy, r.code, err, r.stderr)
			continue
		}
		if plan := got.Strategy + got.Best.Strategy; !strings.Contains(plan, c.want) {
			t.Errorf("%s --strategy %s: plan %s; want %s kept", c.cmd, c.strategy, plan, c.strategy)
		}
	}
}

// TestClusterFlagsSayWhy: an op graph's flag given at cluster scale is
// refused in one line, exit 2, that says why for that flag (--evals was
// refused because "the pod's node sets the hardware").
func TestClusterFlagsSayWhy(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"search", "--evals", "10"}, "placer: --evals does not apply to a transformer at cluster scale (--workload " + llama8B + "): the search there tries every plan of its degrees, exhaustively: it takes no budget (docs/cluster-scale.md)"},
		{[]string{"search", "--time", "5s"}, "--time does not apply to a transformer at cluster scale (--workload " + llama8B + "): the search there tries every plan of its degrees, exhaustively: it takes no budget"},
		{[]string{"search", "--method", "go"}, "--method does not apply to a transformer at cluster scale (--workload " + llama8B + "): the search there tries every plan of its degrees: it has no method, policy or baselines to choose"},
		{[]string{"search", "--lr", "0.1"}, "--lr does not apply to a transformer at cluster scale (--workload " + llama8B + "): the search there tries every plan of its degrees: it has no method, policy or baselines to choose"},
		{[]string{"eval", "--hardware", "a100"}, "--hardware does not apply to a transformer at cluster scale (--workload " + llama8B + "): the pod's node sets the hardware (--cluster PRESET:NODES)"},
		{[]string{"eval", "--fusion", "default"}, "--fusion does not apply to a transformer at cluster scale (--workload " + llama8B + "): it is an op graph's option"},
	}
	for _, c := range cases {
		args := append(c.args, "--workload", llama8B, "--cluster", "dgx-h100:4")
		r := runBinary(t, dir, time.Minute, nil, args...)
		if got := strings.TrimSpace(r.stderr); r.code != 2 || !strings.HasPrefix(strings.TrimPrefix(got, "placer: "), strings.TrimPrefix(c.want, "placer: ")) || strings.Contains(got, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line starting %q", c.args, r.code, got, c.want)
		}
	}
}

// TestEvalPlanFile: eval reads the plan file search -o wrote, by --plan
// as export does and by --placement (it was "unknown flag: --plan" and
// "--placement does not apply ..."), and costs the plan the search
// chose: the same step time.
func TestEvalPlanFile(t *testing.T) {
	dir := t.TempDir()
	r := runBinary(t, dir, time.Minute, nil, "search", "-q", "--workload", llama8B, "--cluster", "dgx-h100:4", "-o", "plan.json", "--json")
	var searched struct {
		Best struct {
			Strategy string  `json:"strategy"`
			Step     float64 `json:"step_s"`
		} `json:"best"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &searched); r.code != 0 || err != nil || searched.Best.Strategy == "" {
		t.Fatalf("search -o plan.json: exit %d, %v: %s", r.code, err, r.stderr)
	}
	for _, flag := range []string{"--plan", "--placement"} {
		r := runBinary(t, dir, time.Minute, nil, "eval", "--workload", llama8B, "--cluster", "dgx-h100:4", flag, "plan.json", "--json")
		var got struct {
			Strategy string  `json:"strategy"`
			Step     float64 `json:"step_s"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil {
			t.Errorf("eval %s plan.json: exit %d, %v: %s", flag, r.code, err, r.stderr)
			continue
		}
		if got.Strategy != searched.Best.Strategy || got.Step != searched.Best.Step {
			t.Errorf("eval %s plan.json: %s at %g s; the search's best is %s at %g s", flag, got.Strategy, got.Step, searched.Best.Strategy, searched.Best.Step)
		}
	}
	// The plan file is export's: not beside --strategy, and for its own
	// workload and cluster.
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--cluster", "dgx-h100:4", "--plan", "plan.json", "--strategy", "tp=8"}, "placer: --strategy and the plan file plan.json both give the plan: give one"},
		{[]string{"--cluster", "dgx-h100:8", "--plan", "plan.json"}, "placer: plan file plan.json: its plan is for dgx-h100:4 (32 GPUs), not for the cluster dgx-h100:8 (64 GPUs)"},
		{[]string{"--cluster", "dgx-h100:4", "--plan", "plan.json", "--placement", "round-robin"}, "placer: --plan plan.json and --placement round-robin both name the plan: give one"},
	}
	for _, c := range bad {
		r := runBinary(t, dir, time.Minute, nil, append([]string{"eval", "--workload", llama8B}, c.args...)...)
		if got := strings.TrimSpace(r.stderr); r.code == 0 || !strings.HasPrefix(got, c.want) || strings.Contains(got, "\n") {
			t.Errorf("eval %v: exit %d, %q; want one line starting %q", c.args, r.code, got, c.want)
		}
	}
}

// TestGraphFileHardware: a graph file with no --hardware is costed on
// the current GPU (h100) and the header says so (it was a V100, shown only
// as "on 2 x v100"); --hardware v100 still names the V100, and a built-in
// workload keeps its paper's V100.
func TestGraphFileHardware(t *testing.T) {
	dir := t.TempDir()
	example, err := filepath.Abs(example)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string // the header's first line
	}{
		{[]string{"eval", "--graph", example, "--gpus", "2"}, "mlp (28 ops) on 2 x h100 (nvswitch); h100: a graph file's default (--hardware)"},
		{[]string{"eval", "--graph", example, "--gpus", "2", "--hardware", "v100"}, "mlp (28 ops) on 2 x v100 (hybrid-cube-mesh)"},
		{[]string{"eval", "--graph", example, "--gpus", "2", "--hardware", "h100"}, "mlp (28 ops) on 2 x h100 (nvswitch)"},
		{[]string{"eval", "--workload", "trxl2", "--gpus", "2"}, "trxl2 (3332 ops) on 2 x v100 (hybrid-cube-mesh)"},
		{[]string{"search", "-q", "--graph", example, "--gpus", "2", "--evals", "20", "--methods", "single"}, "mlp (28 ops) on 2 x h100 (nvswitch), 80.00 GiB per device, async transfers; h100: a graph file's default (--hardware)"},
	}
	for _, c := range cases {
		r := runBinary(t, dir, time.Minute, nil, c.args...)
		first, _, _ := strings.Cut(r.stdout, "\n")
		if r.code != 0 || first != c.want {
			t.Errorf("%v: exit %d, %q; want %q (%s)", c.args, r.code, first, c.want, r.stderr)
		}
	}
}
