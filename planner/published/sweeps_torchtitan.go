package published

import (
	"fmt"
)

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

// torchtitanA100Source is torchtitan's first performance page: Llama 3
// and Llama 2 under FSDP2 on 64 A100s of 80 GB (docs/performance.md at
// pytorch/torchtitan 1ea476e9f, 2024-04-24; the Llama 2 table first at
// 395a52627, 2024-04-18; both kept unchanged until 4d88a8a, 2024-12-03).
// WPS is train.py's tokens a second over the model-parallel size: per GPU
// under FSDP alone. The configurations are the train_configs of that
// commit: Llama 3 at sequence 8,192, Llama 2 at 4,096, eager (compile
// false), BF16 parameters with FP32 gradient reduction
// (parallelize_llama.py: param_dtype bfloat16, reduce_dtype float32).
// "selective layer" is selective_ac_option's default "2" (config_manager.py:
// "checkpoint every other layer"): half the layers recompute their
// forward, recompute=full with recompute-layers half the model's; "selective
// op" is its per-op policy (saving the compute ops' outputs but every
// second matmul's), read as recompute=selective as the H100 tables'
// rows read it; "no" is no checkpointing. Every row is read with
// stack=torchtitan-0.2 as the H100 tables' are: FSDP2's memory and
// SDPA's (no S x S scores kept); for a dense model the stack changes no
// time (docs/stacks.md).
const torchtitanA100Source = "pytorch/torchtitan docs/performance.md at 1ea476e9f (2024-04-24)"

// torchtitanA100Stack: the A100 hosts are not described beyond 64 A100s
// of 80 GB; dgx-a100 stands for them. torchtitan called SDPA
// (models/llama/model.py at 1ea476e9f: F.scaled_dot_product_attention,
// is_causal=True), which on sm80 in BF16 at head dimension 128 runs
// torch's FlashAttention-2 kernel: the pod is read with attention=flash,
// FlashAttention-2 at its published best rate (kernels.A100), not the
// unfused attention dgx-a100 costs for Megatron-LM's 2022 rows.
const torchtitanA100Stack = "torchtitan of April 2024 (FSDP2, eager, SDPA); placer reads dgx-a100 with attention=flash (FlashAttention-2 at the paper's best A100 rates) and stands for hosts the page does not describe"

func torchtitanA100() []Sweep {
	const c = "dgx-a100:8,attention=flash"
	// meta-llama/Llama-2-13b-hf and Llama-2-70b-hf config.json (and
	// torchtitan's llama2_configs of 1ea476e9f, whose FFN rule gives the
	// same widths): 13B 40 layers, hidden 5,120, 40 heads, FFN 13,824; 70B
	// 80 layers, hidden 8,192, 64 heads, 8 key/value heads, FFN 28,672;
	// vocabulary 32,000, untied.
	l2 := func(size string, batch int) string {
		if size == "13B" {
			return fmt.Sprintf("llama:layers=40,hidden=5120,heads=40,kv_heads=40,ffn=13824,seq=4096,vocab=32000,batch=%d", batch)
		}
		return fmt.Sprintf("llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=4096,vocab=32000,batch=%d", batch)
	}
	return []Sweep{
		{Name: "torchtitan A100: Llama 3 8B, FSDP on 64 A100s, two checkpointing policies", Set: SetTorchtitanA100, Source: torchtitanA100Source + ", Llama 3 table",
			Unit: TokensPerGPU, Stack: torchtitanA100Stack, Rows: []SweepRow{
				{Label: "selective layer", Workload: "llama3-8b:seq=8192,batch=64", Cluster: c,
					Strategy: "dp=64,mbs=1,fsdp=on,recompute=full,recompute-layers=16,stack=torchtitan-0.2", Measured: 2904,
					Note: "every other layer recomputed (selective_ac_option 2, the default)"},
				{Label: "selective op", Workload: "llama3-8b:seq=8192,batch=64", Cluster: c,
					Strategy: "dp=64,mbs=1,fsdp=on,recompute=selective,stack=torchtitan-0.2", Measured: 2973},
			}},
		{Name: "torchtitan A100: Llama 2 13B, FSDP on 64 A100s, three checkpointing policies", Set: SetTorchtitanA100, Source: torchtitanA100Source + ", Llama 2 table",
			Unit: TokensPerGPU, Stack: torchtitanA100Stack, Rows: []SweepRow{
				{Label: "no checkpointing", Workload: l2("13B", 128), Cluster: c, Strategy: "dp=64,mbs=2,fsdp=on,stack=torchtitan-0.2", Measured: 2162},
				{Label: "selective layer", Workload: l2("13B", 128), Cluster: c,
					Strategy: "dp=64,mbs=2,fsdp=on,recompute=full,recompute-layers=20,stack=torchtitan-0.2", Measured: 1914,
					Note: "every other layer recomputed (selective_ac_option 2, the default)"},
				{Label: "selective op", Workload: l2("13B", 128), Cluster: c, Strategy: "dp=64,mbs=2,fsdp=on,recompute=selective,stack=torchtitan-0.2", Measured: 1904},
			}},
		{Name: "torchtitan A100: Llama 2 70B, FSDP on 64 A100s, local batch 1 selective against 2 full", Set: SetTorchtitanA100, Source: torchtitanA100Source + ", Llama 2 table",
			Unit: TokensPerGPU, Stack: torchtitanA100Stack, Rows: []SweepRow{
				{Label: "local batch 1, selective op", Workload: l2("70B", 64), Cluster: c, Strategy: "dp=64,mbs=1,fsdp=on,recompute=selective,stack=torchtitan-0.2", Measured: 355,
					Note: "local batch 2 with selective checkpointing ran out of memory (the page's footnote)"},
				{Label: "local batch 2, full", Workload: l2("70B", 128), Cluster: c, Strategy: "dp=64,mbs=2,fsdp=on,recompute=full,stack=torchtitan-0.2", Measured: 353},
			}},
	}
}
