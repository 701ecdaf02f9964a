package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/plan/adapters"
)

// stepFLOPs is the FLOPs a step of plan pl runs on model m in
// Megatron's count (transformer.ModelFLOPs: the matmuls, the scores
// over the whole sequence's square, a backward twice the forward),
// fine-tuning's counted as it runs: with packing the scores over each
// sample's square (the sequence s replaced by sum L^2 / sum L over the
// mix), with LoRA the frozen linear layers' and the output layer's
// backward once their forward (the data gradient only) and the
// adapters' three times theirs. Without either, ModelFLOPs.
func stepFLOPs(m *transformer.Spec, pl *plan.Plan) float64 {
	full := transformer.ModelFLOPs(*m)
	if !pl.LoRA() && !pl.Packed() {
		return full
	}
	tokens := float64(m.Batch) * float64(m.Seq)
	_, scores := transformer.AttentionFLOPs(*m, float64(m.Seq))
	L := float64(m.Layers)
	linear := full/(3*tokens) - L*scores // a token's forward matmuls but the scores
	if pl.Packed() {
		var sq, sum float64
		for _, l := range pl.PackLens {
			sq += float64(l) * float64(l)
			sum += float64(l)
		}
		scores *= sq / sum / float64(m.Seq)
	}
	if !pl.LoRA() {
		return 3 * tokens * (linear + L*scores)
	}
	adapters := 2 * adapters.Token(pl.FineTune, m)
	return tokens * (2*linear + 3*L*scores + 3*adapters)
}
