package published

import (
	"fmt"
	"math"
	"slices"

	fmsfsdp "github.com/placer/placer/measurements/fms-fsdp"
	"github.com/placer/placer/measurements/nanotron"
)

const nanotronSource = "huggingface/nanotron docs/benchmark_summary.svg at c2528430 (MFU a cell, read as tokens/s/GPU against 989.5 TFLOP/s with nanotron's get_flops), scripts/scaling_benchmarks.py at e24d2483, examples/config_tiny_llama_bench.yaml at 67c5ebb6; measurements/nanotron/runs.csv"

const nanotronStack = "nanotron of early 2025 (its own TP/PP/DP in PyTorch, flash-attn 2, BF16 with FP32 gradient accumulation, fused AdamW, ZeRO-0 or ZeRO-1, TP in REDUCE_SCATTER mode, 1F1B, no recomputation) read as placer's fused layers (no stack key) with attention=flash, sp=on where tp > 1, distopt=on for ZeRO-1 with distopt-allreduce=on (with FP32 accumulation nanotron builds no DDP and all-reduces the whole FP32 gradient buffer after the backward, reduce_scatter=False, then all-gathers the BF16 parameters: trainer.py init_model and training_step, optim/zero.py at c2528430); " +
	"its launch script's CUDA_DEVICE_MAX_CONNECTIONS=1 as connections=1 (run_multinode.sh at 67c5ebb6 line 41, examples/mamba/run_multinode.sh at c2528430 line 110, and the bench config's own command line, examples/config_tiny_llama_bench.yaml at 67c5ebb6: one hardware queue, so the FP32 gradients' all-reduce that its DDP hook launches bucket by bucket in the backward, optim/gradient_accumulator.py get_fp32_accum_hook, runs beside no compute); " +
	"its FP32 gradient accumulation as fp32-accum-add=on (optim/gradient_accumulator.py at c2528430: after each micro-batch's backward, fp32_grad.add_(half_param.grad) for every parameter, a kernel a tensor); " +
	"its pipeline split, which balances the blocks' compute with the LM head counted (models/base.py build_model, models/llama.py get_block_compute_costs at c2528430), as first= and last= where the stages between are even (1.34B at pp 2: 11 and 5 layers; 80B at pp 4: 21, 20, 20, 19), else placer's even split; " +
	"8 H100 SXM a node (Hugging Face's hopper-prod) read as dgx-h100"

const fmsSource = "foundation-model-stack/fms-fsdp README.md at 4ffb9bd (eager) and ed74fd5 (torch.compile), fms_fsdp/utils/config_utils.py and config/training.py at the same commits; measurements/fms-fsdp/runs.csv"

const fmsStack = "fms-fsdp (PyTorch FSDP1, BF16 mixed precision: BF16 compute weights, SDPA flash attention, AdamW) read as the eager PyTorch Llama of stack=torchtitan-0.2, compile=on for the compiled table; HSDP (shard within a node) read as fsdp=on over every rank; selective checkpointing of a fraction of the blocks as recompute=full,recompute-layers=N; 400 Gb/s a node (A100) as nics=4,nic-gbps=100, 800 Gb/s (H100) as nics=8,nic-gbps=100"

// nanotronSweeps: one sweep a model size, 1 to 64 nodes.
func nanotronSweeps() []Sweep {
	const n = "nanotron"
	return bySweep(readRuns(n, nanotron.RunsCSV), SetNanotron, SetNanotronValidation, nanotronSource, nanotronStack, func(r map[string]string) SweepRow {
		tp, pp, dp := mustInt(n, r, "tp"), mustInt(n, r, "pp"), mustInt(n, r, "dp")
		s := fmt.Sprintf("tp=%d,pp=%d,dp=%d,mbs=%d,connections=1,fp32-accum-add=on", tp, pp, dp, mustInt(n, r, "micro_bsz"))
		if tp > 1 {
			s += ",sp=on" // tp_mode REDUCE_SCATTER
		}
		s += nanotronEnds(nanotronStages(mustInt(n, r, "layers"), mustInt(n, r, "hidden"), mustInt(n, r, "heads"), mustInt(n, r, "ffn"), mustInt(n, r, "vocab"), pp))
		if mustInt(n, r, "zero_stage") == 1 {
			s += ",distopt=on,distopt-allreduce=on" // accumulate_grad_in_fp32: no DDP, an all-reduce (mechanisms.Zero1AllReduce)
		}
		w := fmt.Sprintf("llama:layers=%d,hidden=%d,heads=%d,kv_heads=%d,ffn=%d,seq=%d,vocab=%d,batch=%d", mustInt(n, r, "layers"), mustInt(n, r, "hidden"),
			mustInt(n, r, "heads"), mustInt(n, r, "kv_heads"), mustInt(n, r, "ffn"), mustInt(n, r, "seq_len"), mustInt(n, r, "vocab"), mustInt(n, r, "global_batch"))
		if mustInt(n, r, "tied") == 1 {
			w += ",tied=true"
		}
		return SweepRow{Label: fmt.Sprintf("%d nodes, dp %d tp %d pp %d, gas %d", mustInt(n, r, "nodes"), dp, tp, pp, mustInt(n, r, "grad_accum")),
			Workload: w, Cluster: fmt.Sprintf("dgx-h100:%d,attention=flash", mustInt(n, r, "nodes")), Strategy: s,
			Measured: mustFloat(n, r, "measured_tgs"), Note: fmt.Sprintf("MFU %s%% (%s)", r["published_mfu_pct"], r["id"])}
	})
}

// nanotronStages is the layers nanotron's build_model puts on each of pp
// pipeline stages (huggingface/nanotron at c2528430, models/base.py
// build_model: "Balance compute across PP blocks"): the pipeline blocks in
// order (the embedding, the decoder layers, the final norm, the LM head,
// the FP32 cast, the loss), each costed by models/llama.py
// get_block_compute_costs (a decoder layer 4 x heads x head_dim x hidden
// + 3 x ffn x hidden, the LM head vocab x hidden, the rest 0); a block
// goes to the current rank, which moves on once the blocks' cumulative
// cost exceeds (rank + 1) / pp of the total. Nil where a stage would
// hold no decoder layer, or the LM head would not be on the last stage.
func nanotronStages(layers, hidden, heads, ffn, vocab, pp int) []int {
	c := 4*heads*(hidden/heads)*hidden + 3*ffn*hidden
	costs := make([]int, 0, layers+5)
	costs = append(costs, 0) // the embedding
	for range layers {
		costs = append(costs, c)
	}
	costs = append(costs, 0, vocab*hidden, 0, 0) // norm, LM head, cast, loss
	total := 0
	for _, x := range costs {
		total += x
	}
	out := make([]int, pp)
	rank, cum, head := 0, 0, -1
	for i, x := range costs {
		if rank >= pp {
			return nil
		}
		cum += x
		switch {
		case i >= 1 && i <= layers:
			out[rank]++
		case i == layers+2:
			head = rank
		}
		if float64(cum) > float64(total)*float64(rank+1)/float64(pp) {
			rank++
		}
	}
	if head != pp-1 || slices.Contains(out, 0) {
		return nil
	}
	return out
}

// nanotronEnds is stages written as placer's first= and last= where
// nanotron's split is one (the stages between even): "" for an even
// split or one they cannot write (the plan's even split stands).
func nanotronEnds(stages []int) string {
	if len(stages) < 2 {
		return ""
	}
	first, last, mid := stages[0], stages[len(stages)-1], stages[1:len(stages)-1]
	for _, x := range mid {
		if x != mid[0] {
			return ""
		}
	}
	if len(mid) > 0 && first == mid[0] && last == mid[0] {
		return ""
	}
	if len(mid) == 0 && first == last {
		return ""
	}
	return fmt.Sprintf(",first=%d,last=%d", first, last)
}

// fmsSweeps: one sweep a table and GPU, the four model sizes.
func fmsSweeps() []Sweep {
	const n = "fms-fsdp"
	return bySweep(readRuns(n, fmsfsdp.RunsCSV), SetFMSFSDP, SetFMSFSDPValidation, fmsSource, fmsStack, func(r map[string]string) SweepRow {
		gpus, mbs, layers := mustInt(n, r, "gpus"), mustInt(n, r, "micro_bsz"), mustInt(n, r, "layers")
		s := fmt.Sprintf("dp=%d,mbs=%d,fsdp=on,stack=torchtitan-0.2", gpus, mbs)
		if mustInt(n, r, "compile") == 1 {
			s += ",compile=on"
		}
		if k := int(math.Round(mustFloat(n, r, "ac_fraction") * float64(layers))); k == layers {
			s += ",recompute=full"
		} else if k > 0 {
			s += fmt.Sprintf(",recompute=full,recompute-layers=%d", k)
		}
		cluster := fmt.Sprintf("dgx-a100:%d,attention=flash,nics=4,nic-gbps=100", gpus/8)
		if r["gpu"] == "H100" {
			cluster = fmt.Sprintf("dgx-h100:%d,attention=flash,nics=8,nic-gbps=100", gpus/8)
		}
		return SweepRow{Label: r["model"] + " " + r["sharding"] + ", " + r["ac"],
			Workload: fmt.Sprintf("llama:layers=%d,hidden=%d,heads=%d,kv_heads=%d,ffn=%d,seq=%d,vocab=%d,batch=%d", layers, mustInt(n, r, "hidden"),
				mustInt(n, r, "heads"), mustInt(n, r, "kv_heads"), mustInt(n, r, "ffn"), mustInt(n, r, "seq_len"), mustInt(n, r, "vocab"), mbs*gpus),
			Cluster: cluster, Strategy: s, Measured: mustFloat(n, r, "measured_tgs"), Note: r["sharding"] + " as fsdp=on over every rank (" + r["id"] + ")"}
	})
}
