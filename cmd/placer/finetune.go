package main

import (
	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs"
	"github.com/spf13/cobra"
)

func init() { register(newFinetuneCmd) }

func newFinetuneCmd(s *streams) *cobra.Command {
	o := &transferOptions{}
	cmd := &cobra.Command{
		Use:   "finetune [--model MODEL] (--workload NAME | --graph FILE) [--gpus N]",
		Short: "Fine-tune a pre-trained GO policy on one graph with PPO (under 50 steps)",
		Long: `Fine-tune a pre-trained model on one graph (GDP §4.3: fewer than 50 steps):
the GO-one search of 'placer search', started from the model's weights
instead of a new policy, with no imitation warm-up by default. The quick
baselines run first; the best valid one normalizes the reward and anchors
the refinement. The comparison table gets the go-finetune row, and --out
writes a result file (with the learning curve) as 'placer search' does.
Ctrl-C stops and still writes the best result.

Without --model the default model built into placer is used ('make
default-model' trains it). The model must decide the tasks asked for.`,
		Example: `  placer finetune --model m.policy --workload trxl4 --gpus 4 --steps 50 --out trxl4.json
  placer finetune --graph g.json --gpus 2 --time 60s --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opflags.ParseFinetune(&o.TransferOptions, opflags.FinetuneFlags{PPO: o.ppo, StepsGiven: cmd.Flags().Changed("steps")}); err != nil {
				return err
			}
			bar := &lazyBar{w: s.Err, what: "finetune"}
			o.progress(s, &bar)
			rep, err := jobs.Finetune(cmd.Context(), o.TransferOptions)
			bar.finish() // before the table
			return o.write(s, rep, err, "go-finetune")
		},
	}
	o.flags(cmd, true)
	return cmd
}
