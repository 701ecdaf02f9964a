package pod

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/kernels"
)

// TestRootedByHand: a broadcast (or a reduce) on a hand-made pod of
// nodes of 4 GPUs, NVSwitch at 100 GB/s bus bandwidth and 2 us a hop,
// one NIC of 10 GB/s a node (2.5 GB/s a GPU's share) and 5 us a hop:
//   - 1 GB over the 4 GPUs of a node: 1e9/100e9 + 3 x 2e-6 = 0.010006 s
//     (an all-gather's (n-1)/n factor does not apply: every link of the
//     chain carries the whole buffer, busBw = algBw);
//   - 1 GB over 2 nodes of 4: the NICs of the group's 4 GPUs a node
//     carry it, 4 x 2.5e9 = 10 GB/s, slower than NVSwitch: 0.1 s, plus
//     8 - 2 = 6 hops inside the nodes and 1 across: 0.1 + 12e-6 + 5e-6;
//   - 1 GB over 2 nodes with 2 GPUs of the group a node (the other 2
//     another group's): 5 GB/s, 0.2 s + 2 x 2e-6 + 5e-6;
//   - one GPU or no bytes: 0.
func TestRootedByHand(t *testing.T) {
	p := &Pod{Name: "hand", Nodes: 2, PerNode: 4, NICs: 1, NICBandwidth: 10e9, NICLatency: 5e-6,
		Hardware: roofline.Hardware{NVLinkLatency: 2e-6}, Kernels: kernels.Node{IntraBus: 100e9}}
	for _, c := range []struct {
		name  string
		g     Group
		bytes float64
		want  float64
	}{
		{"one node", Group{PerNode: 4, Nodes: 1}, 1e9, 0.010006},
		{"two nodes", Group{PerNode: 4, Nodes: 2}, 1e9, 0.1 + 12e-6 + 5e-6},
		{"two nodes, half a node each", Group{PerNode: 2, Nodes: 2}, 1e9, 0.2 + 4e-6 + 5e-6},
		{"one GPU", Group{PerNode: 1, Nodes: 1}, 1e9, 0},
		{"no bytes", Group{PerNode: 4, Nodes: 2}, 0, 0},
	} {
		if got := p.Rooted(c.g, c.bytes); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %.9g s, want %.9g", c.name, got, c.want)
		}
	}
}
