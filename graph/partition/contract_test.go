package partition

import (
	"reflect"
	"testing"
)

func TestContract(t *testing.T) {
	g := grid(32, 32) // 1,024 unit vertices
	// Labels: left half 0, right half 1.
	label := make([]int32, g.NumVertices())
	for v := range label {
		if v%32 >= 16 {
			label[v] = 1
		}
	}
	for _, tc := range []struct {
		name   string
		target int
		label  []int32
	}{
		{"no labels", 100, nil},
		{"labels", 100, label},
		{"target above size", 2000, nil},
		{"target zero", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group, k, err := Contract(g, tc.target, tc.label, 7)
			if err != nil {
				t.Fatal(err)
			}
			if tc.target <= 0 || tc.target >= g.NumVertices() {
				if k != g.NumVertices() {
					t.Fatalf("%d groups, want every vertex alone", k)
				}
				return
			}
			// Rounds halve at most: the count ends in [target/2, target].
			if k > tc.target || k < tc.target/2 {
				t.Errorf("%d groups for target %d", k, tc.target)
			}
			size := make([]int, k)
			lab := make([]int32, k)
			for i := range lab {
				lab[i] = -1
			}
			for v, c := range group {
				if c < 0 || int(c) >= k {
					t.Fatalf("vertex %d in group %d of %d", v, c, k)
				}
				size[c]++
				if tc.label != nil {
					if lab[c] >= 0 && lab[c] != tc.label[v] {
						t.Fatalf("group %d mixes labels", c)
					}
					lab[c] = tc.label[v]
				}
			}
			// No group above 1.5x the average weight of target groups.
			limit := 1.5 * float64(g.NumVertices()) / float64(tc.target)
			for c, s := range size {
				if s == 0 {
					t.Errorf("group %d is empty", c)
				}
				if float64(s) > limit {
					t.Errorf("group %d holds %d vertices > %.1f", c, s, limit)
				}
			}
			again, _, _ := Contract(g, tc.target, tc.label, 7)
			if !reflect.DeepEqual(group, again) {
				t.Error("same seed, different groups")
			}
		})
	}
	if _, _, err := Contract(g, 10, []int32{1}, 1); err == nil {
		t.Error("wrong label count: no error")
	}
}

// TestContractStopsOnLabels: when every vertex has its own label, no pair
// may merge, and the contraction stops instead of looping.
func TestContractStopsOnLabels(t *testing.T) {
	g := grid(8, 8)
	label := make([]int32, g.NumVertices())
	for v := range label {
		label[v] = int32(v)
	}
	_, k, err := Contract(g, 4, label, 1)
	if err != nil {
		t.Fatal(err)
	}
	if k != g.NumVertices() {
		t.Errorf("%d groups, want %d", k, g.NumVertices())
	}
}
