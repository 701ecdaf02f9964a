package main

import (
	"github.com/placer/placer/jobs/layers"
	"github.com/placer/placer/report/plans"
	"github.com/spf13/cobra"
)

type layersOptions struct {
	layers.LayersOptions
	JSON bool
}

func newReportLayersCmd(s *streams) *cobra.Command {
	o := &layersOptions{}
	cmd := &cobra.Command{
		Use:   "layers --measured FILE [--kernelbench FILE] [--cluster POD] [--json]",
		Short: "Transformer blocks measured on a GPU against placer's prediction of them, and the GEMM efficiency they give",
		Long: `Reads blocks measured on one GPU, one JSON object a line (the layers file of
../shared/data/h100, or tools/measure/layerbench --json), and prints each block's
measured forward and backward time beside placer's prediction of it at the
pod's kernels (the cluster-scale model's layer_forward_s + layer_backward_s),
with the error; then the GEMM efficiency that makes the blocks closest to
their measurements, every other kernel as the pod costs it, and each
block's error at that efficiency and at the one the other blocks give
(leave one out). The dgx-h100 pod's GEMM efficiency is this fit on the
layers file of 2026-11-25 (docs/cluster-scale.md).

With --kernelbench, a file of tools/measure/kernelbench (its between section): each
row's whole training step on one GPU without communication (the
micro-batches' embedding, blocks, output layer and cross-entropy), what
the step has besides its blocks, and its parts (the output layer with
the cross-entropy, the embedding, Adam over the distributed optimizer's
shard), measured against placer's prediction of the same work.`,
		Example: `  placer report layers --measured ../shared/data/h100/layers-2026-11-25.jsonl
  python3 tools/measure/layerbench/layerbench.py --json > blocks.jsonl && placer report layers --measured blocks.jsonl --json
  placer report layers --kernelbench measurements/2026-11-26-h100/kernelbench.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := layers.Layers(o.LayersOptions)
			return emit(s, o.JSON, rep, func() error { return plans.WriteLayers(s.Out, rep) }, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Measured, "measured", "", "the measured blocks, one JSON object a line (`FILE`)")
	f.StringVar(&o.Steps, "kernelbench", "", "a kernelbench file whose whole one-GPU steps are checked too (`FILE`)")
	f.StringVar(&o.Cluster, "cluster", "", "the pod whose kernels predict them (default dgx-h100)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
}
