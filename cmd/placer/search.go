package main

import (
	"fmt"

	"github.com/placer/placer/cmd/placer/internal/clusterflags"
	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/export"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/methods/gdp"
	"github.com/spf13/cobra"
)

type searchOptions struct {
	op    opflags.Search    // an op graph's
	scale jobs.ScaleOptions // a transformer's at cluster scale
	JSON  bool
	quiet bool
}

func init() { register(newSearchCmd) }

func newSearchCmd(s *streams) *cobra.Command {
	o := &searchOptions{}
	var worlds *worldflags.Set
	cmd := &cobra.Command{
		Use:   "search (--workload NAME | --graph FILE) [--gpus N | --cluster PRESET:NODES]",
		Short: "Find the fastest plan of a transformer that fits a cluster's GPUs, or the best placement of one graph's ops",
		Long: `The cluster planner: a transformer (--workload llama3-8b:seq=8192,batch=256,
a preset with its run; hf:PATH/config.json:seq=...,batch=...; or by its
shape, gpt:layers=...,hidden=...,heads=...,seq=...,vocab=...,batch=... or
llama:...) on a pod of nodes (--cluster dgx-h100:NODES, or --gpus N) is
planned at cluster scale: every plan of tensor, pipeline and data parallelism, micro-batch size,
virtual stages, sequence parallelism, recomputation and the distributed
optimizer is evaluated, and the fastest that fits is the answer. --strategy
keeps what it names as given and searches the rest (a key no plan can keep,
tp=3 for 32 heads say, is refused before searching, with eval's line): the run's settings
(fp8=current|delayed|blockwise, grads=bf16, imbalance=F, fsdp=on, which
the search does not choose for you) or any degree of the plan. --for
names the framework the plan is for, and the search proposes only plans
its export (placer export --to) writes: megatron (the default: one
tensor-parallel degree for every stage, end stages of first= or last=
layers a multiple of the virtual stages, and the splits counting the
embedding and the loss as layers beside them), megatron-bridge (the same
plans as a Megatron-Bridge recipe's overrides; the one export that runs
LoRA, --strategy peft=lora), torchtitan (0.3's config module, or @0.2's
TOML), deepspeed (0.19: data parallelism under ZeRO, DeepSpeed-MoE's
experts), or any (every plan placer models, stage-tp included). Every
plan is costed on the software stack that framework's file runs, which
the "stack" line (and "stack" in --json and -o's file) names: placer's
default (Megatron-Core, Transformer Engine's fused kernels) for megatron,
megatron-bridge and deepspeed, torchtitan compiled for torchtitan
(stack=torchtitan-0.2,compile=on; compile=off for its eager run); a
stack= or compile= in --strategy that the framework does not run is
refused (docs/stacks.md).

The op-level placer: for one computation graph (the papers' workloads,
--graph FILE, a PyTorch model's training step) on one cluster, search finds
the best decision placer can: where each op runs, in what order, and what
fuses. The quick baselines run first (with
their compositions, their decisions on fewer GPUs and fusion variants); then
the search (--method, default ` + anchored.DefaultMethod + `: anchored local search whose
moves a learned head picks) starts from the best of them. The answer is never
worse than a row of the comparison table printed at the end: when the search
does not improve on the best row, that row's decision is the result.

When the graph records its batch (PyTorch exports, built-in workloads), the
table also has the strategies users run (ddp, fsdp, gpipe, 1f1b, pipedream),
and three quarters of the budget go to the joint space: replicas, micro-
batches, pipeline schedule, sharding and DDP's bucket around one replica's
searched placement, order and fusion (rows "go-scored dp=2,mb=8,...").
For a graph from PyTorch whose meta file lists train-mode modules
(BatchNorm, dropout), a line after the summary (and --json's train_mode)
names those the answer's plan changes.

` + export.GPUsRule + `

Budget: --evals (default ` + fmt.Sprint(methods.DefaultSearchEvaluations) + `), --cpu (this process's CPU time), --time
(wall time) or --steps, whichever is spent first; with --evals or --steps
the same seed gives the same answer. --method go trains the GO/GDP policy
with PPO (GO-one; default 100 steps). Ctrl-C stops the search and still
writes the best result.

The result file (--out) holds the decision, its step time and memory, the
search statistics, the seed and the curve; 'placer eval --placement
result.json' reproduces its step time exactly. --rows DIR writes every
row's decision the same way, one file per row (DIR/ddp.json,
DIR/go-scored_dp=2,shard=fsdp.json, ...), and the index DIR/rows.json:
each row's method, step time, strategy and file, or why it has none, and
which row's decision the answer is.`,
		Example: `  # A transformer at cluster scale: the fastest plan of tensor, pipeline and
  # data parallelism that fits (docs/cluster-scale.md)
  placer search --workload llama3-8b:seq=8192,batch=256 --cluster dgx-h100:4 -o plan.json
  placer search --workload gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152 --cluster dgx-h100:288
  # ... in FP8 with BF16 gradients, tensor parallelism 2
  placer search --workload qwen3-235b-a22b:seq=4096,batch=2048 --cluster dgx-h100:32 --strategy fp8=current,grads=bf16,tp=2

  # One graph's ops: placement, order and fusion
  placer search --workload trxl2 --gpus 2 --out trxl2.json --plot trxl2.svg
  placer search --workload gnmt8 --gpus 8 --cpu 5m --out gnmt8.json
  placer search --graph g.json --gpus 4 --method go --steps 200 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := worlds.Choose(cmd)
			if err != nil {
				return err
			}
			o.op.Cluster.HardwareSet = cmd.Flags().Changed("hardware")
			o.op.Flags.HostSet = cmd.Flags().Changed("host")
			if err := parseSearchFlags(w, &o.op, o.scale.Strat); err != nil {
				return err
			}
			if !o.quiet {
				o.op.Progress = s.Err
				bar := &lazyBar{w: s.Err, what: "search"}
				o.op.OnStep = func(pt gdp.Point, ref float64, done, total int, unit string) {
					bar.unit = unit
					bar.step(total, done, searchStep(pt, ref))
				}
				defer bar.finish()
			}
			rep, err := jobs.Search(cmd.Context(), jobs.SearchOptions{World: w, OpGraph: o.op.GraphSearchOptions, Scale: o.scale})
			have, out := rep.Found()
			s.kept = keptResult("best result", out, have)
			err = emit(s, o.JSON, rep, func() error { return rep.WriteText(s.Out) }, err, !have)
			if sr, ok := rep.(jobs.SearchReport); ok {
				return oomFails(err, sr.Result.OOM)
			}
			return err
		},
	}
	// An op graph's flags are bound into its options, a transformer's at
	// cluster scale into its own; the workload decides which the command
	// runs (worldflags.Set.Choose).
	worlds = worldflags.Bind(cmd, &o.op, opflags.BindSearch, &o.scale, clusterflags.Search)
	f := cmd.Flags()
	_ = f.SetAnnotation("profile", inputAnnotation, []string{"read"}) // read, not written
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}
