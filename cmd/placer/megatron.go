package main

import (
	"fmt"

	"github.com/placer/placer/jobs"
	"github.com/placer/placer/report/plans"
	"github.com/spf13/cobra"
)

type megatronOptions struct {
	jobs.MegatronOptions
	JSON bool
}

func newReportMegatronCmd(s *streams) *cobra.Command {
	o := &megatronOptions{}
	cmd := &cobra.Command{
		Use:   "megatron [--plot FILE] [--json]",
		Short: "Megatron-LM's published H100 table: its throughput, placer's prediction of it, and placer's best plan",
		Long: `For each row of Megatron-LM's weak-scaling table (README, Megatron-Core
r0.8.0: GPT models of 1.7B to 462B parameters on 48 to 6,144 H100s) and for
its strong-scaling series (GPT-3 175B, 96 to 4,608 H100s): the published
TFLOP/s per GPU and MFU; placer's prediction of Megatron's own configuration
(the table's TP and PP, DP 48, micro-batch 1, sequence parallelism, the
distributed optimizer, overlapped communication); and placer's best plan
for the same model, GPUs and batch, found by searching every plan of
tensor, pipeline and data parallelism, micro-batch size, virtual stages,
sequence parallelism, recomputation and the distributed optimizer: what it
chose, its TFLOP/s and memory per GPU, its speedup over Megatron's plan in
the same model, and the search's CPU time. Then Megatron-Bridge's H100 table
(25.11: Llama 3 8B, 70B and 3.1 405B in FP8, GPT-OSS 120B, Qwen3-30B-A3B and
Qwen3-235B-A22B with expert parallelism): tokens/s per GPU published and
predicted at the stated configuration (the error counted on them), TFLOP/s
in Megatron-LM's current count, and placer's best plan at the row's
precision (docs/cluster-scale.md).`,
		Example: `  placer report megatron
  placer report megatron --plot megatron.svg --json > megatron.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := jobs.Megatron(cmd.Context(), o.MegatronOptions)
			for _, f := range rep.Plots {
				fmt.Fprintf(s.Err, "plot written to %s\n", f)
			}
			return emit(s, o.JSON, rep, func() error { return plans.WriteMegatron(s.Out, rep) }, err, true)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Plot, "plot", "", "draw TFLOP/s per GPU per row (published, predicted, placer's plan) to `FILE` (.png, .svg or .pdf), and the strong scaling's MFU to FILE-strong")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON: one object per row")
	return cmd
}
