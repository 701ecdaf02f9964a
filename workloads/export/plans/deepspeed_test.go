package plans

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestDeepSpeedTransformer: a transformer's plan at cluster scale as
// DeepSpeed's configuration and DeepSpeed-MoE's layer, by hand.
func TestDeepSpeedTransformer(t *testing.T) {
	moe := mustParse(t, "llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=64,vocab=64,batch=32,head_dim=16,experts=8,topk=2,expert_ffn=64,dense_layers=1")
	dense := mustParse(t, "gpt:layers=4,hidden=32,heads=4,seq=64,vocab=64,batch=32")
	dp := func(d, mbs int) plan.Strategy {
		return plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: d, MicroBatchSize: mbs, MicroBatches: 32 / (d * mbs)}
	}
	withEP := func(s plan.Strategy, ep int) plan.Strategy { s.Experts = ep; return s }
	zero1 := func(s plan.Strategy) plan.Strategy { s.DistOpt = true; return s }
	cases := []struct {
		name   string
		s      plan.Strategy
		moe    bool
		config string   // the JSON, on one line
		module []string // lines of the experts' module
		err    string
	}{
		// 32 sequences on 8 ranks of micro-batches of 2: 2 accumulated.
		{"dense, ddp", dp(8, 2), false, `{"train_batch_size":32,"train_micro_batch_size_per_gpu":2,"gradient_accumulation_steps":2,"bf16":{"enabled":true},"zero_optimization":{"stage":0}}`, nil, ""},
		{"dense, fsdp", func() plan.Strategy { s := dp(8, 1); s.FSDP = true; return s }(), false,
			`{"train_batch_size":32,"train_micro_batch_size_per_gpu":1,"gradient_accumulation_steps":4,"bf16":{"enabled":true},"zero_optimization":{"stage":3}}`, nil, ""},
		// ep 4 of 8 ranks: 2 experts a rank, expert-data-parallel groups of 2.
		{"experts, zero-1", zero1(withEP(dp(8, 1), 4)), true,
			`{"train_batch_size":32,"train_micro_batch_size_per_gpu":1,"gradient_accumulation_steps":4,"bf16":{"enabled":true},"zero_optimization":{"stage":1}}`,
			[]string{`CONFIG = "ds.json"`, "WORLD_SIZE = 8", "HIDDEN = 32", "EXPERT_FFN = 64", "NUM_EXPERTS = 8", "TOP_K = 2", "EP_SIZE = 4", "GATED = True",
				"MOE_LAYERS = list(range(1, 4))", "expert parallelism 4: each rank holds 2 experts", "expert-data-parallel groups of\n2",
				"MoE(hidden_size=HIDDEN, expert=expert(), num_experts=NUM_EXPERTS, ep_size=EP_SIZE, k=TOP_K, drop_tokens=False)"}, ""},
		{"tp", plan.Strategy{Tensor: 2, Pipeline: 1, Replicas: 4, MicroBatchSize: 1, MicroBatches: 8, SequenceParallel: true}, false, "", nil, "tp=2: DeepSpeed's engine shards no layer"},
		{"pp", plan.Strategy{Tensor: 1, Pipeline: 2, Replicas: 4, MicroBatchSize: 1, MicroBatches: 8}, false, "", nil, "deepspeed: pipeline: pp=2"},
		{"cp", plan.Strategy{Tensor: 1, Context: 2, Pipeline: 1, Replicas: 4, MicroBatchSize: 1, MicroBatches: 8}, false, "", nil, "sequence_parallel_size: cp=2"},
		{"recompute", func() plan.Strategy { s := dp(8, 1); s.Recompute = plan.SelectiveRecompute; return s }(), false, "", nil, "activation_checkpointing: recompute=selective"},
		{"fp8", func() plan.Strategy { s := dp(8, 1); s.FP8 = plan.FP8Current; return s }(), false, "", nil, "fp8=current"},
		{"experts under zero-3", func() plan.Strategy { s := withEP(dp(8, 1), 4); s.FSDP = true; return s }(), true, "", nil,
			"Native DeepSpeed MoE is not supported with ZeRO Stage 3"},
		{"experts overlapped", func() plan.Strategy { s := withEP(dp(8, 1), 4); s.EPOverlap = true; return s }(), true, "", nil, "epoverlap=on"},
	}
	for _, c := range cases {
		m := dense
		if c.moe {
			m = moe
		}
		config, module, err := DeepSpeedTransformer(m, c.s, 8, "", "ds.json")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v; want one line with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := strings.Join(strings.Fields(string(config)), ""); got != c.config {
			t.Errorf("%s: config %s, want %s", c.name, got, c.config)
		}
		if (module != nil) != c.moe {
			t.Errorf("%s: module written %v, want %v", c.name, module != nil, c.moe)
		}
		for _, want := range c.module {
			if !strings.Contains(string(module), want) {
				t.Errorf("%s: the module lacks %q:\n%s", c.name, want, module)
			}
		}
	}
	if got := DeepSpeedMoEPath("out/my-plan.json"); got != "out/my_plan_moe.py" {
		t.Errorf("DeepSpeedMoEPath = %s", got)
	}
	ds := mustParse(t, "deepseek-v3:seq=4096,batch=64")
	if _, _, err := DeepSpeedTransformer(ds, plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 64, MicroBatchSize: 1, MicroBatches: 1, Experts: 64, DistOpt: true}, 64, "", ""); err == nil || !strings.Contains(err.Error(), "shared=1") {
		t.Errorf("deepseek-v3's shared expert: %v", err)
	}
}
