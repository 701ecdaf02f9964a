package plans

import (
	"fmt"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export/internal/exporttest"
)

// TestTorchTitan03Transformer: a transformer's plan as torchtitan 0.3's
// config module, apply_plan's statements and OVERRIDES written by hand
// from torchtitan 0.3.0's config/configs.py, trainer.py and
// distributed/activation_checkpoint.py (tools/dev/frameworks/check03.py
// checks such modules with torchtitan's own parser), and each refusal
// naming its field.
func TestTorchTitan03Transformer(t *testing.T) {
	parse := func(s string) transformer.Spec {
		m, err := transformer.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	llama := parse("llama:layers=8,hidden=64,heads=4,seq=16,vocab=128,batch=32")
	moe := parse("llama:layers=4,hidden=32,heads=4,seq=8,vocab=64,batch=16,experts=8,topk=2,expert_ffn=64")
	short := parse("llama:layers=8,hidden=64,heads=4,seq=12,vocab=128,batch=32")
	l8b := parse("llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=128")
	cases := []struct {
		name      string
		m         transformer.Spec
		s         plan.Strategy
		gpus      int
		assign    []string // "" lines: want a refusal, err
		overrides string
		err       string
	}{
		// FSDP 8: one micro-batch of 4 a step per rank (local), no
		// pipeline, checkpointing off (the bases' default is SelectiveAC).
		{name: "fsdp", m: llama, s: plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true}, gpus: 8, assign: []string{
			"config.training.local_batch_size = 4",
			"config.training.global_batch_size = 32",
			"config.training.seq_len = 16",
			"config.training.disable_cuda_graphs = True",
			"config.parallelism.data_parallel_replicate_degree = 1",
			"config.parallelism.data_parallel_shard_degree = 8",
			"config.parallelism.tensor_parallel_degree = 1",
			"config.parallelism.context_parallel_degree = 1",
			"config.parallelism.expert_parallel_degree = 1",
			"config.parallelism.pipeline_parallel_degree = 1",
			"config.compile.enable = False",
			"config.compile.enable_async_tensor_parallel = False",
			"config.activation_checkpoint = None",
		}, overrides: "--training.local_batch_size 4 --training.global_batch_size 32 --training.seq_len 16 --training.disable_cuda_graphs " +
			"--parallelism.data_parallel_replicate_degree 1 --parallelism.data_parallel_shard_degree 8 --parallelism.tensor_parallel_degree 1 " +
			"--parallelism.context_parallel_degree 1 --parallelism.expert_parallel_degree 1 --parallelism.pipeline_parallel_degree 1 " +
			"--compile.no-enable --compile.no-enable_async_tensor_parallel activation-checkpoint:none"},
		// TP 2 x FSDP 4 with sequence parallelism, async TP (compiled),
		// full checkpointing.
		{name: "tp x fsdp", m: llama, s: plan.Strategy{Tensor: 2, Replicas: 4, MicroBatchSize: 2, SequenceParallel: true, TPOverlap: true, FSDP: true, Recompute: plan.FullRecompute}, gpus: 8, assign: []string{
			"config.training.local_batch_size = 2",
			"config.training.global_batch_size = 32",
			"config.training.seq_len = 16",
			"config.training.disable_cuda_graphs = True",
			"config.parallelism.data_parallel_replicate_degree = 1",
			"config.parallelism.data_parallel_shard_degree = 4",
			"config.parallelism.tensor_parallel_degree = 2",
			"config.parallelism.enable_sequence_parallel = True",
			"config.parallelism.context_parallel_degree = 1",
			"config.parallelism.expert_parallel_degree = 1",
			"config.parallelism.pipeline_parallel_degree = 1",
			"config.compile.enable = True",
			"config.compile.enable_async_tensor_parallel = True",
			"config.activation_checkpoint = FullAC.Config()",
		}, overrides: "--training.local_batch_size 2 --training.global_batch_size 32 --training.seq_len 16 --training.disable_cuda_graphs " +
			"--parallelism.data_parallel_replicate_degree 1 --parallelism.data_parallel_shard_degree 4 --parallelism.tensor_parallel_degree 2 " +
			"--parallelism.enable_sequence_parallel --parallelism.context_parallel_degree 1 --parallelism.expert_parallel_degree 1 " +
			"--parallelism.pipeline_parallel_degree 1 --compile.enable --compile.enable_async_tensor_parallel activation-checkpoint:full"},
		// Stages of 2 and 6 layers in 2 chunks each: parts of 1, 3, 1, 3
		// layers (part j = v x 2 + d), the last ending in norm and lm_head
		// (0.3's name of 0.2's output); a pipeline turns CUDA graphs off
		// (Trainer.Config refuses both); the local batch is the rank's
		// step, 32 / 2 = 16, in micro-batches of 2.
		{name: "pp interleaved", m: llama, s: plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, Virtual: 2, MicroBatchSize: 2, MicroBatches: 8,
			SequenceParallel: true, FSDP: true, FirstLayers: 2, LastLayers: 6}, gpus: 8, assign: []string{
			"config.training.local_batch_size = 16",
			"config.training.global_batch_size = 32",
			"config.training.seq_len = 16",
			"config.training.disable_cuda_graphs = True",
			"config.parallelism.data_parallel_replicate_degree = 1",
			"config.parallelism.data_parallel_shard_degree = 2",
			"config.parallelism.tensor_parallel_degree = 2",
			"config.parallelism.enable_sequence_parallel = True",
			"config.parallelism.context_parallel_degree = 1",
			"config.parallelism.expert_parallel_degree = 1",
			"config.parallelism.pipeline_parallel_degree = 2",
			`config.parallelism.pipeline_parallel_schedule = "Interleaved1F1B"`,
			"config.parallelism.pipeline_parallel_microbatch_size = 2",
			`config.parallelism.module_fqns_per_model_part = [["tok_embeddings", "layers.0"],["layers.1", "layers.2", "layers.3"],["layers.4"],["layers.5", "layers.6", "layers.7", "norm", "lm_head"],]`,
			"config.compile.enable = False",
			"config.compile.enable_async_tensor_parallel = False",
			"config.activation_checkpoint = None",
		}, overrides: "--training.local_batch_size 16 --training.global_batch_size 32 --training.seq_len 16 --training.disable_cuda_graphs " +
			"--parallelism.data_parallel_replicate_degree 1 --parallelism.data_parallel_shard_degree 2 --parallelism.tensor_parallel_degree 2 " +
			"--parallelism.enable_sequence_parallel --parallelism.context_parallel_degree 1 --parallelism.expert_parallel_degree 1 " +
			"--parallelism.pipeline_parallel_degree 2 --parallelism.pipeline_parallel_schedule Interleaved1F1B --parallelism.pipeline_parallel_microbatch_size 2 " +
			"--parallelism.module_fqns_per_model_part tok_embeddings,layers.0 layers.1,layers.2,layers.3 layers.4 layers.5,layers.6,layers.7,norm,lm_head " +
			"--compile.no-enable --compile.no-enable_async_tensor_parallel activation-checkpoint:none"},
		// 0.3 runs what 0.2 refuses: DDP beside a pipeline (its llama3
		// applies fully_shard over dp_replicate x dp_shard, here 2 x 1),
		// tensor parallelism without sequence parallelism (seq 12: tp 4
		// need not divide it then).
		{name: "ddp beside pp, gpipe", m: llama, s: plan.Strategy{Pipeline: 2, Replicas: 2, MicroBatchSize: 4, MicroBatches: 4, Schedule: decision.GPipe}, gpus: 4, assign: []string{
			"config.training.local_batch_size = 16",
			"config.training.global_batch_size = 32",
			"config.training.seq_len = 16",
			"config.training.disable_cuda_graphs = True",
			"config.parallelism.data_parallel_replicate_degree = 2",
			"config.parallelism.data_parallel_shard_degree = 1",
			"config.parallelism.tensor_parallel_degree = 1",
			"config.parallelism.context_parallel_degree = 1",
			"config.parallelism.expert_parallel_degree = 1",
			"config.parallelism.pipeline_parallel_degree = 2",
			`config.parallelism.pipeline_parallel_schedule = "GPipe"`,
			"config.parallelism.pipeline_parallel_microbatch_size = 4",
			`config.parallelism.module_fqns_per_model_part = [["tok_embeddings", "layers.0", "layers.1", "layers.2", "layers.3"],["layers.4", "layers.5", "layers.6", "layers.7", "norm", "lm_head"],]`,
			"config.compile.enable = False",
			"config.compile.enable_async_tensor_parallel = False",
			"config.activation_checkpoint = None",
		}},
		{name: "tp without sp", m: short, s: plan.Strategy{Tensor: 4, Replicas: 2, MicroBatchSize: 1, FSDP: true}, gpus: 8, assign: []string{
			"config.training.local_batch_size = 1",
			"config.training.global_batch_size = 32",
			"config.training.seq_len = 12",
			"config.training.disable_cuda_graphs = True",
			"config.parallelism.data_parallel_replicate_degree = 1",
			"config.parallelism.data_parallel_shard_degree = 2",
			"config.parallelism.tensor_parallel_degree = 4",
			"config.parallelism.enable_sequence_parallel = False",
			"config.parallelism.context_parallel_degree = 1",
			"config.parallelism.expert_parallel_degree = 1",
			"config.parallelism.pipeline_parallel_degree = 1",
			"config.compile.enable = False",
			"config.compile.enable_async_tensor_parallel = False",
			"config.activation_checkpoint = None",
		}},
		// The experts borrow dp_shard x tp = 4 x 2 ranks: ep 4 divides it.
		{name: "experts beside tp", m: moe, s: plan.Strategy{Tensor: 2, Replicas: 4, MicroBatchSize: 1, Experts: 4, ExpertTensor: 1, SequenceParallel: true, FSDP: true}, gpus: 8, assign: []string{
			"config.training.local_batch_size = 1",
			"config.training.global_batch_size = 16",
			"config.training.seq_len = 8",
			"config.training.disable_cuda_graphs = True",
			"config.parallelism.data_parallel_replicate_degree = 1",
			"config.parallelism.data_parallel_shard_degree = 4",
			"config.parallelism.tensor_parallel_degree = 2",
			"config.parallelism.enable_sequence_parallel = True",
			"config.parallelism.context_parallel_degree = 1",
			"config.parallelism.expert_parallel_degree = 4",
			"config.parallelism.pipeline_parallel_degree = 1",
			"config.compile.enable = False",
			"config.compile.enable_async_tensor_parallel = False",
			"config.activation_checkpoint = None",
		}},
		{name: "float8", m: llama, s: plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, FP8: plan.FP8Current}, gpus: 8,
			err: "export: torchtitan: model_spec converters (Float8LinearConverter.Config.recipe_name): fp8=current has no torchtitan 0.3.0 recipe (its float8 recipes are rowwise and rowwise_with_gw_hp; 0.2's tensorwise is current scaling: --to torchtitan@0.2)"},
		{name: "float8 blockwise", m: llama, s: plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, FP8: plan.FP8Blockwise}, gpus: 8, err: "fp8=blockwise has no torchtitan 0.3.0 recipe"},
		{name: "selective", m: llama, s: plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, Recompute: plan.SelectiveRecompute}, gpus: 8, err: "export: torchtitan: activation_checkpoint: recompute=selective"},
		{name: "bf16 grads", m: llama, s: plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, GradBF16: true}, gpus: 8, err: "training.mixed_precision_reduce: grads=bf16: torchtitan 0.3.0 reduces in float32 only"},
		{name: "distopt", m: llama, s: plan.Strategy{Replicas: 8, MicroBatchSize: 4, DistOpt: true}, gpus: 8, err: "parallelism.data_parallel_shard_degree: distopt=on"},
		{name: "seq", m: short, s: plan.Strategy{Tensor: 4, Context: 2, MicroBatchSize: 1, SequenceParallel: true}, gpus: 8, err: "training.seq_len: 12 is not a multiple of 16 (tp with sequence parallelism x 2 cp)"},
		{name: "1f1b, few micro-batches", m: llama, s: plan.Strategy{Pipeline: 4, Replicas: 2, MicroBatchSize: 8, MicroBatches: 2, FSDP: true}, gpus: 8, err: "parallelism.pipeline_parallel_schedule: 1F1B with 2 micro-batches on 4 stages"},
		{name: "expert tp", m: moe, s: plan.Strategy{Tensor: 2, Replicas: 4, MicroBatchSize: 1, Experts: 4, SequenceParallel: true, FSDP: true}, gpus: 8, err: "parallelism.expert_parallel_degree: ep=4 with etp=2"},
		{name: "experts past the ranks", m: moe, s: plan.Strategy{Replicas: 4, Context: 2, MicroBatchSize: 1, Experts: 16, FSDP: true}, gpus: 8, err: "ep=16 does not divide dp_shard x cp x tp = 4 x 2 x 1"},
	}
	for _, c := range cases {
		got, err := TorchTitanTransformer(c.m, c.s, c.gpus, "0.3")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		out := string(got)
		if !strings.HasPrefix(out, "# torchtitan 0.3 configuration (a config function for torchtitan.train's --module and --config; checked with torchtitan 0.3.0)") {
			t.Errorf("%s: header\n%s", c.name, out)
		}
		assign, overrides := exporttest.Titan03Parts(t, out)
		if strings.Join(assign, "\n") != strings.Join(c.assign, "\n") {
			t.Errorf("%s: apply_plan\n%s\nwant\n%s", c.name, strings.Join(assign, "\n"), strings.Join(c.assign, "\n"))
		}
		if c.overrides != "" && overrides != c.overrides {
			t.Errorf("%s: OVERRIDES\n%s\nwant\n%s", c.name, overrides, c.overrides)
		}
		// No torchtitan preset of these shapes: the dense llama is
		// torchtitan's llama3 built at its shape, the mixture of experts a
		// stub that says to name the model.
		if c.m.Experts > 0 {
			if !strings.Contains(out, "raise NotImplementedError(") || strings.Contains(out, "def placer_model()") {
				t.Errorf("%s: base_config names a model\n%s", c.name, out)
			}
			continue
		}
		dims := fmt.Sprintf("    dim, n_layers, n_heads, n_kv_heads, hidden_dim, vocab_size = %d, %d, %d, %d, %d, %d\n", c.m.Hidden, c.m.Layers, c.m.Heads, c.m.KVHeads, c.m.FFN, c.m.Vocab)
		for _, want := range []string{"from torchtitan.protocols.model_spec import ModelSpec\n", "\n\ndef placer_model() -> ModelSpec:\n", dims,
			"    config = llama3_8b()\n    config.model_spec = placer_model()\n"} {
			if !strings.Contains(out, want) || strings.Contains(out, "NotImplementedError") {
				t.Errorf("%s: no %q in\n%s", c.name, want, out)
			}
		}
	}
	// Llama 3 8B's shape is torchtitan's llama3 8B: its config function,
	// its model without converters.
	got, err := TorchTitanTransformer(l8b, plan.Strategy{Replicas: 32, Tensor: 2, MicroBatchSize: 1, SequenceParallel: true, FSDP: true}, 64, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"from torchtitan.models.llama3 import model_registry\nfrom torchtitan.models.llama3.config_registry import llama3_8b\n",
		"    config = llama3_8b()\n    config.model_spec = model_registry(\"8B\")\n    return config\n",
		"def placer_plan() -> Trainer.Config:\n    return apply_plan(base_config())\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("8B: no %q in\n%s", want, got)
		}
	}
}

// TestTitan03Model: placer_model() at shapes no preset has, the
// settings written from the shape by hand (torchtitan 0.3.0's
// models/llama3/__init__.py: _8b's initialisations untied, _1b's tied),
// and the shapes torchtitan's llama3 is not, each a stub naming why.
func TestTitan03Model(t *testing.T) {
	for _, c := range []struct{ workload, want, why string }{
		{"llama:layers=6,hidden=256,heads=8,kv_heads=2,ffn=768,seq=64,vocab=1000,batch=16,tied=true", "    dim, n_layers, n_heads, n_kv_heads, hidden_dim, vocab_size = 256, 6, 8, 2, 768, 1000\n" +
			"    model = llama3.Llama3Model.Config(\n        dim=dim,\n        vocab_size=vocab_size,\n        enable_weight_tying=True,\n" +
			"        tok_embeddings=Embedding.Config(num_embeddings=vocab_size, embedding_dim=dim, param_init=llama3._EMBEDDING_SKIP_INIT),\n", ""},
		{"llama:layers=2,hidden=64,heads=4,seq=262144,vocab=256,batch=1", "enable_weight_tying=False,\n        tok_embeddings=Embedding.Config(num_embeddings=vocab_size, embedding_dim=dim, param_init=llama3._EMBEDDING_INIT),\n" +
			"        norm=RMSNorm.Config(normalized_shape=dim, param_init=llama3._NORM_INIT),\n" +
			"        lm_head=Linear.Config(in_features=dim, out_features=vocab_size, param_init=llama3._output_linear_init(dim)),\n" +
			"        layers=llama3._build_llama3_layers(\n            fuse_qkv=True, n_layers=n_layers, dim=dim, n_heads=n_heads, n_kv_heads=n_kv_heads, hidden_dim=hidden_dim,\n" +
			"            rope=ComplexRoPE.Config(dim=dim // n_heads, max_seq_len=262144, theta=500000, scaling=\"llama\"),\n", ""},
		{"gpt:layers=2,hidden=64,heads=4,seq=32,vocab=256,batch=4", "", "torchtitan 0.3.0 has no gpt model"},
		{"llama:layers=2,hidden=64,heads=4,seq=32,vocab=256,batch=4,head_dim=32", "", "heads of 32 (not hidden / heads) are not torchtitan's llama3"},
		{"llama:layers=2,hidden=64,heads=4,seq=32,vocab=256,batch=4,window=8", "", "a sliding window is not torchtitan's llama3"},
	} {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		got, err := TorchTitanTransformer(m, plan.Strategy{Replicas: 1, MicroBatchSize: 1}, 1, "0.3")
		if err != nil {
			t.Fatalf("%s: %v", c.workload, err)
		}
		out := string(got)
		if c.why != "" {
			if !strings.Contains(out, c.why) || !strings.Contains(out, "raise NotImplementedError(") || strings.Contains(out, "placer_model") {
				t.Errorf("%s: want a stub saying %q\n%s", c.workload, c.why, out)
			}
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: no\n%s\nin\n%s", c.workload, c.want, out)
		}
	}
}

// TestTitanFlavorOf: torchtitan 0.3.0's llama3 flavors by shape
// (models/llama3/__init__.py), and shapes that are none of them.
func TestTitanFlavorOf(t *testing.T) {
	for s, want := range map[string]string{
		"llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=4096,vocab=128256,batch=1":    "llama3_8b",
		"llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=8192,vocab=128256,batch=8":    "llama3_70b",
		"llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256,batch=1": "llama3_405b",
		"llama:layers=30,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=4096,vocab=128256,batch=1":    "",
		"llama:layers=32,hidden=4096,heads=32,kv_heads=32,ffn=14336,seq=4096,vocab=128256,batch=1":   "",
		"gpt:layers=32,hidden=4096,heads=32,seq=4096,vocab=128256,batch=1":                           "",
	} {
		m, err := transformer.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := titanFlavorOf(m)
		if f.function != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", s, f.function, ok, want)
		}
	}
}
