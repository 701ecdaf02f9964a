package search

import (
	"math"

	"github.com/placer/placer/planner/plan"
)

// stageSplit is one way to split a transformer's layers over P pipeline
// stages: the first and the last stage's layers (0: the others' share)
// and the virtual stages it allows.
type stageSplit struct {
	first, last int
	virtual     []int
	// emb and loss count the embedding and the loss as layers
	// (Strategy's EmbeddingLayer, LossLayer: unitSplit's).
	emb, loss bool
}

// splits are the layer splits Search tries over P stages: stageSplits',
// or with the embedding or the loss counted as layers the one split
// they give (unitSplit).
//
// For a target (Space.For) the virtual stages of each split are those
// its framework runs (EndChunks, LayerChunks), and with UnitSplits the
// splits counting the embedding, the loss or both as layers are tried
// beside the others.
func (sp Space) splits(layers, P int) []stageSplit {
	if sp.EmbeddingLayer || sp.LossLayer {
		return sp.For.chunked(layers, P, sp.unitSplit(layers, P))
	}
	out := stageSplits(layers, P)
	if sp.For.UnitSplits {
		for _, u := range [][2]bool{{true, false}, {false, true}, {true, true}} {
			out = append(out, Space{EmbeddingLayer: u[0], LossLayer: u[1]}.unitSplit(layers, P)...)
		}
	}
	return sp.For.chunked(layers, P, out)
}

// chunked is splits with each one's virtual stages cut to those target
// t's framework runs (EndChunks, LayerChunks); a split left with none
// is dropped.
func (t Target) chunked(layers, P int, splits []stageSplit) []stageSplit {
	if !t.EndChunks && !t.LayerChunks {
		return splits
	}
	out := splits[:0:0]
	for _, sp := range splits {
		stages, err := plan.Strategy{Pipeline: P, FirstLayers: sp.first, LastLayers: sp.last,
			EmbeddingLayer: sp.emb, LossLayer: sp.loss}.StageLayers(layers)
		if err != nil {
			continue
		}
		var vs []int
		for _, v := range sp.virtual {
			ok := !t.EndChunks || sp.first%v == 0 && sp.last%v == 0
			for _, l := range stages {
				ok = ok && (!t.LayerChunks || l%v == 0)
			}
			if ok {
				vs = append(vs, v)
			}
		}
		if len(vs) > 0 {
			sp.virtual = vs
			out = append(out, sp)
		}
	}
	return out
}

// unitSplit is the split of layers over P stages with the embedding or
// the loss counted as layers (Strategy.StageLayers'), with V among the
// divisors of a stage's units; none where they do not split evenly or
// without a pipeline.
func (sp Space) unitSplit(layers, P int) []stageSplit {
	units := layers
	if sp.EmbeddingLayer {
		units++
	}
	if sp.LossLayer {
		units++
	}
	if P == 1 || units%P != 0 {
		return nil
	}
	return []stageSplit{{virtual: divisors(units / P), emb: sp.EmbeddingLayer, loss: sp.LossLayer}}
}

// endSplits are the splits Search tries of layers over P stages whose
// first and last stages have tensor-parallel degrees first and last and
// the others mid: the even split where P divides the layers, and every
// split whose end stages hold from two fewer to one more layers than the
// share that balances the stages' compute (a stage's layers in proportion
// to its degree: mid x the layers / the replica's GPUs for the stages
// between, first and last's share of that at the ends).
func endSplits(layers, P, first, mid, last int) []stageSplit {
	per := float64(layers) / float64(first+(P-2)*mid+last) // layers per GPU of degree
	return splitsAround(layers, P, int(math.Round(per*float64(first))), int(math.Round(per*float64(last))))
}

// stageSplits are the splits Search tries of layers over P stages: the
// even one when P divides the layers (with V among the divisors of each
// stage's layers), and every split whose first and last stages hold from
// two layers fewer to one more than the even share, the stages between
// an equal share of the rest (with V among the divisors of that share, at
// most the end stages' layers), each split once.
func stageSplits(layers, P int) []stageSplit {
	return splitsAround(layers, P, layers/P, layers/P)
}

// splitsAround is stageSplits with the end stages' layers tried around
// ef and el: from two fewer to one more.
func splitsAround(layers, P, ef, el int) []stageSplit {
	var out []stageSplit
	if layers%P == 0 {
		out = append(out, stageSplit{virtual: divisors(layers / P)})
	}
	if P == 1 {
		return out
	}
	seen := map[[2]int]bool{}
	for first := max(1, ef-2); first <= ef+1; first++ {
		for last := max(1, el-2); last <= el+1; last++ {
			s := plan.Strategy{Pipeline: P, FirstLayers: first, LastLayers: last}
			st, err := s.StageLayers(layers)
			if err != nil {
				continue
			}
			f, l := first, last
			if P == 2 && st[0] == st[1] {
				continue // the even split
			}
			if P > 2 { // an end stage holding the middle's share is not uneven
				if f == st[1] {
					f = 0
				}
				if l == st[1] {
					l = 0
				}
			}
			if f == 0 && l == 0 || seen[[2]int{f, l}] {
				continue
			}
			seen[[2]int{f, l}] = true
			share := st[P/2]
			if P == 2 {
				share = min(st[0], st[1])
			}
			var vs []int
			for _, v := range divisors(share) {
				if v <= min(st[0], st[P-1]) && (P == 2 && v == 1 || P > 2) {
					vs = append(vs, v)
				}
			}
			out = append(out, stageSplit{first: f, last: l, virtual: vs})
		}
	}
	return out
}
