package memory

import (
	"testing"

	"github.com/placer/placer/evaluate/alloc"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// TestTracePeakTwoMicroBatches: the peak of a step traced over its first
// two micro-batches (what memory reads) is the whole step's (what the
// allocator replays): every micro-batch after the first finds the
// .grads made, as the second does.
func TestTracePeakTwoMicroBatches(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=16")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"tp=1,pp=1,dp=1,mbs=2,stack=torch-eager", "tp=1,pp=1,dp=1,mbs=1,recompute=full,stack=torch-eager",
		"tp=1,pp=1,dp=1,mbs=4,stack=torch-eager-bf16"} {
		s, err := plan.ParseStrategy(st)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		c := counterAt(m, pl, &p, 1, float64(pl.MBS*m.Seq))
		c.eager = &EagerTrace{Layer: eager.LayerLlamaPy} // the torch-eager stacks' layers.py
		two, _, ok := c.stepTraced(2)
		all, _, ok2 := c.stepTraced(pl.NumMicro)
		if !ok || !ok2 || pl.NumMicro <= 2 {
			t.Fatalf("%s: traced %v %v, %d micro-batches", st, ok, ok2, pl.NumMicro)
		}
		p2, _ := two.peak()
		pm, _ := all.peak()
		if p2 != pm {
			t.Errorf("%s: peak of two micro-batches %d, of all %d", st, p2, pm)
		}
	}
}

// TestTraceByHand: a part of four ops traced by hand. Forward: A, 24
// MiB, saved; B, 16 MiB, a temporary held to the backward's op; C, a
// weight's copy of 2 MiB. Backward: D, 8 MiB, a temporary. The peak is
// A + B + C + D at D, 50 MiB, all but C activations. The allocator on
// that trace: every request over 1 MiB is large; A and B (10 MiB or
// more) take segments of their size rounded to 2 MiB, C (under 10 MiB)
// a 20 MiB segment, and D is split from the 18 MiB C leaves free in it:
// 24 + 16 + 20 = 60 MiB reserved, 50 allocated. Checkpointed (rec), A
// is freed after the op after it, B at the checkpoint's end and C at
// the autocast region's end, so the forward peaks at A + B (40 MiB),
// and the backward's recomputation holds them all again (50 MiB).
func TestTraceByHand(t *testing.T) {
	const mib = 1 << 20
	ops := []eager.Op{
		{Written: 24 * mib, Keep: eager.KeepSaved},
		{Written: 16 * mib, Until: 3},
		{Written: 2 * mib, Keep: eager.KeepCache},
		{Written: 8 * mib, Backward: true},
	}
	var tr memTrace
	r := tr.forward(ops, -1, catActs, false, false, nil)
	var grads []int32
	tr.backward(ops, r, catActs, true, &grads, 0)
	peak, by := tr.peak()
	if peak != 50*mib || by[catActs] != 48*mib || by[catCopies] != 2*mib {
		t.Errorf("peak %d, activations %d, copies %d; want 50, 48, 2 MiB", peak, by[catActs], by[catCopies])
	}
	st, err := alloc.Replay(alloc.Config{}, tr.ev)
	if err != nil {
		t.Fatal(err)
	}
	if st.PeakReserved != 60*mib || st.PeakAllocated != 50*mib || st.Allocated != 0 {
		t.Errorf("reserved %d, allocated %d, left %d; want 60, 50, 0 MiB", st.PeakReserved, st.PeakAllocated, st.Allocated)
	}

	var rt memTrace
	var cache []int32
	rr := rt.forward(ops, -1, catActs, true, false, &cache)
	fwdPeak, _ := rt.peak()
	rt.free(cache...)
	rr = rt.forward(ops, rr.in, catActs, false, true, nil)
	rt.backward(ops, rr, catActs, false, &grads, 0)
	all, _ := rt.peak()
	if fwdPeak != 40*mib || all != 50*mib || len(cache) != 1 {
		t.Errorf("checkpointed: forward peak %d, step %d, %d cached; want 40, 50 MiB, 1", fwdPeak, all, len(cache))
	}
}
