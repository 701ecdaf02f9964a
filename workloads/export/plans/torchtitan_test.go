package plans

import (
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestTorchTitanTransformer: a transformer's plan as torchtitan 0.2's job
// configuration, written by hand from torchtitan 0.2.2's job_config.py
// (after the header's comment lines; tools/dev/frameworks checks such files
// with torchtitan's own code), and each refusal naming its field.
func TestTorchTitanTransformer(t *testing.T) {
	llama, err := transformer.Parse("llama:layers=8,hidden=64,heads=4,seq=16,vocab=128,batch=32")
	if err != nil {
		t.Fatal(err)
	}
	moe, err := transformer.Parse("llama:layers=4,hidden=32,heads=4,seq=8,vocab=64,batch=16,experts=8,topk=2,expert_ffn=64")
	if err != nil {
		t.Fatal(err)
	}
	odd, err := transformer.Parse("llama:layers=8,hidden=64,heads=4,seq=16,vocab=128,batch=20")
	if err != nil {
		t.Fatal(err)
	}
	short, err := transformer.Parse("llama:layers=8,hidden=64,heads=4,seq=12,vocab=128,batch=32")
	if err != nil {
		t.Fatal(err)
	}
	full := plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, Virtual: 2, MicroBatchSize: 2, MicroBatches: 8,
		SequenceParallel: true, TPOverlap: true, FSDP: true, Recompute: plan.FullRecompute, FirstLayers: 2, LastLayers: 6, FP8: plan.FP8Current}
	with := func(f func(*plan.Strategy)) plan.Strategy { s := full; f(&s); return s }
	cases := []struct {
		name string
		m    transformer.Spec
		s    plan.Strategy
		gpus int
		want string
	}{
		// Stages of 2 and 6 layers in 2 chunks each: model parts of 1, 3,
		// 1, 3 layers (part j = v x 2 + d), parts 0 and 2 on pipeline rank
		// 0 (2 layers), 1 and 3 on rank 1 (6 layers). torchtitan 0.2.2 has
		// module_fqns_per_model_part where this was
		// pipeline_parallel_split_points (0.1's field, which 0.2.2
		// refuses), the float8 converter named quantize.linear.float8 with
		// its [quantize.linear.float8] table (0.1's was float8, [float8]),
		// and compile as [compile] enable (0.1's [training] compile).
		{"everything", llama, full, 8, `[model]
converters = ["quantize.linear.float8"]

[quantize.linear.float8]
recipe_name = "tensorwise"

[training]
local_batch_size = 16
global_batch_size = 32
seq_len = 16

[compile]
enable = true  # async tensor parallelism takes effect only compiled

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = 2
tensor_parallel_degree = 2
enable_async_tensor_parallel = true
context_parallel_degree = 1
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_microbatch_size = 2
module_fqns_per_model_part = [
  ["tok_embeddings", "layers.0"],
  ["layers.1", "layers.2", "layers.3"],
  ["layers.4"],
  ["layers.5", "layers.6", "layers.7", "norm", "output"],
]

[activation_checkpoint]
mode = "full"
`},
		{"ddp", llama, plan.Strategy{Replicas: 8, MicroBatchSize: 4}, 8, `[training]
local_batch_size = 4
global_batch_size = 32
seq_len = 16

[parallelism]
data_parallel_replicate_degree = 8
data_parallel_shard_degree = 1
tensor_parallel_degree = 1
context_parallel_degree = 1
pipeline_parallel_degree = 1

[activation_checkpoint]
mode = "none"
`},
		// compile=on: the plan placer costed as compiled layers, written
		// compiled.
		{"compiled", llama, plan.Strategy{Replicas: 8, MicroBatchSize: 4, Software: plan.Software{Stack: "torchtitan-0.2", Compile: plan.On}}, 8, `[training]
local_batch_size = 4
global_batch_size = 32
seq_len = 16

[compile]
enable = true  # compile=on: the layers compiled, as placer costed them

[parallelism]
data_parallel_replicate_degree = 8
data_parallel_shard_degree = 1
tensor_parallel_degree = 1
context_parallel_degree = 1
pipeline_parallel_degree = 1

[activation_checkpoint]
mode = "none"
`},
		// With fsdp=on: torchtitan 0.2.2's llama3 runs plain data
		// parallelism only alone (the dp=2 pipeline without it is refused
		// below).
		{"gpipe, even", llama, plan.Strategy{Pipeline: 4, Replicas: 2, MicroBatchSize: 1, MicroBatches: 16, Schedule: decision.GPipe, FSDP: true}, 8, `[training]
local_batch_size = 16
global_batch_size = 32
seq_len = 16

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = 2
tensor_parallel_degree = 1
context_parallel_degree = 1
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "GPipe"
pipeline_parallel_microbatch_size = 1
module_fqns_per_model_part = [
  ["tok_embeddings", "layers.0", "layers.1"],
  ["layers.2", "layers.3"],
  ["layers.4", "layers.5"],
  ["layers.6", "layers.7", "norm", "output"],
]

[activation_checkpoint]
mode = "none"
`},
		// Two micro-batches of 1 a rank without a pipeline: torchtitan
		// accumulates global / (local x 8) = 2 of local_batch_size 1.
		{"experts over the shard ranks", moe, plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, Experts: 4}, 8, `[training]
local_batch_size = 1
global_batch_size = 16
seq_len = 8

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = 8
tensor_parallel_degree = 1
context_parallel_degree = 1
expert_parallel_degree = 4
pipeline_parallel_degree = 1

[activation_checkpoint]
mode = "none"
`},
		// torchtitan 0.2.2's mixed_precision_reduce is Literal["float32"]:
		// "bfloat16" (written before) is not one of its values.
		{"experts, gradients reduced in bf16", moe, plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, Experts: 4, GradBF16: true}, 8, "training.mixed_precision_reduce: grads=bf16: torchtitan 0.2 reduces in float32 only"},
		{"all-to-alls overlapped", moe, plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, Experts: 4, EPOverlap: true}, 8, "epoverlap=on"},
		{"bf16 gradients without fsdp", llama, plan.Strategy{Replicas: 8, MicroBatchSize: 4, GradBF16: true}, 8, "training.mixed_precision_reduce: grads=bf16"},
		{"gpus", llama, full, 16, "is not the 16 GPUs"},
		{"batch", llama, with(func(s *plan.Strategy) { s.MicroBatchSize = 3 }), 8, "training.local_batch_size"},
		{"distopt", llama, with(func(s *plan.Strategy) { s.FSDP, s.DistOpt = false, true }), 8, "parallelism.data_parallel_shard_degree: distopt=on"},
		{"sp off", llama, with(func(s *plan.Strategy) { s.SequenceParallel, s.TPOverlap = false, false }), 8, "parallelism.tensor_parallel_degree"},
		{"selective", llama, with(func(s *plan.Strategy) { s.Recompute = plan.SelectiveRecompute }), 8, "activation_checkpoint.mode: recompute=selective"},
		{"block", llama, with(func(s *plan.Strategy) { s.RecomputeLayers = 1 }), 8, "activation_checkpoint.mode: recompute-layers=1"},
		{"gpipe interleaved", llama, with(func(s *plan.Strategy) { s.Schedule = decision.GPipe }), 8, "parallelism.pipeline_parallel_schedule"},
		{"fp8 delayed", llama, with(func(s *plan.Strategy) { s.FP8 = plan.FP8Delayed }), 8, "quantize.linear.float8.recipe_name: fp8=delayed"},
		{"uneven chunks", llama, with(func(s *plan.Strategy) { s.FirstLayers, s.LastLayers = 3, 5 }), 8, "stage 0's 3 layers do not split into 2"},
		{"stage-tp", llama, plan.Strategy{TensorStages: []int{2, 4}, Pipeline: 2, Replicas: 1, MicroBatchSize: 1, SequenceParallel: true}, 6, "parallelism.tensor_parallel_degree: stage-tp"},
		{"experts beside tp", moe, plan.Strategy{Tensor: 2, Replicas: 4, MicroBatchSize: 1, SequenceParallel: true, FSDP: true, Experts: 4}, 8, "parallelism.expert_parallel_degree: ep=4 beside tp=2"},
		{"ddp beside pp", llama, plan.Strategy{Pipeline: 4, Replicas: 2, MicroBatchSize: 1, MicroBatches: 16}, 8, "parallelism.data_parallel_replicate_degree: dp=2 without fsdp=on beside tp=1, cp=1, pp=4"},
		{"1f1b, few micro-batches", llama, plan.Strategy{Pipeline: 4, Replicas: 2, MicroBatchSize: 8, MicroBatches: 2, FSDP: true}, 8, "1F1B with 2 micro-batches on 4 stages"},
		{"interleaved rounds", odd, plan.Strategy{Pipeline: 2, Virtual: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 5, FSDP: true}, 4, "5 micro-batches on 2 stages: torch's ScheduleInterleaved1F1B, which torchtitan runs, needs a multiple of its 2 rounds"},
		{"seq", short, plan.Strategy{Tensor: 4, Replicas: 2, MicroBatchSize: 1, SequenceParallel: true, FSDP: true}, 8, "training.seq_len: 12 is not a multiple of 2 x tp x cp = 8"},
		{"experts without shard ranks", moe, plan.Strategy{Replicas: 8, MicroBatchSize: 1, Experts: 4}, 8, "parallelism.expert_parallel_degree: ep=4: torchtitan's experts borrow"},
	}
	for _, c := range cases {
		got, err := TorchTitanTransformer(c.m, c.s, c.gpus, "0.2")
		if strings.HasPrefix(c.want, "[") {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if !strings.HasPrefix(string(got), "# torchtitan 0.2 job configuration (TOML for --job.config_file; checked with torchtitan 0.2.2)") {
				t.Errorf("%s: header\n%s", c.name, got)
			}
			body := string(got)
			for strings.HasPrefix(body, "#") {
				body = body[strings.IndexByte(body, '\n')+1:]
			}
			if body = strings.TrimPrefix(body, "\n"); body != c.want {
				t.Errorf("%s:\n%s\nwant\n%s", c.name, body, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", c.name, err, c.want)
		}
	}
}
