package published

import "fmt"

// torchtitanAsyncTPSource: the PyTorch team's async TP benchmarks on
// Grand Teton H100s (96 GB HBM2e, 500 W power limit, 400 Gb/s a GPU):
// torch 38410cf9 (2025-06-14), torchao 6243040, torchtitan 820504e (the
// page dates both "2024/06/13"; their commits are of June 2025).
const torchtitanAsyncTPSource = "pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md (at 2887250, 2025-06-16)"

// torchtitanAsyncTPStack says what the rows ran and what placer assumes.
const torchtitanAsyncTPStack = "torchtitan of June 2025 under torch.compile (stack=torchtitan-0.2,compile=on): FSDP2 x tensor parallelism, torchao Float8 tensorwise (fp8=current) or rowwise (fp8=rowwise), vanilla or async TP (tpoverlap=on); SDPA read as flash attention and sequence 8,192 (torchtitan's llama3 configurations; the page states neither); the GPUs held at the 500 W power limit"

// torchtitanAsyncTP is the page's two tables, each six rows: BF16,
// float8 tensorwise and float8 rowwise, each with vanilla and async
// tensor parallelism, in tokens a second per GPU. Llama 3 70B on 256
// H100s (FSDP 32 x TP 8, full activation checkpointing, local batch 16:
// global 512) and Llama 3 8B on 64 (FSDP 8 x TP 8, per-op selective
// checkpointing read as recompute=selective as the December 2024 tables
// read it, local batch 12: global 96). No constant was chosen with these
// rows: they are a test (the rowwise rows are the first placer can
// write). The page notes "the low baseline performance of the vanilla TP
// float8 rowwise training" (pytorch/torchtitan#1207).
func torchtitanAsyncTP() []Sweep {
	sweep := func(name, w, cluster, s string, tps [6]float64) Sweep {
		labels := [3]string{"None (bfloat16)", "float8 tensorwise", "float8 rowwise"}
		fp8 := [3]string{"", ",fp8=current", ",fp8=rowwise"}
		var rows []SweepRow
		for i := range 3 {
			for j, tp := range [2]string{"vanilla TP", "async TP"} {
				st := s + fp8[i]
				if j == 1 {
					st += ",tpoverlap=on"
				}
				rows = append(rows, SweepRow{Label: fmt.Sprintf("%s, %s", labels[i], tp), Workload: w, Cluster: cluster, Strategy: st, Measured: tps[2*i+j]})
			}
		}
		return Sweep{Name: name, Set: SetTorchtitanAsyncTP, Source: torchtitanAsyncTPSource, Unit: TokensPerGPU, Stack: torchtitanAsyncTPStack, Rows: rows}
	}
	return []Sweep{
		sweep("torchtitan async TP (2025-06): Llama 3 70B, FSDP 32 x TP 8 on 256 H100s", "llama3-70b:seq=8192,batch=512", gt32,
			"tp=8,dp=32,mbs=16,sp=on,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on",
			[6]float64{597.3, 652.4, 809.8, 942.4, 599.6, 624.8}),
		sweep("torchtitan async TP (2025-06): Llama 3 8B, FSDP 8 x TP 8 on 64 H100s", "llama3-8b:seq=8192,batch=96", "grand-teton:8,attention=flash",
			"tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on",
			[6]float64{4378, 4809.4, 5078.1, 5570.1, 3708.5, 3914.9}),
	}
}

// torchaoFloat8Source: torchao's float8 training README, "e2e training
// benchmarks", NVIDIA H100 (torchao/float8/README.md as of 8c81863,
// 2025-03-12; moved to docs/source/workflows/training.md in b795037):
// torchtitan on 8 H100s, batch 1, sequence 8,192, 100 steps,
// torch.compile, FSDP2, per-op SAC; torch 2.7.0a0+gitb98af95, torchao
// 0.10.0+git890e0ac8, torchtitan 0.0.2.
const torchaoFloat8Source = "pytorch/ao torchao/float8/README.md at 8c81863 (2025-03-12), e2e training benchmarks, NVIDIA H100"

// torchaoFloat8 is that table's three rows of Llama 3 8B on 8 H100s,
// median tokens a second per GPU: BF16, float8 tensorwise with float8
// FSDP all-gathers (fp8gather=on: the page's benchmarks/float8/training/
// float8_training_benchmark.sh at 8c81863 runs "tensorwise" with
// --float8.enable_fsdp_float8_all_gather
// --float8.precompute_float8_dynamic_scale_for_fsdp
// --float8.force_recompute_fp8_weight_in_bwd) and float8 rowwise (BF16
// all-gathers: --float8.recipe_name=rowwise alone). The page does not
// name its hosts; the log of the same benchmark run by the same author
// on the day the rows were added (pytorch/ao#1802, 2025-02-28: the
// rowwise run at batch 1 of float8_training_benchmark.sh) reads
// "memory: 47.79GiB(50.30%)", which torchtitan's memory monitor (at
// bfbff6f, 2025-02: torchtitan/tools/metrics.py DeviceMemoryMonitor,
// max reserved over get_device_properties().total_memory) makes a GPU of
// 47.79 / 0.5030 = 95.0 GiB: the 96 GB H100 of the torchtitan team's
// Grand Teton hosts (grand-teton: 95.0 GiB read the same way), not an
// 80 GB H100 SXM (79.6 GiB: the 85,520,809,984 bytes docs/hardware.md
// reads on one). So grand-teton (its default 500 W limit)
// stands for them, with torch's flash kernel under SDPA as for
// torchtitan's rows of that time; per-op SAC read as recompute=selective.
// No constant was chosen with these rows.
func torchaoFloat8() Sweep {
	w, c := "llama3-8b:seq=8192,batch=8", gt1
	s := "dp=8,mbs=1,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on"
	return Sweep{Name: "torchao float8 (2025-03): Llama 3 8B, FSDP on 8 H100s, BF16, tensorwise and rowwise", Set: SetTorchaoFloat8,
		Source: torchaoFloat8Source, Unit: TokensPerGPU,
		Stack: "torchtitan 0.0.2 under torch.compile (stack=torchtitan-0.2,compile=on), FSDP2, per-op SAC; grand-teton (96 GB H100s at 500 W: the 95.0 GiB its author's log reads, pytorch/ao#1802) and flash attention stand for hosts and an SDPA the page does not state",
		Rows: []SweepRow{
			{Label: "none (bfloat16)", Workload: w, Cluster: c, Strategy: s, Measured: 6150, PeakGiB: 47.65, PeakReserved: true},
			{Label: "tensorwise with float8 all-gather", Workload: w, Cluster: c, Strategy: s + ",fp8=current,fp8gather=on", Measured: 7689.5, PeakGiB: 47.77, PeakReserved: true},
			{Label: "rowwise with bfloat16 all-gather", Workload: w, Cluster: c, Strategy: s + ",fp8=rowwise", Measured: 6768, PeakGiB: 47.79, PeakReserved: true},
		}}
}
