package published

import (
	"fmt"

	"github.com/placer/placer/measurements/flashattn"
	torchtitanh200 "github.com/placer/placer/measurements/torchtitan-h200"
)

const flashAttnSource = "Dao-AILab/flash-attention training/README.md at 88173a1a (2023-01-17), Training speed, GPT3; configs/experiment/pile at the same commit; measurements/flashattn/runs.csv"

const flashAttnStack = "flash-attention's training code (flash_attn.models.gpt: fused dense and dense+GELU, fused dropout-add-LayerNorm, FlashAttention, fused cross-entropy; PyTorch Lightning, BF16) read as placer's fused layers with attention=flash on dgx-a100 (8 A100 80 GB SXM4 at 400 W, NVLink); DDP, or its DDPStrategyZero1 read as distopt=on; its fused cross-entropy with in-place backward (base.yaml's loss_fn) as loss-fusion=on; the vocabulary padded to 50,264 (pad_vocab_size_multiple 8)"

const titanH200Source = "pytorch/torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md at 4a61bd87; llama3_8b.toml at e7c0cae; measurements/torchtitan-h200/runs.csv"

const titanH200Stack = "torchtitan of June 2025 under torch.compile (stack=torchtitan-0.2,compile=on), FSDP2, per-op selective checkpointing (recompute=selective), torchao float8 tensorwise with float8 all-gathers (fp8=current,fp8gather=on); SDPA read as flash attention; dgx-h200 (8 NICs of 400 Gb/s a node, as the page states)"

// flashAttnSweeps: GPT-2-shaped models (GELU MLP of 4 x hidden,
// LayerNorm) at sequence 2,048 on 8 A100s.
func flashAttnSweeps() []Sweep {
	const n = "flashattn"
	return bySweep(readRuns(n, flashattn.RunsCSV), SetFlashAttn, SetFlashAttnValidation, flashAttnSource, flashAttnStack, func(r map[string]string) SweepRow {
		gpus, mbs := mustInt(n, r, "gpus"), mustInt(n, r, "micro_bsz")
		s := fmt.Sprintf("dp=%d,mbs=%d", gpus, mbs)
		if mustInt(n, r, "zero1") == 1 {
			s += ",distopt=on"
		}
		if mustInt(n, r, "fused_loss") == 1 {
			// base.yaml's loss_fn: flash_attn's fused cross-entropy
			// with its in-place backward (no FP32 logits kept).
			s += ",loss-fusion=on"
		}
		return SweepRow{Label: r["model"],
			Workload: fmt.Sprintf("gpt:layers=%d,hidden=%d,heads=%d,seq=%d,vocab=50264,batch=%d", mustInt(n, r, "layers"), mustInt(n, r, "hidden"),
				mustInt(n, r, "heads"), mustInt(n, r, "seq_len"), mustInt(n, r, "global_batch")),
			Cluster: fmt.Sprintf("dgx-a100:%d,attention=flash", gpus/8), Strategy: s, Measured: mustFloat(n, r, "measured_tgs"),
			Note: r["config"] + ".yaml (" + r["id"] + ")"}
	})
}

// titanH200Sweeps: Llama 3.1 8B under FSDP on 4 and 8 H200 hosts.
func titanH200Sweeps() []Sweep {
	const n = "torchtitan-h200"
	return bySweep(readRuns(n, torchtitanh200.RunsCSV), SetTorchtitanH200, SetTorchtitanH200Validate, titanH200Source, titanH200Stack, func(r map[string]string) SweepRow {
		gpus, lb := mustInt(n, r, "gpus"), mustInt(n, r, "local_batch_size")
		return SweepRow{Label: fmt.Sprintf("%d nodes", mustInt(n, r, "nodes")),
			Workload: fmt.Sprintf("llama3-8b:seq=%d,batch=%d", mustInt(n, r, "seq_len"), lb*gpus),
			Cluster:  fmt.Sprintf("dgx-h200:%d,attention=flash", mustInt(n, r, "nodes")),
			Strategy: fmt.Sprintf("dp=%d,mbs=%d,fsdp=on,recompute=selective,fp8=current,fp8gather=on,stack=torchtitan-0.2,compile=on", gpus, lb),
			Measured: mustFloat(n, r, "measured_tgs"), PeakGiB: mustFloat(n, r, "memory_gib"), PeakReserved: true,
			Note: "TPS and memory at the 100th iteration (" + r["id"] + ")"}
	})
}
