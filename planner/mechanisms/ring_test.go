package mechanisms

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestRingTimelinesByHand: the two rings' timelines of calls a, by hand.
func TestRingTimelinesByHand(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		// p2p forward: the send of step 1's K and V (1) beside step 0's
		// call (3), then step 1's (2): nothing exposed.
		{"p2p fwd", ringP2P([]float64{3, 2}, false, 1, 2), 3 + 2},
		// ... the send (4) outlasts step 0's call: 1 exposed.
		{"p2p fwd, send exposed", ringP2P([]float64{3, 2}, false, 4, 8), 4 + 2},
		// p2p backward of 3 ranks: K, V (1) beside step 0, K, V and dK,
		// dV (2) beside step 1, dK, dV (1) beside step 2, the last
		// gradient (1) after it.
		{"p2p bwd", ringP2P([]float64{3, 2, 2}, true, 1, 2), 3 + 2 + 2 + 1},
		{"p2p bwd, sends exposed", ringP2P([]float64{3, 2, 2}, true, 2.5, 5), 3 + 5 + 2.5 + 2.5},
		// all-gather forward: the gather (1) beside step 0, then the calls.
		{"allgather fwd", ringAllGather([]float64{3, 2, 2}, false, 1, 9), 3 + 2 + 2},
		{"allgather fwd, gather exposed", ringAllGather([]float64{3, 2, 2}, false, 4, 9), 4 + 2 + 2},
		// backward: each FP32 gradient send (1) beside the next call,
		// the last after the last call.
		{"allgather bwd", ringAllGather([]float64{3, 2, 2}, true, 1, 1), 3 + 2 + 2 + 1},
		{"allgather bwd, sends exposed", ringAllGather([]float64{3, 2, 2}, true, 1, 3), 3 + 3 + 3 + 3},
		// compiled: the gather, then each call and (backward) its
		// gradient's send, one after the other.
		{"allgather traced fwd", ringTraced([]float64{3, 2, 2}, false, 1, 0, 9), 1 + 3 + 2 + 2},
		// torch's all-to-all ring eager: forward as the p2p ring; backward
		// step 0 beside its K, V send (1), step 1 beside that send and
		// step 0's FP32 gradient (1 + 2), step 2 beside step 1's
		// gradient (2), the last gradient (2) after it.
		{"alltoall fwd", ringAllToAll([]float64{3, 2, 2}, false, 1, 2), 3 + 2 + 2},
		{"alltoall fwd, send exposed", ringAllToAll([]float64{3, 2, 2}, false, 2.5, 5), 3 + 2.5 + 2},
		{"alltoall bwd", ringAllToAll([]float64{3, 2, 2}, true, 1, 2), 3 + 3 + 2 + 2},
		{"alltoall bwd, sends exposed", ringAllToAll([]float64{3, 2, 2}, true, 1, 2.5), 3 + 3.5 + 2.5 + 2.5},
		// compiled: two K, V sends, three calls, three gradients.
		{"alltoall traced bwd", ringTraced([]float64{3, 2, 2}, true, 0, 1, 0.5), 2*1 + 3 + 2 + 2 + 3*0.5},
		{"allgather traced bwd", ringTraced([]float64{3, 2, 2}, true, 1, 0, 0.5), 1 + 3 + 0.5 + 2 + 0.5 + 2 + 0.5},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s: %g, want %g", c.name, c.got, c.want)
		}
	}
}

// TestTwoRankRingByHand: a 2-rank ring's calls priced by a hand-written
// kernel: step 0 causal (its last row's Tail), step 1 full, each at half
// the GPU's FLOPs, 2 calls and 2 sends, and the K and V send exposed
// where it outlasts step 0's call.
func TestTwoRankRingByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	p = p.AtBurst() // the hand kernel's rates as written, not held
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	pl, err := plan.Resolve(m, plan.Strategy{Context: 2, Replicas: 4, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	// R 500 TFLOP/s, Beta 1e-12 s an element, Tail 10e-12, T0 10 us;
	// NVSwitch at 1 GB/s and no latency.
	hand := kernels.Attention{Backend: "hand", Fwd: kernels.AttentionRate{HeadDims: []int{128}, Rates: []float64{500e12}, Beta: 1e-12, Tail: 10e-12, T0: 10e-6}}
	p.Kernels.Attention = []*kernels.Attention{&hand}
	p.Kernels.IntraBus = 1e9
	p.Hardware.NVLinkLatency = 0
	// The GPU's share: 1 TFLOP, 1e8 query elements, a last row of 1e6.
	f := cost.FusedAttn{K: cost.Kernel{FLOPs: 1e12}, Elems: 1e8, Tail: 1e6, HeadDim: 128}
	a0 := 0.5e12/500e12 + 1e-12*1e8 + 10e-12*1e6 + 10e-6 // 1.12 ms: causal
	a1 := 0.5e12/500e12 + 1e-12*1e8 + 10e-6              // 1.11 ms: full
	for _, c := range []struct {
		name      string
		kv        float64
		busy, exp float64
	}{
		{"send hidden", 1e6, a0 + a1, 0},            // 1 ms send beside a 1.12 ms call
		{"send exposed", 2e6, 2e-3 + a1, 2e-3 - a0}, // 2 ms send: 0.88 ms exposed
		{"send exposed, 3 ms", 3e6, 3e-3 + a1, 3e-3 - a0},
	} {
		co := ring{&cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 2048}}
		got := co.attention(f, false, cost.RingMsg{KV: c.kv})
		// ... and TE's merges and copies (teRingMerges, by hand in
		// TestTERingMergesByHand) on the compute stream.
		merges, ml := teRingMerges(co.Shard, false, cost.RingMsg{KV: c.kv})
		if math.Abs(got.Busy-c.busy-merges) > 1e-12 || math.Abs(got.CPExposed-c.exp) > 1e-12 || got.Launches != 4+ml {
			t.Errorf("%s: busy %g, exposed %g, %g launches; want %g, %g, %g", c.name, got.Busy, got.CPExposed, got.Launches, c.busy+merges, c.exp, 4+ml)
		}
	}
	// Without context parallelism: one causal call of all the FLOPs.
	one := pl
	one.CP = 1
	co := ring{&cost.Shard{M: m, Plan: one, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 4096}}
	if got, want := co.attention(f, false, cost.RingMsg{KV: 1e6}).Busy, 1e12/500e12+1e-12*1e8+10e-12*1e6+10e-6; math.Abs(got-want) > 1e-12 {
		t.Errorf("one rank: %g, want %g", got, want)
	}
	// torch's all-gather ring run eager: the gather of both ranks' K and
	// V (2 MB over 2 GPUs: a ring's (n-1)/n of it at 1 GB/s, 1 ms) beside
	// step 0's call, then step 1's, and the FP32 merges (ringMerges) on
	// the same stream.
	ag := pl
	ag.Run.CPRing, ag.Run.Eager = plan.CPRingAllGather, true
	co = ring{&cost.Shard{M: m, Plan: ag, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 2048}}
	msg := cost.RingMsg{KV: 1e6, Out: 1e6}
	got := co.attention(f, false, msg)
	eagerMerges, _ := co.ringMergesEager(false, msg)
	if want := a0 + a1 + eagerMerges; math.Abs(got.Busy-want) > 1e-12 || math.Abs(got.CPExposed) > 1e-12 {
		t.Errorf("all-gather ring: busy %g, exposed %g; want %g, 0", got.Busy, got.CPExposed, want)
	}
	msg.KV = 2.5e6 // a 2.5 ms gather: 1.38 ms exposed
	got = co.attention(f, false, msg)
	eagerMerges, _ = co.ringMergesEager(false, msg)
	if want := 2.5e-3 + a1 + eagerMerges; math.Abs(got.Busy-want) > 1e-12 || math.Abs(got.CPExposed-(2.5e-3-a0)) > 1e-12 {
		t.Errorf("all-gather ring, gather exposed: busy %g, exposed %g; want %g, %g", got.Busy, got.CPExposed, want, 2.5e-3-a0)
	}
	// Compiled (Eager false): the gather waited where it is issued, before
	// step 0's call: 1 ms exposed whole beside calls of 1.12 ms. Backward
	// the gather again and each step's FP32 dK, dV (2 x 1 MB to the next
	// rank at 1 GB/s: 2 ms) after its call, all exposed: 1 + 2 x 2 ms.
	ag.Run.Eager = false
	co.Plan = ag
	msg.KV = 1e6
	got = co.attention(f, false, msg)
	if want := 1e-3 + a0 + a1 + co.ringMerges(false, msg); math.Abs(got.Busy-want) > 1e-12 || math.Abs(got.CPExposed-1e-3) > 1e-12 {
		t.Errorf("compiled all-gather ring: busy %g, exposed %g; want %g, 1e-3", got.Busy, got.CPExposed, want)
	}
	b := cost.FusedAttn{K: cost.Kernel{FLOPs: 1e12}, Elems: 1e8, Tail: 1e6, HeadDim: 128}
	hand.Bwd = hand.Fwd
	got = co.attention(b, true, msg)
	if want := 1e-3 + a0 + a1 + 2*2e-3 + co.ringMerges(true, msg); math.Abs(got.Busy-want) > 1e-12 || math.Abs(got.CPExposed-5e-3) > 1e-12 {
		t.Errorf("compiled all-gather ring backward: busy %g, exposed %g; want %g, 5e-3", got.Busy, got.CPExposed, want)
	}
}

// TestRingMergesEagerByHand: torch's ring run eager on 2 ranks, its merges
// op by op as _attention.py issues them on rank 1 (both steps all
// queries), listed here by hand for an output of E = 1e6 elements and K
// and V of 2e6 (4 MB in BF16), with the launches:
//   - forward: two casts of the step's output to FP32 (2 + 4 bytes an
//     element), step 1's difference (8 + 4), product (4 + 4) and
//     subtraction (8 + 4), its LSE's four small ops, step 0's K, V
//     concatenation (2 + 2 of K), the cast back (4 + 2): 11 launches;
//   - backward: the FP32 dQ, dK, dV zeroed (4 of E + K), two dQ adds (6 +
//     4), step 0's dK, dV add (6 + 4 of K), step 1's into half (6 + 4 of
//     K/2) and the halves' cat (4 + 4), two send concatenations (4 + 4),
//     step 0's K, V concatenation (2 + 2), dQ's and dK, dV's casts back (4
//   - 2): 11 launches.
func TestRingMergesEagerByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	pl, err := plan.Resolve(m, plan.Strategy{Context: 2, Replicas: 4, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	pl.Run.CPRing, pl.Run.Eager = plan.CPRingAllGather, true
	co := ring{&cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 2048}}
	const E, K = 1e6, 2e6
	k := func(elems, read, write float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}.Time(&p.Hardware)
	}
	fwd := 2*k(E, 2, 4) + k(E, 8, 4) + k(E, 4, 4) + k(E, 8, 4) + k(K, 2, 2) + k(E, 4, 2)
	bwd := k(E+K, 0, 4) + 2*k(E, 6, 4) + k(K, 6, 4) + k(K/2, 6, 4) + k(K, 4, 4) + 2*k(K, 4, 4) + k(K, 2, 2) + k(E, 4, 2) + k(K, 4, 2)
	msg := cost.RingMsg{KV: K * cost.BF16, Out: E}
	for _, c := range []struct {
		backward       bool
		busy, launches float64
	}{{false, fwd, 11}, {true, bwd, 11}} {
		busy, launches := co.ringMergesEager(c.backward, msg)
		if math.Abs(busy-c.busy) > 1e-15 || launches != c.launches {
			t.Errorf("backward %t: %g s, %g launches; want %g, %g", c.backward, busy, launches, c.busy, c.launches)
		}
	}
}

// TestKVAllGatherByHand: Transformer Engine's all-gather context
// parallelism (Llama 3's) on 2 ranks, priced by a hand-written kernel:
// the gather of both ranks' K and V exposed, then the two query chunks'
// calls with the rank's whole share of the FLOPs and its query elements,
// one causal tail (rank 0's second chunk's last row: the whole sequence,
// C = 2 times the rank's own row) and two fixed terms; backward the
// gather again and the reduce-scatter of dK and dV, exposed.
func TestKVAllGatherByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	p = p.AtBurst()
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	pl, err := plan.Resolve(m, plan.Strategy{Context: 2, Replicas: 4, MicroBatchSize: 1,
		Software: plan.Software{CPComm: plan.CPCommAllGather}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Run.CPRing != plan.CPRingKVAllGather {
		t.Fatalf("cp-comm-type=all_gather runs ring %q, want %q", pl.Run.CPRing, plan.CPRingKVAllGather)
	}
	// R 500 TFLOP/s, Beta 1e-12 s an element, Tail 10e-12, T0 10 us, the
	// same both ways; NVSwitch at 1 GB/s and no latency.
	hand := kernels.Attention{Backend: "hand", Fwd: kernels.AttentionRate{HeadDims: []int{128}, Rates: []float64{500e12}, Beta: 1e-12, Tail: 10e-12, T0: 10e-6}}
	hand.Bwd = hand.Fwd
	p.Kernels.Attention = []*kernels.Attention{&hand}
	p.Kernels.IntraBus = 1e9
	p.Hardware.NVLinkLatency = 0
	co := ring{&cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 2048}}
	// The GPU's share: 1 TFLOP, 1e8 query elements, its own last row 1e6.
	f := cost.FusedAttn{K: cost.Kernel{FLOPs: 1e12}, Elems: 1e8, Tail: 1e6, HeadDim: 128}
	// 2 ms of FLOPs, 0.1 ms of elements, a tail of 2e6 (20 us), 2 x 10 us.
	calls := 1e12/500e12 + 1e-12*1e8 + 10e-12*2e6 + 2*10e-6 // 2.14 ms
	// Both ranks' K and V, 2 x 1 MB: each GPU receives the other's 1 MB
	// at 1 GB/s, 1 ms; the reduce-scatter of dK and dV likewise.
	msg := cost.RingMsg{KV: 1e6, Out: 1e6}
	for _, c := range []struct {
		name          string
		backward      bool
		busy, exposed float64
		launches      float64
	}{
		{"forward", false, 1e-3 + calls, 1e-3, 4},
		{"backward", true, 2e-3 + calls, 2e-3, 6},
	} {
		got := co.attention(f, c.backward, msg)
		if math.Abs(got.Busy-c.busy) > 1e-12 || math.Abs(got.CPExposed-c.exposed) > 1e-12 || got.Launches != c.launches {
			t.Errorf("%s: busy %g, exposed %g, %g launches; want %g, %g, %g", c.name, got.Busy, got.CPExposed, got.Launches, c.busy, c.exposed, c.launches)
		}
	}
}

// TestTERingMergesByHand: Transformer Engine's p2p ring on rank C-1, its
// merges and copies as AttnFuncWithCP issues them, listed here by hand
// for an output of E = 1e6 elements and K and V of K = 2e6 (4 MB in
// BF16), with the launches:
//   - 2 ranks, forward: the output zeroed (0 + 2 bytes an element of E),
//     step 1's half of K and V made contiguous (2 + 2 of K/2), two output
//     corrections (4 + 2 of E); 4 launches and 1 LSE correction: 5;
//   - 2 ranks, backward: K and V into the ring buffer (2 + 2 of K), step
//     0's half contiguous (2 + 2 of K/2), the causal step's dK, dV cat
//     (2 + 2 of K) and step 0's (2 + 2 of K/2), dQ copied (2 + 2 of E)
//     and added (4 + 2 of E), step 0's dK, dV half copied (2 + 2 of K/2),
//     the causal step's added (4 + 2 of K): 8 launches;
//   - 4 ranks: forward 3 halves and 4 corrections, 1 + 3 + 4 + 3 = 11;
//     backward the copy, 3 halves, the causal cat and 3 halves' cats, dQ
//     copied and 3 added, dK, dV's half copied, 2 halves added, the
//     whole added: 1 + 3 + 1 + 3 + 1 + 3 + 1 + 2 + 1 = 16 launches.
func TestTERingMergesByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	const E, K = 1e6, 2e6
	k := func(elems, read, write float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}.Time(&p.Hardware)
	}
	msg := cost.RingMsg{KV: K * cost.BF16, Out: E}
	for _, c := range []struct {
		cp             int
		backward       bool
		busy, launches float64
	}{
		{2, false, k(E, 0, 2) + k(K/2, 2, 2) + 2*k(E, 4, 2), 5},
		{2, true, k(K, 2, 2) + k(K/2, 2, 2) + k(K, 2, 2) + k(K/2, 2, 2) + k(E, 2, 2) + k(E, 4, 2) + k(K/2, 2, 2) + k(K, 4, 2), 8},
		{4, false, k(E, 0, 2) + 3*k(K/2, 2, 2) + 4*k(E, 4, 2), 11},
		{4, true, k(K, 2, 2) + 3*k(K/2, 2, 2) + k(K, 2, 2) + 3*k(K/2, 2, 2) + k(E, 2, 2) + 3*k(E, 4, 2) + k(K/2, 2, 2) + 2*k(K/2, 4, 2) + k(K, 4, 2), 16},
	} {
		pl, err := plan.Resolve(m, plan.Strategy{Context: c.cp, Replicas: 8 / c.cp, MicroBatchSize: 1}, p)
		if err != nil {
			t.Fatal(err)
		}
		co := ring{&cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 4096 / float64(c.cp)}}
		busy, launches := teRingMerges(co.Shard, c.backward, msg)
		if math.Abs(busy-c.busy) > 1e-15 || launches != c.launches {
			t.Errorf("cp %d backward %t: %g s, %g launches; want %g, %g", c.cp, c.backward, busy, launches, c.busy, c.launches)
		}
		if c.cp == 2 && !c.backward {
			// No faster than its 18 MB (2 + 4 + 12) at the preset's peak
			// memory rate.
			if floor := 18e6 / p.Hardware.MemBandwidth; busy < floor {
				t.Errorf("cp 2 forward: %g s, under its bytes' %g s at peak", busy, floor)
			}
		}
	}
}

// TestRingFullCallsByHand: a ring's full calls (steps 1 to C-1) are
// priced by the kernel's full blocks' own fit (kernels.Attention.For)
// where it has one at the call's head dimension, step 0's causal call by
// the joint fit; worked by hand on torch's compiled all-gather ring of 4
// ranks, the layer's calls alone (no exchange: NoComm).
func TestRingFullCallsByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	p = p.AtBurst() // the hand kernels' rates as written, not held
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	pl, err := plan.Resolve(m, plan.Strategy{Context: 4, Replicas: 2, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	pl.Run.CPRing, pl.Run.Eager = plan.CPRingAllGather, false
	// Joint fit: R 500 TFLOP/s, Beta 1e-12 s an element, Tail 10e-12, T0
	// 10 us. Full blocks' fit at head dimension 128: R 250 TFLOP/s, Beta
	// 2e-12, T0 20 us.
	hand := kernels.Attention{Backend: "hand",
		Fwd:     kernels.AttentionRate{HeadDims: []int{128}, Rates: []float64{500e12}, Beta: 1e-12, Tail: 10e-12, T0: 10e-6},
		FullFwd: &kernels.AttentionRate{HeadDims: []int{128}, Rates: []float64{250e12}, Beta: 2e-12, T0: 20e-6}}
	p.Kernels.Attention = []*kernels.Attention{&hand}
	co := ring{&cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 1024, NoComm: true}}
	msg := cost.RingMsg{KV: 1e6, Out: 1e6}
	// The GPU's share: 1 TFLOP, a quarter a call; 1e8 query elements, a
	// causal last row of 1e6 in step 0's call.
	a0 := 0.25e12/500e12 + 1e-12*1e8 + 10e-12*1e6 + 10e-6 // 0.62 ms: causal, joint fit
	full := 0.25e12/250e12 + 2e-12*1e8 + 20e-6            // 1.22 ms: full, the full blocks' fit
	joint := 0.25e12/500e12 + 1e-12*1e8 + 10e-6           // 0.61 ms: full, the joint fit
	for _, c := range []struct {
		name string
		d    int
		want float64
	}{
		{"head dimension 128: the full fit", 128, a0 + 3*full},     // 4.28 ms
		{"head dimension 64: not measured full", 64, a0 + 3*joint}, // 2.45 ms (R(64): the nearest, 500)
	} {
		f := cost.FusedAttn{K: cost.Kernel{FLOPs: 1e12}, Elems: 1e8, Tail: 1e6, HeadDim: c.d}
		got := co.attention(f, false, msg)
		if want := c.want + co.ringMerges(false, msg); math.Abs(got.Busy-want) > 1e-12 || math.Abs(got.CPExposed) > 1e-12 {
			t.Errorf("%s: busy %g, exposed %g; want %g, 0", c.name, got.Busy, got.CPExposed, want)
		}
	}
}

// TestQKVOA2AByHand: Transformer Engine's a2a context parallelism
// (Ulysses) on 2 ranks, priced by a hand-written kernel: one causal call
// over the whole sequence with the rank's share of the FLOPs (every
// token, half the heads), its tail a row of the whole sequence (2 times
// the rank's own), one fixed term; and four all-to-alls exposed, each
// moving the half of its tensor bound for the other rank at 1 GB/s:
// Q (2 MB: 1 ms), K and V (1 MB each: 0.5 ms each), the output (2 MB:
// 1 ms), forward; backward the output's gradient, then dQ, dK, dV.
// A plan whose tp x cp does not divide the heads is refused.
func TestQKVOA2AByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	p = p.AtBurst()
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	pl, err := plan.Resolve(m, plan.Strategy{Context: 2, Replicas: 4, MicroBatchSize: 1,
		Software: plan.Software{CPComm: plan.CPCommA2A}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Run.CPRing != plan.CPRingQKVOA2A {
		t.Fatalf("cp-comm-type=a2a runs ring %q, want %q", pl.Run.CPRing, plan.CPRingQKVOA2A)
	}
	hand := kernels.Attention{Backend: "hand", Fwd: kernels.AttentionRate{HeadDims: []int{128}, Rates: []float64{500e12}, Beta: 1e-12, Tail: 10e-12, T0: 10e-6}}
	hand.Bwd = hand.Fwd
	p.Kernels.Attention = []*kernels.Attention{&hand}
	p.Kernels.IntraBus = 1e9
	p.Hardware.NVLinkLatency = 0
	p.Profile = nil
	f := cost.FusedAttn{K: cost.Kernel{FLOPs: 1e12}, Elems: 1e8, Tail: 1e6, HeadDim: 128}
	msg := cost.RingMsg{KV: 2e6, Out: 1e6}
	call := 1e12/500e12 + 1e-12*1e8 + 10e-12*2*1e6 + 10e-6 // 2.13 ms
	comm := 1e-3 + 0.5e-3 + 0.5e-3 + 1e-3                  // 3 ms
	co := ring{&cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: 2048}}
	for _, c := range []struct {
		backward bool
		launches float64
	}{{false, 5}, {true, 6}} {
		got := co.attention(f, c.backward, msg)
		if math.Abs(got.Busy-(call+comm)) > 1e-12 || math.Abs(got.CPExposed-comm) > 1e-12 || got.Launches != c.launches {
			t.Errorf("backward %t: busy %g, exposed %g, %g launches; want %g, %g, %g", c.backward, got.Busy, got.CPExposed, got.Launches, call+comm, comm, c.launches)
		}
	}
	// 6 heads over cp=4: TE asserts num_heads % cp_size == 0.
	m6 := mustSpec(t, "llama:layers=2,hidden=768,heads=6,seq=4096,vocab=1000,batch=8")
	_, err = plan.Resolve(m6, plan.Strategy{Context: 4, Replicas: 2, MicroBatchSize: 1, Software: plan.Software{CPComm: plan.CPCommA2A}}, p)
	if want := "tp=1 x cp=4 does not divide the 6 attention heads"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("heads=6, cp=4: %v, want an error with %q", err, want)
	}
}
