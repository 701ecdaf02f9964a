package bench

import (
	"fmt"
	"strings"

	"github.com/placer/placer/planner/plan"
)

// bertSeq is MLPerf BERT's sequence: 512 tokens (phase-2 data,
// max_seq_length 512; NVIDIA's packed sequences are 512 tokens too).
const bertSeq = 512

// unpaddedSeq is the phase-2 training set's mean sample, in tokens
// (readBERT's unpadded rows).
const unpaddedSeq = 254

// readBERT is a BERT-large row as placer eval reads it: the bert-large
// preset (graph/transformer/encoder.go: bidirectional attention, the MLM
// head on 76 masked positions a sequence, the NSP head) at the row's
// global batch in sequences (its samples over the samples a packed
// sequence holds), pure data parallelism (NVIDIA's code has no model
// parallelism), NVIDIA's MLPerf BERT stack (plan.StackNVIDIABERT: LAMB),
// its CUDA graphs and distributed LAMB as the row says, each packed
// sequence as samples of equal length, on its GPUs' pod preset (pods.go:
// PCIe cards on a PCIe server's). Refused (one line): GPUs without a pod
// preset, node shapes the presets do not write, rows without a plan.
func readBERT(r Row) (Reading, error) {
	var rd Reading
	preset, pcie, err := podPreset(r) // pods.go
	if err != nil {
		return rd, err
	}
	perNode, err := nodeOption(r, preset, pcie, &rd)
	if err != nil {
		return rd, err
	}
	if r.MBS == 0 || r.GBS == 0 || r.GPUs == 0 {
		return rd, fmt.Errorf("no plan in the mirror: the row has no micro-batch (the log's d_batch_size) or no global batch")
	}
	pack := max(1, r.Packing)
	if r.GBS%pack != 0 {
		return rd, fmt.Errorf("global batch %d is not a whole number of packed sequences of %d samples", r.GBS, pack)
	}
	seqs := r.GBS / pack
	accum := max(1, r.GradAccum)
	if seqs != r.GPUs*r.MBS*accum {
		return rd, fmt.Errorf("global batch %d samples (%d sequences of %d) is not %d GPUs x micro-batch %d x accumulation %d", r.GBS, seqs, pack, r.GPUs, r.MBS, accum)
	}
	seq := r.Seq
	if seq == 0 {
		seq = bertSeq
	}
	rd.Cluster = fmt.Sprintf("%s:%d%s", preset, clusterNodes(r, preset), perNode)
	if r.RecipeFlags != "" && !hasFlag(r.RecipeFlags, "unpad_fmha") && !hasFlag(r.RecipeFlags, "pad_fmha") {
		// No fmha: NVIDIA's modeling.py BertLayer builds FMHA (the fused
		// multi-head attention) only with --pad_fmha or --unpad_fmha; with
		// --unpad it builds FastUnpadBertAttention (run_pretraining.py
		// sets config.fused_mha = False under --unpad), whose mha.py
		// FastUnpadBertSelfAttention runs bmm1 (Q K^T, every score of
		// each sequence written), FastMaskSoftmax (scale, mask, softmax
		// in one kernel), nn.Dropout on the probabilities
		// (--enable_fuse_dropout off) and bmm2; without --unpad,
		// apex's SelfMultiheadAttn (impl "fast") or BertSelfAttention,
		// the same four. The pod's attention as separate kernels
		// (attention=unfused: cost.Shard.UnfusedAttention).
		rd.Cluster += ",attention=unfused"
		rd.Assumed = append(rd.Assumed, "attention unfused (no --unpad_fmha or --pad_fmha: bmm1, masked softmax, dropout, bmm2 on every score)")
	}
	k := []string{fmt.Sprintf("dp=%d", r.GPUs), fmt.Sprintf("mbs=%d", r.MBS), "recompute=none", "stack=" + plan.StackNVIDIABERT}
	if r.DistOptimizer == "1" && r.GPUs > 1 {
		k = append(k, "distopt=on") // --distributed_lamb: DistributedFusedLAMB
		if !hasFlag(r.RecipeFlags, "dwu-overlap-reductions") {
			// run_pretraining.py's --dwu-overlap-reductions is off unless
			// given: DistributedFusedLAMB reduces the gradients after the
			// backward (complete_reductions; mechanisms.DistLAMB).
			k = append(k, "grad-overlap=off")
		}
	}
	switch r.CUDAGraph {
	case "1":
		// --use_cuda_graph: the model's forward and backward captured
		// (segmented) or the whole step (full_iteration); placer's
		// graphs=full, every layer replayed.
		k = append(k, "graphs=full")
		rd.Assumed = append(rd.Assumed, "CUDA graphs ("+orDefault(r.CUDAGraphMode, "mode not said")+") as graphs=full: every layer replayed from a graph")
		if r.CUDAGraphMode == "full_iteration" && r.GraphIterations > 0 {
			// full_iteration: torch.cuda.synchronize() before each
			// replay of a graph of --max_iterations_per_graph steps
			// (run_pretraining.py; mechanisms.GraphStepSync).
			k = append(k, fmt.Sprintf("graph-sync=%d", r.GraphIterations))
		}
	default:
		k = append(k, "graphs=off")
	}
	if hasFlag(r.RecipeFlags, "use_transformer_engine2") {
		// --use_transformer_engine2 ("Enable FP8 layers", NVIDIA's
		// run_pretraining.py, training_results_v3.0-v4.0): modeling.py's
		// BertEncoder builds BertTransformerLayer2 (te_layers.py FP8_MHA:
		// the QKV and output projections as fp8_gemm; LayerNormMLP: FC1
		// and FC2 as fp8_gemm) and runs every layer under fp8_autocast
		// with recipe.DelayedScaling(fp8_format=HYBRID,
		// amax_history_len=1, amax_compute_algo="most_recent"): the
		// blocks' four GEMMs in FP8 with delayed scaling, placer's
		// fp8=delayed.
		k = append(k, "fp8=delayed")
		rd.Assumed = append(rd.Assumed, "the blocks' GEMMs in FP8 with delayed scaling (--use_transformer_engine2: te_layers.py's fp8_gemm under fp8_autocast, DelayedScaling HYBRID)")
	}
	if pack > 1 {
		k = append(k, "pack=on", fmt.Sprintf("pack-len=%d", seq/pack))
		rd.Assumed = append(rd.Assumed, fmt.Sprintf("each packed sequence %d samples of %d tokens (the row gives the samples a sequence, not their lengths)", pack, seq/pack))
	} else if r.Unpad == "1" {
		// --unpad: every layer runs on the samples' real tokens only. The
		// phase-2 training set's mean sample (NVIDIA's
		// input_preprocessing/packed_data/README.md packing statistics:
		// 156,726,829 samples of 512 slots holding 4.04e10 padding
		// tokens) is (156,726,829 x 512 - 4.04e10) / 156,726,829 = 254.2
		// tokens: each sample costed as a sequence of 254.
		seq = unpaddedSeq
		rd.Assumed = append(rd.Assumed, fmt.Sprintf("unpadded samples of the training set's mean %d tokens (NVIDIA's packing statistics)", unpaddedSeq))
	}
	rd.Workload = fmt.Sprintf("bert-large:seq=%d,batch=%d", seq, seqs)
	if r.DenseSeqOutput == "0" {
		// No --dense_seq_output: NVIDIA's modeling.py
		// (BertPreTrainingHeads.forward) gathers the masked positions
		// before the MLM head only with it; without it the transform,
		// the decoder to the vocabulary and the loss run on every
		// position of the sequence.
		rd.Workload += fmt.Sprintf(",predicted=%d", seq)
		rd.Assumed = append(rd.Assumed, "the MLM head on every position (the config does not set dense_seq_output)")
	} else {
		rd.Assumed = append(rd.Assumed, "the MLM head on 76 positions a sequence (max_predictions_per_seq), NVIDIA's dense_seq_output")
	}
	if r.Precision != "" && r.Precision != "fp16" {
		rd.Assumed = append(rd.Assumed, "precision "+r.Precision+" costed as 16-bit")
	}
	if r.Optimizer != "" && r.Optimizer != "lamb" {
		return rd, fmt.Errorf("optimizer %q: the BERT stack runs LAMB", r.Optimizer)
	}
	if r.Sharp == "1" {
		rd.LeftOut = append(rd.LeftOut, "SHARP in-network reduction")
	}
	rd.Strategy = strings.Join(k, ",")
	return rd, nil
}

// hasFlag says a row's recipe_flags (the config's switches, space
// separated, without their dashes) holds flag.
func hasFlag(flags, flag string) bool {
	for _, f := range strings.Fields(flags) {
		if f == flag {
			return true
		}
	}
	return false
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
