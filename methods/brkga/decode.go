package brkga

import (
	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/heap"
)

// decoder turns chromosomes into decisions (REGAL A.5). It owns scratch
// buffers; use one per goroutine.
type decoder struct {
	l    Layout
	g    *graph.Graph
	tmpl decision.Decision // the parts the chromosome does not cover
	// groups: per co-location group, its ops (placed together by the sum
	// of their affinities)
	groups [][]int32

	sums  []float64
	indeg []int32
	heap  []uint64 // sort's ready ops, as keys
	order []int32
}

func newDecoder(l Layout, g *graph.Graph, tmpl decision.Decision, groups [][]int32) *decoder {
	return &decoder{l: l, g: g, tmpl: tmpl, groups: groups,
		sums: make([]float64, l.Devices), indeg: make([]int32, l.Ops), order: make([]int32, 0, l.Ops)}
}

// decode writes the decision chromosome c encodes into d, reusing d's
// slices:
//
//   - placement: each op goes to the device of its highest affinity (the
//     lowest device on ties); the ops of a co-location group go together
//     to the device of the highest summed affinity;
//   - scheduling: a topological sort that, among the ops whose
//     predecessors are all sorted, takes the one with the highest priority
//     gene first (ties by topological index); the sort's order becomes the
//     priorities; transfer priorities are the transfer genes;
//   - fusion: the fusion genes are the fusion priorities.
func (dc *decoder) decode(c []uint16, d *decision.Decision) {
	l := dc.l
	n := l.Ops
	*d = decision.Decision{Device: d.Device, Priority: d.Priority, Fusion: d.Fusion, Transfer: d.Transfer}
	if l.Placement {
		d.Device = grow(d.Device, n)
		for v := 0; v < n; v++ {
			if dc.g.Colocation(v) >= 0 {
				continue
			}
			a := c[v*l.Devices : (v+1)*l.Devices]
			best := 0
			for k := 1; k < len(a); k++ {
				if a[k] > a[best] {
					best = k
				}
			}
			d.Device[v] = best
		}
		for _, ms := range dc.groups {
			clear(dc.sums)
			for _, v := range ms {
				for k := 0; k < l.Devices; k++ {
					dc.sums[k] += float64(c[int(v)*l.Devices+k])
				}
			}
			best := 0
			for k := 1; k < l.Devices; k++ {
				if dc.sums[k] > dc.sums[best] {
					best = k
				}
			}
			for _, v := range ms {
				d.Device[v] = best
			}
		}
	} else {
		d.Device = dc.tmpl.Device
	}
	if l.Scheduling {
		d.Priority = grow(d.Priority, n)
		dc.sort(c[l.Priority(0) : l.Priority(0)+n])
		for k, v := range dc.order {
			d.Priority[v] = n - k
		}
		tl := l.Tensors * l.Devices
		d.Transfer = grow(d.Transfer, tl)
		base := l.Transfer(0, 0)
		for i := 0; i < tl; i++ {
			d.Transfer[i] = int(c[base+i])
		}
	} else {
		d.Priority, d.Transfer = dc.tmpl.Priority, dc.tmpl.Transfer
	}
	if l.Fusion {
		d.Fusion = grow(d.Fusion, n)
		base := l.FusionPriority(0)
		for v := 0; v < n; v++ {
			d.Fusion[v] = int(c[base+v])
		}
	} else {
		d.Fusion = dc.tmpl.Fusion
	}
}

func grow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// sort fills dc.order with the priority-broken topological order. The
// heap holds one key per ready op: the complement of its priority gene in
// the high half and its topological index in the low half, so that the
// least key is the op of highest priority, ties by topological index.
// Keys are unique (so are the indices), so the order of pops does not
// depend on the heap's sift order.
func (dc *decoder) sort(prio []uint16) {
	g := dc.g
	n := dc.l.Ops
	topo := g.Topo()
	key := func(v int32) uint64 { return uint64(^prio[v])<<32 | uint64(g.TopoIndex(int(v))) }
	h := dc.heap[:0]
	for v := 0; v < n; v++ {
		dc.indeg[v] = int32(len(g.Preds(v)))
		if dc.indeg[v] == 0 {
			heap.Push(&h, key(int32(v)))
		}
	}
	dc.order = dc.order[:0]
	for len(h) > 0 {
		v := topo[uint32(heap.Pop(&h))]
		dc.order = append(dc.order, v)
		for _, s := range g.Succs(int(v)) {
			dc.indeg[s]--
			if dc.indeg[s] == 0 {
				heap.Push(&h, key(s))
			}
		}
	}
	dc.heap = h
}
