package roofline

import (
	"math"
	"testing"
)

// TestCollectiveTimeHand: collectives on clusters whose links are set by
// hand, against the ring's and the tree's formulas worked out here.
func TestCollectiveTimeHand(t *testing.T) {
	h, _ := Preset("v100")
	h.PCIeBandwidth, h.PCIeLatency = 10e9, 10e-6 // 10 GB/s, 10 us
	pcie4, err := NewCluster(h, 4, "pcie")
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	cases := []struct {
		name  string
		c     *Cluster
		k     Collective
		group []int
		bytes int64
		want  float64
		alg   Algorithm
	}{
		// Ring all-reduce of 100 MiB on 4 GPUs over PCIe: 2(4-1) = 6
		// steps of 25 MiB each, 10 us + 26,214,400 B / 10 GB/s = 2.63144
		// ms a step: 15.78864 ms. The tree (4 levels of 100 MiB) is far
		// slower.
		{"ring all-reduce 4 GPUs pcie", pcie4, AllReduce, []int{0, 1, 2, 3}, 100 * mib, 6 * (10e-6 + 25*mib/10e9), Ring},
		// A 1 KiB all-reduce: the ring's 6 steps of 256 B cost 6 x
		// (10 us + 25.6 ns); the tree's 2 levels up and 2 down of 1 KiB
		// cost 4 x (10 us + 102.4 ns) = 40.4096 us, fewer latencies.
		{"tree all-reduce small", pcie4, AllReduce, []int{0, 1, 2, 3}, 1024, 4 * (10e-6 + 1024/10e9), Tree},
		// All-gather of 100 MiB on 4 GPUs: 3 steps of 25 MiB.
		{"ring all-gather", pcie4, AllGather, []int{0, 1, 2, 3}, 100 * mib, 3 * (10e-6 + 25*mib/10e9), Ring},
		{"ring reduce-scatter 2 GPUs", pcie4, ReduceScatter, []int{1, 3}, 8 * mib, 1 * (10e-6 + 4*mib/10e9), Ring},
		{"one GPU", pcie4, AllReduce, []int{2}, 100 * mib, 0, Ring},
	}
	for _, c := range cases {
		got, alg, err := c.c.CollectiveTime(c.k, c.group, c.bytes)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(got-c.want) > 1e-12*max(1, c.want) || alg != c.alg {
			t.Errorf("%s: %.9g s by %v, want %.9g s by %v", c.name, got, alg, c.want, c.alg)
		}
	}
	if _, _, err := pcie4.CollectiveTime(AllReduce, []int{0, 4}, 1); err == nil {
		t.Error("a group with GPU 4 of a 4-GPU cluster was taken")
	}
}

// TestRingSlowestLink: on DGX-1's hybrid cube-mesh, a ring 0-1-2-3-0
// moves over NVLink only; a ring 0-5 crosses PCIe, the slowest link,
// which sets the pace of every step.
func TestRingSlowestLink(t *testing.T) {
	h, _ := Preset("v100")
	c, err := NewCluster(h, 8, "hybrid-cube-mesh")
	if err != nil {
		t.Fatal(err)
	}
	const s = 64 << 20
	quad, _, _ := c.CollectiveTime(AllReduce, []int{0, 1, 2, 3}, s)
	slowest := 0.0
	for i, g := range []int{0, 1, 2, 3} {
		slowest = max(slowest, c.TransferTime(g, []int{0, 1, 2, 3}[(i+1)%4], s/4))
	}
	if want := 6 * slowest; math.Abs(quad-want) > 1e-12 {
		t.Errorf("quad ring %v, want %v", quad, want)
	}
	cross, _, _ := c.CollectiveTime(AllReduce, []int{0, 5}, s)
	if want := 2 * c.TransferTime(0, 5, s/2); math.Abs(cross-want) > 1e-12 || cross <= quad/3 {
		t.Errorf("0-5 over PCIe: %v, want %v (slower per byte than the NVLink quad's %v)", cross, want, quad)
	}
}
