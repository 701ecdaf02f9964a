package opflags

import (
	"fmt"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/export"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/spf13/pflag"
)

// Why an op graph's flags do not apply at cluster scale, where the
// reason is not that they are an op graph's options.
const (
	whyNoMethod   = "the search there tries every plan of its degrees: it has no method, policy or baselines to choose"
	whyNoBudget   = "the search there tries every plan of its degrees, exhaustively: it takes no budget"
	whyNoHardware = "the pod's node sets the hardware (--cluster PRESET:NODES)"
)

// inputsOf binds the flags of eval and search that name an op graph and
// what it runs on: its graph file and cost table, the workload, the GPUs
// and their hardware, and an ops profile.
func inputsOf(f *pflag.FlagSet, g *inputs.GraphSpec, c *inputs.ClusterSpec) {
	GraphFile(f, g)
	f.StringVar(&g.Workload, "workload", "", worldflags.Workload())
	f.IntVar(&c.GPUs, "gpus", 0, worldflags.GPUs)
	worldflags.Why(f, whyNoHardware, func() { Hardware(f, c) })
	f.StringVar(&c.Profile, "profile", "", worldflags.Profile)
}

// Eval binds eval's flags for an op graph into g.
func Eval(f *pflag.FlagSet, g *jobs.GraphEvalOptions) {
	inputsOf(f, &g.Graph, &g.Cluster)
	f.StringVar(&g.Placement, "placement", "single", worldflags.EvalPlacement)
	f.StringVar(&g.Plan, "plan", "", worldflags.EvalPlan)
	worldflags.Strategy(f, worldflags.EvalStrategy, &g.Strategy)
	f.StringVar(&g.Schedule, "schedule", "", "fifo (TensorFlow's default), or a decision/result FILE with priorities (default: the --placement file's, else fifo)")
	f.StringVar(&g.Fusion, "fusion", "", "none, default (XLA-like, topological), or a decision/result FILE with fusion priorities (default: the --placement file's, else none)")
	f.BoolVar(&g.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	f.BoolVar(&g.HostOn, "host", false, "model each GPU's host thread dispatching its kernels in order, running ahead of the GPU (docs/performance-model.md, The host; busy % is then the GPU's share of the step); "+hostDefaultUsage)
	f.DurationVar(&g.Dispatch, "dispatch", 0, "with --host: the CPU time to dispatch one op, for every op (default: measured per class)")
	f.StringVar(&g.TF32, "tf32", "graph", "which f32 matmuls and convolutions run on TF32 tensor cores: graph (the graph's recorded PyTorch settings, torchexport --tf32-matmul/--tf32-cudnn; else the hardware's allow_tf32), on, off, matmul or conv (docs/performance-model.md)")
	f.StringVar(&g.MemoryFormat, "memory-format", "graph", "the step's activations' memory format: graph (not said: no layout transposes), nchw (PyTorch's default: cuDNN transposes each FP16/BF16 convolution's tensors to NHWC and back) or nhwc (channels-last) (docs/performance-model.md)")
	Objective(f, &g.Objective)
	f.StringVar(&g.Trace, "trace", "", "write a Chrome trace-event timeline (Perfetto, chrome://tracing) to `FILE`")
	f.BoolVar(&g.Measure, "measure", false, "also run the decision on the GPUs present and print measured beside predicted (needs a binary built with make cuda)")
	f.IntVar(&g.Repeats, "repeats", 5, "timed runs with --measure (after one discarded warm-up)")
}

// Search is search's flags for an op graph: its options, and the flags
// read into them when the command runs (SearchFlags).
type Search struct {
	jobs.GraphSearchOptions
	Flags SearchFlags
}

// SearchFlags are the search's flags for an op graph besides those bound
// straight into its options.
type SearchFlags struct {
	Methods string
	Train   Train
	Measure bool
	Repeats int
	// HostSet says --host was given.
	HostSet bool
}

// BindSearch binds search's flags for an op graph into s.
func BindSearch(f *pflag.FlagSet, s *Search) {
	g := &s.GraphSearchOptions
	inputsOf(f, &g.Graph, &g.Cluster)
	worldflags.Why(f, whyNoMethod, func() {
		f.StringVar(&g.Tasks, "tasks", "placement,scheduling,fusion", "what to learn: any of placement, scheduling, fusion (the rest keep TensorFlow's defaults)")
		f.StringVar(&g.Method, "method", anchored.DefaultMethod, "the search: "+strings.Join(methods.Searches(), ", "))
		f.IntVar(&g.Samples, "samples", 16, "go: decisions sampled per step (the rollout size K)")
		f.StringVar(&s.Flags.Methods, "methods", "", "baselines to run first, comma-separated (default: "+strings.Join(methods.Quick(), ",")+")")
		f.IntVar(&g.Budget, "budget", 0, "evaluation budget of search baselines in --methods (default 5000)")
		f.IntVar(&g.Warmup, "warmup", 0, "go: most imitation steps on the reference before PPO (default 200; -1 = none)")
		BindTrain(f, &s.Flags.Train)
	})
	worldflags.Why(f, whyNoBudget, func() {
		f.IntVar(&g.Evals, "evals", 0, fmt.Sprintf("stop the search after this many evaluations (default %d when no budget is named)", methods.DefaultSearchEvaluations))
		f.DurationVar(&g.CPU, "cpu", 0, "stop the search after this much CPU time of this process (e.g. 60s, 5m)")
		f.DurationVar(&g.Time, "time", 0, "stop the search after this wall time (e.g. 90s, 30m)")
		f.IntVar(&g.Steps, "steps", 0, "stop after this many steps (go: PPO steps, default 100; other searches: rounds)")
	})
	f.IntVar(&g.Stages, "stages", 0, "for a graph from PyTorch (X.meta.json beside it): cut every plan whose replica has at least `N` GPUs into exactly N pipeline stages (default: as many as keep the most work where the placement put it)")
	f.BoolVar(&g.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	Host(f, &g.HostOn, &g.Dispatch)
	Objective(f, &g.Objective)
	f.StringVar(&g.Rows, "rows", "", "write every row's decision to folder `DIR`: DIR/METHOD.json for each row (the --out format, which eval and export read) and the index DIR/rows.json")
	f.StringVar(&g.Trace, "trace", "", "write a Chrome trace of the best decision to `FILE`")
	f.StringVar(&g.Plot, "plot", "", "plot the best step time (ms) against evaluations to `FILE` (.png, .svg or .pdf)")
	f.BoolVar(&s.Flags.Measure, "measure", false, "score every decision on this machine's GPUs instead of the roofline model (bin/placer-cuda)")
	f.IntVar(&s.Flags.Repeats, "repeats", 5, "timed runs per measured decision, with --measure")
	f.Uint64Var(&g.Seed, "seed", 0, worldflags.SearchSeed)
	f.StringVarP(&g.Out, "out", "o", "", worldflags.SearchOut)
}

// Export binds export's flags for an op graph into g.
func Export(f *pflag.FlagSet, g *export.GraphOptions) {
	GraphFile(f, &g.Graph)
	f.StringVar(&g.Meta, "meta", "", "the exporter's meta `FILE` for module-map and torch-plan (default: the graph's X.meta.json)")
	f.IntVar(&g.Stages, "stages", 0, "torch-plan, torchtitan, deepspeed: cut the placement into exactly `N` pipeline stages (default: as many as keep the most work where the placement put it)")
	f.StringVar(&g.Graph.Workload, "workload", "", worldflags.Workload())
	f.IntVar(&g.Cluster.GPUs, "gpus", 0, worldflags.GPUs)
	f.StringVar(&g.Cluster.Profile, "profile", "", worldflags.ExportProfile)
}
