package published

import (
	"fmt"
)

// korthikantiRecompute is Korthikanti et al., "Reducing Activation
// Recomputation in Large Transformer Models" (arXiv 2205.05198, MLSys'23):
// the end-to-end iteration time of each of its four GPT models on DGX A100
// 80 GB nodes with full activation recomputation (its baseline: tensor
// parallelism without sequence parallelism, every layer recomputed) and
// with its own method (sequence parallelism and selective recomputation of
// the attention core), the same model, GPUs and batch. The seconds are the
// paper's as Calculon transcribes them (calculon-ai/calculon
// calculon/megatron/validation.py, kProfile, commit 09bbcb7e: "These
// profiled values are reported here: https://arxiv.org/pdf/2205.05198.pdf");
// the paper's own text is not stored here, so its table number is not
// cited. The shapes, GPUs and batches are its configuration table (table
// 3, read as placer report megatron reads it: MegatronA100): sequence
// 2,048, vocabulary 51,200, TP 8, data-parallel size 1, micro-batch 1;
// the virtual stages are not stated and none are read.
func korthikantiRecompute() []Sweep {
	type model struct {
		name                      string
		layers, hidden, heads, pp int
		batch                     int
		full, present             float64
		nodes                     int // DGX A100 nodes: TP 8 x PP
	}
	models := []model{
		{"22B", 48, 6144, 64, 1, 4, 1.42, 1.10, 1},
		{"175B", 96, 12288, 96, 8, 64, 18.13, 13.75, 8},
		{"530B", 105, 20480, 128, 35, 280, 49.05, 37.83, 35},
		{"1T", 128, 25600, 160, 64, 512, 94.42, 71.49, 64},
	}
	var out []Sweep
	for _, m := range models {
		w := fmt.Sprintf("gpt:layers=%d,hidden=%d,heads=%d,seq=2048,vocab=51200,batch=%d", m.layers, m.hidden, m.heads, m.batch)
		c := fmt.Sprintf("dgx-a100:%d", m.nodes)
		s := fmt.Sprintf("tp=8,pp=%d,dp=1,mbs=1", m.pp)
		out = append(out, Sweep{
			Name:   fmt.Sprintf("Korthikanti et al.: GPT %s on %d A100s, full recomputation against sequence parallelism + selective", m.name, 8*m.pp),
			Set:    SetKorthikanti,
			Source: "Korthikanti et al., arXiv 2205.05198, end-to-end iteration times (as transcribed in calculon-ai/calculon calculon/megatron/validation.py, commit 09bbcb7e); configurations: its table 3",
			Unit:   StepSeconds,
			Stack:  "Megatron-LM of 2022 (no tensor-parallel overlap, unfused attention, mixed precision); placer reads both rows on the dgx-a100 pod",
			Rows: []SweepRow{
				{Label: "full recompute", Workload: w, Cluster: c, Strategy: s + ",recompute=full", Measured: m.full},
				{Label: "sequence parallel + selective", Workload: w, Cluster: c, Strategy: s + ",sp=on,recompute=selective", Measured: m.present},
			}})
	}
	return out
}

// megatronMoEReadme is Megatron-Core's MoE README's statement of order
// (NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md at
// 022bcb5a, "Tuning Guide of Parallel Mappings", rule 4: "In practice,
// EP8TP1 is better than EP4TP2 for 8x7B"): no figure, only which is
// faster. The statement names no cluster or batch; the README's
// reference mapping for Mixtral 8x7B (same page, "Reference Best
// Parallel Mapping", MCore v0.8: 64 H100s, sequence 4,096, TP 1, EP 8,
// PP 4, VP 8, micro-batch 1, global batch 256, BF16, the all-to-all
// dispatcher, dropless) is read as the EP 8 row, and EP 4 x TP 2 as the
// same with TP 2 (sequence parallelism, which the README requires with
// EP and TP) and the data-parallel size the GPUs leave.
func megatronMoEReadme() Sweep {
	const w = "mixtral-8x7b:seq=4096,batch=256"
	const c = "dgx-h100:8"
	note := "the README's 8x7B reference mapping (64 H100s, PP 4, VP 8, global batch 256); the statement names none"
	return Sweep{Name: "Megatron-Core MoE README: Mixtral 8x7B, EP 8 x TP 1 faster than EP 4 x TP 2 (order only)", Set: SetMegatronMoEReadme,
		Source: "NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md at 022bcb5a, Tuning Guide of Parallel Mappings, rule 4; reference mapping: Reference Best Parallel Mapping",
		Unit:   Order,
		Stack:  "Megatron-Core v0.8 (PyTorch 24.09, Transformer Engine 1.11), BF16, all-to-all dispatcher, grouped GEMM, permute fusion",
		Rows: []SweepRow{
			{Label: "EP8 TP1", Workload: w, Cluster: c, Strategy: "tp=1,pp=4,vp=8,ep=8,dp=16,mbs=1,distopt=on", Measured: 1, Note: note},
			{Label: "EP4 TP2", Workload: w, Cluster: c, Strategy: "tp=2,pp=4,vp=8,ep=4,dp=8,mbs=1,sp=on,distopt=on", Measured: 2, Note: note},
		}}
}

// qwen3ModelZoo is Megatron-Core's MoE model zoo's Qwen3-235B-A22B runs on
// 256 H100s (yanring/Megatron-MoE-ModelZoo, best_practice/Qwen3/readme.md:
// BF16, sequence 4,096, global batch 2,048, step times): the cross-node
// and intra-node expert-parallel strategies side by side. Every row is
// read with the model zoo's stack (stack=model-zoo-moe-dev: DeepEP's flex
// dispatcher, fused permutation, grouped GEMMs, the router and DeepEP's
// multihot conversion unfused as the May 2025 configuration ran them,
// without --moe-router-fusion or --enable-experimental), the pipeline
// of 32 stages, which ran the all-to-all dispatcher ("A2A" in the
// table's Dispatcher column), with dispatcher=alltoall.
// The rows without the 1F1B overlap and without FSDP are read with
// connections=1: the model zoo's Qwen3-235B-A22B.yaml sets
// CUDA_DEVICE_MAX_CONNECTIONS: 1 in its ENV_VARS (8017e11, the commit
// that published this table) and Megatron-Core asserts it with tensor
// parallelism on Hopper (arguments.py at 1e057005); the overlap row
// (the same yaml's ENV_VARS: "Used for 1F1B overlap",
// CUDA_DEVICE_MAX_CONNECTIONS: 32, b06a6d8; sbatch_benchmarking.sh
// sets 32 with A2A_OVERLAP=1 since) and the FSDP row (Megatron's FSDP
// asserts it is not 1) are read without it. The three rows at one queue
// are read with queue-ahead=on, as that code overlaps at one queue: the
// yaml's --overlap-grad-reduce and --overlap-param-gather, and
// overlap_p2p_comm, on by default under the interleaved schedule
// (arguments.py at 1e057005, --no-overlap-p2p-communication); its
// distributed_data_parallel.py groups buckets because "because of the use
// of CUDA_DEVICE_MAX_CONNECTIONS=1, having multiple back-to-back
// communications will prevent the overlap of the communication kernels
// with computation kernels" (so that one bucket's collective is in flight
// beside the compute), the same design as NVIDIA's MLPerf GPT-3 NeMo runs
// at one queue, on which connections=1 alone was 10 to 14 points too slow
// on every GPT-3 row (onequeue; docs/history.md).
func qwen3ModelZoo() Sweep {
	w := "qwen3-235b-a22b:seq=4096,batch=2048"
	c := "dgx-h100:32"
	return Sweep{Name: "Megatron-MoE-ModelZoo: Qwen3-235B-A22B on 256 H100s, five plans", Set: SetModelZoo,
		Source: "yanring/Megatron-MoE-ModelZoo best_practice/Qwen3/readme.md, Performance Results (moe_dev f3e6c5 and main 1e057005)",
		Unit:   StepSeconds,
		Stack:  "Megatron-Core with DeepEP (one row the alltoall dispatcher), BF16: stack=model-zoo-moe-dev, the A2A row dispatcher=alltoall",
		Rows: []SweepRow{
			{Label: "TP2 EP32 PP8 VPP4 DP16 MBS1, DeepEP", Workload: w, Cluster: c,
				Strategy: "tp=2,pp=8,vp=4,ep=32,etp=1,dp=16,mbs=1,sp=on,distopt=on,embedding-layer=on,loss-layer=on,recompute-modules=layernorm+moe_act,stack=model-zoo-moe-dev,connections=1,queue-ahead=on",
				Measured: 19.7, Note: "the embedding and the loss as layers (94 layers: 11, 12 x 6, 11)"},
			{Label: "the same + 1F1B overlap", Workload: w, Cluster: c,
				Strategy: "tp=2,pp=8,vp=4,ep=32,etp=1,dp=16,mbs=1,sp=on,distopt=on,embedding-layer=on,loss-layer=on,recompute-modules=layernorm+moe_act,epoverlap=on,stack=model-zoo-moe-dev",
				Measured: 17.6},
			{Label: "TP2 EP8 EDP32 DP128 FSDP MBS4, full recompute", Workload: w, Cluster: c,
				Strategy: "tp=2,ep=8,etp=1,dp=128,mbs=4,sp=on,fsdp=on,recompute=full,stack=model-zoo-moe-dev", Measured: 17.6},
			{Label: "TP2 EP8 PP32 VPP3 DP4 MBS1, A2A", Workload: w, Cluster: c,
				Strategy: "tp=2,pp=32,vp=3,ep=8,etp=1,dp=4,mbs=1,sp=on,distopt=on,embedding-layer=on,loss-layer=on,recompute-modules=layernorm+moe_act,stack=model-zoo-moe-dev,dispatcher=alltoall,connections=1,queue-ahead=on",
				Measured: 24.2, Note: "the embedding and the loss as layers (2, 3 x 30, 2)"},
			{Label: "TP4 EP8 PP8 VPP4 EDP4 DP8 MBS1, DeepEP", Workload: w, Cluster: c,
				Strategy: "tp=4,pp=8,vp=4,ep=8,etp=1,dp=8,mbs=1,sp=on,distopt=on,embedding-layer=on,loss-layer=on,stack=model-zoo-moe-dev,connections=1,queue-ahead=on", Measured: 29.0},
		}}
}
