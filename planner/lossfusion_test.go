package planner

import (
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/plan"
)

// TestLossFusionTime: with loss-fusion=on the cross-entropy after the
// output layer is Transformer Engine's fused kernels over the BF16
// logits, 8,192 tokens x 128,256 logits on one B200 (T = 1): forward
// an online softmax reading 2 bytes a logit and a pass reading 2 and
// writing 2 (the gradient, in place), backward one pass reading 2 and
// writing 2; in place of the unfused kernels' six forward passes (the
// cast 2 -> 4, the max 4, the subtraction 4 -> 4, the exponential 4 ->
// 4, the sum 4, the division 4 -> 4) and two backward ones (4 -> 4,
// 4 -> 2). Launches: 9 -> 3 forward (the three small all-reduces kept),
// 2 -> 1 backward.
func TestLossFusionTime(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=8192,batch=8")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, Stages: []int{32}}
	unfused := newCoster(m, pl, &p, 1, 8192)
	pl.Run.FusedLoss = true
	fused := newCoster(m, pl, &p, 1, 8192)
	uf, ub := unfused.fusedOutput()
	ff, fb := fused.fusedOutput()
	logit := 8192.0 * 128256
	pass := func(class graph.Class, read, write float64) float64 {
		return kernel{Class: class, FLOPs: logit, Read: logit * read, Writes: logit * write}.Time(unfused.H)
	}
	el, red := graph.ClassElementwise, graph.ClassReduction
	wantF := pass(el, 2, 4) + pass(red, 4, 0) + 3*pass(el, 4, 4) + pass(red, 4, 0) - pass(red, 2, 0) - pass(el, 2, 2)
	wantB := pass(el, 4, 4) + pass(el, 4, 2) - pass(el, 2, 2)
	if !near(uf.Busy-ff.Busy, wantF) || !near(ub.Busy-fb.Busy, wantB) {
		t.Errorf("fused cross-entropy saves %g s forward, %g backward; want %g, %g", uf.Busy-ff.Busy, ub.Busy-fb.Busy, wantF, wantB)
	}
	if uf.Launches-ff.Launches != 6 || ub.Launches-fb.Launches != 1 {
		t.Errorf("launches %g -> %g forward, %g -> %g backward; want 6 and 1 fewer", uf.Launches, ff.Launches, ub.Launches, fb.Launches)
	}
}

// TestLossFusionMemory: the last stage's loss holds 8,192 tokens x
// 128,256 logits (Llama 3 8B, MBS 1 at 8,192 tokens, no tensor
// parallelism) as BF16 logits, their FP32 copy and its gradient, 2 + 4 +
// 4 bytes a logit = 10,506,731,520 bytes, under Megatron-Core's unfused
// cross-entropy; 2 bytes a logit, 2,101,346,304, under Transformer
// Engine's fused one (loss-fusion=on: the gradient written into the
// logits).
func TestLossFusionMemory(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=8192,batch=64")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		strategy string
		want     int64
	}{
		{"dp=8,mbs=1,distopt=on", 10506731520},
		{"dp=8,mbs=1,distopt=on,loss-fusion=on", 2101346304},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		var got int64 = -1
		for _, part := range r.MemoryParts {
			if part.Name == "logits and loss" {
				got = part.Bytes
			}
		}
		if got != c.want {
			t.Errorf("%s: logits and loss %d bytes, want %d", c.strategy, got, c.want)
		}
	}
}
