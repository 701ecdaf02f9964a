package opflags

import (
	"fmt"
	"strings"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/optimize"
	"github.com/spf13/pflag"
)

// Graph binds --graph, --format, --workload, --expert and the cost
// table's flags.
func Graph(f *pflag.FlagSet, g *inputs.GraphSpec) {
	GraphFile(f, g)
	f.StringVar(&g.Workload, "workload", "", "a built-in workload `NAME` (placer workloads list)")
}

// GraphFile binds --graph, --format, --expert and the cost table's
// flags.
func GraphFile(f *pflag.FlagSet, g *inputs.GraphSpec) {
	f.StringVar(&g.Path, "graph", "", "graph `FILE`")
	f.StringVar(&g.Format, "format", "", fmt.Sprintf("graph file format: %s (default: detected)", strings.Join(inputs.Formats(), ", ")))
	f.StringVar(&g.Expert, "expert", "", "the graph's expert placement, an msr-fiddle expert `FILE` ({\"fpgas\": ...}) or a decision file (default: the built-in workload's)")
	f.StringVar(&g.CostTable, "cost-table", "", "fill the graph's ops that have no measured time from this measured-cost `FILE` (torchexport --profile --cost-table; docs/import.md)")
	f.StringVar(&g.CostDevice, "cost-device", "", "with --cost-table: the device whose measurements to use (default: the table's only one)")
}

// Cluster binds --gpus, --hardware, --topology and --memory.
func Cluster(f *pflag.FlagSet, c *inputs.ClusterSpec) {
	f.IntVar(&c.GPUs, "gpus", 0, "number of GPUs (default: the placement file's, else the graph file's, else 1)")
	Hardware(f, c)
}

// Hardware binds --hardware, --topology and --memory.
func Hardware(f *pflag.FlagSet, c *inputs.ClusterSpec) {
	f.StringVar(&c.Hardware, "hardware", "", fmt.Sprintf("hardware `PRESET|FILE`: one of %s, or a profile file (default: %s for a graph file, %s for a built-in workload, the papers' GPU)", strings.Join(roofline.Presets(), ", "), roofline.GraphFileHardware, roofline.DefaultHardware))
	f.StringVar(&c.Topology, "topology", "", fmt.Sprintf("GPU interconnect: %s (default: the hardware's)", strings.Join(roofline.Topologies, ", ")))
	f.Int64Var(&c.Memory, "memory", 0, "device memory capacity in bytes (default: the hardware's)")
}

// objectiveFlag is --objective's pflag.Value.
type objectiveFlag struct{ p *optimize.Objective }

func (f objectiveFlag) String() string {
	if f.p == nil {
		return optimize.StepTime.String()
	}
	return f.p.String()
}
func (f objectiveFlag) Set(s string) error {
	o, err := optimize.ParseObjective(s)
	if err != nil {
		return err
	}
	*f.p = o
	return nil
}
func (objectiveFlag) Type() string { return "objective" }

// Objective binds --objective: what the methods minimise.
func Objective(f *pflag.FlagSet, p *optimize.Objective) {
	f.Var(objectiveFlag{p}, "objective", "what the methods minimise: step-time (under each GPU's memory; an out-of-memory decision is invalid) or peak-memory (the largest per-GPU peak, REGAL's task; over capacity is not invalid)")
}

// hostDefaultUsage is what --host's usage says of its default.
const hostDefaultUsage = "default: on for a graph that records an eager PyTorch run on a GPU (torchexport's execution settings, eval's \"run as\" line), off for the rest; --host=false for the GPU alone"

// Host binds --host and --dispatch for the commands that compare
// decisions (search, baselines): every evaluation models each GPU's host
// thread, as eval --host does for one.
func Host(f *pflag.FlagSet, on *bool, dispatch *time.Duration) {
	f.BoolVar(on, "host", false, "model each GPU's host thread dispatching its kernels in order, running ahead of the GPU, in every evaluation (strategies and pipelines included; docs/performance-model.md, The host); "+hostDefaultUsage)
	f.DurationVar(dispatch, "dispatch", 0, "with --host: the CPU time to dispatch one op, for every op (default: the graph's profiled times, else measured per class)")
}
