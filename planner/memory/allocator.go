package memory

import (
	"sync"

	"github.com/placer/placer/evaluate/alloc"
	"github.com/placer/placer/planner/plan"
)

// AllocatorPeak is what PyTorch's caching allocator reserves on the GPU
// whose reservation peaks highest (evaluate/alloc's simulator run on
// each stage's trace, allocatorTrace), beside what that trace's
// tensors hold. Peak's verdict weighs its Reserved (Step.Judge).
type AllocatorPeak struct {
	// Reserved is the peak of the segments (or mapped pages) held:
	// torch.cuda.max_memory_reserved.
	Reserved int64 `json:"reserved_bytes"`
	// Allocated is the trace's peak of blocks in use as the allocator
	// counts them (max_memory_allocated: requests rounded to 512 bytes,
	// a block not split counted whole); Requested the peak of the
	// tensors' own bytes, which is Peak's count of the stage.
	Allocated int64 `json:"allocated_bytes"`
	Requested int64 `json:"requested_bytes"`
	// Stage is the pipeline stage of that GPU; Events the trace's length.
	Stage  int `json:"stage"`
	Events int `json:"events"`
	// Expandable: the allocator ran with expandable segments
	// (expandable's).
	Expandable bool `json:"expandable_segments"`
	// Releases counts the allocations that found the device full and
	// released the cache before trying again; OutOfMemory that one
	// failed even so (Reserved is then the figure before it, Needed what
	// the device would have had to hold at that instant: alloc.Stats').
	Releases    int   `json:"cache_releases,omitempty"`
	OutOfMemory bool  `json:"out_of_memory,omitempty"`
	Needed      int64 `json:"needed_bytes,omitempty"`
}

// expandable is whether plan pl's runs set PYTORCH_CUDA_ALLOC_CONF to
// expandable_segments:True: the expandable-segments key, else on under
// torchtitan (its launcher, run_llama_train.sh at pytorch/torchtitan
// 9dec370, sets PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"
// before torchrun; its multinode_trainer.slurm does not, and the
// benchmark page does not say how its multi-node rows were launched),
// off elsewhere (PyTorch's default).
func expandable(pl *plan.Plan) bool {
	switch pl.Software.Expandable {
	case plan.On:
		return true
	case plan.Off:
		return false
	}
	return pl.Titan()
}

// Allocator is what PyTorch's caching allocator reserves for the step
// (milliseconds a plan: the evaluator's callers ask it where they
// show it): the allocator run on every stage's trace, the stage that
// reserves (needs) most kept.
func (step *Step) Allocator() *AllocatorPeak {
	pl, p := &step.Plan, step.Pod
	var csBuf [3]counter
	var stageBuf [128]Stage
	cs, stages := step.counters(csBuf[:0]), step.stages(stageBuf[:0])
	_, flex := DispatcherBuffers(pl, &step.Model, p)
	cfg := alloc.Config{Expandable: expandable(pl), Device: p.Hardware.Memory,
		Capacity: p.Hardware.Memory - plan.CUDAContext - plan.NCCLBuffers(pl) - flex,
		Fraction: pl.MemoryFraction, GCThreshold: pl.GCThreshold} // plan/recipe.go's keys
	if cfg.Capacity <= 0 {
		cfg.Capacity = p.Hardware.Memory
	}
	if len(stages) == 1 {
		if t, _, ok := cs[0].stepTraced(pl.NumMicro); ok {
			st, err := alloc.Replay(cfg, t.ev)
			return &AllocatorPeak{Reserved: st.PeakReserved, Allocated: st.PeakAllocated, Requested: st.PeakRequested,
				Events: len(t.ev), Expandable: cfg.Expandable, Releases: st.Retries, OutOfMemory: err != nil, Needed: st.Needed}
		}
	}
	if titanTraceable(&cs[0]) {
		return titanReplay(cfg, stages, cs)
	}
	var best *AllocatorPeak
	// One buffer for every stage's trace, kept between calls (a search
	// replays the plans it keeps: growing a trace of tens of thousands
	// of events anew for each was a fifth of its CPU time).
	bp := traceBuffers.Get().(*[]alloc.Event)
	tr := (*bp)[:0]
	defer func() { *bp = tr[:0]; traceBuffers.Put(bp) }()
	for s := range stages {
		k := counterOf(cs, pl.TPs[s])
		c := &cs[k]
		lm := c.layerMemory()
		tr, _ = c.allocatorTrace(s, &stages[s], &lm, tr[:0])
		st, err := alloc.Replay(cfg, tr)
		ap := &AllocatorPeak{Reserved: st.PeakReserved, Allocated: st.PeakAllocated, Requested: st.PeakRequested,
			Stage: s, Events: len(tr), Expandable: cfg.Expandable, Releases: st.Retries, OutOfMemory: err != nil, Needed: st.Needed}
		if best == nil || ap.needs() > best.needs() {
			best = ap
		}
	}
	return best
}

// traceBuffers holds the event buffers Allocator's traces are written
// into (*[]alloc.Event), reused from one call to the next.
var traceBuffers = sync.Pool{New: func() any { return new([]alloc.Event) }}

// needs is what ap's stage asks of the device: its reservation, or
// where its replay ran out of the device what it needed then (more than
// the device: above any stage that did not), so that the stage kept is
// one that ran out where any did.
func (ap *AllocatorPeak) needs() int64 { return max(ap.Reserved, ap.Needed) }

// titanReplay is the allocator's peak over every stage's titanStageTrace
// (Step.Allocator's, for a titanTraceable plan).
func titanReplay(cfg alloc.Config, stages []Stage, cs []counter) *AllocatorPeak {
	tps := cs[0].pl.TPs
	var best *AllocatorPeak
	for s := range stages {
		c := &cs[counterOf(cs, tps[s])]
		tr := c.titanStageTrace(s, &stages[s])
		st, err := alloc.Replay(cfg, tr.ev)
		ap := &AllocatorPeak{Reserved: st.PeakReserved, Allocated: st.PeakAllocated, Requested: st.PeakRequested,
			Stage: s, Events: len(tr.ev), Expandable: cfg.Expandable, Releases: st.Retries, OutOfMemory: err != nil, Needed: st.Needed}
		if best == nil || ap.needs() > best.needs() {
			best = ap
		}
	}
	return best
}
