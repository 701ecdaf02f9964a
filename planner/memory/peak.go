package memory

import "github.com/placer/placer/planner/plan"

// Peak is the memory of a step's most loaded GPU, bytes: Bytes in all
// (the allocator's tensors: weights, gradients, optimizer state,
// activations in flight) and by kind (Weights with the FP8 and autocast
// copies, Grads, OptState, Activations with the logits and the loss);
// Parts by named part, and beside them the parts held outside the
// allocator (plan.MemoryPart.Outside); Capacity the GPU's memory, Usable
// what the allocator may hold of it at the pod's Margin (the CUDA
// context and NCCL's buffers taken off); Reserved what PyTorch's caching
// allocator would reserve (Step.Allocator's simulation, never below
// Bytes; Bytes itself where the simulation was not needed: Judge);
// Verdict (plan.VerdictFits, VerdictTight, VerdictOver) Reserved against
// Usable within Error, the regime's measured error of the peak (0 where
// none is measured), which ErrorSource names.
type Peak struct {
	Bytes, Reserved                       int64
	Weights, Grads, OptState, Activations int64
	Parts                                 []plan.MemoryPart
	Capacity, Usable                      int64
	Margin                                float64
	Error                                 float64
	ErrorSource                           string
	Verdict                               string
}

// Fits is whether the peak is not over the usable memory (a tight peak
// fits).
func (pk *Peak) Fits() bool { return pk.Verdict != plan.VerdictOver }

// Fits is whether the step fits the GPUs' memory, as Peak's Verdict
// says (tight: a "tight" peak counted as fitting), its stages weighed
// here.
func (step *Step) Fits(tight bool) bool {
	var stageBuf [128]Stage
	pk := step.Peak(step.stages(stageBuf[:0]))
	return pk.Accepts(tight)
}

// CountFits is Fits on the tensors' count (Count's verdict): a step
// that does not count-fit does not fit (a reservation is never below
// the count), so a search sets it aside without a replay.
func (step *Step) CountFits(tight bool) bool {
	var stageBuf [128]Stage
	pk := step.Count(step.stages(stageBuf[:0]))
	return pk.Accepts(tight)
}

// Accepts is whether pk's verdict keeps its plan: fits, or tight where
// tight says a "tight" peak counts as fitting.
func (pk *Peak) Accepts(tight bool) bool {
	return pk.Verdict == plan.VerdictFits || tight && pk.Verdict == plan.VerdictTight
}

// Peak is the most loaded GPU's peak given each stage's parameters
// (stages[s], StageOf's), as a sum of named parts: its weights (BF16 in
// Megatron-Core; FP32 shards and gathered BF16 layers under
// torchtitan's FSDP2), its FP8 weight copies, its gradient buffer, its
// optimizer state (divided over the replicas with the distributed
// optimizer), the activations of the micro-batches in flight: with 1F1B
// the first stage holds P of them (interleaved as Megatron-Core's
// warm-up counts them; all M with GPipe), each L/P layers of
// activations (Korthikanti et al., 2022, with flash attention: no S x S
// scores), the last stage's logits and the loss's FP32 copy; beside
// them, on a GPU, the CUDA context and NCCL's buffers, which the
// allocator does not count. Stage s is counted at its tensor-parallel
// degree, Plan.TPs[s].
//
// Where the plan's stack writes its step tensor by tensor (Eager: plain
// PyTorch on one GPU; titanTraced: torchtitan over FSDP2, the stage
// whose trace peaks highest), the peak is that trace's maximum instead,
// by part at that instant (traced).
//
// The verdict is on what the caching allocator would reserve (Judge).
func (step *Step) Peak(stages []Stage) Peak {
	pk := step.Count(stages)
	step.Judge(&pk)
	return pk
}

// Count is Peak with its verdict on Bytes, the tensors' count (Reserved
// is Bytes): what a search weighs first, judging only the plans it
// would keep (Judge).
func (step *Step) Count(stages []Stage) Peak {
	var pk Peak
	var csBuf [3]counter
	cs := step.counters(csBuf[:0])
	if len(stages) == 1 {
		if t, e, ok := cs[0].stepTraced(2); ok {
			pk.traced(&t)
			pk.finish(&cs[0], e)
			return pk
		}
	}
	if t, _, ok := titanTraced(stages, cs); ok {
		pk.traced(&t)
		pk.finish(&cs[0], plan.RegimeError{})
		return pk
	}
	// One layer's activations at each counter's degree, shared by its
	// stages (at most three counters: kept on the stack).
	var lmBuf [3]layerMem
	lms := lmBuf[:0]
	for i := range cs {
		lms = append(lms, cs[i].layerMemory())
	}
	var peak float64
	var at stageMem
	tps := step.Plan.TPs
	var hi highCounters
	for s := range stages {
		k := counterOf(cs, tps[s])
		sm := cs[k].stageMemory(s, &stages[s], &lms[k])
		if n := stages[s].BF16Layers; n > 0 {
			sm = hi.blend(step, s, &stages[s], sm)
		}
		if tot := sm.total(); tot > peak {
			peak, at = tot, sm
		}
	}
	// Each count converted checked (bytesOf): past int64's range it is
	// more than any GPU holds, never a wrapped negative that fits.
	pk.Bytes = bytesOf(peak)
	pk.Weights, pk.Grads, pk.OptState, pk.Activations = bytesOf(at.weights+at.fp8), bytesOf(at.grads), bytesOf(at.opt), bytesOf(at.acts+at.logits)
	// Room for finish's three parts outside the allocator: one
	// allocation a plan, not a second to grow it.
	pk.Parts = append(make([]plan.MemoryPart, 0, 9), []plan.MemoryPart{
		{Name: "weights", Bytes: bytesOf(at.weights)},
		{Name: "FP8 weight copies", Bytes: bytesOf(at.fp8)},
		{Name: "gradients", Bytes: bytesOf(at.grads)},
		{Name: "optimizer state", Bytes: bytesOf(at.opt)},
		{Name: "activations in flight", Bytes: bytesOf(at.acts)},
		{Name: "logits and loss", Bytes: bytesOf(at.logits)},
	}...)
	pk.finish(&cs[0], plan.RegimeError{})
	return pk
}

// traced sets pk from a step's trace t: the peak instant's bytes, by
// part.
func (pk *Peak) traced(t *memTrace) {
	peak, by := t.peak()
	pk.Bytes = peak
	pk.Weights, pk.Grads, pk.OptState = by[catWeights]+by[catCopies], by[catGrads], by[catOpt]
	pk.Activations = by[catActs] + by[catLoss]
	pk.Parts = pk.Parts[:0]
	for k, b := range by {
		if memCat(k) == catComm && b == 0 {
			continue
		}
		pk.Parts = append(pk.Parts, plan.MemoryPart{Name: memCatNames[k], Bytes: b})
	}
}

// finish adds to pk (Bytes and its parts counted) what the allocator
// does not hold (the CUDA context, NCCL's buffers, DeepEP's or
// HybridEP's buffers under the flex dispatcher: DispatcherBuffers), the GPU's usable memory
// and the verdict at the regime's measured error e, for plans of
// counter c.
func (pk *Peak) finish(c *counter, e plan.RegimeError) {
	var outside int64
	if !c.pod.CPU() {
		// A CPU process has neither: its tensors are in the host's
		// memory, gloo's buffers among them (not counted).
		ctx, nccl := int64(plan.CUDAContext), plan.NCCLBuffers(&c.pl)
		pk.Parts = append(pk.Parts,
			plan.MemoryPart{Name: "CUDA context", Bytes: ctx, Outside: true},
			plan.MemoryPart{Name: "NCCL buffers", Bytes: nccl, Outside: true})
		outside = ctx + nccl
		if name, dv := DispatcherBuffers(&c.pl, &c.m, c.pod); dv > 0 {
			pk.Parts = append(pk.Parts, plan.MemoryPart{Name: name, Bytes: dv, Outside: true})
			outside += dv
		}
	}
	pk.Capacity = c.pod.Hardware.Memory
	pk.Usable, pk.Margin = c.pod.Usable(outside), c.pod.Margin()
	if f := c.pl.MemoryFraction; f > 0 && !c.pod.CPU() {
		// memory-fraction: the caching allocator reserves at most that
		// share of the GPU (alloc.Config.Fraction).
		pk.Usable = min(pk.Usable, int64(f*float64(pk.Capacity)))
	}
	if e.Frac == 0 {
		e = c.pod.MemoryError // the caller's, where the stack states none
	}
	pk.Error, pk.ErrorSource = e.Frac, e.Source
	pk.Reserved = pk.Bytes
	pk.Verdict = plan.Verdict(pk.Bytes, pk.Usable, e.Frac)
}

// ReservedBound is the most by which PyTorch's caching allocator's
// simulated reservation exceeds the tensors' count (Peak's Bytes) on
// any plan, as a share of that count: a bound, held by
// TestJudgeShortcut on random plans of every stack (at most 30% over
// there), not a fitted figure: it decides only which plans are
// replayed, never a verdict.
const ReservedBound = 0.5

// Judge sets pk's verdict (Count's: Bytes, Usable, Error and Verdict
// are all it reads) on what the caching allocator would reserve
// (Step.Allocator: each stage's trace replayed) rather than on the
// tensors' count, Reserved never below Bytes. The replay costs
// milliseconds a plan, so it runs only where it could change the
// verdict: a count already over stays over (the reservation is at least
// the count), and one whose count with ReservedBound added fits, fits.
// A replay that runs out of the device (alloc.Replay's error) is judged
// at what it needed when it did (settle), at least just over. A
// CPU process has no caching allocator: its count is its verdict.
func (step *Step) Judge(pk *Peak) { step.judgeAt(pk, false) }

// judgeAt is Judge, the allocator replayed on every plan where always
// (TestJudgeShortcut compares the two).
func (step *Step) judgeAt(pk *Peak, always bool) {
	if step.Pod.CPU() {
		return
	}
	if !always && pk.Verdict == plan.VerdictOver {
		return
	}
	if !always && float64(pk.Bytes)*(1+ReservedBound)*(1+pk.Error) <= float64(pk.Usable) {
		return
	}
	pk.settle(step.Allocator())
}

// settle sets pk's Reserved and Verdict from the allocator's replay ap:
// its reservation, never below the count; a replay that ran out of the
// device at what it needed then (ap.Needed: the blocks in use and the
// request it could not place), at least just over the usable memory.
func (pk *Peak) settle(ap *AllocatorPeak) {
	pk.Reserved = max(ap.Reserved, pk.Bytes)
	if ap.OutOfMemory {
		pk.Reserved = max(pk.Reserved, ap.Needed, pk.Usable+1)
	}
	pk.Verdict = plan.Verdict(pk.Reserved, pk.Usable, pk.Error)
}
