package memory

import (
	"iter"
	"slices"

	"github.com/placer/placer/evaluate/alloc"
)

// A step's allocation trace on one GPU, tensor by tensor (memTrace):
// each tensor allocated with the part of the peak it counts in (memCat)
// and on its stream, then freed; its peak the most its tensors hold at
// once. The eager stacks' traces and torchtitan's are written on it
// (eagerStepTrace, titanStageTrace), and the caching allocator replays
// its events (Step.Allocator).

// memCat is what a traced tensor is part of (Peak.Parts at the peak
// instant).
type memCat uint8

const (
	catWeights memCat = iota
	catCopies
	catGrads
	catOpt
	catActs
	catLoss
	// catComm is a collective's buffer (FSDP2's all-gather and
	// reduce-scatter buffers, titanStageTrace's): a part named only
	// where a trace holds one at its peak.
	catComm
	nMemCats
)

var memCatNames = [nMemCats]string{"weights", "autocast weight copies", "gradients", "optimizer state",
	"activations in flight", "logits and loss", "collective buffers"}

// Streams of the trace's tensors besides the default one (0): the
// caching allocator keeps a pool a stream.
const (
	// allGatherStream is the stream FSDP2 allocates its all-gathers'
	// buffers on (FSDPCommContext's all_gather_copy_in_stream).
	allGatherStream = 1
	// reduceScatterStream is FSDP2's FSDPCommContext.reduce_scatter_stream,
	// where foreach_reduce allocates its reduce-scatter input.
	reduceScatterStream = 2
)

// memTrace is a step's allocation trace on one GPU, with each tensor's
// part.
type memTrace struct {
	ev  []alloc.Event
	cat []memCat
	// peakOnly keeps no events: the peak is counted as the trace is
	// written (size, the tensors' bytes; live, tot, best, by the
	// running counts), where the allocator will not replay it.
	peakOnly  bool
	size      []int64
	tot, best int64
	live, by  [nMemCats]int64
}

// alloc allocates bytes of part c and returns the tensor's id (-1:
// under a byte, nothing allocated).
func (t *memTrace) alloc(bytes float64, c memCat) int32 {
	if bytes < 1 {
		return -1
	}
	id := int32(len(t.cat))
	t.cat = append(t.cat, c)
	if t.peakOnly {
		b := bytesOf(bytes)
		t.size = append(t.size, b)
		t.tot += b
		t.live[c] += b
		if t.tot > t.best {
			t.best, t.by = t.tot, t.live
		}
		return id
	}
	t.ev = append(t.ev, alloc.Event{Tensor: id, Size: bytesOf(bytes)})
	return id
}

func (t *memTrace) free(ids ...int32) {
	for _, id := range ids {
		switch {
		case id < 0:
		case t.peakOnly:
			t.tot -= t.size[id]
			t.live[t.cat[id]] -= t.size[id]
		default:
			t.ev = append(t.ev, alloc.Event{Tensor: id, Free: true})
		}
	}
}

// peak is the most bytes the trace's tensors hold at once (the first
// instant it is reached) and those bytes by part.
func (t *memTrace) peak() (int64, [nMemCats]int64) {
	if t.peakOnly {
		return t.best, t.by
	}
	var live, by [nMemCats]int64
	var tot, best int64
	size := make([]int64, len(t.cat))
	for _, e := range t.ev {
		c := t.cat[e.Tensor]
		if e.Free {
			tot -= size[e.Tensor]
			live[c] -= size[e.Tensor]
			continue
		}
		size[e.Tensor] = e.Size
		tot += e.Size
		live[c] += e.Size
		if tot > best {
			best, by = tot, live
		}
	}
	return best, by
}

// allocOn is alloc on stream.
func (t *memTrace) allocOn(stream int32, bytes float64, c memCat) int32 {
	id := t.alloc(bytes, c)
	if id >= 0 && !t.peakOnly {
		t.ev[len(t.ev)-1].Stream = stream
	}
	return id
}

// splitBytes is total as pieces of piece bytes and a remainder
// (pieces').
func splitBytes(total, piece float64) []float64 { return slices.Collect(pieces(total, piece)) }

// pieces yields total bytes as pieces of piece bytes (the whole where
// piece is below a byte), the last holding the remainder, never one
// below a byte: a remainder under a byte joins the piece before it.
func pieces(total, piece float64) iter.Seq[float64] {
	return func(yield func(float64) bool) {
		if piece < 1 {
			piece = total
		}
		for total >= 1 {
			n := min(total, piece)
			if total-n < 1 {
				n = total
			}
			if !yield(n) {
				return
			}
			total -= n
		}
	}
}
