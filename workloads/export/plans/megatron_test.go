package plans

import (
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestMegatronArgs: a plan's Megatron-LM arguments, written by hand from
// Megatron-LM's flags.
func TestMegatronArgs(t *testing.T) {
	gpt := transformer.GPT(96, 12288, 96, 4096, 131072, 1152)
	gpt.Tied = false
	llama, err := transformer.Parse("llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256,batch=2048")
	if err != nil {
		t.Fatal(err)
	}
	small := transformer.GPT(4, 32, 4, 8, 64, 8)
	llama128K := llama
	llama128K.Seq, llama128K.Batch = 131072, 128
	// A small mixture of experts: 4 layers, the first dense, 8 experts of
	// 64 (top 2) and one shared, head width 16 where hidden / heads is 8.
	moe, err := transformer.Parse("llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=8,vocab=64,batch=8,head_dim=16,experts=8,topk=2,expert_ffn=64,shared=1,dense_layers=1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		m    transformer.Spec
		s    plan.Strategy
		gpus int
		want string
		err  string
	}{
		{"megatron's 177B row", gpt, plan.Strategy{Tensor: 8, Pipeline: 6, Replicas: 48, Virtual: 8, MicroBatchSize: 1, MicroBatches: 24,
			SequenceParallel: true, TPOverlap: true, DistOpt: true}, 2304,
			"--num-layers 96 --hidden-size 12288 --ffn-hidden-size 49152 --num-attention-heads 96 --seq-length 4096 --max-position-embeddings 4096 " +
				"--untie-embeddings-and-output-weights --bf16 --micro-batch-size 1 --global-batch-size 1152 --tensor-model-parallel-size 8 " +
				"--pipeline-model-parallel-size 6 --num-layers-per-virtual-pipeline-stage 2 --sequence-parallel --tp-comm-overlap " +
				"--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", ""},
		// Meta's split (first=7 at vp=4) is not one Megatron-Core runs:
		// it splits an end stage's layers into vp equal model chunks.
		{"llama 3 405B, uneven", llama, plan.Strategy{Tensor: 8, Pipeline: 16, Replicas: 64, Virtual: 4, MicroBatchSize: 1, MicroBatches: 32,
			Recompute: plan.FullRecompute, FirstLayers: 7, LastLayers: 7}, 8192, "",
			"megatron arguments: first=7 with vp=4: Megatron-Core splits an end stage's layers into vp equal model chunks (a multiple of 4, or embedding-layer=on,loss-layer=on)"},
		{"llama 3 405B, uneven by vp", llama, plan.Strategy{Tensor: 8, Pipeline: 16, Replicas: 64, Virtual: 2, MicroBatchSize: 1, MicroBatches: 32,
			Recompute: plan.FullRecompute, FirstLayers: 6, LastLayers: 8}, 8192,
			"--num-layers 126 --hidden-size 16384 --ffn-hidden-size 53248 --num-attention-heads 128 --group-query-attention --num-query-groups 8 " +
				"--seq-length 8192 --max-position-embeddings 8192 --normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope " +
				"--untie-embeddings-and-output-weights --bf16 --micro-batch-size 1 --global-batch-size 2048 --tensor-model-parallel-size 8 " +
				"--pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 8 " +
				"--num-virtual-stages-per-pipeline-rank 2 --overlap-grad-reduce --recompute-granularity full --recompute-method uniform --recompute-num-layers 1", ""},
		{"small, tied, selective", small, plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Recompute: plan.SelectiveRecompute}, 8,
			"--num-layers 4 --hidden-size 32 --ffn-hidden-size 128 --num-attention-heads 4 --seq-length 8 --max-position-embeddings 8 --bf16 " +
				"--micro-batch-size 2 --global-batch-size 8 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --overlap-grad-reduce " +
				"--recompute-granularity selective", ""},
		{"block recomputation", small, plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Recompute: plan.FullRecompute, RecomputeLayers: 1}, 8,
			"--num-layers 4 --hidden-size 32 --ffn-hidden-size 128 --num-attention-heads 4 --seq-length 8 --max-position-embeddings 8 --bf16 " +
				"--micro-batch-size 2 --global-batch-size 8 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --overlap-grad-reduce " +
				"--recompute-granularity full --recompute-method block --recompute-num-layers 1", ""},
		{"gradients in bf16", small, plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, DistOpt: true, GradBF16: true}, 8,
			"--num-layers 4 --hidden-size 32 --ffn-hidden-size 128 --num-attention-heads 4 --seq-length 8 --max-position-embeddings 8 --bf16 --grad-reduce-in-bf16 " +
				"--micro-batch-size 2 --global-batch-size 8 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 " +
				"--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", ""},
		{"experts, all-to-alls overlapped", mustParse(t, "gpt:layers=2,hidden=16,heads=2,seq=8,vocab=64,batch=8,experts=4,topk=2,expert_ffn=32"),
			plan.Strategy{Replicas: 4, MicroBatchSize: 1, MicroBatches: 2, DistOpt: true, Experts: 4, EPOverlap: true}, 4,
			"--num-layers 2 --hidden-size 16 --ffn-hidden-size 64 --num-attention-heads 2 --seq-length 8 --max-position-embeddings 8 " +
				"--num-experts 4 --moe-router-topk 2 --moe-ffn-hidden-size 32 --moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-permute-fusion --moe-router-fusion " +
				"--expert-model-parallel-size 4 --expert-tensor-parallel-size 1 --overlap-moe-expert-parallel-comm --delay-wgrad-compute --bf16 " +
				"--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 " +
				"--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", ""},
		{"gpus", small, plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2}, 16, "", "is not the 16 GPUs"},
		{"batch", small, plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 1, MicroBatches: 2}, 8, "", "is not the batch of 8"},
		{"gpipe", small, plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Schedule: decision.GPipe}, 8, "", "Megatron-LM runs 1F1B"},
		{"stage-tp", small, plan.Strategy{TensorStages: []int{2, 4}, Pipeline: 2, Replicas: 4, MicroBatchSize: 1, MicroBatches: 2}, 24, "",
			"megatron arguments: stage-tp=2:4: a tensor-parallel degree per stage cannot be exported (Megatron-LM has one --tensor-model-parallel-size for every stage)"},
		{"llama 3 405B, 128K", llama128K, plan.Strategy{Tensor: 8, Context: 16, Pipeline: 16, Replicas: 8, Virtual: 4, MicroBatchSize: 1, MicroBatches: 16,
			SequenceParallel: true, DistOpt: true, FirstLayers: 7, LastLayers: 7}, 16384, "",
			"megatron arguments: first=7 with vp=4: Megatron-Core splits an end stage's layers into vp equal model chunks (a multiple of 4, or embedding-layer=on,loss-layer=on)"},
		// Llama 3's all-gather context parallelism (PP 18: 126 layers
		// evenly): Megatron-Core's --cp-comm-type all_gather after the
		// context-parallel size.
		{"llama 3 405B, 128K, all-gather cp", llama128K, plan.Strategy{Tensor: 8, Context: 16, Pipeline: 18, Replicas: 8, MicroBatchSize: 1, MicroBatches: 16,
			SequenceParallel: true, DistOpt: true, Software: plan.Software{CPComm: plan.CPCommAllGather}}, 18432,
			"--num-layers 126 --hidden-size 16384 --ffn-hidden-size 53248 --num-attention-heads 128 --group-query-attention --num-query-groups 8 " +
				"--seq-length 131072 --max-position-embeddings 131072 --normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope " +
				"--untie-embeddings-and-output-weights --bf16 --micro-batch-size 1 --global-batch-size 128 --tensor-model-parallel-size 8 " +
				"--pipeline-model-parallel-size 18 --context-parallel-size 16 --cp-comm-type all_gather --sequence-parallel " +
				"--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", ""},
		{"cp gpus", llama128K, plan.Strategy{Tensor: 8, Context: 16, Pipeline: 16, Replicas: 8, MicroBatchSize: 1, MicroBatches: 16}, 8192, "",
			"megatron arguments: tp=8 x cp=16 x pp=16 x dp=8 is not the 8192 GPUs"},
		{"moe, fp8 current, ep 4 x etp 1", moe, plan.Strategy{Tensor: 2, Pipeline: 1, Replicas: 4, MicroBatchSize: 1, MicroBatches: 2,
			SequenceParallel: true, DistOpt: true, Experts: 4, ExpertTensor: 1, FP8: plan.FP8Current}, 8,
			"--num-layers 4 --hidden-size 32 --ffn-hidden-size 96 --num-attention-heads 4 --kv-channels 16 --group-query-attention --num-query-groups 2 " +
				"--seq-length 8 --max-position-embeddings 8 --normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope " +
				"--untie-embeddings-and-output-weights --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 64 " +
				"--moe-shared-expert-intermediate-size 64 --moe-layer-freq ([0]*1+[1]*3) --moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-permute-fusion --moe-router-fusion " +
				"--expert-model-parallel-size 4 --expert-tensor-parallel-size 1 --bf16 --fp8-format hybrid --fp8-recipe tensorwise " +
				"--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --sequence-parallel " +
				"--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", ""},
		{"fsdp, fp8 blockwise, etp = tp", moe, plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 8, MicroBatchSize: 1, MicroBatches: 1,
			FSDP: true, Experts: 8, FP8: plan.FP8Blockwise}, 8,
			"--num-layers 4 --hidden-size 32 --ffn-hidden-size 96 --num-attention-heads 4 --kv-channels 16 --group-query-attention --num-query-groups 2 " +
				"--seq-length 8 --max-position-embeddings 8 --normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope " +
				"--untie-embeddings-and-output-weights --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 64 " +
				"--moe-shared-expert-intermediate-size 64 --moe-layer-freq ([0]*1+[1]*3) --moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-permute-fusion --moe-router-fusion " +
				"--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 --bf16 --fp8-format e4m3 --fp8-recipe blockwise " +
				"--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 " +
				"--use-megatron-fsdp --ckpt-format fsdp_dtensor --data-parallel-sharding-strategy optim_grads_params --no-gradient-accumulation-fusion " +
				"--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", ""},
		{"split", small, plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, FirstLayers: 3, LastLayers: 3}, 8, "", "first=3 + last=3"},
		// Megatron-MoE-ModelZoo's Qwen3-235B-A22B plan of 32 stages of 3
		// chunks: the embedding and the loss counted as layers (the
		// virtual stages per rank, not layers per virtual stage, and no
		// first/last stage layers, which Megatron-Core refuses with
		// them), the norms and the experts' activation recomputed.
		{"qwen3 235B, embedding and loss as layers, modules", mustParse(t, "qwen3-235b-a22b:seq=4096,batch=2048"),
			plan.Strategy{Tensor: 2, Pipeline: 32, Virtual: 3, Replicas: 4, MicroBatchSize: 1, MicroBatches: 512, SequenceParallel: true, DistOpt: true,
				Experts: 8, ExpertTensor: 1, EmbeddingLayer: true, LossLayer: true, FirstLayers: 2, LastLayers: 2,
				Recompute: plan.SelectiveRecompute, RecomputeModules: plan.RecomputeLayerNorm | plan.RecomputeMoEAct}, 256,
			"--num-layers 94 --hidden-size 4096 --ffn-hidden-size 12288 --num-attention-heads 64 --kv-channels 128 --group-query-attention --num-query-groups 4 " +
				"--seq-length 4096 --max-position-embeddings 4096 --normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope " +
				"--untie-embeddings-and-output-weights --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536 " +
				"--moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-permute-fusion --moe-router-fusion --expert-model-parallel-size 8 --expert-tensor-parallel-size 1 --bf16 " +
				"--micro-batch-size 1 --global-batch-size 2048 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 32 " +
				"--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split --num-virtual-stages-per-pipeline-rank 3 " +
				"--sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather " +
				"--recompute-granularity selective --recompute-modules moe_act layernorm", ""},
		{"units split", small, plan.Strategy{Tensor: 2, Pipeline: 4, Replicas: 1, MicroBatchSize: 2, MicroBatches: 4, LossLayer: true}, 8, "",
			"loss-layer=on: the 4 layers and the loss are 5 units, which do not split evenly over pp=4"},
		// DeepSeek-V3 (config.json: q_lora_rank 1,536, kv_lora_rank 512,
		// qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
		// num_nextn_predict_layers 1) on 64 GPUs.
		{"deepseek-v3: latent attention, multi-token prediction", mustParse(t, "deepseek-v3:seq=4096,batch=64"),
			plan.Strategy{Tensor: 1, Pipeline: 4, Replicas: 16, MicroBatchSize: 1, MicroBatches: 4, DistOpt: true, Experts: 16, FirstLayers: 16, LastLayers: 15}, 64,
			"--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 --kv-channels 128 --seq-length 4096 --max-position-embeddings 4096 " +
				"--normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope --untie-embeddings-and-output-weights " +
				"--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --mtp-num-layers 1 " +
				"--num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) " +
				"--moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-permute-fusion --moe-router-fusion --expert-model-parallel-size 16 --expert-tensor-parallel-size 1 --bf16 " +
				"--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 " +
				"--decoder-first-pipeline-num-layers 16 --decoder-last-pipeline-num-layers 15 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", ""},
		// Uncompressed queries (DeepSeek-V2-Lite's q_lora_rank null): no
		// --q-lora-rank.
		{"latent attention, full queries", mustParse(t, "llama:layers=2,hidden=64,heads=4,ffn=128,seq=8,vocab=64,batch=8,head_dim=16,kv_lora=32,rope_dim=8"),
			plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 8, MicroBatchSize: 1, MicroBatches: 1}, 8,
			"--num-layers 2 --hidden-size 64 --ffn-hidden-size 128 --num-attention-heads 4 --seq-length 8 --max-position-embeddings 8 " +
				"--normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope --untie-embeddings-and-output-weights " +
				"--multi-latent-attention --kv-lora-rank 32 --qk-head-dim 16 --qk-pos-emb-head-dim 8 --v-head-dim 16 --bf16 " +
				"--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --overlap-grad-reduce", ""},
		// GPT-OSS's window of 128 keys in every other layer from the first:
		// keys i-127..i, and Megatron-Core's skip frequency 2 (1-based
		// layers 1, 3, ...: 0-based 0, 2, ...).
		{"gpt-oss: a window every other layer", mustParse(t, "llama:layers=4,hidden=64,heads=4,seq=256,vocab=64,batch=8,window=128,window_every=2"),
			plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 8, MicroBatchSize: 1, MicroBatches: 1}, 8,
			"--num-layers 4 --hidden-size 64 --ffn-hidden-size 256 --num-attention-heads 4 --seq-length 256 --max-position-embeddings 256 " +
				"--normalization RMSNorm --swiglu --disable-bias-linear --position-embedding-type rope --untie-embeddings-and-output-weights " +
				"--window-size 127,0 --window-attn-skip-freq 2 --bf16 " +
				"--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --overlap-grad-reduce", ""},
		{"mtp on a gpt", mustParse(t, "gpt:layers=2,hidden=16,heads=2,seq=8,vocab=64,batch=8,mtp=1"),
			plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 8, MicroBatchSize: 1, MicroBatches: 1}, 8, "", "mtp=1 on gpt's learned positions"},
		{"mtp, epoverlap without a pipeline", mustParse(t, "llama:layers=2,hidden=16,heads=2,seq=8,vocab=64,batch=8,experts=4,topk=2,expert_ffn=32,mtp=1"),
			plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 8, MicroBatchSize: 1, MicroBatches: 1, Experts: 4, EPOverlap: true}, 8, "", "epoverlap=on with mtp=1 and pp=1"},
		{"2 mtp layers, epoverlap", mustParse(t, "llama:layers=4,hidden=16,heads=2,seq=8,vocab=64,batch=8,experts=4,topk=2,expert_ffn=32,mtp=2"),
			plan.Strategy{Tensor: 1, Pipeline: 2, Virtual: 2, Replicas: 4, MicroBatchSize: 1, MicroBatches: 2, Experts: 4, EPOverlap: true}, 8, "", "epoverlap=on with mtp=2"},
	}
	for _, c := range cases {
		args, err := MegatronArgs(c.m, c.s, c.gpus)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, %v; want an error with %q", c.name, args, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(args, " ") != c.want {
			t.Errorf("%s: %v\n got %s\nwant %s", c.name, err, strings.Join(args, " "), c.want)
		}
	}
	// The script: one flag and its value a line in a bash array, and how
	// to launch it on the nodes.
	args, _ := MegatronArgs(small, cases[3].s, 8) // "small, tied, selective"
	script := MegatronScript(small, "tp=2,pp=2,dp=2,mbs=2", 8, 8, args)
	for _, want := range []string{"torchrun --nnodes 1 --nproc-per-node 8", "--vocab-size 63 --mock-data", "PLACER_ARGS=(\n  --num-layers 4\n", "\n  --recompute-granularity selective\n)\n"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
}

func mustParse(t *testing.T, text string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWindowPattern: --window-attn-skip-freq's list, by hand: the window
// in 0-based layers 0, every, 2 x every, ...
func TestWindowPattern(t *testing.T) {
	for _, c := range []struct {
		layers, every int
		want          string
	}{
		{12, 3, "(([1]+[0]*2)*4)"},          // 1,0,0 x 4
		{7, 3, "(([1]+[0]*2)*2+[1])"},       // 1,0,0,1,0,0,1
		{8, 3, "(([1]+[0]*2)*2+[1]+[0]*1)"}, // 1,0,0,1,0,0,1,0
		{5, 4, "(([1]+[0]*3)*1+[1])"},       // 1,0,0,0,1
	} {
		if got := windowPattern(c.layers, c.every); got != c.want {
			t.Errorf("windowPattern(%d, %d) = %s, want %s", c.layers, c.every, got, c.want)
		}
	}
}

// TestMegatronStack: the software keys written as Megatron-Core's
// arguments (the parts of the export they change), and Megatron-Core's
// refusals of CUDA graphs refused in one line.
func TestMegatronStack(t *testing.T) {
	const (
		moe   = "llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=64,vocab=64,batch=16,head_dim=16,experts=8,topk=2,expert_ffn=64"
		dense = "llama:layers=4,hidden=32,heads=4,kv_heads=2,ffn=96,seq=64,vocab=64,batch=16,head_dim=16"
	)
	for _, c := range []struct {
		workload, plan string
		want, not      []string
		err            string
	}{
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2",
			[]string{"--moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-permute-fusion --moe-router-fusion --expert-model-parallel-size 4"},
			[]string{"--cuda-graph", "--moe-expert-capacity-factor", "--moe-flex-dispatcher-backend"}, ""},
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2,stack=megatron-core-0.16",
			[]string{"--moe-token-dispatcher-type allgather --expert-model-parallel-size 4"},
			[]string{"--moe-grouped-gemm", "--moe-permute-fusion", "--moe-router-fusion"}, ""},
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2,dispatcher=flex,grouped-gemm=off,cuda-graphs=dense",
			[]string{"--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep --enable-experimental --moe-permute-fusion --moe-router-fusion ",
				"--cuda-graph-impl transformer_engine --cuda-graph-scope attn"},
			[]string{"--moe-grouped-gemm", "--cuda-graph-scope attn mlp"}, ""},
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2,dispatcher=hybridep",
			[]string{"--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "}, []string{"deepep", "--enable-experimental"}, ""},
		// DeepEP's fused multihot conversion, which placer's default stack
		// costs, runs only under Megatron-Core's experimental features;
		// the model zoo's stack costs the unfused one and writes none, and
		// so does an unfused permutation.
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2,dispatcher=flex",
			[]string{"--moe-flex-dispatcher-backend deepep --enable-experimental "}, nil, ""},
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2,stack=model-zoo-moe-dev",
			[]string{"--moe-flex-dispatcher-backend deepep "}, []string{"--enable-experimental", "--moe-router-fusion"}, ""},
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2,dispatcher=flex,permute-fusion=off",
			[]string{"--moe-flex-dispatcher-backend deepep "}, []string{"--enable-experimental", "--moe-permute-fusion"}, ""},
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2", nil, []string{"--enable-experimental"}, ""},
		{moe, "tp=1,pp=1,dp=8,ep=4,mbs=2,routing=capacity:1.25,cuda-graphs=full",
			[]string{"--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity", "--cuda-graph-scope attn moe"}, nil, ""},
		{dense, "tp=1,pp=1,dp=8,mbs=2,cuda-graphs=dense", []string{"--cuda-graph-impl transformer_engine --cuda-graph-scope attn mlp"}, []string{"--moe-"}, ""},
		{dense, "tp=1,pp=2,dp=4,mbs=2,mb=2,recompute=full,cuda-graphs=dense", nil, nil, "cuda-graphs=dense with recompute=full"},
		{dense, "tp=1,pp=1,dp=8,mbs=2,recompute=selective,cuda-graphs=dense", nil, nil, "beside recompute=selective of the attention core"},
		{moe + ",dense_layers=1", "tp=1,pp=2,dp=4,vp=2,ep=4,mbs=1,mb=4,epoverlap=on,cuda-graphs=dense", nil, nil, "--cuda-graph-scope attn mlp: cuda-graphs=dense beside epoverlap=on"},
	} {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		args, err := MegatronArgs(m, s, 8)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line with %q", c.plan, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		line := strings.Join(args, " ") + " "
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q not in\n%s", c.plan, w, line)
			}
		}
		for _, w := range c.not {
			if strings.Contains(line, w) {
				t.Errorf("%s: %q in\n%s", c.plan, w, line)
			}
		}
	}
}
