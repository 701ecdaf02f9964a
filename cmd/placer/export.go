package main

import (
	"bytes"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/clusterflags"
	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/jobs/export"
	"github.com/spf13/cobra"
)

func init() { register(newExportCmd) }

func newExportCmd(s *streams) *cobra.Command {
	o := &export.Options{}
	var worlds *worldflags.Set
	cmd := &cobra.Command{
		Use:   "export (--graph FILE | --workload NAME | --profile FILE) [--gpus N | --cluster PRESET:NODES] [--placement FILE] --to FORMAT",
		Short: "Write a plan for Megatron-LM, Megatron-Bridge, torchtitan, DeepSpeed, a torch plan, a module map, TensorFlow or msr-fiddle",
		Long: `Convert a placement (a decision or result file, single, round-robin, or an
msr-fiddle expert-placement file) into what a framework reads:

  tf-device-map  {op name: "/device:GPU:k"} (JSON)
  costgraph      TensorFlow CostGraphDef text with each node's device field
  msr-fiddle     msr-fiddle's expert-placement JSON {"fpgas": [{"nodes": [ids]}], "cpus": [...]}
  module-map     for graphs from tools/dev/torchexport: {module path: device}, and the
                 split points of torch.distributed.pipelining when the placement is
                 a contiguous pipeline (reads the exporter's X.meta.json beside X.json)
  torch-plan     for graphs from tools/dev/torchexport: the modules cut into contiguous
                 pipeline stages, with the strategy's replicas, micro-batches and
                 schedule; tools/dev/torchplan/torchplan.py runs it (docs/torch-plan.md)
  torchtitan     the torch plan as a torchtitan job configuration (training batch
                 sizes, parallelism degrees, schedule, micro-batch size and each
                 model part's modules, activation checkpointing); also a
                 transformer at cluster scale's plan (data-parallel replicate or
                 shard, tensor, context, expert and pipeline degrees,
                 module_fqns_per_model_part, float8 in 0.2); refused in one line
                 naming the field torchtitan has none for. torchtitan@0.3 (the
                 default, torchtitan's current release): a Python module for
                 torchtitan.train --module FILE --config placer_plan (apply_plan,
                 OVERRIDES), checked with 0.3.0; torchtitan@0.2: 0.2's TOML for
                 --job.config_file, checked with 0.2.2
  deepspeed      the torch plan as a DeepSpeed configuration (JSON: batch sizes,
                 gradient accumulation, zero_optimization.stage) and, for a
                 pipeline, FILE_pipeline.py beside it (-o FILE.json): the
                 deepspeed.pipe.PipelineModule of its stages; also a transformer at
                 cluster scale's plan of data parallelism (ZeRO 0, 1 or 3) and, with
                 experts, FILE_moe.py: DeepSpeed-MoE's deepspeed.moe.layer.MoE of the
                 plan's expert parallelism. deepspeed@0.19 (the default), checked
                 with 0.19.8
  decision       a placer decision file (to evaluate an msr-fiddle expert file)
  megatron       for a transformer at cluster scale (--workload gpt:... or llama:...
                 with --strategy): Megatron-LM's arguments for pretrain_gpt.py, a
                 bash array to source (docs/cluster-scale.md)
  megatron-bridge for a transformer at cluster scale: Megatron-Bridge 0.5.0's
                 ConfigContainer overrides (key=value, Hydra's grammar) for
                 scripts/training/run_recipe.py, a bash array to source: the
                 shape, degrees, batch, recomputation, mixed-precision recipe,
                 experts' stack, CUDA graphs, LoRA (+peft.*) and packing;
                 refused in one line naming what Bridge has no key for
                 (docs/frameworks.md)

docs/import.md describes each format and tools/dev/torchexport/placement.py applies
a module map to an nn.Module. A placement file is a decision file, a
result file (search --out) or an eval report (eval -o).

` + export.GPUsRule + `

` + export.PlanRule + `

At cluster scale the plan is costed on the software stack the framework's
file runs (docs/stacks.md: torchtitan compiled, written with compile on;
Megatron-LM's and DeepSpeed's placer's default stack): a plan costed on
another (a search for Megatron-LM written --to torchtitan) is costed again
there. Standard error says what was written, for which framework, and the
plan's step time on that stack.

torch-plan, torchtitan and deepspeed of a model whose meta file lists
train-mode modules (BatchNorm, dropout) say on standard error, in one line,
which of them the plan changes when it has replicas, micro-batches or
stages (docs/torch-plan.md, "Train mode under a plan").`,
		Example: `  placer export --graph mlp.json --placement result.json --to module-map -o mlp.modules.json
  placer export --graph gpt.json --placement result.json --to torch-plan --strategy dp=2,mb=4,schedule=1f1b -o gpt.plan.json
  placer export --graph gpt.json --placement result.json --to torchtitan -o gpt_plan.py   # torchtitan@0.2 -o gpt.toml
  placer export --graph gpt.json --placement result.json --to deepspeed -o ds_config.json   # and ds_config_pipeline.py
  placer export --workload llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=128 --gpus 64 \
      --strategy tp=4,pp=4,dp=4,vp=2,mbs=1,sp=on,fsdp=on,recompute=full --to torchtitan -o plan.py
  placer export --graph g.json --placement result.json --to tf-device-map
  placer export --graph resnet50_training.json --placement expert.json --to decision -o expert.decision.json
  # Megatron-LM's arguments for the plan a search found (docs/cluster-scale.md)
  placer search --workload hf:config.json:seq=8192,batch=256 --cluster dgx-h100:4 -o best.json
  placer export --workload hf:config.json:seq=8192,batch=256 --cluster dgx-h100:4 --plan best.json --to megatron -o plan.sh
  # or a plan written by hand
  placer export --workload gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152 \
      --cluster dgx-h100:288 --strategy tp=8,pp=6,dp=48,vp=8,mbs=1,sp=on,tpoverlap=on,distopt=on --to megatron -o gpt.megatron.sh`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.World, err = worlds.Choose(cmd); err != nil {
				return err
			}
			if err := checkExport(o); err != nil {
				return err
			}
			// To standard output, the lines saying what was written
			// follow the write, which may fail (a closed or full
			// standard output).
			var said bytes.Buffer
			o.Warn = s.Err
			if o.Out == "" {
				o.Warn = &said
			}
			out, err := export.Run(*o)
			if o.Out == "" {
				werr := err
				if err == nil {
					_, werr = s.Out.Write(out)
				}
				if werr == nil || err != nil {
					s.Err.Write(said.Bytes())
				}
				err = werr
			}
			return err
		},
	}
	// An op graph's flags are bound into its options, a transformer's at
	// cluster scale into its own, and what both export reads (the
	// placement or plan, the format, the strategy, the file) into o's;
	// the workload decides which world the command runs
	// (worldflags.Set.Choose).
	worlds = worldflags.Bind(cmd, &o.OpGraph, opflags.Export, &o.Scale, clusterflags.Export)
	f := cmd.Flags()
	f.StringVar(&o.Placement, "placement", "single", "single, round-robin, a decision/result FILE (an eval -o report too), or an msr-fiddle expert FILE")
	f.StringVar(&o.To, "to", "", "output format: "+strings.Join(export.Formats, ", ")+" (torchtitan@0.2, deepspeed@0.19: the release)")
	worldflags.Strategy(f, "torch-plan's, torchtitan's, deepspeed's, megatron's or megatron-bridge's strategy, e.g. dp=2,mb=4,schedule=1f1b or tp=8,pp=6,dp=48,sp=on (default: the placement file's); as in eval, the placement is one replica's, on GPUs / replicas GPUs", &o.Strategy)
	_ = f.SetAnnotation("profile", inputAnnotation, []string{"read"}) // read, not written
	f.StringVarP(&o.Out, "out", "o", "", "write to `FILE` (default: standard output)")
	f.StringVar(&o.Plan, "plan", "", "the plan to write: a search's -o result (its best) or an eval's -o report `FILE`, for this workload and cluster (not with --strategy at cluster scale; an op graph's as --placement)")
	return cmd
}
