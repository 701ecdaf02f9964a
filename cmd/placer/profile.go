package main

import (
	"fmt"
	"time"

	"github.com/placer/placer/jobs"
	"github.com/spf13/cobra"
)

func init() { register(newProfileCmd) }

func newProfileCmd(s *streams) *cobra.Command {
	o := &jobs.ProfileOptions{}
	cmd := &cobra.Command{
		Use:   "profile --workload MODEL --out FILE",
		Short: "Measure a model's layer, collectives, optimizer and host here, for eval and search --profile",
		Long: `Builds one layer of the model as plain PyTorch (RMS norm, rotary, grouped-query
SDPA, SwiGLU), times its forward and backward at every shard shape the
search can choose (tensor degree with and without sequence parallelism,
micro-batch, the sequence of a context rank, recomputation), the embedding
and the loss, one AdamW step, the collectives over the processes present
(NCCL on GPUs, gloo on a CPU) and the host's issue of a kernel, and writes
the profile file (docs/profile.md) that eval and search read with
--profile. CUDA when present, else the CPU; progress on stderr. It runs
in the torch virtualenv (--python, else $TORCH_PY, else
~/.cache/placer/torch-venv). Ctrl-C keeps what was measured (complete:
false). --budget bounds it: shapes past it are left out.`,
		Example: `  placer profile --workload llama:layers=16,hidden=2048,heads=32,kv_heads=8,ffn=8192,seq=4096,vocab=128256,batch=64 --out llama1b.profile.json
  placer eval --workload llama:... --cluster dgx-h100:1 --strategy tp=2,dp=4 --profile llama1b.profile.json
  placer profile --workload llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=16 --device cpu --procs 4 --out tiny.profile.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pr, err := jobs.Profile(cmd.Context(), *o, s.Err)
			if pr != nil {
				fmt.Fprintf(s.Out, "%s: %d layer shapes, %d collectives on %d %s (%s), complete %v\n", o.Out, len(pr.Layers), len(pr.Collectives), pr.Device.Count, pr.Device.Name, pr.Software.Backend, pr.Complete)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Workload, "workload", "", "the model: `llama:...`, gpt:... or hf:config.json:...")
	f.StringVarP(&o.Out, "out", "o", "", "the profile `FILE` to write")
	f.StringVar(&o.Python, "python", "", "the `PYTHON` with torch (default $TORCH_PY, else ~/.cache/placer/torch-venv/bin/python, else python3)")
	f.StringVar(&o.Device, "device", "auto", "auto (CUDA when present), cuda or cpu")
	f.IntVar(&o.Procs, "procs", 0, "processes the collectives run over (default every GPU; a CPU 1)")
	f.IntVar(&o.Threads, "threads", 1, "torch threads a process on a CPU (a run predicted from the profile must use as many)")
	f.DurationVar(&o.Budget, "budget", 5*time.Minute, "the most the whole profile takes: shapes past it are left out")
	f.IntSliceVar(&o.TP, "tp", nil, "tensor-parallel degrees to time (default 1,2,4,8, those that divide the heads; 1 with experts)")
	f.IntSliceVar(&o.EP, "ep", nil, "with experts: expert-parallel degrees to time (default 1,2,4,8, those that divide the experts)")
	f.IntSliceVar(&o.MBS, "mbs", nil, "micro-batches to time (default 1,2,4)")
	f.IntSliceVar(&o.CP, "cp", nil, "context-parallel degrees: the sequence over each (default 1,2)")
	f.StringSliceVar(&o.Recompute, "recompute", nil, "recomputation settings to time: none, full (default both)")
	f.IntVar(&o.Repeats, "repeats", 5, "timed loops per shape (their median)")
	return cmd
}
