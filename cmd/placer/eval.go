package main

import (
	"io"

	"github.com/placer/placer/cmd/placer/internal/clusterflags"
	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/cmd/placer/internal/worldflags"
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
	var worlds *worldflags.Set
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
			var err error
			if o.World, err = worlds.Choose(cmd); err != nil {
				return err
			}
			o.OpGraph.Cluster.HardwareSet = cmd.Flags().Changed("hardware")
			o.OpGraph.HostByGraph = !cmd.Flags().Changed("host")
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
	// An op graph's flags are bound into its options, a transformer's at
	// cluster scale into its own; the workload decides which the command
	// runs (worldflags.Set.Choose).
	worlds = worldflags.Bind(cmd, &o.OpGraph, opflags.Eval, &o.Scale, clusterflags.Eval)
	f := cmd.Flags()
	_ = f.SetAnnotation("profile", inputAnnotation, []string{"read"}) // read, not written
	f.BoolVar(&o.JSON, "json", false, "print the report as one JSON object")
	addOut(cmd, &o.out, "also write the report as JSON to `FILE`")
	return cmd
}
