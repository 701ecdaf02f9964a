package families

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
)

// TestMLMHeadsByHand: BERT-large, one micro-batch of 48 sequences of 512
// (24,576 tokens), h = 1,024: p = 24,576 x 76 / 512 = 3,648 masked rows,
// p h = 3,735,552.
//
//	forward: gather p h + transform 2 p h h (7,650,410,496) + GeLU p h +
//	  norm p h + pooler 2 x 48 x h h (100,663,296) + tanh 48 h (49,152) +
//	  classifier 2 x 48 x h x 2 (196,608) = 7,762,526,208 FLOPs, 7 kernels;
//	backward: norm and GeLU 2 p h + transform 2 x 7,650,410,496 +
//	  classifier 2 x 196,608 + tanh 49,152 + pooler 2 x 100,663,296 +
//	  scatter p h = 15,513,796,608 FLOPs, 10 kernels; the scatter writes
//	  the whole sequence's gradient, 24,576 x 1,024 x 2 = 50,331,648 bytes.
//
// A decoder (no Predicted) has no heads.
func TestMLMHeadsByHand(t *testing.T) {
	m, err := transformer.Parse("bert-large:seq=512,batch=384")
	if err != nil {
		t.Fatal(err)
	}
	s := &cost.Shard{M: m, Tokens: 24576}
	fwd, bwd := MLMHeads{}.Kernels(s)
	sum := func(ks []cost.Kernel) (f float64) {
		for _, k := range ks {
			f += k.FLOPs
		}
		return f
	}
	if got := sum(fwd); got != 7762526208 || len(fwd) != 7 {
		t.Errorf("forward %g FLOPs in %d kernels, want 7,762,526,208 in 7", got, len(fwd))
	}
	if got := sum(bwd); got != 15513796608 || len(bwd) != 10 {
		t.Errorf("backward %g FLOPs in %d kernels, want 15,513,796,608 in 10", got, len(bwd))
	}
	if got := bwd[len(bwd)-1].Writes; got != 50331648 {
		t.Errorf("scatter writes %g bytes, want 50,331,648", got)
	}
	if !cost.Applies(MLMHeads{}, s) {
		t.Error("an encoder's heads not priced")
	}
	m.Predicted = 0
	s.M = m
	if f, b := (MLMHeads{}).Kernels(s); f != nil || b != nil || cost.Applies(MLMHeads{}, s) {
		t.Error("a decoder has no MLM heads")
	}
}
