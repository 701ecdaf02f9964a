package heap

import (
	stdheap "container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func lessInt(a, b int) bool { return a < b }

// flavours are the two ways to run an int heap: by < and by lessInt.
var flavours = []struct {
	name string
	push func(h *[]int, x int)
	pop  func(h *[]int) int
}{
	{"ordered", func(h *[]int, x int) { Push(h, x) }, func(h *[]int) int { return Pop(h) }},
	{"func", func(h *[]int, x int) { PushFunc(h, x, lessInt) }, func(h *[]int) int { return PopFunc(h, lessInt) }},
}

// item is an element with a key and an identity, to see which of two
// equal keys comes out first.
type item struct{ key, id int }

func byKey(a, b item) bool { return a.key < b.key }

func byKeyID(a, b item) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.id < b.id
}

// checkHeap fails unless h has the heap property under less.
func checkHeap[E any](t *testing.T, h []E, less func(a, b E) bool) {
	t.Helper()
	for i := 1; i < len(h); i++ {
		if less(h[i], h[(i-1)/2]) {
			t.Fatalf("heap property broken at %d (parent %d): %v", i, (i-1)/2, h)
		}
	}
}

// TestLayout checks the array after each operation against values
// worked out by hand from the sift rules in the package comment.
func TestLayout(t *testing.T) {
	steps := []struct {
		push int // -1: pop
		pop  int // the element popped
		want []int
	}{
		{push: 5, want: []int{5}},
		{push: 3, want: []int{3, 5}},
		{push: 8, want: []int{3, 5, 8}},
		{push: 1, want: []int{1, 3, 8, 5}}, // up past 5, then 3
		{push: 9, want: []int{1, 3, 8, 5, 9}},
		{push: 2, want: []int{1, 3, 2, 5, 9, 8}},       // up past 8
		{push: -1, pop: 1, want: []int{2, 3, 8, 5, 9}}, // 8 down to the right child
		{push: -1, pop: 2, want: []int{3, 5, 8, 9}},
		{push: -1, pop: 3, want: []int{5, 9, 8}},
		{push: -1, pop: 5, want: []int{8, 9}},
		{push: -1, pop: 8, want: []int{9}},
		{push: -1, pop: 9, want: []int{}},
	}
	for _, f := range flavours {
		var h []int
		for k, st := range steps {
			if st.push >= 0 {
				f.push(&h, st.push)
			} else if got := f.pop(&h); got != st.pop {
				t.Fatalf("%s step %d: popped %d, want %d", f.name, k, got, st.pop)
			}
			if !slices.Equal(h, st.want) {
				t.Fatalf("%s step %d: heap %v, want %v", f.name, k, h, st.want)
			}
		}
	}
}

// TestTies checks, on a hand-worked case, that equal elements come out
// in the sift order and not in push order: A, B, C with one key pop as
// A, C, B (Pop moves C to the root, and B is not less than C).
func TestTies(t *testing.T) {
	var h []item
	for id := range 3 {
		PushFunc(&h, item{key: 1, id: id}, byKey)
	}
	var got []int
	for len(h) > 0 {
		got = append(got, PopFunc(&h, byKey).id)
	}
	if want := []int{0, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("pop order %v, want %v", got, want)
	}
}

// TestSortProperty: pushing random elements and popping them all gives
// them sorted, for a total order, on random sizes and key ranges (many
// duplicate keys, broken by id).
func TestSortProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		n := rng.IntN(300)
		keys := 1 + rng.IntN(50)
		in := make([]item, n)
		for i := range in {
			in[i] = item{key: rng.IntN(keys), id: i}
		}
		var h []item
		for _, x := range in {
			PushFunc(&h, x, byKeyID)
			checkHeap(t, h, byKeyID)
		}
		got := make([]item, 0, n)
		for len(h) > 0 {
			got = append(got, PopFunc(&h, byKeyID))
			checkHeap(t, h, byKeyID)
		}
		want := slices.Clone(in)
		slices.SortFunc(want, func(a, b item) int {
			if byKeyID(a, b) {
				return -1
			}
			if byKeyID(b, a) {
				return 1
			}
			return 0
		})
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: popped %v, want %v", trial, got, want)
		}
	}
}

// TestInterleavedProperty: random pushes and pops against a sorted slice
// as the reference priority queue, for both flavours; they also leave the
// same slice after every operation (Push and Pop sift as PushFunc and
// PopFunc do).
func TestInterleavedProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		var h, hf, ref []int
		for op := 0; op < 400; op++ {
			if len(h) > 0 && rng.IntN(3) == 0 {
				got, gotf := Pop(&h), PopFunc(&hf, lessInt)
				if got != ref[0] || gotf != ref[0] {
					t.Fatalf("trial %d op %d: popped %d and %d, want %d", trial, op, got, gotf, ref[0])
				}
				ref = ref[1:]
			} else {
				x := rng.IntN(40) - 20
				Push(&h, x)
				PushFunc(&hf, x, lessInt)
				i, _ := slices.BinarySearch(ref, x)
				ref = slices.Insert(ref, i, x)
			}
			if len(h) != len(ref) {
				t.Fatalf("trial %d op %d: %d elements, want %d", trial, op, len(h), len(ref))
			}
			if !slices.Equal(h, hf) {
				t.Fatalf("trial %d op %d: Push/Pop left %v, PushFunc/PopFunc %v", trial, op, h, hf)
			}
			checkHeap(t, h, lessInt)
		}
	}
}

// swapHeap is the heap the replaced hand-written ones (graph, baseline's
// m-ETF, partition's gain heaps, BRKGA's decoder) all were: sift by
// swaps, right child only when strictly less than the left.
type swapHeap struct {
	e    []item
	less func(a, b item) bool
}

func (h *swapHeap) push(x item) {
	h.e = append(h.e, x)
	i := len(h.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.e[i], h.e[p]) {
			break
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

func (h *swapHeap) pop() item {
	top := h.e[0]
	last := len(h.e) - 1
	h.e[0] = h.e[last]
	h.e = h.e[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h.e) {
			break
		}
		c := l
		if r := l + 1; r < len(h.e) && h.less(h.e[r], h.e[l]) {
			c = r
		}
		if !h.less(h.e[c], h.e[i]) {
			break
		}
		h.e[i], h.e[c] = h.e[c], h.e[i]
		i = c
	}
	return top
}

// TestSameAsSwapHeap: with a less that is not total (keys only, many
// equal), random pushes and pops leave PushFunc and PopFunc's slice identical,
// element for element, to the swap heap's, so equal keys come out in the
// same order: replacing that heap changes no result.
func TestSameAsSwapHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		ref := swapHeap{less: byKey}
		var h []item
		keys := 1 + rng.IntN(8)
		for op := 0; op < 500; op++ {
			if len(h) > 0 && rng.IntN(5) < 2 {
				got, want := PopFunc(&h, byKey), ref.pop()
				if got != want {
					t.Fatalf("trial %d op %d: popped %v, want %v", trial, op, got, want)
				}
			} else {
				x := item{key: rng.IntN(keys), id: op}
				PushFunc(&h, x, byKey)
				ref.push(x)
			}
			if !slices.Equal(h, ref.e) {
				t.Fatalf("trial %d op %d: heap %v, want %v", trial, op, h, ref.e)
			}
		}
	}
}

// TestNamedSlice: the functions take a named slice type and keep it.
func TestNamedSlice(t *testing.T) {
	type ops []int32
	h := make(ops, 0, 4)
	for _, v := range []int32{4, 2, 7} {
		Push(&h, v)
	}
	if got := Pop(&h); got != 2 || len(h) != 2 {
		t.Fatalf("popped %d with %d left, want 2 with 2 left", got, len(h))
	}
	less := func(a, b int32) bool { return a > b }
	hf := make(ops, 0, 4)
	for _, v := range []int32{4, 2, 7} {
		PushFunc(&hf, v, less)
	}
	if got := PopFunc(&hf, less); got != 7 || len(hf) != 2 {
		t.Fatalf("max-heap popped %d with %d left, want 7 with 2 left", got, len(hf))
	}
}

// TestStrings: Pop clears the slot it frees, so the heap's storage keeps
// no string alive past its pop.
func TestStrings(t *testing.T) {
	var h []string
	for _, w := range []string{"pear", "apple", "fig"} {
		Push(&h, w)
	}
	var got []string
	for len(h) > 0 {
		got = append(got, Pop(&h))
	}
	if want := []string{"apple", "fig", "pear"}; !slices.Equal(got, want) {
		t.Fatalf("popped %v, want %v", got, want)
	}
	if tail := h[:3]; !slices.Equal(tail, []string{"", "", ""}) {
		t.Fatalf("storage after popping all: %q, want it cleared", tail)
	}
}

const benchN = 1024

// BenchmarkPushPop pushes benchN random ints and pops them all, reusing
// the slice (run with -benchmem: no allocation once it has grown).
func BenchmarkPushPop(b *testing.B) {
	in := benchInput()
	h := make([]int, 0, benchN)
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range in {
			Push(&h, x)
		}
		for len(h) > 0 {
			Pop(&h)
		}
	}
}

// BenchmarkPushPopFunc is BenchmarkPushPop with PushFunc and PopFunc.
func BenchmarkPushPopFunc(b *testing.B) {
	in := benchInput()
	h := make([]int, 0, benchN)
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range in {
			PushFunc(&h, x, lessInt)
		}
		for len(h) > 0 {
			PopFunc(&h, lessInt)
		}
	}
}

func benchInput() []int {
	rng := rand.New(rand.NewPCG(7, 8))
	in := make([]int, benchN)
	for i := range in {
		in[i] = rng.IntN(1 << 20)
	}
	return in
}

// intHeap is container/heap's interface over ints, for comparison.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	s := *h
	x := s[len(s)-1]
	*h = s[:len(s)-1]
	return x
}

// BenchmarkContainerHeap is BenchmarkPushPop with container/heap.
func BenchmarkContainerHeap(b *testing.B) {
	in := benchInput()
	h := make(intHeap, 0, benchN)
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range in {
			stdheap.Push(&h, x)
		}
		for h.Len() > 0 {
			stdheap.Pop(&h)
		}
	}
}

// Ops by lowest index first, as Kahn's algorithm takes them.
func Example() {
	var ready []int32
	for _, v := range []int32{7, 3, 5} {
		Push(&ready, v)
	}
	fmt.Println(ready[0], len(ready))
	for len(ready) > 0 {
		fmt.Print(Pop(&ready), " ")
	}
	fmt.Println()
	// Output:
	// 3 3
	// 3 5 7
}

// Highest gain first, ties by lower vertex, as a gain heap takes them.
func ExamplePushFunc() {
	type cand struct {
		gain int64
		v    int32
	}
	above := func(a, b cand) bool {
		if a.gain != b.gain {
			return a.gain > b.gain
		}
		return a.v < b.v
	}
	var h []cand
	for _, c := range []cand{{3, 7}, {5, 2}, {3, 1}} {
		PushFunc(&h, c, above)
	}
	for len(h) > 0 {
		c := PopFunc(&h, above)
		fmt.Print(c.gain, ":", c.v, " ")
	}
	fmt.Println()
	// Output: 5:2 3:1 3:7
}
