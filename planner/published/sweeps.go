package published

import "fmt"

// Sweep is a published sweep: one model (or one family at several
// sequence lengths) run under several plans on one cluster and one
// software stack, measured side by side. What a user
// acts on is placer's order of such plans, so each sweep is a test of
// the order (Spearman within it) as much as of each figure. Rows keep
// what a user would type (placer eval --workload W --cluster C
// --strategy S) so that a row's prediction is placer eval's; a row placer
// cannot write yet keeps the publication's plan in words and is refused
// by placer's own reading of its strategy, with that refusal shown.
type Sweep struct {
	Name string
	// Set is the published source set the sweep's figures come from
	// (SourceSets' keys).
	Set string
	// Source cites where every row's figure is published.
	Source string
	// Unit is what Measured holds: TokensPerGPU (tokens a second per
	// GPU), StepSeconds, or Order (a rank: only the order is published).
	Unit SweepUnit
	// Stack is the software the sweep ran, and what of it placer leaves
	// out (the same for every row: it shifts the figures, not their
	// order).
	Stack string
	Rows  []SweepRow
}

// SweepUnit is what a sweep measured.
type SweepUnit int

// The units.
const (
	TokensPerGPU SweepUnit = iota // tokens a second per GPU
	StepSeconds                   // seconds a training step
	// Order: the publication states only which plan is faster. Measured
	// is each row's rank as stated (1 the fastest; equal ranks for plans
	// stated alike); placer's prediction is the step's seconds, and no
	// error is counted, only the order.
	Order
)

func (u SweepUnit) String() string {
	return [...]string{"tokens/s per GPU", "step s", "order stated, 1 the fastest; predicted: step s"}[u]
}

// SweepRow is one plan of a sweep as published and as placer reads it.
type SweepRow struct {
	// Label is the row as the publication names it.
	Label string
	// Workload, Cluster and Strategy are placer's reading of the row
	// (--workload, --cluster, --strategy); Note says what of the row
	// the reading assumes where the publication is silent.
	Workload, Cluster, Strategy string
	Note                        string
	// Measured is the published figure, in the sweep's Unit (its rank
	// where the Unit is Order).
	Measured float64
	// PeakGiB is the published peak memory of a GPU in GiB (0: none
	// published), and PeakReserved whether it is what the allocator
	// reserved (torchtitan's memory monitor: torch.cuda's
	// max_memory_reserved, the largest over the GPUs) rather than what
	// tensors held (max_memory_allocated).
	PeakGiB      float64
	PeakReserved bool
	// Regression cites where the framework's own maintainers list the
	// row's figure as a regression of its release (an issue of their
	// tracker): the row stays a test and keeps its error, and the
	// errors a user's figure carries are said with and without it
	// (RegimeError.Regressions, the reports' means without regressions).
	Regression string
}

// BridgeQwen3DroplessRegression is Megatron-Bridge's tracker listing
// Qwen3-30B-A3B's dropless runs of 25.11 and 26.02 on H100 and B200 as
// 2x slower than 25.09's token-dropping ones ("[Regression] Low QWEN3
// 30B B200 and H100 performance with dropless", opened 2026-01-20, open
// when read on 2026-11-28); v0.3.1 (26.02.01) changed the recipes
// (HybridEP; on H100 EP 16 without a pipeline, on B200 MBS 4 and
// attention graphs) rather than the code.
const BridgeQwen3DroplessRegression = "github.com/NVIDIA-NeMo/Megatron-Bridge/issues/1998"

// regressed is r listed as its release's known regression
// (BridgeQwen3DroplessRegression's rows).
func (r SweepRow) regressed() SweepRow { r.Regression = BridgeQwen3DroplessRegression; return r }

// Sweeps are the published sweeps placer is checked on.
func Sweeps() []Sweep {
	return append([]Sweep{torchtitanFSDP8B(1, 8, gt1, [3]float64{5762, 6667, 8532}, [3]float64{82.4, 77.0, 76.8}), torchtitanCP8B(),
		torchtitanFSDP8B(3, 128, gt16, [3]float64{5605, 6514, 8380}, [3]float64{67.0, 62.0, 61.8}), torchtitan70B(), torchtitan405BPP(), torchtitan405BCP(),
		qwen3ModelZoo()}, publishedSweeps()...)
}

// torchtitan's H100 benchmarks of December 2024
// (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, tables
// 1 to 6): Llama 3.1 8B, 70B and 405B on Grand Teton hosts (the
// grand-teton pod), throughput read at the 90th iteration. Sequence
// 8,192 unless a table says otherwise; the global batch is the local
// batch times the FSDP degree. torchtitan's selective activation
// checkpointing is its per-op policy (saving the matmuls' outputs),
// read as recompute=selective (Megatron's: the attention core); Float8
// is torchao's tensorwise dynamic scaling (fp8=current); AsyncTP the
// all-gather and reduce-scatter overlapped with their GEMMs
// (tpoverlap=on). Memory(GiB) beside each row is the peak torchtitan's
// memory monitor read (what the allocator reserved), the largest on any
// GPU (the page's footnote 1: "Different PP ranks can have different peak
// memory usages. We take the maximum across all GPUs").
const torchtitanSource = "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md (torch 1963fc8, torchao eab345c, torchtitan 9dec370, 2024-12)"

// torchtitan's clusters: grand-teton pods of 1 to 64 hosts, attention
// torch's flash kernel: torchtitan calls scaled_dot_product_attention,
// whose cuDNN backend torch made opt-in after 2.5
// (pytorch/pytorch#138522, October 2024), so that the nightly of
// December 2024 the benchmarks ran picks FlashAttention-2 on H100
// (pytorch/pytorch#142132: SDPA at 329 TFLOP/s against cuDNN's 631 on
// 2.6.0.dev20241204).
const (
	gt1  = "grand-teton:1,attention=flash"
	gt16 = "grand-teton:16,attention=flash"
	gt32 = "grand-teton:32,attention=flash"
	gt64 = "grand-teton:64,attention=flash"
)

const torchtitanStack = "torchtitan (FSDP2, eager or torch.compile, torchao Float8, SDPA: flash attention): eager rows costed as the ATen ops eager PyTorch issues (stack=torchtitan-0.2), compiled rows as fused kernels (compile=on); the GPUs held at the 500 W power limit (docs/cluster-scale.md, The pod)"

// torchtitanFSDP8B is table 1 (8 GPUs) or 3 (128): Llama 3.1 8B under
// FSDP, local batch 2, selective checkpointing, eager, compiled, and
// compiled with Float8 (tps: the three rows' tokens a second per GPU).
// The eager row is read with torchtitan's stack as it runs by default
// (compile=false: each layer's ATen ops, eagerBlock), the compiled rows
// with compile=on (placer's fused kernels, as before: torch.compile's
// Inductor fuses the norms, the rotary embedding and SwiGLU's
// elementwise ops; placer has no model of its kernels of its own). Every
// other torchtitan table ran compiled: compile=on on all its rows.
func torchtitanFSDP8B(table, gpus int, cluster string, tps, gib [3]float64) Sweep {
	w := fmt.Sprintf("llama3-8b:seq=8192,batch=%d", 2*gpus)
	s := fmt.Sprintf("dp=%d,mbs=2,fsdp=on,recompute=selective,stack=torchtitan-0.2", gpus)
	return Sweep{Name: fmt.Sprintf("torchtitan table %d: Llama 3.1 8B, FSDP on %d H100s", table, gpus), Set: SetTorchtitanH100,
		Source: fmt.Sprintf("%s, table %d", torchtitanSource, table), Unit: TokensPerGPU, Stack: torchtitanStack, Rows: []SweepRow{
			{Label: "FSDP", Workload: w, Cluster: cluster, Strategy: s, Measured: tps[0], PeakGiB: gib[0], PeakReserved: true},
			{Label: "FSDP + torch.compile", Workload: w, Cluster: cluster, Strategy: s + ",compile=on", Measured: tps[1], PeakGiB: gib[1], PeakReserved: true},
			{Label: "FSDP + torch.compile + Float8", Workload: w, Cluster: cluster, Strategy: s + ",fp8=current,compile=on", Measured: tps[2], PeakGiB: gib[2], PeakReserved: true},
		}}
}

func torchtitanCP8B() Sweep {
	row := func(fsdp, cp, seq int, tps, gib float64) SweepRow {
		return SweepRow{Label: fmt.Sprintf("FSDP %d, CP %d, %d tokens", fsdp, cp, seq),
			Workload: fmt.Sprintf("llama3-8b:seq=%d,batch=%d", seq, fsdp), Cluster: gt1,
			Strategy: fmt.Sprintf("dp=%d,cp=%d,mbs=1,fsdp=on,recompute=full,fp8=current,stack=torchtitan-0.2,compile=on", fsdp, cp), Measured: tps,
			PeakGiB: gib, PeakReserved: true}
	}
	return Sweep{Name: "torchtitan table 2: Llama 3.1 8B, FSDP x CP on 8 H100s, 32K to 262K tokens", Set: SetTorchtitanH100, Source: torchtitanSource + ", table 2",
		Unit: TokensPerGPU, Stack: torchtitanStack + " (every row compiled, Float8)", Rows: []SweepRow{
			row(8, 1, 32768, 3890, 83.9), row(4, 2, 65536, 2540, 84.2), row(2, 4, 131072, 1071, 84.0), row(1, 8, 262144, 548, 84.5),
		}}
}

func torchtitan70B() Sweep {
	w := "llama3-70b:seq=8192,batch=512"
	s := "tp=8,dp=32,mbs=16,sp=on,fsdp=on,recompute=full,fp8=current,stack=torchtitan-0.2,compile=on"
	return Sweep{Name: "torchtitan table 4: Llama 3.1 70B, FSDP 32 x TP 8 on 256 H100s", Set: SetTorchtitanH100, Source: torchtitanSource + ", table 4",
		Unit: TokensPerGPU, Stack: torchtitanStack + " (both rows compiled, Float8)", Rows: []SweepRow{
			{Label: "2D", Workload: w, Cluster: gt32, Strategy: s, Measured: 829, PeakGiB: 71.9, PeakReserved: true},
			{Label: "2D + AsyncTP", Workload: w, Cluster: gt32, Strategy: s + ",tpoverlap=on", Measured: 876, PeakGiB: 67.6, PeakReserved: true},
		}}
}

func torchtitan405BPP() Sweep {
	w := "llama3.1-405b:seq=8192,batch=256"
	// Micro-batch 4: the table's local batch 32 in 8 micro-batches,
	// torchtitan's default at 9dec370 of as many micro-batches as
	// pipeline ranks (parallelisms/pipelining_utils.py
	// build_pipeline_schedule: n_microbatches = pipeline_parallel_degree
	// where pipeline_parallel_microbatches is unset; pipeline_llama.py
	// the same); the table sets no other.
	s := "tp=8,pp=8,dp=8,mbs=4,sp=on,tpoverlap=on,fsdp=on,recompute=full,fp8=current,first=15,last=15,stack=torchtitan-0.2,compile=on"
	split := "126 layers: the first and last stages 15 (the embedding and the output as layers; torchtitan's split is not stated)"
	return Sweep{Name: "torchtitan table 5: Llama 3.1 405B, FSDP 8 x TP 8 x PP 8 on 512 H100s", Set: SetTorchtitanH100, Source: torchtitanSource + ", table 5",
		Unit: TokensPerGPU, Stack: torchtitanStack + " (both rows compiled, Float8, AsyncTP)", Rows: []SweepRow{
			{Label: "1F1B", Workload: w, Cluster: gt64, Strategy: s, Measured: 100, PeakGiB: 82.5, PeakReserved: true,
				Note: "micro-batch 4, 8 a step (torchtitan's default: as many as pipeline ranks); " + split},
			{Label: "Interleaved 1F1B", Workload: w, Cluster: gt64, Strategy: s + ",vp=2", Measured: 128, PeakGiB: 72.7, PeakReserved: true,
				Note: "2 stages a rank (the table does not say); " + split},
		}}
}

func torchtitan405BCP() Sweep {
	row := func(fsdp, cp, seq int, tps, gib float64) SweepRow {
		return SweepRow{Label: fmt.Sprintf("FSDP %d, CP %d, %d tokens", fsdp, cp, seq), PeakGiB: gib, PeakReserved: true,
			Workload: fmt.Sprintf("llama3.1-405b:seq=%d,batch=%d", seq, 8*fsdp), Cluster: gt64,
			Strategy: fmt.Sprintf("tp=8,pp=8,dp=%d,cp=%d,mbs=1,sp=on,tpoverlap=on,fsdp=on,recompute=full,fp8=current,first=15,last=15,stack=torchtitan-0.2,compile=on", fsdp, cp),
			Measured: tps, Note: "126 layers: the first and last stages 15 (the embedding and the output as layers)"}
	}
	return Sweep{Name: "torchtitan table 6: Llama 3.1 405B, FSDP x CP x TP 8 x PP 8 on 512 H100s, 32K to 262K tokens", Set: SetTorchtitanH100,
		Source: torchtitanSource + ", table 6", Unit: TokensPerGPU, Stack: torchtitanStack + " (every row compiled, Float8, AsyncTP, 1F1B)",
		Rows: []SweepRow{row(8, 1, 32768, 76, 75.3), row(4, 2, 65536, 47, 75.9), row(2, 4, 131072, 31, 77.1), row(1, 8, 262144, 16, 84.9)}}
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
