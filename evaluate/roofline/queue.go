// The ready queues of the resources (devices and channels): a heap by
// priority, or a FIFO ring when no priorities are given, and the list of
// resources that may have to start something.

package roofline

// resource is a device or a channel: what it runs and what waits for it.
type resource struct {
	// The ready queue: with priorities a heap, q[:n]; FIFO a ring, q[head],
	// q[head+1], ... (modulo len(q), a power of two), sorted.
	q       []entry
	head, n int
	running int32 // task running, -1 idle
	fifo    bool
	dirty   bool
}

// entry is a task in a ready queue with its sort key inline, so that heap
// comparisons touch only the heap's own memory.
type entry struct {
	ready float64 // ready time
	// key is the tie-break, lower first: the topological index in the
	// high half, the task (unit root op, or n + transfer index) in the low
	// half. Both are non-negative int32s, so comparing keys compares
	// (topo, task) lexicographically in one instruction. (Kept apart, the
	// two halves were also stored as two int32s and copied back as one
	// 64-bit word, a load the CPU cannot forward from the stores.)
	key  uint64
	prio int32 // higher first
}

// makeEntry is the queue entry of task, ready at time ready.
func makeEntry(ready float64, prio, topo, task int32) entry {
	return entry{ready: ready, key: uint64(uint32(topo))<<32 | uint64(uint32(task)), prio: prio}
}

// task is the task of e.
func (e *entry) task() int32 { return int32(uint32(e.key)) }

func (a *entry) before(b *entry) bool {
	// (prio desc, ready, key) in one expression without short cuts: the
	// comparisons compile to flag moves, and only the caller branches.
	pg, pe := b2i(a.prio > b.prio), b2i(a.prio == b.prio)
	rl, re := b2i(a.ready < b.ready), b2i(a.ready == b.ready)
	return pg|pe&(rl|re&b2i(a.key < b.key)) != 0
}

// push queues e on resource res.
func (s *simState) push(res int32, e entry) {
	r := &s.rs[res]
	if int(r.n) == len(r.q) {
		r.grow()
	}
	if !r.fifo {
		r.pushHeap(e)
		s.markDirty(res)
		return
	}
	r.pushFIFO(e)
	s.markDirty(res)
}

// pushFIFO queues e on a FIFO ring with room for it. The ring is sorted
// by (ready, key): every entry has priority 0 and entries arrive in
// nondecreasing ready time, so e goes after every entry that became ready
// before it and, among those ready at the same time, after those of lower
// key (keys are unique). An insertion from the tail keeps the ring sorted
// in O(1) amortized. (Small enough to be inlined into signalSlow, where
// it runs once per kernel.)
func (r *resource) pushFIFO(e entry) {
	q := r.q
	mask := len(q) - 1
	i := (r.head + r.n) & mask
	for i != r.head {
		j := (i - 1) & mask
		if e.ready > q[j].ready || e.key > q[j].key {
			break
		}
		q[i] = q[j]
		i = j
	}
	q[i] = e
	r.n++
}

// pushHeap is push for a queue with priorities, with room for e.
func (r *resource) pushHeap(e entry) {
	h := r.q
	i := int(r.n)
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	r.n++
}

// grow doubles the queue's room (a ring is unrolled from its head).
func (r *resource) grow() {
	q := make([]entry, max(16, 2*len(r.q)))
	for k := range r.n {
		q[k] = r.q[(r.head+k)&(len(r.q)-1)]
	}
	r.q, r.head = q, 0
}

// pop removes and returns the first task of resource res's queue.
func (s *simState) pop(res int32) int32 { return s.rs[res].pop() }

// pop removes and returns the first task of the queue.
func (r *resource) pop() int32 {
	if !r.fifo {
		return r.popHeap()
	}
	return r.popFIFO()
}

// popFIFO is pop for a FIFO ring (small enough to be inlined).
func (r *resource) popFIFO() int32 {
	r.n--
	top := rawOf(r.q).at(r.head).task()
	r.head = (r.head + 1) & (len(r.q) - 1)
	return top
}

// popHeap is pop for a queue with priorities.
func (r *resource) popHeap() int32 {
	h := r.q
	r.n--
	top := h[0].task()
	n := int(r.n)
	e := h[n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].before(&h[l]) {
			c = r
		}
		if !h[c].before(&e) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = e
	return top
}

// markDirty notes that resource res may have to start something.
func (s *simState) markDirty(res int32) { s.listDirty(&s.rs[res], res) }

// listDirty is markDirty for r, resource res.
func (s *simState) listDirty(r *resource, res int32) {
	if !r.dirty {
		r.dirty = true
		// A resource is listed at most once, and s.dirty has room for
		// all of them: no append, whose growth path would cost a call.
		k := len(s.dirty)
		s.dirty = s.dirty[:k+1]
		s.dirty[k] = res
	}
}
