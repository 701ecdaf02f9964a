package scale

import (
	"math"

	"github.com/placer/placer/evaluate/alloc"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph/transformer"
)

// AllocatorPeak is what PyTorch's caching allocator reserves on the GPU
// whose reservation peaks highest (evaluate/alloc's simulator run on
// each stage's trace, allocatorTrace), beside what that trace's
// tensors hold. Result.Memory stays the allocated count the fit is
// decided on.
type AllocatorPeak struct {
	// Reserved is the peak of the segments (or mapped pages) held:
	// torch.cuda.max_memory_reserved.
	Reserved int64 `json:"reserved_bytes"`
	// Allocated is the trace's peak of blocks in use as the allocator
	// counts them (max_memory_allocated: requests rounded to 512 bytes,
	// a block not split counted whole); Requested the peak of the
	// tensors' own bytes, which is Result.Memory's count of the stage.
	Allocated int64 `json:"allocated_bytes"`
	Requested int64 `json:"requested_bytes"`
	// Stage is the pipeline stage of that GPU; Events the trace's length.
	Stage  int `json:"stage"`
	Events int `json:"events"`
	// Expandable: the allocator ran with expandable segments
	// (Plan.Expandable).
	Expandable bool `json:"expandable_segments"`
	// Releases counts the allocations that found the device full and
	// released the cache before trying again; OutOfMemory that one
	// failed even so (Reserved is then the figure before it).
	Releases    int  `json:"cache_releases,omitempty"`
	OutOfMemory bool `json:"out_of_memory,omitempty"`
}

// Expandable is whether plan pl's runs set PYTORCH_CUDA_ALLOC_CONF to
// expandable_segments:True: the expandable-segments key, else on under
// torchtitan (its launcher, run_llama_train.sh at pytorch/torchtitan
// 9dec370, sets PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"
// before torchrun; its multinode_trainer.slurm does not, and the
// benchmark page does not say how its multi-node rows were launched),
// off elsewhere (PyTorch's default).
func Expandable(pl *plan.Plan) bool {
	switch pl.Software.Expandable {
	case plan.On:
		return true
	case plan.Off:
		return false
	}
	return pl.Titan()
}

// WithAllocator is r, a result of model m on pod p, with its Allocator
// filled (a replay of each stage's trace: milliseconds a plan, left out
// of Evaluate, which the searches and the checks of every published row
// call).
func WithAllocator(m transformer.Spec, p plan.Pod, r Result) Result {
	r.Allocator = allocatorPeak(m, r.Plan, &p)
	return r
}

// allocatorPeak runs the allocator on every stage's trace of plan pl
// and keeps the stage that reserves most.
func allocatorPeak(m transformer.Spec, pl plan.Plan, p *plan.Pod) *AllocatorPeak {
	var kitBuf [3]stageKit
	var stageBuf [128]stageCost
	kits, stages := memoryStages(m, pl, p, kitBuf[:0], stageBuf[:0])
	cfg := alloc.Config{Expandable: Expandable(&pl), Device: p.Hardware.Memory,
		Capacity: p.Hardware.Memory - plan.CUDAContext - plan.NCCLBuffers(&pl)}
	if cfg.Capacity <= 0 {
		cfg.Capacity = p.Hardware.Memory
	}
	if len(stages) == 1 {
		if t, _, ok := kits[0].c.stepTraced(pl.M); ok {
			st, err := alloc.Replay(cfg, t.ev)
			return &AllocatorPeak{Reserved: st.PeakReserved, Allocated: st.PeakAllocated, Requested: st.PeakRequested,
				Events: len(t.ev), Expandable: cfg.Expandable, Releases: st.Retries, OutOfMemory: err != nil}
		}
	}
	var best *AllocatorPeak
	for s := range stages {
		k := kitIndex(kits, pl.TPs[s])
		c := &kits[k].c
		lm := c.layerMemory()
		tr, _ := c.allocatorTrace(s, &stages[s], &lm)
		st, err := alloc.Replay(cfg, tr)
		ap := &AllocatorPeak{Reserved: st.PeakReserved, Allocated: st.PeakAllocated, Requested: st.PeakRequested,
			Stage: s, Events: len(tr), Expandable: cfg.Expandable, Releases: st.Retries, OutOfMemory: err != nil}
		if best == nil || ap.Reserved > best.Reserved {
			best = ap
		}
	}
	return best
}

// traceBuilder writes an allocation trace.
type traceBuilder struct {
	ev   []alloc.Event
	next int32
}

// tensors allocates total bytes as tensors of piece bytes and one of
// the remainder (none where total is under a byte).
func (b *traceBuilder) tensors(total, piece float64) []int32 {
	var ids []int32
	if piece < 1 {
		piece = total
	}
	for total >= 1 {
		n := min(total, piece)
		if total-n < 1 {
			n = total
		}
		ids = append(ids, b.next)
		b.ev = append(b.ev, alloc.Event{Tensor: b.next, Size: int64(n)})
		b.next++
		total -= n
	}
	return ids
}

func (b *traceBuilder) free(ids []int32) {
	for _, id := range ids {
		b.ev = append(b.ev, alloc.Event{Tensor: id, Free: true})
	}
}

// allocatorTrace is stage s's allocations and frees in one training
// step on one of its GPUs, in the order the step makes them, built from
// the parts stageMemory counts (so that the trace's peak of tensor
// bytes is that stage's Result.Memory count, total):
//   - first the state: weights, FP8 copies, gradients and optimizer
//     state, under Megatron-Core as contiguous buffers (its
//     DistributedDataParallel's parameter and gradient buffers, the
//     distributed optimizer's FP32 main weights and two moments), under
//     FSDP and plain PyTorch a tensor a layer for each (FSDP2 shards
//     each parameter: its sharded weights, gradients and AdamW's two
//     moments are tensors of their own); and torch's PipelineStage's
//     buffers of every micro-batch (titanStageBuffers with none in
//     flight);
//   - then the pipeline schedule's forwards and backwards of its units
//     (a micro-batch on one model chunk): as many forwards as the stage
//     holds in flight at its peak (Plan.inflight, times the chunks),
//     then one forward and one backward in turn, then the last
//     backwards; no pipeline: a forward and its backward per
//     micro-batch; GPipe: every forward, then every backward;
//   - a forward allocates each of its layers' saved activations (a
//     micro-batch's activations in flight over the unit's layers), as
//     tensors of one hidden state (tokens x hidden x 2 bytes, this GPU's
//     share under sequence parallelism) and a remainder: placer counts
//     a layer's activations by size, not tensor by tensor; under FSDP
//     each layer's gathered weights are allocated before it with the
//     next layer's (the prefetch) and freed after it;
//   - a backward, layer by layer from the last, gathers the layer's
//     weights (FSDP) and allocates what only a running backward holds
//     (the recomputed layer's activations, torchtitan's per-op
//     recomputation's, the context ring's or all-gathered keys and
//     values: what stageActivations counts beside the micro-batches)
//     and the layer's unsharded gradient (FSDP), then frees the layer's
//     saved activations and those; on the last stage the loss's logits,
//     their FP32 copy and gradient are held from the backward's start
//     through its first layer (counted at the peak with the rest, as
//     stageMemory counts them).
func (c *coster) allocatorTrace(s int, st *stageCost, lm *layerMemory) ([]alloc.Event, float64) {
	pl := &c.pl
	sm := c.stageMemory(s, st, lm)
	var b traceBuilder
	L := pl.Stages[s]
	V := max(pl.V, 1)
	hidden := 2 * c.tokens * float64(c.m.Hidden) * c.sp()

	// FSDP's per-layer gathered weights and unsharded gradient.
	var gather, grad float64
	if pl.FSDP && L > 0 && !(pl.Titan() && pl.P > 1) {
		layer := st.layers / float64(L)
		gather = layer * bf16
		grad = layer * gradBytes(pl)
		if pl.Titan() {
			grad = layer * (bf16 + gradBytes(pl))
		}
	}
	w, g := sm.weights-2*gather, sm.grads-grad
	perLayer := pl.FSDP || pl.Run.Eager
	pieces := float64(max(L, 1))
	if !perLayer {
		pieces = 1
	}
	b.tensors(w, w/pieces)
	b.tensors(sm.fp8, sm.fp8/pieces)
	b.tensors(g, g/pieces)
	b.tensors(sm.opt, sm.opt/(3*pieces)) // main weights (or none) and two moments

	acts0, _ := c.stageActivationsAt(s, st, lm, 0)
	acts1, _ := c.stageActivationsAt(s, st, lm, 1)
	var buffers float64
	if pl.P > 1 && pl.Titan() {
		buffers = c.titanStageBuffers(s, 0)
	}
	b.tensors(buffers, hidden)
	transient := acts0 - buffers
	perUnit := (acts1 - acts0) / float64(V)
	lu := max(int(math.Round(float64(L)/float64(V))), 1)
	perUnitLayer := perUnit / float64(lu)
	logitPiece := c.tokens * float64(c.m.Vocab) / float64(pl.T) * 4

	U := pl.M * V
	n := min(max(int(math.Round(inflight(pl, s)*float64(V))), 1), U)
	saved := make([][][]int32, U)
	forward := func(u int) {
		saved[u] = make([][]int32, lu)
		var gathered, prefetched []int32
		for l := range lu {
			if gather > 0 {
				if prefetched == nil {
					prefetched = b.tensors(gather, 0)
				}
				gathered, prefetched = prefetched, nil
				if l+1 < lu {
					prefetched = b.tensors(gather, 0)
				}
			}
			saved[u][l] = b.tensors(perUnitLayer, hidden)
			b.free(gathered)
		}
	}
	backward := func(u int) {
		var logits []int32
		if s == pl.P-1 {
			logits = b.tensors(sm.logits, logitPiece)
		}
		var gathered, prefetched []int32
		for l := lu - 1; l >= 0; l-- {
			if gather > 0 {
				if prefetched == nil {
					prefetched = b.tensors(gather, 0)
				}
				gathered, prefetched = prefetched, nil
				if l > 0 {
					prefetched = b.tensors(gather, 0)
				}
			}
			t := b.tensors(transient, hidden)
			gr := b.tensors(grad, 0)
			b.free(saved[u][l])
			b.free(t)
			b.free(gr)
			b.free(gathered)
			if l == lu-1 {
				b.free(logits)
			}
		}
		saved[u] = nil
	}
	f := 0
	for ; f < n-1; f++ {
		forward(f)
	}
	for u := range U {
		if f < U {
			forward(f)
			f++
		}
		backward(u)
	}
	return b.ev, sm.total()
}
