package nn

import (
	"runtime"
	"sync"
	"sync/atomic"
)

var workers atomic.Int32

// SetWorkers sets how many goroutines the kernels use; n <= 0 means
// GOMAXPROCS. Results do not depend on it.
func SetWorkers(n int) { workers.Store(int32(n)) }

// Workers returns the number of goroutines the kernels use.
func Workers() int {
	if n := int(workers.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// ParallelFor calls fn(lo, hi) for consecutive chunks of [0, n) of at most
// grain items, on up to Workers() goroutines. The chunks do not depend on
// the number of workers, so a function that writes only its own chunk's
// results (or per-chunk partials reduced in chunk order) is deterministic.
func ParallelFor(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	w := min(Workers(), chunks)
	if w <= 1 {
		for lo := 0; lo < n; lo += grain {
			fn(lo, min(lo+grain, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(w)
	for range w {
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo := c * grain
				fn(lo, min(lo+grain, n))
			}
		}()
	}
	wg.Wait()
}

// Grain returns a chunk size for n items of the given cost (roughly
// floating point operations per item) so that each chunk carries enough
// work to amortize scheduling but there are still several chunks per
// worker. It depends only on n and cost, never on the worker count.
func Grain(n, cost int) int {
	const target = 1 << 18 // ~0.1 ms of work per chunk
	g := target / max(cost, 1)
	g = max(g, 1)
	if n/g < 16 {
		g = max((n+15)/16, 1)
	}
	return g
}
