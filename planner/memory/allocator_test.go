package memory

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/evaluate/alloc"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// reservedPlans are plans of every kind allocatorTrace lays out:
// Megatron-Core's buffers under 1F1B, interleaved, GPipe, full and
// selective recomputation, the distributed optimizer, Megatron-FSDP,
// experts; torchtitan's FSDP2 with and without a pipeline, with context
// parallelism; plain PyTorch.
var reservedPlans = []struct{ workload, cluster, strategy string }{
	{"llama3-70b:seq=4096,batch=64", "dgx-h100:8", "tp=8,pp=4,dp=2,mbs=1,sp=on,distopt=on"},
	{"llama3-70b:seq=4096,batch=64", "dgx-h100:8", "tp=8,pp=4,vp=5,dp=2,mbs=1,sp=on,distopt=on,recompute=full"},
	{"llama3-70b:seq=4096,batch=64", "dgx-h100:8", "tp=8,pp=4,dp=2,mbs=1,sp=on,schedule=gpipe,recompute=selective"},
	{"llama3-8b:seq=8192,batch=64", "dgx-h100:4", "tp=2,dp=16,mbs=1,sp=on,fsdp=on"},
	{"qwen3-30b-a3b:seq=4096,batch=256", "dgx-h100:4", "tp=2,pp=2,ep=8,dp=8,mbs=1,sp=on,distopt=on"},
	{"llama3-8b:seq=8192,batch=16", "grand-teton:1,attention=flash", "dp=8,mbs=2,fsdp=on,recompute=selective,stack=torchtitan-0.2"},
	{"llama3-8b:seq=32768,batch=4", "grand-teton:1,attention=flash", "dp=4,cp=2,mbs=1,fsdp=on,recompute=full,fp8=current,stack=torchtitan-0.2,compile=on"},
	{"llama3.1-405b:seq=8192,batch=256", "grand-teton:64,attention=flash", "tp=8,pp=8,dp=8,mbs=1,sp=on,tpoverlap=on,fsdp=on,recompute=full,fp8=current,first=15,last=15,stack=torchtitan-0.2,compile=on,vp=2"},
	{"llama3-8b:seq=2048,batch=8", "dgx-h100:1", "dp=8,mbs=1,stack=torch-eager"},
}

// TestAllocatorTraceMatchesMemory: every stage's trace holds at its peak
// exactly the tensor bytes stageMemory counts for the stage (the
// trace's requested peak), within one byte a tensor (the trace's sizes
// are whole bytes); and the allocator's counts on it are at least that.
func TestAllocatorTraceMatchesMemory(t *testing.T) {
	for _, c := range reservedPlans {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.ParsePod(c.cluster)
		if err != nil {
			t.Fatal(err)
		}
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		cs, stages := partsOf(m, pl, &p)
		for st := range stages {
			k := &cs[counterOf(cs, pl.TPs[st])]
			lm := k.layerMemory()
			tr, total := k.allocatorTrace(st, &stages[st], &lm, nil)
			stats, err := alloc.Replay(alloc.Config{}, tr)
			if err != nil {
				t.Fatalf("%s stage %d: %v", c.strategy, st, err)
			}
			if d := math.Abs(float64(stats.PeakRequested) - total); d > float64(len(tr)) {
				t.Errorf("%s stage %d: trace peak %d bytes, stageMemory %.0f", c.strategy, st, stats.PeakRequested, total)
			}
			if stats.PeakReserved < stats.PeakAllocated || stats.PeakAllocated < stats.PeakRequested {
				t.Errorf("%s stage %d: reserved %d allocated %d requested %d", c.strategy, st, stats.PeakReserved, stats.PeakAllocated, stats.PeakRequested)
			}
		}
		step := Step{Model: m, Plan: pl, Pod: &p}
		if a := step.Allocator(); a == nil || a.Reserved < a.Allocated {
			t.Errorf("%s: allocator %+v", c.strategy, a)
		}
	}
}

// TestExpandableKey: torchtitan's stacks run with expandable segments
// (run_llama_train.sh), the others without; the key overrides both and
// is written back.
func TestExpandableKey(t *testing.T) {
	for _, c := range []struct {
		strategy string
		want     bool
	}{
		{"dp=8,fsdp=on,stack=torchtitan-0.2", true},
		{"dp=8,fsdp=on,stack=torchtitan-0.2,expandable_segments=off", false},
		{"dp=8", false},
		{"dp=8,expandable-segments=on", true},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := transformer.Parse("llama3-8b:seq=2048,batch=8")
		p, _ := plan.ParsePod("dgx-h100:1")
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		if expandable(&pl) != c.want {
			t.Errorf("%s: expandable %v", c.strategy, expandable(&pl))
		}
		back, err := plan.ParseStrategy(s.String())
		if err != nil || back.Software.Expandable != s.Software.Expandable {
			t.Errorf("%s: written %q read back %v (%v)", c.strategy, s.String(), back.Software.Expandable, err)
		}
	}
	if _, err := plan.ParseStrategy("dp=8,expandable-segments=maybe"); err == nil {
		t.Error("expandable-segments=maybe: no error")
	}
}

// TestFSDP2AllGatherStream: FSDP2's all-gather buffer is allocated on
// its copy-in stream, whose pool the default stream's requests do not
// reuse. By hand, two blocks of 30 MiB gathered one after the other
// (each freed before the next), no expandable segments: plainly one
// 30 MiB segment reused; under FSDP2 a second 30 MiB segment for the
// buffer, reused by the next block's: 60 MiB reserved, and 60 MiB
// requested at once (the buffer and the copy out of it).
func TestFSDP2AllGatherStream(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		fsdp2               bool
		reserved, requested int64
	}{{false, 30 * mib, 30 * mib}, {true, 60 * mib, 60 * mib}} {
		var b traceBuilder
		for range 2 {
			b.free(b.unshard(30*mib, c.fsdp2))
		}
		st, err := alloc.Replay(alloc.Config{}, b.ev)
		if err != nil {
			t.Fatal(err)
		}
		if st.PeakReserved != c.reserved || st.PeakRequested != c.requested {
			t.Errorf("fsdp2 %v: reserved %d requested %d, want %d and %d", c.fsdp2, st.PeakReserved, st.PeakRequested, c.reserved, c.requested)
		}
	}
}

// TestJudgeShortcut: on random plans of every stack (reservedPlans'
// models and pods, random degrees, micro-batches and recomputation),
// the caching allocator's simulated reservation is never more than
// ReservedBound over the tensors' count, so that Judge's shortcut
// (replaying only where the count is within the bound of the usable
// memory) gives the verdict the replay on every plan gives.
func TestJudgeShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 69))
	recompute := []plan.Recompute{plan.NoRecompute, plan.SelectiveRecompute, plan.FullRecompute}
	checked, worst := 0, 0.0
	for checked < 60 {
		c := reservedPlans[rng.IntN(len(reservedPlans))]
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		s.MicroBatchSize = 1 << rng.IntN(3)
		s.Recompute = recompute[rng.IntN(3)]
		m := mustSpec(t, c.workload)
		p, err := plan.ParsePod(c.cluster)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			continue // a draw the plan cannot take (the batch, the degrees)
		}
		step := Step{Model: m, Plan: pl, Pod: &p}
		var buf [128]Stage
		short, full := step.Count(step.stages(buf[:0])), step.Count(step.stages(buf[:0]))
		step.judgeAt(&short, false)
		step.judgeAt(&full, true)
		ratio := float64(full.Reserved)/float64(full.Bytes) - 1
		worst = max(worst, ratio)
		if ratio > ReservedBound || short.Verdict != full.Verdict {
			t.Errorf("%s %s mbs %d: reserved %d of %d counted (+%.1f%%, bound %.0f%%); verdict %s, replayed %s",
				c.workload, c.strategy, s.MicroBatchSize, full.Reserved, full.Bytes, 100*ratio, 100*ReservedBound, short.Verdict, full.Verdict)
		}
		checked++
	}
	t.Logf("%d plans, reservation at most %.1f%% over the count", checked, 100*worst)
}

// TestSettleOnReserved: the verdict weighs the allocator's reservation,
// not the tensors' count, worked by hand: 100 GB counted, 110 GB
// reserved. At 105 GB usable (between the two) it is over with no
// error; with a 5% error tight (110 x 0.95 = 104.5 <= 105 < 110 x 1.05);
// at 120 GB fits (110 x 1.05 = 115.5). A reservation below the count
// (none can be: the count is Bytes) is the count; a replay out of memory
// is at what it needed then, at least just over, whatever it reserved
// before: needing 130 GB of 120 usable is over at a 5% error
// (130 x 0.95 = 123.5 > 120), just over (no figure of what it needed)
// tight.
func TestSettleOnReserved(t *testing.T) {
	const GB = 1_000_000_000
	for _, c := range []struct {
		reserved, usable int64
		e                float64
		oom              bool
		needed           int64
		want             string
		wantReserved     int64
	}{
		{110 * GB, 105 * GB, 0, false, 0, plan.VerdictOver, 110 * GB},
		{110 * GB, 105 * GB, 0.05, false, 0, plan.VerdictTight, 110 * GB},
		{110 * GB, 120 * GB, 0.05, false, 0, plan.VerdictFits, 110 * GB},
		{110 * GB, 100 * GB, 0, false, 0, plan.VerdictOver, 110 * GB},
		{90 * GB, 100 * GB, 0, false, 0, plan.VerdictFits, 100 * GB},
		{90 * GB, 120 * GB, 0, true, 0, plan.VerdictOver, 120*GB + 1},
		{90 * GB, 120 * GB, 0.05, true, 130 * GB, plan.VerdictOver, 130 * GB},
		{90 * GB, 120 * GB, 0.05, true, 0, plan.VerdictTight, 120*GB + 1},
	} {
		pk := Peak{Bytes: 100 * GB, Usable: c.usable, Error: c.e}
		pk.settle(&AllocatorPeak{Reserved: c.reserved, OutOfMemory: c.oom, Needed: c.needed})
		if pk.Verdict != c.want || pk.Reserved != c.wantReserved {
			t.Errorf("reserved %d of usable %d (error %g, out of memory %v): %s at %d, want %s at %d",
				c.reserved, c.usable, c.e, c.oom, pk.Verdict, pk.Reserved, c.want, c.wantReserved)
		}
	}
}

// TestVerdictBetweenCountAndReserved: a Megatron-Core plan of Llama 3 8B
// on one H100 node whose simulated reservation is above its count: with
// a margin that leaves the allocator a usable memory halfway between
// the two, the count would fit and Judge's verdict is over; at the
// default margin it fits. The margin does not change the
// allocator's replay (the device's memory does), so the reservation is
// the same at both.
func TestVerdictBetweenCountAndReserved(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=8192,batch=64")
	p, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=2,pp=2,dp=2,mbs=2,sp=on,distopt=on")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	step := Step{Model: m, Plan: pl, Pod: &p}
	var buf [128]Stage
	pk := step.Count(step.stages(buf[:0]))
	step.Judge(&pk)
	ap := step.Allocator()
	if pk.Verdict != plan.VerdictFits || ap.Reserved <= pk.Bytes {
		t.Fatalf("at no margin: %s, reserved %d of %d counted; want fits, reserved above the count", pk.Verdict, ap.Reserved, pk.Bytes)
	}
	outside := int64(plan.CUDAContext) + plan.NCCLBuffers(&pl)
	mid := (pk.Bytes + ap.Reserved) / 2
	p.MemoryMargin = 1 - float64(mid+outside)/float64(p.Hardware.Memory)
	got := step.Count(step.stages(buf[:0]))
	step.Judge(&got)
	if got.Usable <= got.Bytes || got.Usable >= ap.Reserved || got.Verdict != plan.VerdictOver || got.Reserved != ap.Reserved {
		t.Errorf("usable %d between count %d and reserved %d: %s judged at %d, want over at the reservation", got.Usable, got.Bytes, ap.Reserved, got.Verdict, got.Reserved)
	}
}

// TestCountAllocates: Step.Count, which a search runs on every plan it
// tries, allocates one slice a plan (the peak's parts, sized once for
// finish's): its counters and buffers stay on its stack. A pointer into
// them kept by a callee moves them to the heap (a copy of the plan per
// counter, kilobytes a plan).
func TestCountAllocates(t *testing.T) {
	for _, c := range reservedPlans[:5] {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		m := mustSpec(t, c.workload)
		p, err := plan.ParsePod(c.cluster)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		step := Step{Model: m, Plan: pl, Pod: &p}
		var buf [128]Stage
		stages := step.stages(buf[:0])
		if got := testing.AllocsPerRun(5, func() { step.Count(stages) }); got != 1 {
			t.Errorf("%s %s: Count allocates %v times a plan, want 1", c.workload, c.strategy, got)
		}
	}
}
