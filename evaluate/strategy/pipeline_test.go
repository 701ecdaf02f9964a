package strategy

import (
	"math"
	"testing"

	"github.com/placer/placer/decision"
)

// TestPipelineHand: two stages, forward 1 and backward 2 per micro-batch,
// four micro-batches, no transfer time. GPipe: stage 0's forwards at 0-4,
// stage 1's at 1-5; stage 1's backwards at 5-13, stage 0's at 7-15: 15 s,
// (M + S - 1) x (F + B). 1F1B, worked out task by task in the comment of
// TestOneFOneBOrder: also 15 s (the same bubble, (S-1)/(M+S-1) = 1/5 of
// the makespan on each stage) with 2 micro-batches in flight on stage 0
// instead of 4.
func TestPipelineHand(t *testing.T) {
	stages := []Stage{{Forward: 1, Backward: 2}, {Forward: 1, Backward: 2}}
	cases := []struct {
		sched    decision.Schedule
		makespan float64
		inFlight []int
	}{
		{decision.GPipe, 15, []int{4, 4}},
		{decision.OneFOneB, 15, []int{2, 1}},
	}
	for _, c := range cases {
		r, err := Pipeline(stages, 4, c.sched)
		if err != nil {
			t.Fatal(err)
		}
		if r.Makespan != c.makespan || r.InFlight[0] != c.inFlight[0] || r.InFlight[1] != c.inFlight[1] {
			t.Errorf("%s: makespan %v, in flight %v; want %v, %v", c.sched, r.Makespan, r.InFlight, c.makespan, c.inFlight)
		}
		for s := range stages {
			if b := r.Bubble(s); math.Abs(b-0.2) > 1e-12 {
				t.Errorf("%s stage %d: bubble %v, want 1/5", c.sched, s, b)
			}
		}
	}
}

// TestOneFOneBOrder: the 1F1B orders of two stages and four micro-batches,
// and the times they give:
//
//	stage 0: F0 0-1, F1 1-2, B0 4-6 (after stage 1's B0 at 2-4), F2 6-7,
//	         B1 7-9, F3 9-10, B2 10-12, B3 13-15
//	stage 1: F0 1-2, B0 2-4, F1 4-5, B1 5-7, F2 7-8, B2 8-10, F3 10-11,
//	         B3 11-13
func TestOneFOneBOrder(t *testing.T) {
	want := map[int]string{0: "F0 F1 B0 F2 B1 F3 B2 B3", 1: "F0 B0 F1 B1 F2 B2 F3 B3"}
	for s, w := range want {
		got := ""
		for i, tk := range Order(decision.OneFOneB, s, 2, 4) {
			if i > 0 {
				got += " "
			}
			got += map[bool]string{false: "F", true: "B"}[tk.bwd] + string(rune('0'+tk.mb))
		}
		if got != w {
			t.Errorf("stage %d: %s, want %s", s, got, w)
		}
	}
	r, _ := Pipeline([]Stage{{Forward: 1, Backward: 2}, {Forward: 1, Backward: 2}}, 4, decision.OneFOneB)
	// Stage 0's B0 (index (0*4+0)*2+1) starts at 4; stage 1's F3 at 10.
	if r.Start[1] != 4 || r.Start[(1*4+3)*2] != 10 {
		t.Errorf("stage 0 B0 at %v, stage 1 F3 at %v; want 4 and 10", r.Start[1], r.Start[(1*4+3)*2])
	}
}

// TestPipelineTransfers: a send between the stages delays stage 1 by the
// send each way: with sends of 0.5 s, one micro-batch takes
// F0 + send + F1 + B1 + send back + B0 = 1 + 0.5 + 1 + 2 + 0.5 + 2 = 7 s.
func TestPipelineTransfers(t *testing.T) {
	r, err := Pipeline([]Stage{{Forward: 1, Backward: 2, SendForward: 0.5, SendBackward: 0.5}, {Forward: 1, Backward: 2}}, 1, decision.GPipe)
	if err != nil {
		t.Fatal(err)
	}
	if r.Makespan != 7 {
		t.Errorf("makespan %v, want 7", r.Makespan)
	}
}

// TestPipelineProperties: on random stages, a pipeline is never faster
// than its busiest stage's work nor slower than running every task in
// turn, and 1F1B never holds more micro-batches than GPipe.
func TestPipelineProperties(t *testing.T) {
	seed := uint64(1)
	rnd := func() float64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>11)/float64(1<<53) + 0.01
	}
	for trial := 0; trial < 200; trial++ {
		S, M := 1+trial%5, 1+trial%9
		stages := make([]Stage, S)
		total, busiest := 0.0, 0.0
		for s := range stages {
			stages[s] = Stage{Forward: rnd(), Backward: 2 * rnd()}
			if s < S-1 {
				stages[s].SendForward, stages[s].SendBackward = rnd()/4, rnd()/4
				total += float64(M) * (stages[s].SendForward + stages[s].SendBackward)
			}
			work := float64(M) * (stages[s].Forward + stages[s].Backward)
			total += work
			busiest = max(busiest, work)
		}
		g, err1 := Pipeline(stages, M, decision.GPipe)
		o, err2 := Pipeline(stages, M, decision.OneFOneB)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for _, r := range []*PipelineResult{g, o} {
			if r.Makespan < busiest-1e-9 || r.Makespan > total+1e-9 {
				t.Fatalf("S=%d M=%d: makespan %v outside [%v, %v]", S, M, r.Makespan, busiest, total)
			}
		}
		for s := range stages {
			if o.InFlight[s] > g.InFlight[s] || o.InFlight[s] > S-s || g.InFlight[s] != M {
				t.Fatalf("S=%d M=%d stage %d: 1F1B holds %d, GPipe %d", S, M, s, o.InFlight[s], g.InFlight[s])
			}
		}
	}
}
