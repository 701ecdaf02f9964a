package main

import (
	"fmt"
	"time"

	"github.com/placer/placer/jobs/profile"
	"github.com/spf13/cobra"
)

func init() { register(newProfileCmd) }

func newProfileCmd(s *streams) *cobra.Command {
	o := &profile.Options{}
	cmd := &cobra.Command{
		Use:   "profile (--model MODEL | --workload MODEL) --out FILE",
		Short: "Measure a model's training step op by op, or a transformer's layers, collectives and host, for eval and search --profile",
		Long: `With --model: exports the model's training step (forward, loss, backward, the
optimizer's update) as an op graph, as tools/dev/torchexport does, runs it on the
device (--steps profiled steps after --warmup) under torch.profiler and writes
an ops profile (docs/profile.md, Op graphs): the graph, each op with its
median time (on a GPU its kernels' time and its dispatch time), the GPU or
CPU, driver, CUDA and torch versions. eval, search and export read it with
--profile FILE in place of --graph: measured ops take their times, the
others the roofline's, and the report says which. MODEL is a zoo name
(mlp, cnn, resnet50, vit_b_16, bert_base, gpt2_small, ...),
package.module:factory (file.py:factory) with --input-shape, or a hub's
id with random weights, nothing downloaded: torchvision:NAME, timm:NAME,
hf:PATH/config.json.

With --workload: builds one layer of the model as plain PyTorch (RMS norm,
rotary, grouped-query SDPA, SwiGLU), times its forward and backward at every
shard shape the search can choose (tensor degree with and without sequence
parallelism, micro-batch, the sequence of a context rank, recomputation),
the embedding and the loss, one AdamW step, the collectives over the
processes present (NCCL on GPUs, gloo on a CPU) and the host's issue of a
kernel, and writes the layers profile that eval and search at cluster scale
read with --profile. --framework hf, torchtitan or megatron times the layer
that framework builds instead (transformers' decoder layer; torchtitan's
Llama 3 block, tensor-parallel through torch's DTensor with torchtitan's
plan; Megatron-Core's TransformerLayer, from Transformer Engine's spec
where it imports, else Megatron-Core's local spec, tensor-parallel over its
own groups), at the same shard shapes; the embedding and the loss stay placer's own. The
profile says whose layer it timed (software.framework, framework_version,
layer) and eval prints it.

CUDA when present, else the CPU; progress on stderr. It runs in the torch
virtualenv (--python, else $TORCH_PY, else
${XDG_CACHE_HOME:-~/.cache}/placer/torch-venv, where make deps puts it).
Every option is checked before anything runs. --budget bounds it: the
embedding, loss, optimizer and collectives first, then the layer shapes
(tp 1 at micro-batch 1 first); shapes past it are left out. Ctrl-C keeps
what was measured (complete: false). An incomplete profile never
replaces an existing --out FILE: it goes to FILE.partial (--force
replaces FILE).`,
		Example: `  placer profile --model resnet50 --batch 32 --precision bf16 --out resnet50.profile.json
  placer eval --profile resnet50.profile.json --hardware h100
  placer search --profile resnet50.profile.json --hardware h100 --gpus 2 -o result.json
  placer profile --model mlp --device cpu --out mlp.profile.json
  placer profile --model timm:convnext_tiny --batch 64 --out convnext.profile.json
  placer profile --workload llama:layers=16,hidden=2048,heads=32,kv_heads=8,ffn=8192,seq=4096,vocab=128256,batch=64 --out llama1b.profile.json
  placer eval --workload llama:... --cluster dgx-h100:1 --strategy tp=2,dp=4 --profile llama1b.profile.json
  placer profile --workload llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=16 --device cpu --procs 2 --mbs 1,2 --cp 1 --recompute none --budget 2m --out tiny.profile.json
  placer profile --workload llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=16 --framework torchtitan --device cpu --procs 2 --tp 1,2 --mbs 1 --cp 1 --recompute none --budget 2m --out tiny-titan.profile.json
  placer profile --workload llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=16 --framework hf --device cpu --mbs 1 --cp 1 --recompute none --budget 2m --out tiny-hf.profile.json
  placer profile --workload llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=16 --framework megatron --device cpu --procs 2 --tp 1,2 --mbs 1 --cp 1 --recompute none --budget 2m --out tiny-mcore.profile.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := profile.Run(cmd.Context(), *o, s.Err)
			if r != nil && r.Profile != nil {
				fmt.Fprintln(s.Out, profile.Line(r))
			}
			if r != nil {
				s.kept = r.Kept
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Model, "model", "", "the model whose training step to time op by op: a zoo `NAME` (python/placer_torch/placer_torch/zoo.py), package.module:factory (with --input-shape), torchvision:NAME, timm:NAME or hf:PATH/config.json")
	f.StringArrayVar(&o.InputShapes, "input-shape", nil, "with --model package.module:factory (or a hub's id): one example's input shape without the batch, `SHAPE[:DTYPE]` (3,224,224 or 128:int64), once per model input")
	f.IntVar(&o.Batch, "batch", 0, "with --model: the batch size (default the zoo model's, 1 for a factory)")
	f.StringVar(&o.Precision, "precision", "", "with --model: fp32 (TF32 off), tf32 (TF32 matmuls and convolutions) or bf16 (autocast over FP32 weights) (default bf16 on a GPU, fp32 on a CPU)")
	f.StringVar(&o.Loss, "loss", "", "with --model package.module:factory: cross-entropy, mse or sum (default cross-entropy)")
	f.StringVar(&o.Optimizer, "optimizer", "", "with --model: adam, adamw or sgd (default adam)")
	f.IntVar(&o.Steps, "steps", 0, "with --model: profiled steps, each op's time their median (default 5)")
	f.IntVar(&o.Warmup, "warmup", 0, "with --model: unprofiled steps before them (default 3; -1 none)")
	f.StringVar(&o.Workload, "workload", "", "the transformer whose layers to time at shard shapes: `llama:...`, gpt:... or hf:config.json:...")
	f.StringVarP(&o.Out, "out", "o", "", "the profile `FILE` to write")
	f.BoolVar(&o.Force, "force", false, "let an incomplete profile (interrupted, cut by --budget, failed) replace an existing --out file (default: it goes to FILE.partial beside it)")
	f.StringVar(&o.Python, "python", "", "the `PYTHON` with torch (default $TORCH_PY, else ${XDG_CACHE_HOME:-~/.cache}/placer/torch-venv/bin/python, else python3)")
	f.StringVar(&o.Device, "device", "auto", "auto (CUDA when present), cuda or cpu")
	f.IntVar(&o.Procs, "procs", 0, "processes the collectives run over (default every GPU; a CPU 1)")
	f.IntVar(&o.Threads, "threads", 1, "torch threads a process on a CPU (a run predicted from the profile must use as many)")
	f.DurationVar(&o.Budget, "budget", 5*time.Minute, "the most the whole profile takes: shapes (--model: steps) past it are left out")
	f.IntSliceVar(&o.TP, "tp", nil, "tensor-parallel degrees to time (default 1,2,4,8, those that divide the heads; with experts 1, above 1 with sequence parallelism)")
	f.IntSliceVar(&o.EP, "ep", nil, "with experts: expert-parallel degrees to time (default 1,2,4,8, those that divide the experts)")
	f.IntSliceVar(&o.ETP, "etp", nil, "with experts: expert-tensor-parallel degrees to time, each expert's FFN split over them (default 1 and each --tp degree)")
	f.IntSliceVar(&o.MBS, "mbs", nil, "micro-batches to time (default 1,2,4)")
	f.IntSliceVar(&o.CP, "cp", nil, "context-parallel degrees: the sequence over each (default 1,2)")
	f.StringSliceVar(&o.Recompute, "recompute", nil, "recomputation settings to time: none, full, selective (the attention core; default all three)")
	f.IntVar(&o.Repeats, "repeats", 5, "timed loops per shape (their median)")
	f.StringVar(&o.Framework, "framework", "", "with --workload: time the layer this framework builds in place of placer's own: hf (transformers' LlamaDecoderLayer, Qwen3DecoderLayer, MixtralDecoderLayer or Qwen3MoeDecoderLayer; tp 1), torchtitan (torchtitan's Llama 3 TransformerBlock; tp above 1 by DTensor with torchtitan's plan) or megatron (Megatron-Core's TransformerLayer from its TE spec where transformer_engine imports, else its local spec; tp above 1 over its groups, expert degree 1)")
	f.StringSliceVar(&o.FP8, "fp8", nil, "with --workload: FP8 `RECIPE`s (current, delayed, blockwise) each layer shape is timed under too, as eval's fp8= prices them: Transformer Engine's where it runs, else torchao's tensorwise scaling (current only); every linear but the router's, biases as the recipe adds them, and the experts' GEMMs (TE's GroupedLinear, else torchao's FP8 grouped GEMM)")
	return cmd
}
