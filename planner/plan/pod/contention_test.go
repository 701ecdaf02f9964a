package pod

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
)

// TestBesideIn: collectives beside compute on DGX H100s (132 SMs, HBM
// 3.35 TB/s at the elementwise efficiency 0.85: 2.8475 TB/s), worked by
// hand. Each collective takes 2 ms.
//   - An FSDP all-gather of 1 GB over a node's 8 GPUs beside a 10 ms
//     block of GEMMs (all SM-bound): its 24 CTAs leave 108 SMs, so over
//     its 2 ms the block does 2 x 108/132 ms of work and ends 2 x 24/132 =
//     0.3636 ms late. Beside a 1 ms block the gather outlasts even the
//     slowed block: 1 ms exposed. Across 4 nodes (16 CTAs) 2 x 16/132.
//   - A reduce-scatter of 1 GB over 8 GPUs beside 10 ms of memory-bound
//     kernels: it moves 7/8 GB a GPU, 3 bytes of HBM each (its own
//     shard read to add to what arrives, the sum written, the sum read
//     to send): 2.625 GB in 2 ms, 1.3125 TB/s of the 2.8475, so the
//     kernels run at 1 - 1.3125/2.8475 and end 2 x 1.3125/2.8475 =
//     0.9219 ms late.
//   - A window half idle (the host) and half SM-bound beside the
//     all-gather: r = 10 / (5 x 132/108 + 5) and 2 (1 - r) late.
//   - Two collectives one after the other take their time-weighted
//     CTAs: a 2 ms all-gather in a node (24) then a 2 ms one across
//     nodes (16) hold 20 on average: 4 x 20/132 beside 10 ms of GEMMs.
func TestBesideIn(t *testing.T) {
	p, err := PodOf("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	node, four := Group{PerNode: 8, Nodes: 1}, Group{PerNode: 8, Nodes: 4}
	ag := p.BesideComm(roofline.AllGather, node, 1e9, 2e-3)
	agAcross := p.BesideComm(roofline.AllGather, four, 1e9, 2e-3)
	rs := p.BesideComm(roofline.ReduceScatter, node, 1e9, 2e-3)
	for _, c := range []struct {
		name string
		comm Comm
		w    Window
		want float64
	}{
		{"all-gather beside GEMMs", ag, Window{Busy: 10e-3, Compute: 10e-3}, 2e-3 * 24 / 132},
		{"all-gather beside a short block", ag, Window{Busy: 1e-3, Compute: 1e-3}, 1e-3},
		{"all-gather across nodes beside GEMMs", agAcross, Window{Busy: 10e-3, Compute: 10e-3}, 2e-3 * 16 / 132},
		{"reduce-scatter beside memory-bound kernels", rs, Window{Busy: 10e-3}, 2e-3 * 1.3125e12 / 2.8475e12},
		{"all-gather beside half idle", ag, Window{Busy: 10e-3, Compute: 5e-3, Idle: 5e-3}, 2e-3 * (1 - 10/(5*132.0/108+5))},
		{"two gathers one after the other", ag.Plus(agAcross), Window{Busy: 10e-3, Compute: 10e-3}, 4e-3 * 20 / 132},
		{"nothing beside", Comm{}, Window{Busy: 10e-3, Compute: 10e-3}, 0},
	} {
		if got := p.BesideIn(c.comm, c.w); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %g s exposed, want %g", c.name, got, c.want)
		}
	}
	// A pod that knows no CTAs charges its flat slowdown (Beside).
	q := Pod{Kernels: kernels.Node{OverlapSlowdown: 0.2}}
	if got := q.BesideIn(Comm{Time: 1}, Window{Busy: 3, Compute: 3}); math.Abs(got-0.2) > 1e-12 {
		t.Errorf("flat slowdown: %g, want 0.2", got)
	}
}

// TestCollCTAs: NCCL's CTAs by where the group lies, and an all-to-all
// on the p2p channels (24 rounded up to 32; 16 stays 16).
func TestCollCTAs(t *testing.T) {
	k := kernels.H100
	for _, c := range []struct {
		g    Group
		p2p  bool
		want int
	}{
		{Group{PerNode: 8, Nodes: 1}, false, 24},
		{Group{PerNode: 2, Nodes: 1}, false, 24},
		{Group{PerNode: 4, Nodes: 2}, false, 16},
		{Group{PerNode: 8, Nodes: 1}, true, 32},
		{Group{PerNode: 8, Nodes: 4}, true, 16},
	} {
		if got := CollCTAs(k, c.g, c.p2p); got != c.want {
			t.Errorf("%+v p2p %v: %d CTAs, want %d", c.g, c.p2p, got, c.want)
		}
	}
}
