package worldflags

import (
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// opOpts and podOpts stand for the two products' options.
type opOpts struct {
	Workload, Strategy string
	GPUs               int
	Method             string
	Tasks              []string
}

type podOpts struct {
	Workload, Strategy, Cluster string
	GPUs                        int
}

func bindOp(f *pflag.FlagSet, o *opOpts) {
	f.StringVar(&o.Workload, "workload", "", "the workload")
	f.IntVar(&o.GPUs, "gpus", 1, "the GPUs")
	Strategy(f, "the strategy", &o.Strategy)
	Why(f, "no method there", func() { f.StringVar(&o.Method, "method", "anchored", "the search") })
	f.StringSliceVar(&o.Tasks, "tasks", []string{"placement"}, "what to learn")
}

func bindPod(f *pflag.FlagSet, o *podOpts) {
	f.StringVar(&o.Workload, "workload", "", "the workload")
	f.IntVar(&o.GPUs, "gpus", 1, "the GPUs")
	Strategy(f, "the strategy", &o.Strategy)
	f.StringVar(&o.Cluster, "cluster", "", "the pod")
}

// TestChooseHands: the command line is handed to the chosen product's
// options alone, the value typed (repeats of --strategy joined, a list
// as its items) or its binder's default; the other product's options
// hold their binder's defaults alone, nothing typed, and a flag of the other product alone is
// refused with its binder's reason or the usual one.
func TestChooseHands(t *testing.T) {
	const llama = "llama:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8"
	opDefaults := opOpts{GPUs: 1, Method: "anchored", Tasks: []string{"placement"}}
	podDefaults := podOpts{GPUs: 1}
	cases := []struct {
		args    []string
		world   inputs.World
		op      opOpts
		pod     podOpts
		refusal string
	}{
		{[]string{"--workload", "trxl2", "--gpus", "0x10", "--strategy", "dp=2", "--strategy", "mb=4", "--tasks", "placement,fusion"}, inputs.OpGraph,
			opOpts{Workload: "trxl2", GPUs: 16, Strategy: "dp=2,mb=4", Method: "anchored", Tasks: []string{"placement", "fusion"}}, podDefaults, ""},
		{[]string{"--workload", "trxl2"}, inputs.OpGraph, opOpts{Workload: "trxl2", GPUs: 1, Method: "anchored", Tasks: []string{"placement"}}, podDefaults, ""},
		{[]string{"--workload", llama, "--cluster", "dgx-h100:2", "--strategy", "tp=2"}, inputs.ClusterScale,
			opDefaults, podOpts{Workload: llama, GPUs: 1, Strategy: "tp=2", Cluster: "dgx-h100:2"}, ""},
		{[]string{"--workload", llama, "--method", "go"}, inputs.ClusterScale, opOpts{}, podOpts{},
			"--method does not apply to a transformer at cluster scale (--workload " + llama + "): no method there (docs/cluster-scale.md)"},
		{[]string{"--workload", llama, "--tasks", "fusion"}, inputs.ClusterScale, opOpts{}, podOpts{},
			"--tasks does not apply to a transformer at cluster scale (--workload " + llama + "): it is an op graph's option (a placement's, its schedule's, fusion's or evaluation's) (docs/cluster-scale.md)"},
		{[]string{"--workload", "trxl2", "--cluster", "dgx-h100:2"}, inputs.OpGraph, opOpts{}, podOpts{},
			"--cluster does not apply to an op graph: it is for a transformer at cluster scale (--workload gpt:... or llama:...)"},
	}
	for _, c := range cases {
		cmd := &cobra.Command{Use: "x"}
		var op opOpts
		var pod podOpts
		set := Bind(cmd, &op, bindOp, &pod, bindPod)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		w, err := set.Choose(cmd)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if w != c.world || got != c.refusal {
			t.Errorf("%v: world %s, error %q; want %s, %q", c.args, w, got, c.world, c.refusal)
		}
		if c.refusal != "" {
			continue
		}
		if op.Workload != c.op.Workload || op.GPUs != c.op.GPUs || op.Strategy != c.op.Strategy || op.Method != c.op.Method || strings.Join(op.Tasks, ",") != strings.Join(c.op.Tasks, ",") {
			t.Errorf("%v: op graph's options %+v, want %+v", c.args, op, c.op)
		}
		if pod != c.pod {
			t.Errorf("%v: cluster scale's options %+v, want %+v", c.args, pod, c.pod)
		}
	}
}

// TestBindRefusesTwoUsages: a flag both binders take with two usages,
// defaults or types is refused on building the command, since --help
// shows one.
func TestBindRefusesTwoUsages(t *testing.T) {
	for name, bind := range map[string]func(*pflag.FlagSet, *podOpts){
		"usage":   func(f *pflag.FlagSet, o *podOpts) { f.StringVar(&o.Workload, "workload", "", "a transformer") },
		"default": func(f *pflag.FlagSet, o *podOpts) { f.IntVar(&o.GPUs, "gpus", 8, "the GPUs") },
		"type":    func(f *pflag.FlagSet, o *podOpts) { f.StringVar(&o.Cluster, "gpus", "1", "the GPUs") },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "two usages, defaults, types or shorthands") {
					t.Errorf("%s: recovered %v, want the panic naming the flag", name, r)
				}
			}()
			Bind(&cobra.Command{Use: "x"}, new(opOpts), bindOp, new(podOpts), bind)
		}()
	}
}
