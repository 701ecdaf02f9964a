package search

import (
	"fmt"
	"testing"
)

// TestTargetSplits: the splits Search tries of Llama 3 405B's 126 layers
// over 16 stages, by hand. 16 does not divide 126; end stages of 5 to 8
// layers leave the 14 between an equal share only at first + last = 14:
// (6, 8 x 15) with the last stage at the share (written 6/0), (7, 8 x
// 14, 7), (8 x 15, 6) (0/6); the virtual stages divide the share of 8
// and are at most the end stages' layers: 1, 2, 4 (4 <= 6). Megatron-Core
// also splits an end stage of its own share into V equal chunks: 6/0 and
// 0/6 keep 1 and 2, 7/7 keeps 1; with the embedding and the loss counted
// as layers (128 units, 8 a stage) V divides 8: 1, 2, 4, 8 (the embedding
// only, or the loss only, 127 units, do not split). torchtitan's chunks
// are every stage's layers: 6 and 8 (1, 2), 7 and 8 (1).
func TestTargetSplits(t *testing.T) {
	show := func(ss []stageSplit) string {
		s := ""
		for _, x := range ss {
			s += fmt.Sprintf("%d/%d", x.first, x.last)
			if x.emb {
				s += "+emb"
			}
			if x.loss {
				s += "+loss"
			}
			s += fmt.Sprint(x.virtual) + " "
		}
		return s
	}
	for _, c := range []struct {
		name string
		t    Target
		want string
	}{
		{"none", Target{}, "6/0[1 2 4] 7/7[1 2 4] 0/6[1 2 4] "},
		{"megatron", Target{OneTensor: true, EndChunks: true, UnitSplits: true}, "6/0[1 2] 7/7[1] 0/6[1 2] 0/0+emb+loss[1 2 4 8] "},
		{"torchtitan", Target{OneTensor: true, LayerChunks: true}, "6/0[1 2] 7/7[1] 0/6[1 2] "},
		{"any", Target{UnitSplits: true}, "6/0[1 2 4] 7/7[1 2 4] 0/6[1 2 4] 0/0+emb+loss[1 2 4 8] "},
	} {
		if got := show(Space{For: c.t}.splits(126, 16)); got != c.want {
			t.Errorf("%s: splits %s, want %s", c.name, got, c.want)
		}
	}
	// With the embedding and the loss counted as layers by the plan
	// (Space's), the one split they give: 126 + 2 = 128 units, 8 a stage,
	// the end stages 7 layers. torchtitan's chunks are of 7 and 8 layers:
	// V = 1.
	for _, c := range []struct {
		t    Target
		want string
	}{{Target{}, "0/0+emb+loss[1 2 4 8] "}, {Target{LayerChunks: true}, "0/0+emb+loss[1] "}} {
		if got := show(Space{EmbeddingLayer: true, LossLayer: true, For: c.t}.splits(126, 16)); got != c.want {
			t.Errorf("embedding and loss layers, %+v: %s, want %s", c.t, got, c.want)
		}
	}
}
