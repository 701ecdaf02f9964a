package published

import (
	"math"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// MegatronLMEstimate is Megatron-LM's own estimate of the most loaded
// GPU's memory for model m run under plan pl, bytes: its weights and
// optimizer state and its activations, as --report-theoretical-memory
// prints them (NVIDIA/Megatron-LM
// megatron/training/theoretical_memory_usage.py at 00caa53a:
// compute_weight_and_optimizer_memory, and compute_activation_memory
// with sequence parallelism and selective recomputation, else
// compute_activation_memory_without_sp, as report_theoretical_memory
// picks). A second opinion beside placer's count, not a measurement:
// it reads the first stage's share of the blocks with the whole
// embedding, 18 bytes a parameter (6 + 12/DP with the distributed
// optimizer, over the data-parallel ranks alone), and Korthikanti et
// al.'s activations of every layer of the sequence (no context
// parallelism, no full recomputation, no FP8).
func MegatronLMEstimate(m transformer.Spec, pl plan.Plan) (weightsAndOptimizer, activations float64) {
	return megatronLMWeights(m, pl), megatronLMActivations(m, pl)
}

// megatronLMVocab is Megatron-LM's padded vocabulary: the vocabulary
// rounded up to a multiple of 128 x TP (megatron/training/tokenizer
// _vocab_size_with_padding, make_vocab_size_divisible_by 128 by
// default).
func megatronLMVocab(m transformer.Spec, tp int) float64 {
	mult := 128 * tp
	return float64((m.Vocab + mult - 1) / mult * mult)
}

// megatronLMWeights is compute_weight_and_optimizer_memory.
func megatronLMWeights(m transformer.Spec, pl plan.Plan) float64 {
	H := float64(m.Hidden)
	heads := float64(m.Heads)
	gated := 1.0
	if m.SwiGLU() {
		gated = 1.5
	}
	norm := 2.0 // LayerNorm's weight and bias
	if m.Family == "llama" {
		norm = 1 // RMSNorm
	}
	var attn float64
	if m.MLA() {
		d, r := float64(m.HeadDim()), float64(m.RopeDim)
		q := H * heads * (d + r)
		if m.QLoRA > 0 {
			q = float64(m.QLoRA) * (H + heads*(d+r) + norm)
		}
		attn = q + float64(m.KVLoRA)*(H+heads*(d+d)+norm) + H*r + heads*d*H
	} else {
		ratio := float64(m.HeadDim()) * heads / H // query_projection_to_hidden_size_ratio
		attn = 2 * H * H * (1 + float64(m.KVHeads)/heads) * ratio
	}
	dense := 2*H*(float64(m.FFN)*gated+norm) + attn
	moe := 2*H*(float64(m.ExpertFFN)*float64(m.Experts)*gated+float64(m.SharedExperts*m.ExpertFFN)*gated+norm) + attn
	moeLayers := 0
	if m.MoE() {
		moeLayers = m.MoELayers()
	}
	denseLayers := m.Layers - moeLayers
	V := megatronLMVocab(m, pl.TP)
	emb := H * V
	block := dense*float64(denseLayers) + moe*float64(moeLayers) + norm*H
	var mtp float64
	if m.MTP > 0 {
		mtp = dense
		if moeLayers > 0 { // the MTP layer is as the last layer
			mtp = moe
		}
		mtp *= float64(m.MTP)
	}
	P, T := float64(pl.PP), float64(pl.TP)
	shard := (block/P + mtp + emb) / T
	if !m.Tied && pl.PP == 1 {
		shard += emb / T
	}
	per := 18.0
	if pl.DistOpt {
		per = 6 + 12/float64(pl.DP)
	}
	return shard * per
}

// megatronLMActivations is compute_activation_memory (sequence
// parallelism with selective recomputation) or
// compute_activation_memory_without_sp (otherwise), with
// num_microbatches the plan's micro-batches.
func megatronLMActivations(m transformer.Spec, pl plan.Plan) float64 {
	s, b, H := float64(m.Seq), float64(pl.MBS), float64(m.Hidden)
	P, T := float64(pl.PP), float64(pl.TP)
	V := megatronLMVocab(m, pl.TP)
	withSP := pl.SequenceParallel && pl.Recompute == plan.SelectiveRecompute
	var act float64
	if withSP {
		act = s * b * H * (18 + 4*float64(m.FFN)/H)
	} else {
		act = s * b * H * (10 + 24/T)
	}
	act *= float64(m.Layers)
	act += 8 * s * b * P // the embedding's input, P micro-batches in flight
	act += s * b * H * P // the embedding's dropout
	if pl.VP > 1 {
		act *= 1 + (P-1)/(P*float64(pl.VP))
	} else if pl.PP > 1 {
		act *= math.Min(1, float64(pl.NumMicro)/P)
	}
	if withSP {
		if pl.PP == 1 {
			act += s * b * H * 4 * (1 + V/H) // the output layer's input and the loss
		}
		return act / T
	}
	if pl.PP == 1 {
		act += (s*b*V/T + s*b*H) * 2 // the logits and the final norm's output
	}
	return act * 1.05 // "buffer for optimizer and miscellaneous temporaries"
}
