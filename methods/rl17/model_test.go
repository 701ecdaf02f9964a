package rl17

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

// build makes a graph from ops named by single letters and edges "ab"
// (a feeds b), with co-location groups given as strings of op names.
func build(t *testing.T, ops string, edges []string, coloc []string) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("hand")
	idx := map[rune]int{}
	for _, c := range ops {
		idx[c] = b.AddOp(graph.Op{Name: string(c), Type: fmt.Sprintf("T%d", idx[c]%2), HasTime: true, Time: 1e-3, BytesWritten: 64})
	}
	for gi, grp := range coloc {
		for _, c := range grp {
			b.Op(idx[c]).Colocation = fmt.Sprint("g", gi)
		}
	}
	for _, e := range edges {
		r := []rune(e)
		b.AddTensor(idx[r[0]], 64, idx[r[1]])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGroupHand: the paper's heuristic on small graphs, groups worked out
// by hand (each group listed by its op names in topological order, the
// groups in the order of their first ops).
func TestGroupHand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ops   string
		edges []string
		coloc []string
		want  []string
	}{
		// Every op feeds only the next: one group.
		{"chain", "abc", []string{"ab", "bc"}, nil, []string{"abc"}},
		// a and b feed only t; then s feeds only {a, b, t}.
		{"diamond", "sabt", []string{"sa", "sb", "at", "bt"}, nil, []string{"sabt"}},
		// Two sinks: s feeds two groups and stays alone.
		{"fork", "sab", []string{"sa", "sb"}, nil, []string{"s", "a", "b"}},
		// y feeds only z; then x feeds only {y, z}.
		{"skip", "xyz", []string{"xy", "xz", "yz"}, nil, []string{"xyz"}},
		// The graph's co-location {a, c} feeds two groups; b and d are
		// sinks.
		{"colocated", "abcd", []string{"ab", "cd"}, []string{"ac"}, []string{"ac", "b", "d"}},
		// A forward chain whose ops also feed their backward ops (a
		// training step): f1 -> f2 -> b2 -> b1, f1 -> b1. b2 feeds only
		// b1; then f2 feeds only {b2, b1}; then f1 too.
		{"training", "fgcb", []string{"fg", "gc", "cb", "fb"}, nil, []string{"fgcb"}},
		// Two towers a -> b and c -> d, each feeding both sinks s and t:
		// a joins b and c joins d (their only consumers), but b and d
		// feed two groups each and stay apart, as do the sinks.
		{"two-towers", "abcdst", []string{"ab", "cd", "bs", "dt", "bt", "ds"}, nil, []string{"ab", "cd", "s", "t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := build(t, tc.ops, tc.edges, tc.coloc)
			gr, err := Group(g, nil, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ms := range gr.Members {
				s := ""
				for _, op := range ms {
					s += g.Op(int(op)).Name
				}
				got = append(got, s)
			}
			// Within a group, ops are in topological order; compare as
			// sets of letters.
			norm := func(ss []string) []string {
				out := make([]string, len(ss))
				for i, s := range ss {
					r := []rune(s)
					slices.Sort(r)
					out[i] = string(r)
				}
				return out
			}
			if !slices.Equal(norm(got), norm(tc.want)) {
				t.Errorf("groups %v, want %v", got, tc.want)
			}
			if gr.Merged != len(tc.want) {
				t.Errorf("merged %d, want %d", gr.Merged, len(tc.want))
			}
		})
	}
}

// TestGroupBound: with a bound, the groups partition the ops, keep the
// graph's co-location groups whole, are numbered in topological order and
// number about the bound.
func TestGroupBound(t *testing.T) {
	g, err := nntest.RandomDAG("bound", 600, 0.3, 4)
	if err != nil {
		t.Fatal(err)
	}
	free, err := Group(g, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if free.N() <= 40 {
		t.Fatalf("only %d groups before the bound; the test needs more", free.N())
	}
	gr, err := Group(g, nil, 40, 1)
	if err != nil {
		t.Fatal(err)
	}
	if gr.Merged != free.N() || gr.N() > 60 || gr.N() >= free.N() {
		t.Errorf("%d groups of %d merged with a bound of 40", gr.N(), gr.Merged)
	}
	seen := make([]bool, g.NumOps())
	last := -1
	for c, ms := range gr.Members {
		if first := g.TopoIndex(int(ms[0])); first <= last {
			t.Errorf("group %d starts at topological position %d, before group %d's", c, first, c-1)
		} else {
			last = first
		}
		for _, op := range ms {
			if seen[op] || gr.Of[op] != int32(c) {
				t.Fatalf("op %d: seen %v, group %d, listed in %d", op, seen[op], gr.Of[op], c)
			}
			seen[op] = true
		}
	}
	colocGroup := map[int]int32{}
	for op := range g.NumOps() {
		if !seen[op] {
			t.Fatalf("op %d in no group", op)
		}
		if c := g.Colocation(op); c >= 0 {
			if gc, ok := colocGroup[c]; ok && gc != gr.Of[op] {
				t.Errorf("co-location group %d split over groups %d and %d", c, gc, gr.Of[op])
			}
			colocGroup[c] = gr.Of[op]
		}
	}
}

// TestModelGradient checks the controller's REINFORCE gradient (encoder,
// attention, teacher-forced decoder, embeddings) against central finite
// differences of its loss, on a small random graph in float64.
func TestModelGradient(t *testing.T) {
	g, err := nntest.RandomDAG("grad", 60, 0.3, 9)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := Group(g, nil, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := gr.N()
	if n < 3 {
		t.Fatalf("%d groups", n)
	}
	m := newModel[float64](newFeatures(g, gr), 3, Config{Hidden: 5, TypeDim: 3, DeviceDim: 2}, 7)
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range m.params() {
		for i := range p.W {
			p.W[i] += 0.2 * (2*r.Float64() - 1)
		}
	}
	k := 3
	devs := make([][]int, k)
	w := make([]float64, k)
	for s := range devs {
		devs[s] = make([]int, n)
		for i := range devs[s] {
			devs[s][i] = r.IntN(3)
		}
		w[s] = 2*r.Float64() - 1
	}
	ps := m.params()
	loss := nntest.KeepGrads(ps, func() float64 {
		var ar nn.Arena[float64]
		return m.reinforce(&ar, devs, w)
	})
	ps.ZeroGrad()
	var ar nn.Arena[float64]
	m.reinforce(&ar, devs, w)
	if c := nntest.Check(t, loss, nntest.ParamTargets(ps), 25, 1e-6, 1e-5, 1e-9); c < 100 {
		t.Fatalf("only %d entries compared", c)
	}
}
