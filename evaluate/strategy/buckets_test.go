package strategy

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
)

// TestDDPAllReduceHand: 2 replicas of a 1-GPU placement over PCIe at 10
// GB/s and 10 us. Three gradients of 10 MB, ready at 1, 2 and 3 ms, in
// buckets of 25 MB: the first two share a bucket (20 MB; the third would
// make it 30), all-reduced from 2 ms for 2 x (10 us + 10 MB / 10 GB/s) =
// 2.02 ms, to 4.02 ms; the third from then (its gradient was ready at 3
// ms) for 2 x (10 us + 5 MB / 10 GB/s) = 1.02 ms, to 5.04 ms: 2.04 ms past
// the last gradient.
func TestDDPAllReduceHand(t *testing.T) {
	h, _ := roofline.Preset("v100")
	h.PCIeBandwidth, h.PCIeLatency = 10e9, 10e-6
	c, err := roofline.NewCluster(h, 2, "pcie")
	if err != nil {
		t.Fatal(err)
	}
	grads := []Gradient{{0, 10e6, 3e-3}, {0, 10e6, 1e-3}, {0, 10e6, 2e-3}}
	r, err := DDPAllReduce(c, 1, 2, grads, 25e6)
	if err != nil {
		t.Fatal(err)
	}
	first := 2 * (10e-6 + 10e6/10e9) // 20 MB over 2 GPUs: chunks of 10 MB, 2 steps
	second := 2 * (10e-6 + 5e6/10e9)
	wantDone := 2e-3 + first
	wantDone = max(wantDone, 3e-3) + second
	if r.Buckets != 2 || math.Abs(r.Done[0]-wantDone) > 1e-15 || math.Abs(r.Exposed-(wantDone-3e-3)) > 1e-15 || r.BucketBytes != 30e6 {
		t.Errorf("%+v, want 2 buckets done at %v, exposed %v", r, wantDone, wantDone-3e-3)
	}
	// One replica: nothing to all-reduce.
	if r, _ := DDPAllReduce(c, 1, 1, grads, 25e6); r.Exposed != 0 || r.Comm != 0 {
		t.Errorf("one replica: %+v", r)
	}
	if _, err := DDPAllReduce(c, 2, 2, grads, 25e6); err == nil {
		t.Error("2 replicas of 2 GPUs on a 2-GPU cluster were taken")
	}
}

// TestDDPRings: a 2-GPU placement with 2 replicas on 4 GPUs: device 0's
// ring is GPUs 0 and 2, device 1's GPUs 1 and 3; they run at once.
func TestDDPRings(t *testing.T) {
	h, _ := roofline.Preset("v100")
	c, _ := roofline.NewCluster(h, 4, "pcie")
	grads := []Gradient{{0, 50e6, 1e-3}, {1, 50e6, 1e-3}}
	r, err := DDPAllReduce(c, 2, 2, grads, 100e6)
	if err != nil {
		t.Fatal(err)
	}
	t0, _, _ := c.CollectiveTime(roofline.AllReduce, []int{0, 2}, 50e6)
	t1, _, _ := c.CollectiveTime(roofline.AllReduce, []int{1, 3}, 50e6)
	if r.Done[0] != 1e-3+t0 || r.Done[1] != 1e-3+t1 || math.Abs(r.Exposed-max(t0, t1)) > 1e-15 {
		t.Errorf("%+v, want rings done at %v and %v", r, 1e-3+t0, 1e-3+t1)
	}
}
