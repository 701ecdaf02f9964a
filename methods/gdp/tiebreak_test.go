package gdp

import (
	"slices"
	"testing"

	"github.com/placer/placer/decision"
)

func TestTiebreak(t *testing.T) {
	ref := decision.Decision{
		Priority: []int{50, 10, 10, 90, 30}, // dense ranks 2, 0, 0, 3, 1
		Fusion:   []int{-1, 7, 3, 3, 9},     // dense ranks 0, 2, 1, 1, 3
	}
	tb := newTiebreak(ref, decision.Decision{Priority: levels(ref.Priority, 2), Fusion: fusionLevels(ref.Fusion, 3)}, nil)
	// The reference's quantized levels give back its exact orders.
	d := tb.apply(decision.Decision{Priority: levels(ref.Priority, 2), Fusion: fusionLevels(ref.Fusion, 3)})
	if want := []int{2, 0, 0, 1*5 + 3, 1}; !slices.Equal(d.Priority, want) { // levels 0,0,0,1,0
		t.Errorf("priorities %v, want %v", d.Priority, want)
	}
	if want := []int{-1, 2, 1, 1, 1*5 + 3}; !slices.Equal(d.Fusion, want) { // fields -1,0,0,0,1
		t.Errorf("fusion %v, want %v", d.Fusion, want)
	}
	// A move: op 1 lifted to level 1 now runs before every op of level 0,
	// and after op 3, which shares its level with a higher rank.
	moved := tb.apply(decision.Decision{Priority: []int{0, 1, 0, 1, 0}})
	if want := []int{2, 5, 0, 8, 1}; !slices.Equal(moved.Priority, want) {
		t.Errorf("priorities %v, want %v", moved.Priority, want)
	}
	// Level 0 of fusion stays "never"; an op the reference never fused
	// ranks lowest within its new level.
	fm := tb.apply(decision.Decision{Fusion: []int{0, -1, 0, 0, 0}})
	if want := []int{0, -1, 1, 1, 3}; !slices.Equal(fm.Fusion, want) {
		t.Errorf("fusion %v, want %v", fm.Fusion, want)
	}
	if newTiebreak(decision.Decision{}, decision.Decision{}, nil) != nil || newTiebreak(decision.Decision{}, decision.Decision{}, nil).apply(decision.Decision{Priority: []int{3}}).Priority[0] != 3 {
		t.Error("no reference orders: the levels must stay as they are")
	}
	// apply does not change its argument.
	in := []int{1, 0, 0, 0, 0}
	tb.apply(decision.Decision{Priority: in, Fusion: in})
	if in[0] != 1 {
		t.Error("apply changed its argument")
	}
}
