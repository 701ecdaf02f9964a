package plans

import (
	"cmp"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// bridgeModels are a small dense llama and a small mixture of experts
// (the first layer dense, 8 experts of 64, top 2, one shared).
func bridgeModels(t *testing.T) (dense, moe transformer.Spec) {
	t.Helper()
	var err error
	if dense, err = transformer.Parse("llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=16,vocab=64,batch=16"); err != nil {
		t.Fatal(err)
	}
	if moe, err = transformer.Parse("llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=16,vocab=64,batch=16,head_dim=16,experts=8,topk=2,expert_ffn=64,shared=1,dense_layers=1"); err != nil {
		t.Fatal(err)
	}
	return dense, moe
}

// TestBridgeOverrides: a plan's Megatron-Bridge overrides, written by hand
// from Bridge 0.5.0's ConfigContainer fields (tools/dev/frameworks/
// test_bridge.py has Bridge's own machinery read them).
func TestBridgeOverrides(t *testing.T) {
	dense, moe := bridgeModels(t)
	vocab := "model.vocab_size=64 model.should_pad_vocab=false model.share_embeddings_and_output_weights=false "
	shape := "model.num_layers=4 model.hidden_size=32 model.ffn_hidden_size=96 model.num_attention_heads=4 model.num_query_groups=2 model.kv_channels=8 " + vocab + "model.seq_length=16 "
	cases := []struct {
		name string
		m    transformer.Spec
		s    plan.Strategy
		gpus int
		want string
	}{
		{"pre-training: tp, pp, vp, sp, overlap, distopt, selective", dense, plan.Strategy{Tensor: 2, Pipeline: 2, Virtual: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 4,
			SequenceParallel: true, TPOverlap: true, DistOpt: true, Recompute: plan.SelectiveRecompute}, 8,
			shape + "dataset.sequence_length=16 train.micro_batch_size=2 train.global_batch_size=16 model.tensor_model_parallel_size=2 " +
				"model.pipeline_model_parallel_size=2 model.virtual_pipeline_model_parallel_size=2 model.context_parallel_size=1 model.sequence_parallel=true " +
				"model.recompute_granularity=selective model.recompute_method=null model.recompute_num_layers=null model.recompute_modules=[core_attn] " +
				"ddp.use_distributed_optimizer=true optimizer.use_distributed_optimizer=true ddp.overlap_grad_reduce=true ddp.overlap_param_gather=true " +
				"ddp.use_megatron_fsdp=false model.tp_comm_overlap=true mixed_precision=bf16_mixed model.cuda_graph_impl=none model.cross_entropy_loss_fusion=false"},
		{"fsdp, cp, block recompute, fp8 current, uneven end", dense, plan.Strategy{Context: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 1, MicroBatches: 8,
			FSDP: true, Recompute: plan.FullRecompute, RecomputeLayers: 1, FP8: plan.FP8Current, FirstLayers: 1}, 8,
			shape + "dataset.sequence_length=16 train.micro_batch_size=1 train.global_batch_size=16 model.tensor_model_parallel_size=1 " +
				"model.pipeline_model_parallel_size=2 model.virtual_pipeline_model_parallel_size=null model.context_parallel_size=2 model.sequence_parallel=false " +
				"model.num_layers_in_first_pipeline_stage=1 " +
				"model.recompute_granularity=full model.recompute_method=block model.recompute_num_layers=1 " +
				"ddp.use_distributed_optimizer=true optimizer.use_distributed_optimizer=true ddp.overlap_grad_reduce=true ddp.overlap_param_gather=true " +
				"ddp.use_megatron_fsdp=true ddp.data_parallel_sharding_strategy=optim_grads_params checkpoint.ckpt_format=fsdp_dtensor model.gradient_accumulation_fusion=false " +
				"model.tp_comm_overlap=false mixed_precision=bf16_with_fp8_current_scaling_mixed model.cuda_graph_impl=none model.cross_entropy_loss_fusion=false"},
		{"experts: ep, etp, the default stack, a2a overlap", moe, plan.Strategy{Tensor: 2, Pipeline: 2, Virtual: 2, Replicas: 2, Experts: 4, ExpertTensor: 1,
			MicroBatchSize: 1, MicroBatches: 8, SequenceParallel: true, DistOpt: true, EPOverlap: true}, 8,
			"model.num_layers=4 model.hidden_size=32 model.ffn_hidden_size=96 model.num_attention_heads=4 model.num_query_groups=2 model.kv_channels=16 " +
				"model.num_moe_experts=8 model.moe_router_topk=2 model.moe_ffn_hidden_size=64 model.moe_shared_expert_intermediate_size=64 " + vocab + "model.seq_length=16 " +
				"dataset.sequence_length=16 train.micro_batch_size=1 train.global_batch_size=16 model.tensor_model_parallel_size=2 " +
				"model.pipeline_model_parallel_size=2 model.virtual_pipeline_model_parallel_size=2 model.context_parallel_size=1 model.sequence_parallel=true " +
				"model.expert_model_parallel_size=4 model.expert_tensor_parallel_size=1 " +
				"model.recompute_granularity=null model.recompute_method=null model.recompute_num_layers=null " +
				"ddp.use_distributed_optimizer=true optimizer.use_distributed_optimizer=true ddp.overlap_grad_reduce=true ddp.overlap_param_gather=true " +
				"ddp.use_megatron_fsdp=false model.tp_comm_overlap=false mixed_precision=bf16_mixed " +
				"model.moe_token_dispatcher_type=alltoall model.moe_grouped_gemm=true model.moe_permute_fusion=true model.moe_router_fusion=true " +
				"model.overlap_moe_expert_parallel_comm=true model.delay_wgrad_compute=true model.cuda_graph_impl=none model.cross_entropy_loss_fusion=false"},
		{"lora on two targets, unpacked: a peft recipe's packing cleared", dense, plan.Strategy{Replicas: 8, MicroBatchSize: 1, MicroBatches: 2, DistOpt: true,
			FineTune: plan.FineTune{LoRARank: 8, LoRAAlpha: 16, LoRATargets: plan.LoRAQKV | plan.LoRAFC2}}, 8,
			shape + "dataset.seq_length=16 train.micro_batch_size=1 train.global_batch_size=16 model.tensor_model_parallel_size=1 " +
				"model.pipeline_model_parallel_size=1 model.virtual_pipeline_model_parallel_size=null model.context_parallel_size=1 model.sequence_parallel=false " +
				"model.recompute_granularity=null model.recompute_method=null model.recompute_num_layers=null " +
				"ddp.use_distributed_optimizer=true optimizer.use_distributed_optimizer=true ddp.overlap_grad_reduce=true ddp.overlap_param_gather=true " +
				"ddp.use_megatron_fsdp=false model.tp_comm_overlap=false mixed_precision=bf16_mixed model.cuda_graph_impl=none model.cross_entropy_loss_fusion=false " +
				"+peft.dim=8 +peft.alpha=16 +peft.target_modules=[linear_qkv,linear_fc2] dataset.packed_sequence_specs=null"},
		{"packed full fine-tuning, one GPU: no overlaps", dense, plan.Strategy{Replicas: 1, MicroBatchSize: 4, MicroBatches: 4,
			FineTune: plan.FineTune{PackLens: []int{4, 8}}}, 1,
			shape + "dataset.seq_length=16 train.micro_batch_size=4 train.global_batch_size=16 model.tensor_model_parallel_size=1 " +
				"model.pipeline_model_parallel_size=1 model.virtual_pipeline_model_parallel_size=null model.context_parallel_size=1 model.sequence_parallel=false " +
				"model.recompute_granularity=null model.recompute_method=null model.recompute_num_layers=null " +
				"ddp.use_distributed_optimizer=false optimizer.use_distributed_optimizer=false ddp.overlap_grad_reduce=false ddp.overlap_param_gather=false " +
				"ddp.use_megatron_fsdp=false model.tp_comm_overlap=false mixed_precision=bf16_mixed model.cuda_graph_impl=none model.cross_entropy_loss_fusion=false " +
				"dataset.packed_sequence_specs.packed_sequence_size=16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := BridgeOverrides(c.m, c.s, c.gpus)
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("overrides\n got %s\nwant %s", g, c.want)
			}
		})
	}
}

// TestBridgeRefuses: what Bridge has no key for, or Megatron-Core does not
// run, refused in one line naming the setting.
func TestBridgeRefuses(t *testing.T) {
	dense, _ := bridgeModels(t)
	base := plan.Strategy{Replicas: 8, MicroBatchSize: 1, MicroBatches: 2, DistOpt: true}
	with := func(f func(*plan.Strategy)) plan.Strategy { s := base; f(&s); return s }
	cases := []struct {
		name string
		s    plan.Strategy
		want string
	}{
		{"grads=bf16", with(func(s *plan.Strategy) { s.GradBF16 = true }), "megatron-bridge overrides: grads=bf16: Megatron-Bridge 0.5.0's mixed-precision recipes reduce gradients in FP32"},
		{"torchao's rowwise", with(func(s *plan.Strategy) { s.FP8 = plan.FP8Rowwise }), "megatron-bridge overrides: mixed_precision: fp8=rowwise is torchao's recipe"},
		{"a tensor degree per stage", plan.Strategy{TensorStages: []int{2, 4}, Pipeline: 2, Replicas: 1, MicroBatchSize: 1, MicroBatches: 16}, "megatron-bridge overrides: stage-tp=2:4"},
		{"imbalance", with(func(s *plan.Strategy) { s.Imbalance = 1.5 }), "export: megatron-bridge: imbalance=1.5"},
		{"the batch", with(func(s *plan.Strategy) { s.MicroBatches = 3 }), "megatron-bridge overrides: dp=8 x mbs=1 x mb=3 is not the batch of 16"},
		{"first= not a multiple of vp", plan.Strategy{Pipeline: 2, Virtual: 2, Replicas: 4, MicroBatchSize: 1, MicroBatches: 4, FirstLayers: 1}, "megatron-bridge overrides: first=1 with vp=2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := BridgeOverrides(dense, c.s, 8)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line starting %q", err, c.want)
			}
		})
	}
}

// readBridge reads overrides back into the settings a plan has, as Bridge
// would hold them: the inverse of BridgeOverrides for the keys it writes.
func readBridge(t *testing.T, overrides []string) map[string]string {
	t.Helper()
	kv := map[string]string{}
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			t.Fatalf("override %q is not key=value", o)
		}
		if _, dup := kv[k]; dup {
			t.Fatalf("override %s written twice", k)
		}
		kv[strings.TrimPrefix(k, "+")] = v
	}
	return kv
}

// TestBridgeWrittenAndReadBack: every plan of a grid export.Check accepts
// for megatron-bridge is written, and the overrides read back give the
// plan's degrees, batch, recomputation, sharding, recipe, experts and
// fine-tuning; every plan it refuses fails BridgeOverrides too. The grid
// covers the keys the export writes; the count of accepted plans is
// checked so that the test cannot pass on an empty set.
func TestBridgeWrittenAndReadBack(t *testing.T) {
	dense, moe := bridgeModels(t)
	accepted := 0
	for _, m := range []transformer.Spec{dense, moe} {
		for _, s := range bridgeGrid(m, 16) {
			err := Check("megatron-bridge", m, s, 16)
			o, werr := BridgeOverrides(m, s, 16)
			if (err == nil) != (werr == nil) {
				t.Fatalf("%s: Check says %v, BridgeOverrides %v", s, err, werr)
			}
			if err != nil {
				continue
			}
			accepted++
			bridgeReadBack(t, m, s, 16, o)
		}
	}
	// 216 plans, 166 accepted on 2026-11-27: 50 refused, rowwise FP8 (26),
	// grads=bf16 (18) and mbs=2 at dp=16 on a batch of 16 (6).
	if accepted < 150 {
		t.Fatalf("only %d plans of the grid accepted: the grid no longer covers the export", accepted)
	}
}

// bridgeReadBack holds overrides o, read back as Bridge would hold them,
// against plan s of model m on gpus GPUs: the degrees, batch,
// recomputation, sharding, recipe, experts and fine-tuning.
func bridgeReadBack(t *testing.T, m transformer.Spec, s plan.Strategy, gpus int, o []string) {
	t.Helper()
	recipes := map[string]string{}
	for k, v := range bridgeMixedPrecision {
		recipes[v] = k
	}
	kv := readBridge(t, o)
	num := func(k string) int {
		n, err := strconv.Atoi(kv[k])
		if err != nil {
			t.Fatalf("%s: %s=%q is not a number", s, k, kv[k])
		}
		return n
	}
	vp := 1
	if kv["model.virtual_pipeline_model_parallel_size"] != "null" {
		vp = num("model.virtual_pipeline_model_parallel_size")
	}
	tp, pp, cp := num("model.tensor_model_parallel_size"), num("model.pipeline_model_parallel_size"), num("model.context_parallel_size")
	mbs, gbs := num("train.micro_batch_size"), num("train.global_batch_size")
	dp := gpus / (tp * pp * cp)
	checks := []struct {
		what      string
		got, want any
	}{
		{"tp", tp, s.TensorDegree()}, {"pp", pp, s.PipelineDegree()}, {"vp", vp, s.VirtualStages()}, {"cp", cp, s.ContextDegree()},
		{"dp", dp, s.ReplicaCount()}, {"micro-batches", gbs / (dp * mbs), s.MicroBatchCount()},
		{"sp", kv["model.sequence_parallel"] == "true", s.SequenceParallel},
		{"distopt", kv["ddp.use_distributed_optimizer"] == "true", s.DistOpt || s.FSDP},
		{"fsdp", kv["ddp.use_megatron_fsdp"] == "true", s.FSDP},
		{"fp8", recipes[kv["mixed_precision"]], s.FP8},
		{"recompute", kv["model.recompute_granularity"], map[plan.Recompute]string{plan.SelectiveRecompute: "selective", plan.FullRecompute: "full"}[s.Recompute]},
		{"lora", kv["peft.dim"], map[bool]string{true: strconv.Itoa(s.LoRARank)}[s.LoRA()]},
		{"lora targets", kv["peft.target_modules"], map[bool]string{true: "[" + strings.Join(s.Targets().Names(), ",") + "]"}[s.LoRA()]},
		{"packed", kv["dataset.packed_sequence_specs.packed_sequence_size"], map[bool]string{true: strconv.Itoa(m.Seq)}[s.Packed()]},
	}
	if kv["model.recompute_granularity"] == "null" {
		checks[10].got = ""
	}
	if m.MoE() {
		checks = append(checks, struct {
			what      string
			got, want any
		}{"ep", num("model.expert_model_parallel_size"), s.ExpertDegree()})
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %s read back %v, the plan has %v", s, c.what, c.got, c.want)
		}
	}
}

// bridgeGrid is plans of model m on gpus GPUs over the degrees and keys
// the Bridge export writes, refused ones included (grads=bf16, rowwise).
func bridgeGrid(m transformer.Spec, gpus int) []plan.Strategy {
	var out []plan.Strategy
	fp8s := []string{"", plan.FP8Current, plan.FP8Delayed, plan.FP8Blockwise, plan.FP8MX, plan.FP4NV, plan.FP8Rowwise}
	fts := []plan.FineTune{{}, {LoRARank: 4}, {LoRARank: 8, LoRAAlpha: 8, LoRATargets: plan.LoRAProj | plan.LoRAFC1}, {PackLens: []int{8}}, {LoRARank: 4, PackLens: []int{4, 16}}}
	i := 0
	for _, tp := range []int{1, 2, 4} {
		for _, pp := range []int{1, 2} {
			for _, vp := range []int{1, 2} {
				for _, cp := range []int{1, 2} {
					if pp == 1 && vp > 1 {
						continue
					}
					dp := gpus / (tp * pp * cp)
					for _, mbs := range []int{1, 2} {
						for _, rc := range []plan.Recompute{plan.NoRecompute, plan.SelectiveRecompute, plan.FullRecompute} {
							i++
							s := plan.Strategy{Tensor: tp, Pipeline: pp, Virtual: vp, Context: cp, Replicas: dp, MicroBatchSize: mbs,
								MicroBatches: m.Batch / (dp * mbs), Recompute: rc, SequenceParallel: tp > 1 && i%2 == 0,
								DistOpt: i%3 != 0, FSDP: i%3 == 0 && i%2 == 1, FP8: fp8s[i%len(fp8s)], GradBF16: i%11 == 0, FineTune: fts[i%len(fts)]}
							if m.MoE() {
								s.Experts, s.ExpertTensor = 2, 1
							}
							out = append(out, s)
						}
					}
				}
			}
		}
	}
	return out
}

// FuzzBridgeOverrides: any plan of the small models on 16 GPUs drawn from
// the fuzzer's numbers either is refused by export.Check and by the
// writer alike, in one line, or is written and read back as the plan.
func FuzzBridgeOverrides(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), false)
	f.Add(uint8(2), uint8(2), uint8(2), uint8(1), uint8(2), uint8(3), true)
	f.Add(uint8(4), uint8(1), uint8(1), uint8(5), uint8(1), uint8(4), false)
	f.Fuzz(func(t *testing.T, tp, pp, vp, bits, fp8, ft uint8, experts bool) {
		dense, moe := bridgeModels(t)
		m := dense
		if experts {
			m = moe
		}
		T, P, V := 1<<(tp%3), 1<<(pp%2), 1<<(vp%2)
		C := 1 << (bits >> 6 % 2)
		D := 16 / (T * P * C)
		mbs := 1 << (bits >> 4 % 2)
		s := plan.Strategy{Tensor: T, Pipeline: P, Virtual: V, Context: C, Replicas: D, MicroBatchSize: mbs, MicroBatches: max(m.Batch/(D*mbs), 1),
			Recompute:        []plan.Recompute{plan.NoRecompute, plan.SelectiveRecompute, plan.FullRecompute}[bits%3],
			SequenceParallel: bits&8 != 0 && T > 1, DistOpt: bits&4 != 0, GradBF16: bits == 255,
			FP8:      []string{"", plan.FP8Current, plan.FP8Delayed, plan.FP8Blockwise, plan.FP8MX, plan.FP4NV, plan.FP8Rowwise}[fp8%7],
			FineTune: []plan.FineTune{{}, {LoRARank: 4}, {LoRARank: 2, LoRATargets: plan.LoRAFC1}, {PackLens: []int{8}}, {LoRARank: 4, PackLens: []int{4, 16}}}[ft%5]}
		if experts {
			s.Experts, s.ExpertTensor = 2, 1
			s.EPOverlap = bits&2 != 0
		}
		err := Check("megatron-bridge", m, s, 16)
		o, werr := BridgeOverrides(m, s, 16)
		switch {
		case (err == nil) != (werr == nil):
			t.Fatalf("%s: Check says %v, BridgeOverrides %v", s, err, werr)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Fatalf("%s: refusal of more than one line: %q", s, err)
		case err == nil:
			bridgeReadBack(t, m, s, 16, o)
		}
	})
}

// TestBridgeFlexBackend: the flex dispatcher's backend as the plan names
// it, Megatron-Core's moe_flex_dispatcher_backend: DeepEP for
// dispatcher=flex, HybridEP for dispatcher=hybridep; DeepEP with
// Megatron-Core's experimental features on, under which alone it runs
// the fused multihot conversion placer costs (HybridEP runs none).
func TestBridgeFlexBackend(t *testing.T) {
	_, moe := bridgeModels(t)
	const experimental = "dist.enable_megatron_core_experimental=true"
	for _, c := range []struct{ dispatcher, want, not string }{
		{plan.DispatcherFlex, "model.moe_token_dispatcher_type=flex model.moe_flex_dispatcher_backend=deepep " + experimental + " ", ""},
		{plan.DispatcherHybridEP, "model.moe_token_dispatcher_type=flex model.moe_flex_dispatcher_backend=hybridep ", experimental},
	} {
		s := plan.Strategy{Replicas: 8, Experts: 4, ExpertTensor: 1, MicroBatchSize: 1, MicroBatches: 2, DistOpt: true,
			Software: plan.Software{Dispatcher: c.dispatcher}}
		got, err := BridgeOverrides(moe, s, 8)
		if err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(got, " ") + " "; !strings.Contains(g, c.want) || c.not != "" && strings.Contains(g, c.not) {
			t.Errorf("dispatcher=%s: overrides\n%s\nwant %q in them, not %q", c.dispatcher, g, c.want, c.not)
		}
	}
}

// TestBridgeCPCommType: the context-parallel exchange placer costs,
// Megatron-Core's TransformerConfig.cp_comm_type: written for
// cp-comm-type=all_gather or a2a under context parallelism, left to
// Megatron-Core's p2p ring otherwise (and without context parallelism).
func TestBridgeCPCommType(t *testing.T) {
	dense, _ := bridgeModels(t)
	for _, c := range []struct {
		name  string
		cp    int
		comm  string
		wants bool
	}{
		{"all-gather under cp 2", 2, plan.CPCommAllGather, true},
		{"p2p under cp 2", 2, plan.CPCommP2P, false},
		{"the stack's under cp 2", 2, "", false},
		{"all-gather without cp", 1, plan.CPCommAllGather, false},
		{"a2a under cp 2", 2, plan.CPCommA2A, true},
		{"a2a without cp", 1, plan.CPCommA2A, false},
	} {
		written := "model.cp_comm_type" // none written
		if c.wants {
			written += "=" + c.comm
		}
		s := plan.Strategy{Context: c.cp, Replicas: 8 / c.cp, MicroBatchSize: 1, MicroBatches: 2 * c.cp, DistOpt: true,
			Software: plan.Software{CPComm: c.comm}}
		got, err := BridgeOverrides(dense, s, 8)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if has := strings.Contains(strings.Join(got, " "), written); has != c.wants {
			t.Errorf("%s: %q written %v, want %v: %v", c.name, written, has, c.wants, got)
		}
	}
}

// TestBridgeRecipeNamed: the Bridge export names the recipe of the
// model's family and kind (its preset's, else its model_type's; none
// where Bridge 0.5.0 has none, said so), names the model in its header
// (not "llama:..." for Qwen3-30B-A3B), and writes the vocabulary and
// the config.json's settings the Megatron-LM export writes (the rotary
// base, the norms' epsilon, QK norms: megatronModel's --rotary-base,
// --norm-epsilon, --qk-layernorm). Before: "--recipe MODEL_pretrain_config"
// for every model and none of those fields.
func TestBridgeRecipeNamed(t *testing.T) {
	hf := func(file string) transformer.Spec {
		m, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf", file))
		if err != nil {
			t.Fatal(err)
		}
		m.Seq, m.Batch = 4096, 64
		return m
	}
	q30, _ := transformer.Preset("qwen3-30b-a3b")
	q30.Batch = 64
	ds3, _ := transformer.Preset("deepseek-v3")
	ds3.Batch = 64
	bare, err := transformer.Parse("llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=16,vocab=64,batch=64")
	if err != nil {
		t.Fatal(err)
	}
	pre := plan.Strategy{Replicas: 8, MicroBatchSize: 1, MicroBatches: 8}
	lora := pre
	lora.FineTune = plan.FineTune{LoRARank: 8}
	packed := pre
	packed.FineTune = plan.FineTune{PackLens: []int{1024}}
	for _, c := range []struct {
		name          string
		m             transformer.Spec
		s             plan.Strategy
		recipe, model string
		missing       string // in the why ("" = none)
		header        string // in the header's first line
		settings      []string
		without       []string
	}{
		{"qwen3-30b-a3b preset", q30, pre, "qwen3_30b_a3b_pretrain_config", "qwen3-30b-a3b", "",
			"overrides for qwen3-30b-a3b, shape layers=48,hidden=2048,", []string{"model.vocab_size=151936"}, []string{"model.rotary_base"}},
		{"qwen3-30b-a3b's config.json", hf("qwen3-30b-a3b.json"), pre, "qwen3_30b_a3b_pretrain_config", "qwen3-30b-a3b", "",
			"overrides for qwen3-30b-a3b, shape", []string{"model.vocab_size=151936", "model.rotary_base=1000000", "model.qk_layernorm=true", "model.layernorm_epsilon=1e-06"}, nil},
		{"qwen3-8b LoRA", hf("qwen3-8b.json"), lora, "qwen3_8b_peft_config", "a qwen3 model", "",
			"overrides for a qwen3 model, shape layers=36,", []string{"model.vocab_size=151936", "model.rotary_base=1000000", "model.qk_layernorm=true", "model.share_embeddings_and_output_weights=false"}, nil},
		{"llama3-8b's config.json, packed", hf("llama3-8b.json"), packed, "llama3_8b_sft_config", "llama3-8b", "",
			"overrides for llama3-8b, shape", []string{"model.vocab_size=128256", "model.rotary_base=500000", "model.qk_layernorm=false"}, nil},
		{"mixtral: no recipe", hf("mixtral-8x7b.json"), pre, "vanilla_gpt_pretrain_config", "mixtral-8x7b", "has no recipe of mixtral",
			"overrides for mixtral-8x7b, shape", []string{"model.vocab_size=32000", "model.rotary_base=1000000"}, nil},
		{"deepseek-v3 packed: pre-training recipes only", ds3, packed, "", "deepseek-v3", "deepseek_v3 recipes are pre-training only",
			"overrides for deepseek-v3, shape", []string{"model.vocab_size=129280"}, nil},
		{"nemotron_h with experts", hf5Experts(t), pre, "nemotron_3_nano_pretrain_config", "a nemotron_h model", "",
			"overrides for a nemotron_h model, shape layers=4,", []string{"model.hybrid_layer_pattern=ME*-", "model.mamba_num_heads=128", "model.num_moe_experts=8",
				"model.moe_router_score_function=sigmoid", "model.moe_router_enable_expert_bias=true"}, nil},
		{"nemotron_h without experts", hf("nemotron-h-8b.json"), pre, "nemotronh_8b_pretrain_config", "a nemotron_h model", "",
			"overrides for a nemotron_h model, shape layers=52,", nil, []string{"model.hybrid_layer_pattern", "model.moe_router_score_function"}},
		{"a shape alone", bare, pre, "vanilla_gpt_pretrain_config", "", "a model by its shape names no family",
			"overrides for shape layers=4,hidden=32,", nil, []string{"model.rotary_base", "model.qk_layernorm"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			recipe, model, missing := BridgeRecipeName(c.m, c.s)
			if recipe != c.recipe || model != c.model || (c.missing == "") != (missing == "") || !strings.Contains(missing, c.missing) {
				t.Errorf("recipe %q, model %q, missing %q; want %q, %q, %q", recipe, model, missing, c.recipe, c.model, c.missing)
			}
			o, err := BridgeOverrides(c.m, c.s, 8)
			if err != nil {
				t.Fatal(err)
			}
			script := BridgeScript(c.m, c.s.String(), c.s, 8, 8, o)
			first, _, _ := strings.Cut(script, "\n")
			if !strings.Contains(first, c.header) || strings.Contains(first, "llama:") {
				t.Errorf("header %q: want %q, no llama:", first, c.header)
			}
			shown := cmp.Or(recipe, "RECIPE_"+BridgeRecipe(c.s)+"_config")
			if !strings.Contains(script, "--recipe "+shown+" ") || strings.Contains(script, "MODEL_") {
				t.Errorf("script names no recipe %s:\n%s", shown, script)
			}
			all := " " + strings.Join(o, " ") + " "
			for _, w := range c.settings {
				if !strings.Contains(all, " "+w+" ") {
					t.Errorf("overrides lack %s: %s", w, all)
				}
			}
			for _, w := range c.without {
				if strings.Contains(all, " "+w+"=") {
					t.Errorf("overrides set %s: %s", w, all)
				}
			}
		})
	}
}

// hf5Experts is transformers 5.24.0's NemotronHConfig() file (a hybrid
// with a block of experts, pattern ME*-) at 4,096 tokens, 64 a step.
func hf5Experts(t *testing.T) transformer.Spec {
	m, err := transformer.ReadHFConfig(filepath.Join("..", "..", "..", "graph", "transformer", "testdata", "hf5", "nemotron_h-defaults.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.Seq, m.Batch = 4096, 64
	return m
}
