package memory

import (
	"math"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/planner/plan"
)

// TestBridgeBlockParams: Megatron-Bridge keeps block-scaled primary
// weights under MXFP8 in every release and under NVFP4 from 26.04.01
// (bridgeBlockParams): a stage of 1.1e9 parameters, 1e9 of them the
// blocks', holds 0.1e9 x 2 = 0.2e9 bytes of BF16 weights (the
// embedding's and norms') and the blocks' copies alone, 2 x (1 + 1/32) =
// 2.0625 bytes a parameter under MXFP8, 2 x (1/2 + 1/16) = 1.125 under
// NVFP4. NVFP4 before 26.04.01 and MXFP8 outside Bridge keep the BF16
// weights (2.2e9) beside the copies; Bridge's FP8 current scaling its
// FP8 weights (1.2e9) and their transposes (1e9).
func TestBridgeBlockParams(t *testing.T) {
	for _, c := range []struct {
		stack, recipe string
		w, copies     float64
	}{
		{"megatron-bridge-26.02", plan.FP8MX, 0.2e9, 2.0625e9},
		{"megatron-bridge-25.11", plan.FP8MX, 0.2e9, 2.0625e9},
		{"megatron-bridge-26.04", plan.FP4NV, 2.2e9, 1.125e9},
		{"megatron-bridge-26.04.01", plan.FP4NV, 0.2e9, 1.125e9},
		{"megatron-bridge-26.06", plan.FP4NV, 0.2e9, 1.125e9},
		{"", plan.FP8MX, 2.2e9, 2.0625e9},
		{"megatron-core-0.16", plan.FP8MX, 2.2e9, 2.0625e9},
		{"megatron-bridge-26.02", plan.FP8Current, 1.2e9, 1e9},
	} {
		co := counter{m: mustSpec(t, "llama3-8b:seq=4096,batch=8"), pl: plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, Stages: []int{32},
			Strategy: plan.Strategy{FP8: c.recipe, DistOpt: true, Software: plan.Software{Stack: c.stack}}}}
		st := Stage{Params: 1.1e9, Layers: 1e9}
		w, copies, _, _ := co.stageState(0, &st)
		if !near(w, c.w) || !near(copies, c.copies) {
			t.Errorf("%s %s: weights %g, copies %g; want %g, %g", c.stack, c.recipe, w, copies, c.w, c.copies)
		}
	}
}

// TestChunkShare: with stage 0's first model chunk one block short (the
// embedding a layer of it, or first= uneven over the chunks),
// Megatron-Core's interleaved schedule holds (P - 1) x 2 +
// (V - 1) x P + 1 chunk forwards at stage 0's first backward, 2P - 1 of
// chunk 0 and P of each other chunk. Llama 3.1 405B's 126 blocks with
// the embedding and the loss as layers, 128 units:
//   - PP 16 x VP 4, stage 0 the embedding and 7 blocks (chunks of 1, 2,
//     2, 2): 31 x 1 + 3 x 16 x 2 = 127 blocks, against 79 / 4 x 7 =
//     138.25;
//   - PP 16 x VP 8 (chunks of 0, 1, ..., 1): 0 + 7 x 16 = 112, against
//     143 / 8 x 7 = 125.125;
//   - PP 8 x VP 4, stage 0 the embedding and 15 blocks (3, 4, 4, 4):
//     15 x 3 + 3 x 8 x 4 = 141, against 39 / 4 x 15 = 146.25; first=15
//     without the embedding as a layer alike (chunks of 3, 4, 4, 4).
//
// 1 with even chunks, on the stages past the first and without
// interleaving.
func TestChunkShare(t *testing.T) {
	pipe := func(P, V, M int, emb bool, stages ...int) plan.Plan {
		return plan.Plan{TP: 4, PP: P, VP: V, NumMicro: M, DP: 4, CP: 1, Stages: stages, Strategy: plan.Strategy{EmbeddingLayer: emb, LossLayer: emb, Schedule: decision.OneFOneB}}
	}
	even := func(P, first, rest, last int) []int {
		s := []int{first}
		for range P - 2 {
			s = append(s, rest)
		}
		return append(s, last)
	}
	for _, c := range []struct {
		name string
		pl   plan.Plan
		s    int
		want float64
	}{
		{"PP16 VP4", pipe(16, 4, 384, true, even(16, 7, 8, 7)...), 0, 127 / 138.25},
		{"PP16 VP8", pipe(16, 8, 384, true, even(16, 7, 8, 7)...), 0, 112 / 125.125},
		{"PP8 VP4", pipe(8, 4, 192, true, even(8, 15, 16, 15)...), 0, 141 / 146.25},
		{"PP8 VP4, stage 1", pipe(8, 4, 192, true, even(8, 15, 16, 15)...), 1, 1},
		{"PP8 VP4, first=15", pipe(8, 4, 192, false, even(8, 15, 16, 17)...), 0, 141 / 146.25},
		{"PP8 VP4, even chunks", pipe(8, 4, 192, false, even(8, 16, 16, 16)...), 0, 1},
		{"PP8, no interleaving", pipe(8, 1, 192, true, even(8, 15, 16, 15)...), 0, 1},
	} {
		if got := chunkShare(&c.pl, c.s); !near(got, c.want) {
			t.Errorf("%s: %g of the even count, want %g", c.name, got, c.want)
		}
	}
}

// near is got within a billionth of want (relative, at least 1 absolute).
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }
