package cost

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// BF16 is the element size of activations, weights and their gradients
// in BF16 mixed precision.
const BF16 = 2

// Kernel is one kernel of a layer: its roofline class, FLOPs and bytes.
type Kernel struct {
	Class        graph.Class
	FLOPs        float64
	Read, Writes float64
}

// Time is k's time on h (its roofline, in BF16).
func (k Kernel) Time(h *roofline.Hardware) float64 {
	op := graph.Op{Class: k.Class, DType: graph.BF16, FLOPs: k.FLOPs, BytesRead: int64(k.Read), BytesWritten: int64(k.Writes)}
	return roofline.KernelTime(h, &op)
}

// Phase is what one layer (or the embedding, or the output layer) does in
// one direction for one micro-batch on one GPU: its kernels' time and
// its tensor-parallel communication's, exposed and in all, and the
// context-parallel exchange's exposed time; the kernels the host issues
// for it (launches: each costed kernel and collective one; calls: the
// kernels a library launches in a loop of its own, without Python or
// autograd between them, as Transformer Engine's grouped GEMMs do), the
// device-to-host synchronizations it waits on (syncs) and what follows
// the last of them from an empty queue (tail: syncTail), the CUDA graphs
// it replays in place of launching their kernels (replays: graphed), and
// the time the GPU waits on its host (hostExposed, in busy: Host.expose).
type Phase struct {
	Busy, TPAll, TPExposed, CPExposed, EPExposed float64
	Launches, Syncs, HostExposed                 float64
	Replays, Calls                               float64
	Tail                                         SyncTail
}

// SyncTail is the part of a phase the host issues after a
// device-to-host synchronization, which it waited on until the GPU had
// run everything queued before it: its launches and calls, their GPU
// time (busy), and stall, how long the GPU sat idle while the host
// issued them one by one from the empty queue beyond the one issue
// expose charges each synchronization (drain).
type SyncTail struct{ Launches, Calls, Busy, Stall float64 }

// Plus is a and b summed.
func (a SyncTail) Plus(b SyncTail) SyncTail {
	return SyncTail{a.Launches + b.Launches, a.Calls + b.Calls, a.Busy + b.Busy, a.Stall + b.Stall}
}

// Plus is a and b one after the other: every field summed.
func (a Phase) Plus(b Phase) Phase {
	return Phase{a.Busy + b.Busy, a.TPAll + b.TPAll, a.TPExposed + b.TPExposed, a.CPExposed + b.CPExposed, a.EPExposed + b.EPExposed,
		a.Launches + b.Launches, a.Syncs + b.Syncs, a.HostExposed + b.HostExposed, a.Replays + b.Replays, a.Calls + b.Calls,
		a.Tail.Plus(b.Tail)}
}

// Scale is phase a k times over: every field times k.
func Scale(a Phase, k float64) Phase {
	return Phase{Busy: a.Busy * k, TPAll: a.TPAll * k, TPExposed: a.TPExposed * k, CPExposed: a.CPExposed * k, EPExposed: a.EPExposed * k,
		Launches: a.Launches * k, Syncs: a.Syncs * k, HostExposed: a.HostExposed * k, Replays: a.Replays * k, Calls: a.Calls * k,
		Tail: SyncTail{Launches: a.Tail.Launches * k, Calls: a.Tail.Calls * k, Busy: a.Tail.Busy * k, Stall: a.Tail.Stall * k}}
}

// Twice is a kernel's backward as the block costs it: twice its FLOPs
// and traffic.
func Twice(k Kernel) Kernel { k.Read *= 2; k.Writes *= 2; k.FLOPs *= 2; return k }
