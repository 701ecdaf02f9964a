package published

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"

	"github.com/placer/placer/measurements/internevo"
)

const internEvoSource = "InternLM/InternEvo doc/en/train_performance.md at 34fc28d7 (2024-01-25; tables of July 2023), measurements/internevo/runs.csv"

// internEvoStack says what the rows ran and how placer reads them.
const internEvoStack = "InternEvo of 2023 (flash-attn's fused dense, rotary and RMSNorm kernels, FlashAttention-2, hybrid ZeRO-1), BF16, read as placer's fused layers (no stack key) with attention=flash; " +
	"A100 SXM4 80 GB hosts with 4 x 100 Gb RoCE a node (the page's hardware table: dgx-a100 with nics=4,nic-gbps=100); " +
	"hybrid ZeRO-1 as distopt=on with hybrid-zero=Z, Z the zero1 size (8, or 4 under tp=2; zero1=-1: every data-parallel rank): BF16 gradients all-reduced over every replica, the parameters broadcast from each ZeRO rank (hybrid_zero_optim.py at 34fc28d7, mechanisms.HybridZero); tp=2 without sequence parallelism (configs/7B_sft.py: sequence_parallel=False); flash_attn's fused cross-entropy with in-place backward (parallel_output=True, internlm/model/loss.py) as loss-fusion=on"

// internEvoModel is InternLM-7B (configs/7B_sft.py: 32 layers, hidden
// 4,096, 32 heads, MLP_RATIO 8/3 rounded up to a multiple of 256 by its
// FeedForward: 11,008; vocabulary 103,168) at sequence 2,048.
func internEvoModel(batch int) string {
	return fmt.Sprintf("llama:layers=32,hidden=4096,heads=32,kv_heads=32,ffn=11008,seq=2048,vocab=103168,batch=%d", batch)
}

// internEvoSweeps are runs.csv's rows as sweeps, one a sweep column of
// the reader (a configuration across GPU counts, or a FLOPS table).
func internEvoSweeps() []Sweep {
	recs, err := csv.NewReader(bytes.NewReader(internevo.RunsCSV)).ReadAll()
	if err != nil {
		panic(fmt.Sprintf("measurements/internevo/runs.csv: %v", err)) // embedded, checked by its test
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	atoi := func(rec []string, k string) int {
		v, err := strconv.Atoi(rec[col[k]])
		if err != nil {
			panic(fmt.Sprintf("measurements/internevo/runs.csv: %s %q: %v", k, rec[col[k]], err))
		}
		return v
	}
	var out []Sweep
	idx := map[string]int{}
	for _, rec := range recs[1:] {
		name := rec[col["sweep"]]
		i, ok := idx[name]
		if !ok {
			set := SetInternEvo
			if rec[col["part"]] == "validation" {
				set = SetInternEvoValidation
			}
			idx[name], i = len(out), len(out)
			out = append(out, Sweep{Name: name, Set: set, Source: internEvoSource, Unit: TokensPerGPU, Stack: internEvoStack})
		}
		gpus, tp, mbs, mn := atoi(rec, "gpus"), atoi(rec, "tp"), atoi(rec, "micro_bsz"), atoi(rec, "micro_num")
		dp := gpus / tp
		z := atoi(rec, "zero1")
		if z <= 0 {
			z = dp // zero1=-1: the ZeRO group is the data-parallel group
		}
		// InternEvo's hybrid ZeRO-1 (mechanisms.HybridZero).
		s := fmt.Sprintf("tp=%d,dp=%d,mbs=%d,distopt=on,hybrid-zero=%d", tp, dp, mbs, z)
		if atoi(rec, "activation_ckpt") == 1 {
			s += ",recompute=full"
		}
		if atoi(rec, "fused_loss") == 1 {
			// configs/7B_sft.py's parallel_output=True: flash_attn's
			// fused cross-entropy, in-place backward (loss.py).
			s += ",loss-fusion=on"
		}
		cluster := fmt.Sprintf("dgx-a100:%d,attention=flash,nics=%d,nic-gbps=%d", gpus/atoi(rec, "gpus_per_node"), atoi(rec, "host_nics"), atoi(rec, "host_nic_gbps"))
		out[i].Rows = append(out[i].Rows, SweepRow{
			Label:    fmt.Sprintf("%d GPUs, micro_bsz %d x %d, zero1=%d", gpus, mbs, mn, atoi(rec, "zero1")),
			Workload: internEvoModel(dp * mbs * mn), Cluster: cluster, Strategy: s, Measured: float64(atoi(rec, "measured_tgs")),
			Note: "hybrid ZeRO-1 over " + zeroRange(atoi(rec, "zero1")) + " (" + rec[col["id"]] + ")"})
	}
	return out
}

func zeroRange(z int) string {
	if z < 0 {
		return "every data-parallel rank"
	}
	return fmt.Sprintf("%d ranks", z)
}
