package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/export"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

type evalOptions struct {
	jobs.EvalOptions
	JSON bool
	out  string
}

func init() { register(newEvalCmd) }

const decisionHelp = `A decision file (docs/decision-format.md) is JSON made for one graph and
cluster; slices are indexed by op, in the graph file's op order:

  {"format": "placer-decision", "version": 1, "graph": "mlp", "ops": 4,
   "devices": 2,
   "device":   [0, 0, 1, 1],      // op -> GPU
   "priority": [0, 5, 0, 1],      // optional: higher runs first among ready ops
   "fusion":   [4, 3, 2, 1]}      // optional: order in which ops try to fuse

A result file written by 'placer search --out' is accepted too.`

func newEvalCmd(s *streams) *cobra.Command {
	o := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval (--graph FILE | --workload NAME) [--gpus N | --cluster PRESET:NODES]",
		Short: "Predict one plan's training step on a cluster, or evaluate one graph's placement, schedule and fusion",
		Long: `Evaluate one decision (placement + schedule + fusion) for a graph on a cluster
with the roofline performance model: step time, lower bound, efficiency,
per-device busy time and peak memory, bytes moved, and out-of-memory.
-o and --json hold the decision evaluated (one replica's, with its
strategy): eval --placement and export --placement read that file back.

` + export.GPUsRule + `

` + decisionHelp,
		Example: `  placer eval --graph examples/mlp.json --gpus 2 --placement round-robin --fusion default
  placer eval --workload gnmt8 --gpus 8 --placement expert --trace gnmt8.trace.json
  placer eval --graph resnet.json --format msr-fiddle --gpus 4 --placement result.json --json

  # A transformer at cluster scale (docs/cluster-scale.md): Megatron's 177B row
  placer eval --workload gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152 \
      --cluster dgx-h100:288 --strategy tp=8,pp=6,dp=48,mbs=1,sp=on,tpoverlap=on,distopt=on
  # ... the plan a search wrote (placer search ... -o plan.json)
  placer eval --workload llama3-8b:seq=8192,batch=256 --cluster dgx-h100:4 --plan plan.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.OpGraph.Cluster.HardwareSet = cmd.Flags().Changed("hardware")
			o.OpGraph.HostByGraph = !cmd.Flags().Changed("host")
			var err error
			if o.World, err = chooseWorld(cmd, o.OpGraph.Graph.Workload); err != nil {
				return err
			}
			if err := checkEval(&o.EvalOptions); err != nil {
				return err
			}
			e, err := jobs.Eval(cmd.Context(), o.EvalOptions)
			if err != nil {
				return err
			}
			if o.out != "" {
				if err := atomicfile.Write(o.out, func(w io.Writer) error { return report.JSON(w, e) }); err != nil {
					return err
				}
			}
			if o.JSON {
				return report.JSON(s.Out, e)
			}
			return e.WriteText(s.Out)
		},
	}
	f := cmd.Flags()
	g, sc := &o.OpGraph, &o.Scale
	addWorldFlags(cmd, &g.Graph, &g.Cluster, sc)
	stringBoth(f, "placement", "single", "single, round-robin, expert, or a decision/result FILE (an eval -o report too); at cluster scale a plan FILE, as --plan", &g.Placement, &sc.Placement)
	stringBoth(f, "plan", "", "the plan to evaluate: a search's -o result (its best) or an eval's -o report `FILE`, for this workload and cluster, read as export reads it (not with --strategy at cluster scale; an op graph's as --placement)", &g.Plan, &sc.PlanFile)
	bindStrategy(f, "the strategy around the placement, e.g. dp=4 (data-parallel replicas; docs/decision-format.md): the placement is then one replica's, on GPUs/replicas GPUs (default: the placement file's, else one replica); at cluster scale the plan, e.g. tp=8,pp=4: keys left out take their defaults (tp, cp, pp 1, dp what they leave), a key written is kept or refused, never replaced", &g.Strategy, &sc.Strat)
	onlyIn(cmd, inputs.OpGraph, "", func() {
		f.StringVar(&g.Schedule, "schedule", "", "fifo (TensorFlow's default), or a decision/result FILE with priorities (default: the --placement file's, else fifo)")
		f.StringVar(&g.Fusion, "fusion", "", "none, default (XLA-like, topological), or a decision/result FILE with fusion priorities (default: the --placement file's, else none)")
		f.BoolVar(&g.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
		f.BoolVar(&g.HostOn, "host", false, "model each GPU's host thread dispatching its kernels in order, running ahead of the GPU (docs/performance-model.md, The host; busy % is then the GPU's share of the step); "+hostDefaultUsage)
		f.DurationVar(&g.Dispatch, "dispatch", 0, "with --host: the CPU time to dispatch one op, for every op (default: measured per class)")
		f.StringVar(&g.TF32, "tf32", "graph", "which f32 matmuls and convolutions run on TF32 tensor cores: graph (the graph's recorded PyTorch settings, torchexport --tf32-matmul/--tf32-cudnn; else the hardware's allow_tf32), on, off, matmul or conv (docs/performance-model.md)")
		f.StringVar(&g.MemoryFormat, "memory-format", "graph", "the step's activations' memory format: graph (not said: no layout transposes), nchw (PyTorch's default: cuDNN transposes each FP16/BF16 convolution's tensors to NHWC and back) or nhwc (channels-last) (docs/performance-model.md)")
		addObjectiveFlag(cmd, &g.Objective)
		f.StringVar(&g.Trace, "trace", "", "write a Chrome trace-event timeline (Perfetto, chrome://tracing) to `FILE`")
		f.BoolVar(&g.Measure, "measure", false, "also run the decision on the GPUs present and print measured beside predicted (needs a binary built with make cuda)")
		f.IntVar(&g.Repeats, "repeats", 5, "timed runs with --measure (after one discarded warm-up)")
	})
	f.BoolVar(&o.JSON, "json", false, "print the report as one JSON object")
	addOut(cmd, &o.out, "also write the report as JSON to `FILE`")
	return cmd
}

// gpusUsage is --gpus in the commands that take a strategy around a
// placement (eval, search, export): export.GPUsRule in a line.
const gpusUsage = "every GPU of the cluster: a strategy of R replicas places one replica's placement on GPUs / R of them (default: the placement file's replica GPUs x R, else the graph file's GPUs, else 1)"

// addWorldFlags binds the flags of eval and search that name the workload
// and what it runs on, each into the options of the world it applies to:
// an op graph's graph file and its cost table (g), its GPUs' hardware
// (c), a transformer's pod (s), and in both worlds the workload, the GPUs
// and the profile.
func addWorldFlags(cmd *cobra.Command, g *inputs.GraphSpec, c *inputs.ClusterSpec, s *jobs.ScaleOptions) {
	f := cmd.Flags()
	onlyIn(cmd, inputs.OpGraph, "", func() { addGraphFileFlags(cmd, g) })
	stringBoth(f, "workload", "", workloadForms(), &g.Workload, &s.Workload)
	intBoth(f, "gpus", 0, gpusUsage, &c.GPUs, &s.GPUs)
	onlyIn(cmd, inputs.OpGraph, whyNoHardware, func() { addHardwareFlags(cmd, c) })
	onlyIn(cmd, inputs.ClusterScale, "", func() {
		f.StringVar(&s.Cluster, "cluster", "", "with a transformer (--workload gpt:..., llama:..., hf:... or a preset): the pod, `PRESET:NODES` (dgx-h100:288 is 2,304 GPUs; presets "+strings.Join(jobs.PodPresets(), ", ")+"; default: DGX H100 nodes for --gpus)")
		f.Float64Var(&s.MemoryMargin, "memory-margin", jobs.DefaultMemoryMargin, "with a transformer: the share of each GPU's memory a plan leaves free to fit, beside the CUDA context and NCCL's buffers (0 to "+fmt.Sprint(jobs.MaxMemoryMargin)+"; docs/cluster-scale.md, Memory)")
	})
	stringBoth(f, "profile", "", "price what this profile `FILE` measured (placer profile; docs/profile.md): a model's ops (--model's profile, which holds its graph: no --graph), or with a transformer its layers, collectives, optimizer and host (a CPU profile's pod is --cluster cpu)", &c.Profile, &s.Profile)
	_ = f.SetAnnotation("profile", inputAnnotation, []string{"read"}) // read, not written
}

// workloadForms is --workload's help on the commands that plan a
// transformer at cluster scale too (eval, search, export): every form
// --workload takes.
func workloadForms() string {
	return "the workload `NAME`: a built-in op graph (gnmt8, trxl2, ...), or a transformer at cluster scale: " +
		"a preset with its run (" + strings.Join(jobs.PresetNames(), ", ") + ", e.g. llama3-8b:seq=8192,batch=256), " +
		"gpt:KEYS or llama:KEYS (layers, hidden, heads, seq, vocab, batch, ...) or hf:PATH/config.json:seq=N,batch=N " +
		"(placer workloads list; docs/cluster-scale.md)"
}

// addGraphFlags binds --graph, --format, --workload, --expert and the
// cost table's flags.
func addGraphFlags(cmd *cobra.Command, g *inputs.GraphSpec) {
	addGraphFileFlags(cmd, g)
	cmd.Flags().StringVar(&g.Workload, "workload", "", "a built-in workload `NAME` (placer workloads list)")
}

// addGraphFileFlags binds --graph, --format, --expert and the cost
// table's flags.
func addGraphFileFlags(cmd *cobra.Command, g *inputs.GraphSpec) {
	f := cmd.Flags()
	f.StringVar(&g.Path, "graph", "", "graph `FILE`")
	f.StringVar(&g.Format, "format", "", fmt.Sprintf("graph file format: %s (default: detected)", strings.Join(inputs.Formats(), ", ")))
	f.StringVar(&g.Expert, "expert", "", "the graph's expert placement, an msr-fiddle expert `FILE` ({\"fpgas\": ...}) or a decision file (default: the built-in workload's)")
	f.StringVar(&g.CostTable, "cost-table", "", "fill the graph's ops that have no measured time from this measured-cost `FILE` (torchexport --profile --cost-table; docs/import.md)")
	f.StringVar(&g.CostDevice, "cost-device", "", "with --cost-table: the device whose measurements to use (default: the table's only one)")
}

// addClusterFlags binds --gpus, --hardware, --topology and --memory.
func addClusterFlags(cmd *cobra.Command, c *inputs.ClusterSpec) {
	cmd.Flags().IntVar(&c.GPUs, "gpus", 0, "number of GPUs (default: the placement file's, else the graph file's, else 1)")
	addHardwareFlags(cmd, c)
}

// addHardwareFlags binds --hardware, --topology and --memory.
func addHardwareFlags(cmd *cobra.Command, c *inputs.ClusterSpec) {
	f := cmd.Flags()
	f.StringVar(&c.Hardware, "hardware", "", fmt.Sprintf("hardware `PRESET|FILE`: one of %s, or a profile file (default: %s for a graph file, %s for a built-in workload, the papers' GPU)", strings.Join(roofline.Presets(), ", "), roofline.GraphFileHardware, roofline.DefaultHardware))
	f.StringVar(&c.Topology, "topology", "", fmt.Sprintf("GPU interconnect: %s (default: the hardware's)", strings.Join(roofline.Topologies, ", ")))
	f.Int64Var(&c.Memory, "memory", 0, "device memory capacity in bytes (default: the hardware's)")
}
