package published

import (
	"fmt"
	"strings"
)

// bridgeBlackwellSource is Megatron-Bridge's archive read for its
// Blackwell rows: the DGX-B200, DGX-GB200 and DGX-GB300 pre-training rows
// of the models and releases whose DGX-H100 rows bridgeReleases reads
// (NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md at
// 067f987d). The "DGX-GB200" and "DGX-GB300" systems are NVL72 racks:
// read as gb200-nvl72 and gb300-nvl72, a row's GPUs the first of one
// rack's NVLink domain (8 or 64: per-node=) or 64 of each of four racks
// (256 GPUs), an assumption: the archive states GPUs, not racks.
//
// Sought and not used: the FP8-CS rows of Llama 3 70B on GB200 and GB300
// (26.02 to 26.04.01: Megatron-FSDP with CPU activation offloading,
// v0.4.2 llama3_workload_base_configs.py cpu_offloading_num_layers 20 and
// 40, which placer does not cost); the B300 rows (a dgx-b300 pod exists
// but no B300/H100 or B300/B200 check was asked of it; left for a next
// session); Qwen3-235B-A22B, DeepSeek-V3, Kimi K2 and the Nemotron rows
// (time; Nemotron's hybrid layers placer cannot write); the 26.06 SFT and
// LoRA rows of Llama 3 70B on Blackwell (their DGX-H100 rows are
// bridgeFineTune's; the Blackwell ones are left for a next session).
const bridgeBlackwellSource = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md at 067f987d (DGX-B200, DGX-GB200, DGX-GB300 pre-training rows, releases 25.09 to 26.06)"

// bridgeBlackwellStack: each row with its release's stack (as the H100
// rows: stack=megatron-bridge-<release>) and the settings its GPU's
// recipe sets over it (scripts/performance/configs/*/
// *_workload_base_configs.py and *_llm_pretrain.py of the release's tag,
// v0.4.2 read for 26.02 to 26.06 where the earlier tags set the same
// mapping): the parallel mapping and micro-batch of the row; FP8-CS as
// fp8=current, FP8-MX / MXFP8 as fp8=mxfp8, NVFP4 as fp4=nvfp4
// (utils/precision.py get_precision_config: bf16_with_mxfp8_mixed,
// bf16_with_nvfp4_mixed); tensor-parallel overlap with TP > 1 but under
// NVFP4 (llama3_llm_pretrain.py: tp_comm_overlap False if precision is
// nvfp4); GPT-OSS's recompute_modules layernorm and moe_act on GB200 and
// B200 and CUDA graphs over attention on GB300; Qwen3-30B-A3B's HybridEP
// (dispatcher=hybridep, its kernels costed as DeepEP's) and CUDA graphs over attention where
// its GPU's recipe scopes them there (B200 from 26.02.01), else over the
// router alone (not costed: as on H100); every row's fused cross-entropy
// (fusedLoss). MXFP8's primary weights are MXFP8 in every release and
// NVFP4's NVFP4 from 26.04.01 (scale's bridgeBlockParams, read from the
// stack). docs/stacks.md lists each model's reading and what is not read.
const bridgeBlackwellStack = "Megatron-Bridge NeMo containers 25.09 to 26.06 on Blackwell: each row with its release's stack (stack=megatron-bridge-<release>) and its GPU's recipe settings (precision, mapping, TP overlap off under NVFP4, GPT-OSS recompute modules, Qwen3 HybridEP and attention CUDA graphs, the fused cross-entropy)"

// bridgeSystems are the archive's systems as placer's pods: the cluster
// of a row of gpus GPUs on each.
func bridgeCluster(system string, gpus int) string {
	switch system {
	case "B200":
		return fmt.Sprintf("dgx-b200:%d", gpus/8)
	case "H100":
		return fmt.Sprintf("dgx-h100:%d", gpus/8)
	}
	pod := strings.ToLower(system) + "-nvl72"
	if gpus <= 64 {
		return fmt.Sprintf("%s:1,per-node=%d", pod, gpus)
	}
	return fmt.Sprintf("%s:%d,per-node=64", pod, gpus/64)
}

// fusedLoss is every Blackwell row's cross-entropy: Transformer
// Engine's fused kernels (loss-fusion=on). Megatron-Bridge's
// GPTModelProvider sets cross_entropy_loss_fusion True
// (src/megatron/bridge/models/gpt_provider.py, v0.1.0rc3 to v0.5.0) and
// its performance scripts cross_entropy_fusion_impl "te" (v0.1.0rc3
// scripts/performance/configs/llama3/*.yaml; v0.2.0 utils/helpers.py;
// v0.3.0 to v0.5.0 utils/overrides.py _set_common_perf_overrides, applied
// after the recipes: GPT-OSS's own "native" is overridden); the llama3
// recipes turn it off only for fine-tuning. The DGX-H100 rows ran it
// too; their stacks do not yet read it (their figures would move).
const fusedLoss = ",loss-fusion=on"

// fullIterQwen3 is Megatron-Bridge v0.5.0's (26.06's) Qwen3-30B-A3B
// MXFP8 recipe on GB200 and GB300 (QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_
// FP8_MX_V1, _GB300_): cuda_graph_impl "full_iteration" over the dropless
// layers, which qwen3_llm_pretrain.py's set_full_iter_cg_configs makes
// static with moe_expert_rank_capacity_factor 1.5 (HybridEP's budget,
// planner/plan/rankcapacity.go) and a paged stash (not modelled: the
// experts' memory counted at the budget); its moe_a2a_overlap, CuTe DSL
// fused grouped MLP and FP8 attention are not written.
const fullIterQwen3 = ",rank-capacity=1.5,cuda-graphs=full"

// precisionKeys are the archive's precisions as plan keys.
var precisionKeys = map[string]string{"FP8-CS": ",fp8=current", "FP8": ",fp8=current", "FP8-MX": ",fp8=mxfp8", "MXFP8": ",fp8=mxfp8", "NVFP4": ",fp4=nvfp4", "BF16": ""}

// bridgeBlackwell are the Blackwell sweeps: one a model and system, its
// rows the releases and precisions the archive publishes for it.
func bridgeBlackwell() []Sweep {
	var out []Sweep
	for _, g := range bridgeBlackwellRows() {
		out = append(out, Sweep{Name: fmt.Sprintf("Megatron-Bridge DGX-%s by release: %s", g.system, g.model), Set: SetBridgeBlackwell,
			Source: bridgeBlackwellSource, Unit: TokensPerGPU, Stack: bridgeBlackwellStack, Rows: g.rows})
	}
	return out
}

// blackwellGroup is one model's rows on one system.
type blackwellGroup struct {
	model, system string
	rows          []SweepRow
}

// bridgeBlackwellRows are the transcribed rows, grouped by model and
// system. Labels are "release precision: mapping".
func bridgeBlackwellRows() []blackwellGroup {
	unstated := "25.09's table states no precision: its figure read as FP8-CS and the parenthesised one as FP8-MX, 25.11's layout"
	l8 := func(sys, rel, prec string, tps float64, note string) SweepRow {
		return SweepRow{Label: rel + " " + prec + ": DP 8, MBS 2, GBS 128", Workload: "llama3-8b:seq=8192,batch=128", Cluster: bridgeCluster(sys, 8),
			Strategy: "dp=8,mbs=2,distopt=on,grads=bf16" + precisionKeys[prec] + bridgeStackKey(rel) + fusedLoss, Measured: tps, Note: note}
	}
	// Llama 3 70B: TP t x PP p (x VP v) of 64 GPUs, GBS 256.
	l70 := func(sys, rel, prec string, tp, pp, vp, mbs int, tps float64) SweepRow {
		s := fmt.Sprintf("tp=%d,pp=%d,dp=%d,mbs=%d,distopt=on,grads=bf16", tp, pp, 64/(tp*pp), mbs)
		label := fmt.Sprintf("%s %s: TP%d PP%d", rel, prec, tp, pp)
		if vp > 1 {
			s += fmt.Sprintf(",vp=%d", vp)
			label += fmt.Sprintf(" VP%d", vp)
		}
		s += tpKeys(tp, prec)
		return SweepRow{Label: label + fmt.Sprintf(", MBS %d", mbs), Workload: "llama3-70b:seq=8192,batch=256", Cluster: bridgeCluster(sys, 64),
			Strategy: s + precisionKeys[prec] + bridgeStackKey(rel) + fusedLoss, Measured: tps}
	}
	// 26.02.01's two GB300 rows as their recipe runs them: the table
	// states MBS 2 and no virtual pipeline (the NVFP4 row no pipeline at
	// all, FSDP 0), the columns of its FP8 row, which runs Megatron-FSDP
	// at MBS 2; v0.3.1 scripts/performance/configs/llama/
	// llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB300_
	// FP8_MX_V2 and _NVFP4_V2 set PP 4, VP 5, MBS 1 (as v0.3.0 and v0.4.0
	// do). Without FSDP or a pipeline the table's NVFP4 mapping cannot hold
	// the model: 70.6 billion BF16 weights and BF16 gradients alone are
	// 282 GB, over the GB300's 279.
	recipe70 := func(r SweepRow, table string) SweepRow {
		r.Note = "read from its recipe (v0.3.1 LLAMA3_70B_PRETRAIN_CONFIG_GB300_*_V2: PP 4, VP 5, MBS 1), not the table's " + table +
			", which repeats the FP8 row's Megatron-FSDP columns"
		return r
	}
	// Llama 3.1 405B on 256 GPUs, GBS 1536: 126 layers and the
	// embedding and loss as layers (as the H100 rows).
	l405 := func(sys, rel, prec string, tp, pp, cp, vp int, tps float64) SweepRow {
		s := fmt.Sprintf("tp=%d,cp=%d,pp=%d,vp=%d,dp=%d,mbs=1,distopt=on,grads=bf16,embedding-layer=on,loss-layer=on", tp, cp, pp, vp, 256/(tp*cp*pp)) + tpKeys(tp, prec)
		return SweepRow{Label: fmt.Sprintf("%s %s: TP%d PP%d CP%d VP%d", rel, prec, tp, pp, cp, vp), Workload: "llama3.1-405b:seq=8192,batch=1536",
			Cluster: bridgeCluster(sys, 256), Strategy: s + precisionKeys[prec] + bridgeStackKey(rel) + fusedLoss, Measured: tps}
	}
	// GPT-OSS 120B, BF16, 64 GPUs, MBS 4, GBS 1280: EP ep, no pipeline;
	// v0.4.2 gpt_oss_workload_base_configs.py: GB200 and B200
	// recompute_modules layernorm, moe_act; GB300 CUDA graphs over
	// attention, the router and its preprocessing.
	oss := func(sys, rel string, ep int, tps float64) SweepRow {
		keys := ",recompute-modules=layernorm+moe_act"
		if sys == "GB300" {
			keys = ",cuda-graphs=dense"
		}
		return SweepRow{Label: fmt.Sprintf("%s BF16: EP%d, MBS 4", rel, ep), Workload: "gpt-oss-120b:seq=4096,batch=1280", Cluster: bridgeCluster(sys, 64),
			Strategy: fmt.Sprintf("ep=%d,dp=64,mbs=4,distopt=on,grads=bf16", ep) + keys + bridgeStackKey(rel) + fusedLoss}.measured(tps)
	}
	// Qwen3-30B-A3B, MXFP8, 8 GPUs, EP 8, GBS 512: HybridEP; CUDA graphs over attention on B200 (v0.4.2 QWEN3_30B_A3B_PRETRAIN_CONFIG_
	// B200_FP8_MX_V1 = the BF16 config: scope attn, moe_router, moe_preprocess), over the router alone on GB200 and GB300's MXFP8 to 26.04.01.
	q30 := func(sys, rel string, mbs int, tps float64) SweepRow {
		keys, note, regression := ",dispatcher=hybridep", "", ""
		switch {
		case sys == "B200" && rel == "26.02":
			// v0.3.0 QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1: MBS 1,
			// no flex backend (the all-to-all), graphs over the router
			// alone; HybridEP and attention graphs from v0.3.1 on.
			// Bridge's tracker reports this dropless configuration 2x
			// slower than 25.09's token-dropping one on B200 (25.11's
			// 9,299 tokens/s against 25.09's 18,066 at MBS 1), fixed in
			// v0.3.1 by HybridEP, MBS 4 and attention graphs (Megatron-
			// Bridge pull request "Fix Qwen3 30B A3B B200 perf config to use
			// hybridep+flex dispatcher"): the row stays, too fast.
			keys, regression = "", BridgeQwen3DroplessRegression
			note = "a known regression of this release, kept as published: Megatron-Bridge's tracker, " +
				"\"[Regression] Low QWEN3 30B B200 and H100 performance with dropless\" (github.com/NVIDIA-NeMo/Megatron-Bridge/issues/1998, 2026-01-20, open), " +
				"2x slower than token-dropping (25.11's 9,299 tokens/s against 25.09's 18,066 at MBS 1); v0.3.1 moved to HybridEP, MBS 4 and attention graphs " +
				"(github.com/NVIDIA-NeMo/Megatron-Bridge/pull/2499)"
		case sys == "B200":
			keys += ",cuda-graphs=dense"
		case rel == "26.06":
			keys += fullIterQwen3
		}
		return SweepRow{Label: fmt.Sprintf("%s MXFP8: EP8, MBS %d", rel, mbs), Workload: "qwen3-30b-a3b:seq=4096,batch=512", Cluster: bridgeCluster(sys, 8),
			Strategy: fmt.Sprintf("ep=8,dp=8,mbs=%d,distopt=on,grads=bf16,fp8=mxfp8", mbs) + keys + bridgeStackKey(rel) + fusedLoss, Note: note, Regression: regression}.measured(tps)
	}
	return []blackwellGroup{
		{"Llama 3 8B, DP 8 on 8 GPUs", "GB200", []SweepRow{l8("GB200", "25.09", "FP8-CS", 31357, unstated), l8("GB200", "25.09", "FP8-MX", 29925, unstated),
			l8("GB200", "25.11", "FP8-CS", 31508, ""), l8("GB200", "25.11", "FP8-MX", 29789, "")}},
		{"Llama 3 8B, DP 8 on 8 GPUs", "B200", []SweepRow{l8("B200", "25.09", "FP8-CS", 29994, unstated), l8("B200", "25.09", "FP8-MX", 29388, unstated),
			l8("B200", "25.11", "FP8-CS", 30624, ""), l8("B200", "25.11", "FP8-MX", 29521, "")}},
		{"Llama 3 8B, DP 8 on 8 GPUs", "GB300", []SweepRow{l8("GB300", "25.11", "FP8-CS", 37556, ""), l8("GB300", "25.11", "FP8-MX", 36108, "")}},
		{"Llama 3 70B on 64 GPUs (MXFP8, NVFP4)", "GB300", []SweepRow{
			l70("GB300", "26.02", "MXFP8", 1, 4, 5, 1, 4596), recipe70(l70("GB300", "26.02.01", "MXFP8", 1, 4, 5, 1, 4798), "PP 4, MBS 2"),
			l70("GB300", "26.04", "MXFP8", 1, 4, 5, 1, 4742), l70("GB300", "26.04.01", "MXFP8", 1, 4, 5, 1, 4864),
			l70("GB300", "26.02", "NVFP4", 1, 4, 5, 1, 6798), recipe70(l70("GB300", "26.02.01", "NVFP4", 1, 4, 5, 1, 7002), "PP 1, MBS 2"),
			l70("GB300", "26.04", "NVFP4", 1, 4, 5, 1, 7397), l70("GB300", "26.04.01", "NVFP4", 1, 4, 5, 1, 7296)}},
		{"Llama 3 70B on 64 GPUs (MXFP8, NVFP4)", "GB200", []SweepRow{
			l70("GB200", "26.02", "MXFP8", 2, 4, 5, 1, 3613), l70("GB200", "26.02.01", "MXFP8", 2, 4, 5, 1, 3837),
			l70("GB200", "26.04", "MXFP8", 2, 4, 5, 1, 3828), l70("GB200", "26.04.01", "MXFP8", 2, 4, 5, 1, 3712),
			l70("GB200", "26.02", "NVFP4", 2, 4, 5, 1, 4458), l70("GB200", "26.02.01", "NVFP4", 2, 4, 5, 1, 4557),
			l70("GB200", "26.04", "NVFP4", 2, 4, 5, 1, 4898), l70("GB200", "26.04.01", "NVFP4", 2, 4, 5, 1, 4864)}},
		{"Llama 3.1 405B on 256 GPUs", "GB300", []SweepRow{
			l405("GB300", "26.02", "FP8", 4, 8, 1, 4, 988), l405("GB300", "26.02.01", "FP8", 2, 8, 2, 4, 1024), l405("GB300", "26.04", "FP8", 4, 8, 1, 4, 1036),
			l405("GB300", "26.04.01", "FP8", 4, 8, 1, 4, 1024), l405("GB300", "26.06", "FP8", 4, 8, 1, 4, 1048),
			l405("GB300", "26.02", "MXFP8", 2, 8, 2, 4, 931), l405("GB300", "26.02.01", "MXFP8", 2, 8, 2, 4, 949), l405("GB300", "26.04", "MXFP8", 2, 8, 2, 4, 968),
			l405("GB300", "26.04.01", "MXFP8", 2, 8, 2, 4, 960), l405("GB300", "26.06", "MXFP8", 2, 8, 2, 4, 952),
			l405("GB300", "26.02", "NVFP4", 4, 8, 1, 4, 1333), l405("GB300", "26.02.01", "NVFP4", 4, 8, 1, 4, 1358), l405("GB300", "26.04", "NVFP4", 4, 8, 1, 4, 1424),
			l405("GB300", "26.04.01", "NVFP4", 4, 8, 1, 4, 1440), l405("GB300", "26.06", "NVFP4", 4, 8, 1, 4, 1413)}},
		{"Llama 3.1 405B on 256 GPUs", "GB200", []SweepRow{
			l405("GB200", "26.02", "FP8", 4, 16, 1, 4, 793), l405("GB200", "26.02.01", "FP8", 4, 16, 1, 4, 818), l405("GB200", "26.04", "FP8", 4, 16, 1, 4, 842),
			l405("GB200", "26.04.01", "FP8", 4, 16, 1, 4, 864), l405("GB200", "26.06", "FP8", 4, 16, 1, 4, 843),
			l405("GB200", "26.02", "MXFP8", 4, 16, 1, 8, 786), l405("GB200", "26.02.01", "MXFP8", 4, 16, 1, 8, 775), l405("GB200", "26.04", "MXFP8", 4, 16, 1, 8, 793),
			l405("GB200", "26.04.01", "MXFP8", 4, 16, 1, 8, 800), l405("GB200", "26.06", "MXFP8", 4, 16, 1, 8, 783),
			l405("GB200", "26.02", "NVFP4", 4, 16, 1, 8, 1076), l405("GB200", "26.02.01", "NVFP4", 4, 16, 1, 4, 1083), l405("GB200", "26.04", "NVFP4", 4, 16, 1, 8, 1136),
			l405("GB200", "26.04.01", "NVFP4", 4, 16, 1, 8, 1184), l405("GB200", "26.06", "NVFP4", 4, 16, 1, 8, 1166)}},
		{"GPT-OSS 120B on 64 GPUs (BF16)", "GB300", []SweepRow{oss("GB300", "26.02", 64, 19412), oss("GB300", "26.02.01", 64, 19366), oss("GB300", "26.04", 64, 19275), oss("GB300", "26.04.01", 64, 19200)}},
		{"GPT-OSS 120B on 64 GPUs (BF16)", "GB200", []SweepRow{oss("GB200", "26.02", 64, 15784), oss("GB200", "26.02.01", 64, 15754), oss("GB200", "26.04", 64, 15938), oss("GB200", "26.04.01", 64, 16640)}},
		{"GPT-OSS 120B on 64 GPUs (BF16)", "B200", []SweepRow{oss("B200", "26.02", 64, 8047), oss("B200", "26.02.01", 8, 13722), oss("B200", "26.04", 8, 13045), oss("B200", "26.04.01", 8, 13568)}},
		{"Qwen3-30B-A3B on 8 GPUs (MXFP8)", "GB300", []SweepRow{q30("GB300", "26.02", 8, 30376), q30("GB300", "26.02.01", 8, 30411), q30("GB300", "26.04", 8, 31470),
			q30("GB300", "26.04.01", 8, 31744), q30("GB300", "26.06", 8, 45275)}},
		{"Qwen3-30B-A3B on 8 GPUs (MXFP8)", "GB200", []SweepRow{q30("GB200", "26.02", 4, 26084), q30("GB200", "26.02.01", 4, 26373), q30("GB200", "26.04", 4, 26032),
			q30("GB200", "26.04.01", 4, 26112), q30("GB200", "26.06", 4, 40706)}},
		{"Qwen3-30B-A3B on 8 GPUs (MXFP8)", "B200", []SweepRow{q30("B200", "26.02", 1, 9691), q30("B200", "26.02.01", 4, 26695), q30("B200", "26.04", 4, 26859),
			q30("B200", "26.04.01", 4, 27136)}},
	}
}

// tpKeys are the tensor-parallel keys of a Bridge row of degree tp:
// sequence parallelism, and the overlap but under NVFP4.
func tpKeys(tp int, prec string) string {
	switch {
	case tp == 1:
		return ""
	case prec == "NVFP4":
		return ",sp=on"
	}
	return ",sp=on,tpoverlap=on"
}
