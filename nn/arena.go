package nn

import (
	"runtime"
	"sync"
	"unsafe"
)

// Arena hands out slices carved from large chunks, so that the
// activations of one forward pass over a large graph are a handful of
// allocations that the next pass reuses (Reset) instead of garbage for the
// collector. After a cycle that needed more than one chunk, Reset replaces
// them by a single chunk of the cycle's peak, so a steady workload settles
// on one allocation with no fragmentation. Where the system allows, chunks
// live outside the Go heap (anonymous mappings, returned on consolidation
// or when the arena becomes unreachable): gigabytes of activations then do
// not double the collector's heap goal. It is safe for concurrent use.
type Arena[E Float] struct {
	mu     sync.Mutex
	chunks [][]E
	cur    int // chunk being filled
	off    int // offset in it
	height int // elements handed out since Reset, net of Release
	peak   int // largest height since the last consolidation
	owned  *mappings
}

// mappings are the arena's chunks outside the Go heap: unmap functions
// by chunk start.
type mappings struct {
	mu   sync.Mutex
	free map[*byte]func()
}

func (m *mappings) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range m.free {
		f()
	}
	m.free = nil
}

func (a *Arena[E]) newChunk(n int) []E {
	c, free := mapChunk[E](n)
	if free != nil {
		if a.owned == nil {
			a.owned = &mappings{free: map[*byte]func(){}}
			runtime.AddCleanup(a, (*mappings).release, a.owned)
		}
		a.owned.mu.Lock()
		a.owned.free[key(c)] = free
		a.owned.mu.Unlock()
	}
	return c
}

func key[E Float](c []E) *byte { return (*byte)(unsafe.Pointer(&c[0])) }

// dropChunks returns every chunk (to the system where it was mapped).
func (a *Arena[E]) dropChunks() {
	if a.owned != nil {
		a.owned.mu.Lock()
		for _, c := range a.chunks {
			if f, ok := a.owned.free[key(c)]; ok {
				f()
				delete(a.owned.free, key(c))
			}
		}
		a.owned.mu.Unlock()
	}
	a.chunks = nil
}

// arenaChunk is the smallest chunk in elements.
const arenaChunk = 1 << 22

// Alloc returns a zeroed slice of n elements.
func (a *Arena[E]) Alloc(n int) []E {
	s := a.AllocRaw(n)
	clear(s)
	return s
}

// AllocRaw returns a slice of n elements whose contents are unspecified
// (stale after Reset); use it for buffers that are fully overwritten.
func (a *Arena[E]) AllocRaw(n int) []E {
	if n == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.height += n
	a.peak = max(a.peak, a.height)
	for a.cur < len(a.chunks) {
		c := a.chunks[a.cur]
		if a.off+n <= len(c) {
			s := c[a.off : a.off+n : a.off+n]
			a.off += n
			return s
		}
		a.cur++
		a.off = 0
	}
	c := a.newChunk(max(n, arenaChunk))
	a.chunks = append(a.chunks, c)
	a.cur, a.off = len(a.chunks)-1, n
	return c[:n:n]
}

// Reset makes all memory available again; slices handed out before must no
// longer be used.
func (a *Arena[E]) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.chunks) > 1 {
		a.dropChunks()
		a.chunks = [][]E{a.newChunk(a.peak)}
	}
	a.cur, a.off, a.height = 0, 0, 0
}

// Cap is the number of elements held.
func (a *Arena[E]) Cap() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.chunks {
		n += len(c)
	}
	return n
}

// Mark is a position in an arena to return to with Release.
type Mark struct{ cur, off, height int }

// Mark returns the current position.
func (a *Arena[E]) Mark() Mark {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Mark{a.cur, a.off, a.height}
}

// Release frees everything allocated since m; those slices must no longer
// be used.
func (a *Arena[E]) Release(m Mark) {
	a.mu.Lock()
	a.cur, a.off, a.height = m.cur, m.off, m.height
	a.mu.Unlock()
}

var scratch [2]sync.Pool // []float32, []float64

// GetScratch returns a slice of n elements with unspecified contents from
// a pool; give it back with PutScratch. It suits per-goroutine temporaries
// of parallel loops, which would otherwise be garbage.
func GetScratch[T Float](n int) []T {
	i := 1
	if is32[T]() {
		i = 0
	}
	if v, ok := scratch[i].Get().(*[]T); ok && cap(*v) >= n {
		return (*v)[:n]
	}
	return make([]T, n)
}

// PutScratch returns a slice obtained from GetScratch.
func PutScratch[T Float](s []T) {
	i := 1
	if is32[T]() {
		i = 0
	}
	scratch[i].Put(&s)
}
