package clusterflags

import (
	"fmt"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/export"
	"github.com/spf13/pflag"
)

// pod binds the flags of eval and search that name a transformer and the
// pod it runs on: the workload, the GPUs, the pod, its memory margin and
// a profile of its layers.
func pod(f *pflag.FlagSet, s *jobs.ScaleOptions) {
	f.StringVar(&s.Workload, "workload", "", worldflags.Workload())
	f.IntVar(&s.GPUs, "gpus", 0, worldflags.GPUs)
	f.StringVar(&s.Cluster, "cluster", "", "with a transformer (--workload gpt:..., llama:..., hf:... or a preset): the pod, `PRESET:NODES` (dgx-h100:288 is 2,304 GPUs; presets "+strings.Join(jobs.PodPresets(), ", ")+"; default: DGX H100 nodes for --gpus)")
	f.Float64Var(&s.MemoryMargin, "memory-margin", jobs.DefaultMemoryMargin, "with a transformer: the share of each GPU's memory a plan leaves free to fit, beside the CUDA context and NCCL's buffers (0 to "+fmt.Sprint(jobs.MaxMemoryMargin)+"; docs/cluster-scale.md, Memory)")
	f.StringVar(&s.Profile, "profile", "", worldflags.Profile)
}

// Eval binds eval's flags at cluster scale into s.
func Eval(f *pflag.FlagSet, s *jobs.ScaleOptions) {
	pod(f, s)
	f.StringVar(&s.Placement, "placement", "single", worldflags.EvalPlacement)
	f.StringVar(&s.PlanFile, "plan", "", worldflags.EvalPlan)
	worldflags.Strategy(f, worldflags.EvalStrategy, &s.Strat)
}

// Search binds search's flags at cluster scale into s.
func Search(f *pflag.FlagSet, s *jobs.ScaleOptions) {
	pod(f, s)
	f.StringVar(&s.For, "for", "", "at cluster scale: the framework the plan is for, "+strings.Join(jobs.SearchTargets, ", ")+" (default "+jobs.DefaultSearchTarget+"): only plans its export writes")
	worldflags.Strategy(f, "at cluster scale: what the search keeps as given, e.g. fp8=current,grads=bf16 (the run's settings) or tp=8,ep=8 (degrees); the rest is searched", &s.Strat)
	f.StringVar(&s.Tie, "tie", jobs.TieFastest, "at cluster scale: which plan of a tie (plans closer than their regime's error) the search answers with, writes to -o and exports: "+jobs.TieFastest+" (the fastest predicted) or "+jobs.TieCheapest+" (the cheapest to run: fewer GPUs, moving parts, memory)")
	f.BoolVar(&s.AllowTight, "allow-tight", false, "at cluster scale: keep plans whose memory is tight (within their regime's measured memory error of the usable memory; set aside by default, and counted)")
	// The search here is exhaustive: the seed an op graph's search
	// takes is accepted, as it always was, and has nothing to seed.
	f.Uint64Var(new(uint64), "seed", 0, worldflags.SearchSeed)
	f.StringVarP(&s.Out, "out", "o", "", worldflags.SearchOut)
}

// Export binds export's flags at cluster scale into s.
func Export(f *pflag.FlagSet, s *export.ScaleOptions) {
	f.StringVar(&s.Pod.Pod, "cluster", "", "with a transformer (--workload gpt:..., llama:..., hf:... or a preset): the pod, `PRESET:NODES` (default: DGX H100 nodes for --gpus)")
	f.BoolVar(&s.AllowOver, "allow-over", false, "at cluster scale, write a plan that does not fit the GPUs' memory, with a warning (default: refuse it)")
	f.StringVar(&s.Workload, "workload", "", worldflags.Workload())
	f.IntVar(&s.Pod.GPUs, "gpus", 0, worldflags.GPUs)
	f.StringVar(&s.Pod.Profile, "profile", "", worldflags.ExportProfile)
}
