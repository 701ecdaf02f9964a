package alloc

import (
	"fmt"
	"slices"

	"github.com/placer/placer/graph"
)

// GraphTraces is each device's allocation trace of one step of op graph
// g placed by device (an op's device, 0 to devices-1), from the tensor
// lifetimes the roofline simulator counts (evaluate/roofline: kernel.go
// charge and finishOp, transfer.go): every op's parameters held from
// the start; an op, in the graph's topological order (Graph.Topo),
// allocates its outputs (none for a view: an Alias op's) and its
// scratch memory when it starts, and when it ends frees the scratch,
// every input whose last consumer on that device it is, and each output
// no op consumes; a tensor consumed on another device is copied there
// before its first consumer on that device and freed after its last.
// One order for all: the simulator runs the ops as they become ready,
// which on a device with several ready at once may differ.
func GraphTraces(g *graph.Graph, device []int, devices int) ([][]Event, error) {
	return GraphTracesInOrder(g, device, devices, g.Topo())
}

// GraphTracesInOrder is GraphTraces with the ops run in order (every op
// once, each after its predecessors: the order a simulation ran them).
func GraphTracesInOrder(g *graph.Graph, device []int, devices int, order []int32) ([][]Event, error) {
	if err := checkOrder(g, device, devices, order); err != nil {
		return nil, err
	}
	traces := make([][]Event, devices)
	next := make([]int32, devices)
	add := func(dv int, size int64) int32 {
		id := next[dv]
		next[dv]++
		traces[dv] = append(traces[dv], Event{Tensor: id, Size: size})
		return id
	}
	free := func(dv int, id int32) { traces[dv] = append(traces[dv], Event{Tensor: id, Free: true}) }
	ops := g.Ops()
	for i := range ops {
		if b := ops[i].ParamBytes; b > 0 {
			add(device[i], b)
		}
	}
	tensors := g.Tensors()
	copies := consumersByDevice(g, device)
	bytesOf := func(t int32) int64 {
		if ops[tensors[t].Producer].Alias {
			return 0
		}
		return tensors[t].Bytes
	}
	own := make([]int32, len(tensors)) // the producer device's id (-1: none)
	for t := range own {
		own[t] = -1
	}
	for _, v := range order {
		dv := device[v]
		for _, t := range g.Inputs(int(v)) {
			if device[tensors[t].Producer] != dv {
				if h := copies[t][dv]; h.id < 0 && bytesOf(t) > 0 {
					h.id = add(dv, bytesOf(t))
				}
			}
		}
		for _, t := range g.Outputs(int(v)) {
			own[t] = -1
			if b := bytesOf(t); b > 0 {
				own[t] = add(dv, b)
			}
		}
		var temp int32 = -1
		if b := ops[v].TempBytes; b > 0 {
			temp = add(dv, b)
		}
		if temp >= 0 {
			free(dv, temp)
		}
		ins := g.Inputs(int(v))
		for k, t := range ins {
			if slices.Contains(ins[:k], t) {
				continue // an input read twice is consumed once
			}
			h := copies[t][dv]
			h.left--
			if h.left > 0 {
				continue
			}
			pd := device[tensors[t].Producer]
			switch {
			case pd != dv && h.id >= 0:
				free(dv, h.id)
			case pd == dv && own[t] >= 0:
				free(dv, own[t])
				own[t] = -1
			}
		}
		for _, t := range g.Outputs(int(v)) {
			if h := copies[t][dv]; (h == nil || h.left == 0) && own[t] >= 0 {
				// No consumer on its own device: freed now (sent, or
				// not consumed at all).
				free(dv, own[t])
				own[t] = -1
			}
		}
	}
	return traces, nil
}

// checkOrder checks order (every op of g once, each after its
// predecessors) and device (each op's device, one of devices).
func checkOrder(g *graph.Graph, device []int, devices int, order []int32) error {
	if len(order) != g.NumOps() {
		return fmt.Errorf("alloc: an order of %d ops for %d", len(order), g.NumOps())
	}
	pos := make([]int, g.NumOps())
	for i := range pos {
		pos[i] = -1
	}
	for k, v := range order {
		if v < 0 || int(v) >= len(pos) || pos[v] >= 0 {
			return fmt.Errorf("alloc: op %d twice or out of range in the order", v)
		}
		pos[v] = k
	}
	for k, v := range order {
		for _, u := range g.Preds(int(v)) {
			if pos[u] > k {
				return fmt.Errorf("alloc: op %d ordered before its predecessor %d", v, u)
			}
		}
	}
	if len(device) != g.NumOps() {
		return fmt.Errorf("alloc: %d devices for %d ops", len(device), g.NumOps())
	}
	if devices < 1 {
		return fmt.Errorf("alloc: %d devices", devices)
	}
	for i, dv := range device {
		if dv < 0 || dv >= devices {
			return fmt.Errorf("alloc: op %d on device %d of %d", i, dv, devices)
		}
	}
	return nil
}

// tensorCopy is a tensor's copy on a device in GraphTracesInOrder: its trace
// id there (-1: none) and the consumers there yet to run.
type tensorCopy struct {
	id   int32
	left int32
}

// consumersByDevice is, per tensor of g, its copy on each device that
// consumes it, with the consumers there, none allocated yet.
func consumersByDevice(g *graph.Graph, device []int) []map[int]*tensorCopy {
	tensors := g.Tensors()
	copies := make([]map[int]*tensorCopy, len(tensors))
	for t := range tensors {
		copies[t] = map[int]*tensorCopy{}
		for _, c := range tensors[t].Consumers {
			h := copies[t][device[c]]
			if h == nil {
				h = &tensorCopy{id: -1}
				copies[t][device[c]] = h
			}
			h.left++
		}
	}
	return copies
}

// Ordered is order (every op of g once) made topological: each op as
// early as order puts it once its predecessors have run (Kahn's
// algorithm taking the ready op first in order), so that a schedule's
// ops sorted by start, where a successor may start at its
// predecessor's instant, can be traced.
func Ordered(g *graph.Graph, order []int32) ([]int32, error) {
	n := g.NumOps()
	if len(order) != n {
		return nil, fmt.Errorf("alloc: an order of %d ops for %d", len(order), n)
	}
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	for k, v := range order {
		if v < 0 || int(v) >= n || pos[v] >= 0 {
			return nil, fmt.Errorf("alloc: op %d twice or out of range in the order", v)
		}
		pos[v] = int32(k)
	}
	indeg := make([]int32, n)
	for v := range n {
		indeg[v] = int32(len(g.Preds(v)))
	}
	// A min-heap of ready ops by position.
	var h []int32
	less := func(i, j int) bool { return pos[h[i]] < pos[h[j]] }
	push := func(v int32) {
		h = append(h, v)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !less(i, p) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	pop := func() int32 {
		v := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && less(l, m) {
				m = l
			}
			if r < len(h) && less(r, m) {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
		return v
	}
	for v := range n {
		if indeg[v] == 0 {
			push(int32(v))
		}
	}
	out := make([]int32, 0, n)
	for len(h) > 0 {
		v := pop()
		out = append(out, v)
		for _, s := range g.Succs(int(v)) {
			if indeg[s]--; indeg[s] == 0 {
				push(s)
			}
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("alloc: graph has a cycle")
	}
	return out, nil
}
