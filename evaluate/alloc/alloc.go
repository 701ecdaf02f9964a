package alloc

import (
	"errors"
	"fmt"
	"slices"
)

// The allocator's sizes (CUDACachingAllocator.cpp, names as there).
const (
	MinBlockSize = 512      // kMinBlockSize: every request rounded to it
	SmallSize    = 1 << 20  // kSmallSize: the largest small request
	SmallBuffer  = 2 << 20  // kSmallBuffer: a small segment, an expandable small page
	MinLargeLoc  = 10 << 20 // kMinLargeAlloc: below it a large request takes a 20 MiB segment
	LargeBuffer  = 20 << 20 // kLargeBuffer: that segment, an expandable large page
	RoundLarge   = 2 << 20  // kRoundLarge: a larger segment's rounding
)

// Config is how the allocator runs.
type Config struct {
	// Expandable is PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.
	Expandable bool
	// Capacity is the device memory the allocator may reserve, bytes (0:
	// unlimited): a segment or page beyond it is refused, as cudaMalloc
	// or cuMemCreate refuse one beyond the device's free memory.
	Capacity int64
	// Device is the device's whole memory (totalGlobalMem), bytes: an
	// expandable segment reserves address space for 1 1/8 of it
	// (find_expandable_block), and a request the rest of a segment's
	// space cannot hold opens another segment. 0: as good as unlimited
	// (2^48 bytes of address space a segment).
	Device int64
	// Fraction is torch.cuda.set_per_process_memory_fraction's share of
	// Device (0: not set): the allocator reserves at most Fraction x
	// Device (alloc_block: "if (set_fraction && total_allocated_memory +
	// size > allowed_memory_maximum)" refuses the segment).
	Fraction float64
	// GCThreshold is PYTORCH_CUDA_ALLOC_CONF's
	// garbage_collection_threshold (0: not set). PyTorch acts on it only
	// where a Fraction is set (malloc: "if (set_fraction &&
	// garbage_collection_threshold() > 0.0)
	// garbage_collect_cached_blocks(context)", before asking the device
	// for a segment): with reserved above GCThreshold x Fraction x
	// Device, free cached segments of the large pool that are whole
	// (not split) and not expandable are released, the oldest first
	// (garbageCollect), until the excess is reclaimed.
	GCThreshold float64
}

// Stats is what the allocator holds, bytes, now and at its peak, and
// how often it had to release its cache.
type Stats struct {
	Allocated, Reserved         int64
	PeakAllocated, PeakReserved int64
	// Requested is the bytes asked for of the blocks in use (before
	// rounding and unsplit remainders).
	Requested, PeakRequested int64
	Segments                 int // cudaMalloc segments or mapped pages asked of the device
	Retries                  int // allocations that released the cache and tried again
	// Needed, where a request failed (ErrOutOfMemory), is what the
	// device would have had to hold at that instant: the segments still
	// reserved once the cache was released (blocks in use) and the
	// request's block, rounded: a lower bound of what the step needs.
	Needed int64
}

// ErrOutOfMemory is a request the device cannot hold even with the
// cache released.
var ErrOutOfMemory = errors.New("out of memory")

type block struct {
	addr, size int64
	prev, next int32 // neighbours in the segment, -1: none
	seg        int32 // expandable segment, -1: a cudaMalloc segment
	pool       int32
	allocated  bool
	mapped     bool
	req        int64 // the request a block in use serves
	gcBase     int64 // the large pools' get_free_block calls when it was last made free (gc_count_base)
}

type pool struct {
	stream   int32
	small    bool
	free     []int32 // free mapped blocks by (size, address)
	unmapped []int32 // unmapped blocks of expandable segments by address
}

type segment struct {
	base, size, page int64
}

// Allocator is one device's caching allocator.
type Allocator struct {
	cfg      Config
	blocks   []block
	spare    []int32 // indices of deleted blocks
	pools    []pool
	segs     []segment
	nextAddr int64
	st       Stats
	// largeCalls counts get_free_block calls on the large pools while
	// garbage collection is on (BlockPool::get_free_blocks_call_count
	// of large_blocks, one pool of every stream's blocks): a free
	// block's age is largeCalls less its gcBase (Block::gc_count).
	largeCalls int64
}

// New is an allocator with nothing reserved. With a Fraction of a
// Device it reserves at most that share of it (Capacity, where set and
// smaller, stays the bound).
func New(cfg Config) *Allocator {
	if cfg.Fraction > 0 && cfg.Device > 0 {
		allowed := int64(cfg.Fraction * float64(cfg.Device))
		if cfg.Capacity <= 0 || allowed < cfg.Capacity {
			cfg.Capacity = allowed
		}
	}
	return &Allocator{cfg: cfg, nextAddr: 1 << 40}
}

// gcOn is whether the allocator collects garbage: a threshold and a
// memory fraction both set.
func (a *Allocator) gcOn() bool {
	return a.cfg.GCThreshold > 0 && a.cfg.Fraction > 0 && a.cfg.Device > 0
}

// garbageCollect is garbage_collect_cached_blocks
// (c10/cuda/CUDACachingAllocator.cpp): where the reserved bytes exceed
// GCThreshold x Fraction x Device, the free blocks of the large pools
// that are a whole segment and not in an expandable one are released,
// those at least the mean age first, the mean taken again after each
// pass, until the excess is reclaimed or none is left.
func (a *Allocator) garbageCollect() {
	threshold := int64(a.cfg.GCThreshold * a.cfg.Fraction * float64(a.cfg.Device))
	if a.st.Reserved <= threshold {
		return
	}
	target := a.st.Reserved - threshold
	freeable := func(i int32) bool {
		b := &a.blocks[i]
		return b.prev < 0 && b.next < 0 && b.seg < 0
	}
	var total int64
	count := 0
	for pi := range a.pools {
		if a.pools[pi].small {
			continue
		}
		for _, i := range a.pools[pi].free {
			if freeable(i) {
				total += a.largeCalls - a.blocks[i].gcBase
				count++
			}
		}
	}
	var reclaimed int64
	for freed := true; reclaimed < target && freed && count > 0; {
		mean := float64(total) / float64(count)
		freed = false
		for pi := range a.pools {
			p := &a.pools[pi]
			if p.small {
				continue
			}
			for k := 0; k < len(p.free); {
				i := p.free[k]
				age := a.largeCalls - a.blocks[i].gcBase
				if !freeable(i) || float64(age) < mean {
					k++
					continue
				}
				freed = true
				reclaimed += a.blocks[i].size
				total -= age
				count--
				a.st.Reserved -= a.blocks[i].size
				p.free = slices.Delete(p.free, k, k+1)
				a.spare = append(a.spare, i)
			}
		}
	}
}

// Stats is the allocator's figures now.
func (a *Allocator) Stats() Stats { return a.st }

// Config is the allocator's configuration.
func (a *Allocator) Config() Config { return a.cfg }

func roundSize(n int64) int64 {
	if n < MinBlockSize {
		return MinBlockSize
	}
	return (n + MinBlockSize - 1) / MinBlockSize * MinBlockSize
}

func allocationSize(n int64) int64 {
	switch {
	case n <= SmallSize:
		return SmallBuffer
	case n < MinLargeLoc:
		return LargeBuffer
	default:
		return (n + RoundLarge - 1) / RoundLarge * RoundLarge
	}
}

func (a *Allocator) newBlock(b block) int32 {
	if n := len(a.spare); n > 0 {
		i := a.spare[n-1]
		a.spare = a.spare[:n-1]
		a.blocks[i] = b
		return i
	}
	a.blocks = append(a.blocks, b)
	return int32(len(a.blocks) - 1)
}

func (a *Allocator) poolOf(stream int32, small bool) int32 {
	for i := range a.pools {
		if a.pools[i].stream == stream && a.pools[i].small == small {
			return int32(i)
		}
	}
	a.pools = append(a.pools, pool{stream: stream, small: small})
	return int32(len(a.pools) - 1)
}

// freeIndex is where block key (size, addr) sits in p's free list: the
// first block not below it, and whether that block is it. (A lower
// bound written out: slices.BinarySearchFunc's comparison closure,
// called through a function value, was most of Replay's time.)
func (a *Allocator) freeIndex(p *pool, size, addr int64) (int, bool) {
	return a.freeIndexIn(p.free, size, addr)
}

func (a *Allocator) freeIndexIn(free []int32, size, addr int64) (int, bool) {
	blocks := a.blocks
	lo, hi := 0, len(free)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if b := &blocks[free[mid]]; b.size < size || b.size == size && b.addr < addr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(free) {
		return lo, false
	}
	b := &blocks[free[lo]]
	return lo, b.size == size && b.addr == addr
}

func (a *Allocator) insertFree(i int32) {
	b := &a.blocks[i]
	b.gcBase = a.largeCalls
	p := &a.pools[b.pool]
	at, _ := a.freeIndex(p, b.size, b.addr)
	p.free = slices.Insert(p.free, at, i)
}

// moveFree moves free block i, at at in its pool's free list, to its
// place there now that its key is smaller (a split block keeping its
// rest): the blocks between shift up one, the rest of the list stays
// (rather than a removal and an insertion moving it twice).
func (a *Allocator) moveFree(i int32, at int) {
	b := &a.blocks[i]
	free := a.pools[b.pool].free
	to, _ := a.freeIndexIn(free[:at], b.size, b.addr)
	copy(free[to+1:at+1], free[to:at])
	free[to] = i
}

func (a *Allocator) removeFree(i int32) {
	b := &a.blocks[i]
	p := &a.pools[b.pool]
	if at, ok := a.freeIndex(p, b.size, b.addr); ok {
		p.free = slices.Delete(p.free, at, at+1)
	}
}

func (a *Allocator) unmappedIndex(p *pool, addr int64) (int, bool) {
	return slices.BinarySearchFunc(p.unmapped, addr, func(i int32, k int64) int {
		switch b := a.blocks[i].addr; {
		case b < k:
			return -1
		case b > k:
			return 1
		}
		return 0
	})
}

func (a *Allocator) insertUnmapped(i int32) {
	p := &a.pools[a.blocks[i].pool]
	at, _ := a.unmappedIndex(p, a.blocks[i].addr)
	p.unmapped = slices.Insert(p.unmapped, at, i)
}

func (a *Allocator) removeUnmapped(i int32) {
	p := &a.pools[a.blocks[i].pool]
	if at, ok := a.unmappedIndex(p, a.blocks[i].addr); ok {
		p.unmapped = slices.Delete(p.unmapped, at, at+1)
	}
}

func (a *Allocator) reserve(n int64) {
	a.st.Reserved += n
	a.st.PeakReserved = max(a.st.PeakReserved, a.st.Reserved)
}

// Malloc allocates size bytes on stream and returns the block's handle
// (for Free); ErrOutOfMemory where the device cannot hold it.
func (a *Allocator) Malloc(size int64, stream int32) (int32, error) {
	if size < 0 {
		return -1, fmt.Errorf("alloc: negative size %d", size)
	}
	n := roundSize(size)
	pi := a.poolOf(stream, n <= SmallSize)
	if a.gcOn() && !a.pools[pi].small {
		a.largeCalls++
	}
	b, at, ok := a.freeBlock(pi, n)
	if !ok {
		at = -1
		if a.gcOn() {
			a.garbageCollect()
		}
		b, ok = a.allocBlock(pi, n)
	}
	if !ok {
		// release_cached_blocks, then alloc_block again.
		a.st.Retries++
		a.releaseCached()
		b, ok = a.allocBlock(pi, n)
	}
	if !ok {
		a.st.Needed = a.st.Reserved + n
		return -1, fmt.Errorf("alloc: %d bytes with %d reserved of %d: %w", size, a.st.Reserved, a.cfg.Capacity, ErrOutOfMemory)
	}
	return a.found(b, at, n, size), nil
}

// freeBlock is get_free_block: the best fit among pool pi's free
// blocks, left in the free list at at (found takes it out).
func (a *Allocator) freeBlock(pi int32, n int64) (int32, int, bool) {
	p := &a.pools[pi]
	at, _ := a.freeIndex(p, n, -1<<62)
	if at == len(p.free) {
		return -1, 0, false
	}
	if a.cfg.Expandable && a.blocks[p.free[at]].seg >= 0 {
		// Best fit by the size a block could grow to: its own and the
		// unmapped space after it.
		grow := func(i int32) int64 {
			b := &a.blocks[i]
			if b.next >= 0 && !a.blocks[b.next].mapped {
				return b.size + a.blocks[b.next].size
			}
			return b.size
		}
		for at+1 < len(p.free) && a.blocks[p.free[at]].seg >= 0 && grow(p.free[at+1]) < grow(p.free[at]) {
			at++
		}
	}
	return p.free[at], at, true
}

// allocBlock is alloc_block: a new segment, or pages mapped.
func (a *Allocator) allocBlock(pi int32, n int64) (int32, bool) {
	if a.cfg.Expandable {
		return a.expandBlock(pi, n)
	}
	size := allocationSize(n)
	if a.cfg.Capacity > 0 && a.st.Reserved+size > a.cfg.Capacity {
		return -1, false
	}
	a.st.Segments++
	a.reserve(size)
	b := a.newBlock(block{addr: a.nextAddr, size: size, prev: -1, next: -1, seg: -1, pool: pi, mapped: true})
	a.nextAddr += size + SmallBuffer
	return b, true
}

// found is alloc_found_block: block b serves a request of n bytes
// (size asked), split where should_split says. at >= 0: b is a free
// block at at in its pool's free list (freeBlock), taken out of it, or
// where split, the rest it keeps moved to its place there.
func (a *Allocator) found(b int32, at int, n, size int64) int32 {
	blk := a.blocks[b]
	rest := blk.size - n
	split := rest > SmallSize
	if a.pools[blk.pool].small || a.cfg.Expandable {
		split = rest >= MinBlockSize
	}
	if split {
		// The block keeps the rest; a new one in front of it serves the
		// request.
		u := a.newBlock(block{addr: blk.addr, size: n, prev: blk.prev, next: b, seg: blk.seg, pool: blk.pool, mapped: true})
		if blk.prev >= 0 {
			a.blocks[blk.prev].next = u
		}
		r := &a.blocks[b]
		r.prev, r.addr, r.size = u, blk.addr+n, rest
		if at >= 0 {
			a.moveFree(b, at)
		} else {
			a.insertFree(b)
		}
		b = u
	} else if at >= 0 {
		p := &a.pools[blk.pool]
		p.free = slices.Delete(p.free, at, at+1)
	}
	ub := &a.blocks[b]
	ub.allocated, ub.req = true, size
	a.st.Allocated += ub.size
	a.st.Requested += size
	a.st.PeakAllocated = max(a.st.PeakAllocated, a.st.Allocated)
	a.st.PeakRequested = max(a.st.PeakRequested, a.st.Requested)
	return b
}

// Free returns block h (a handle of Malloc) to its pool.
func (a *Allocator) Free(h int32) error {
	if h < 0 || int(h) >= len(a.blocks) || !a.blocks[h].allocated {
		return fmt.Errorf("alloc: free of %d, no block in use", h)
	}
	b := &a.blocks[h]
	b.allocated = false
	a.st.Allocated -= b.size
	a.st.Requested -= b.req
	b.req = 0
	a.merge(h, b.prev)
	a.merge(h, a.blocks[h].next)
	a.insertFree(h)
	return nil
}

// merge is try_merge_blocks: dst absorbs its neighbour src where src is
// free and mapped alike; src leaves its list.
func (a *Allocator) merge(dst, src int32) {
	if src < 0 {
		return
	}
	s := a.blocks[src]
	d := &a.blocks[dst]
	if s.allocated || s.mapped != d.mapped {
		return
	}
	if s.mapped {
		a.removeFree(src)
	} else {
		a.removeUnmapped(src)
	}
	if d.prev == src {
		d.addr, d.prev = s.addr, s.prev
		if s.prev >= 0 {
			a.blocks[s.prev].next = dst
		}
	} else {
		d.next = s.next
		if s.next >= 0 {
			a.blocks[s.next].prev = dst
		}
	}
	d.size += s.size
	a.spare = append(a.spare, src)
}

// EmptyCache is torch.cuda.empty_cache: every cached segment with no
// block in use released, every free page unmapped.
func (a *Allocator) EmptyCache() { a.releaseCached() }

// releaseCached is release_cached_blocks (release_blocks of every pool).
func (a *Allocator) releaseCached() {
	for pi := range a.pools {
		p := &a.pools[pi]
		var unmap []int32
		for k := 0; k < len(p.free); {
			i := p.free[k]
			b := &a.blocks[i]
			switch {
			case b.seg >= 0:
				unmap = append(unmap, i)
				k++
			case b.prev < 0 && b.next < 0:
				a.st.Reserved -= b.size
				p.free = slices.Delete(p.free, k, k+1)
				a.spare = append(a.spare, i)
			default:
				k++
			}
		}
		for _, i := range unmap {
			a.unmap(i)
		}
	}
}

// unmap is unmap_block: the whole pages inside free block i unmapped,
// what is left of it before and after them staying free blocks.
func (a *Allocator) unmap(i int32) {
	b := a.blocks[i]
	sg := a.segs[b.seg]
	lo := b.addr - sg.base
	first := (lo + sg.page - 1) / sg.page
	end := (lo + b.size) / sg.page
	if first >= end {
		return
	}
	a.removeFree(i)
	ua, un := sg.base+first*sg.page, (end-first)*sg.page
	if before := ua - b.addr; before > 0 {
		f := a.newBlock(block{addr: b.addr, size: before, prev: b.prev, next: i, seg: b.seg, pool: b.pool, mapped: true})
		if b.prev >= 0 {
			a.blocks[b.prev].next = f
		}
		a.blocks[i].prev = f
		a.insertFree(f)
	}
	if after := b.addr + b.size - (ua + un); after > 0 {
		f := a.newBlock(block{addr: ua + un, size: after, prev: i, next: b.next, seg: b.seg, pool: b.pool, mapped: true})
		if b.next >= 0 {
			a.blocks[b.next].prev = f
		}
		a.blocks[i].next = f
		a.insertFree(f)
	}
	u := &a.blocks[i]
	u.addr, u.size, u.mapped = ua, un, false
	a.st.Reserved -= un
	a.merge(i, u.prev)
	a.merge(i, a.blocks[i].next)
	a.insertUnmapped(i)
	// A segment all unmapped is released (release_expandable_segment):
	// its address space left as it is, nothing reserved.
}

// expandBlock is try_allocate_expandable_block: pages mapped at the
// lowest address of pool pi's segment where free and unmapped space
// hold n bytes.
func (a *Allocator) expandBlock(pi int32, n int64) (int32, bool) {
	c := a.findExpandable(pi, n)
	if !a.blocks[c].mapped {
		if !a.mapBlock(c, min(a.blocks[c].size, n)) {
			return -1, false
		}
	}
	for a.blocks[c].size < n {
		nx := a.blocks[c].next
		if !a.mapBlock(nx, min(n-a.blocks[c].size, a.blocks[nx].size)) {
			return -1, false
		}
		c = nx // it absorbed c
	}
	a.removeFree(c)
	return c, true
}

// findExpandable is find_expandable_block.
func (a *Allocator) findExpandable(pi int32, n int64) int32 {
	p := &a.pools[pi]
	free := func(i int32) bool { return i >= 0 && !a.blocks[i].allocated }
	for _, c := range p.unmapped {
		if pr := a.blocks[c].prev; free(pr) {
			c = pr
		}
		var got int64
		for i := c; got < n && free(i); i = a.blocks[i].next {
			got += a.blocks[i].size
		}
		if got >= n {
			return c
		}
	}
	// A new segment: address space for 1 1/8 the device's memory.
	page := int64(LargeBuffer)
	if p.small {
		page = SmallBuffer
	}
	space := a.cfg.Device + a.cfg.Device/8
	if a.cfg.Device <= 0 {
		space = 1 << 48
	}
	space = (space + page - 1) / page * page
	space = max(space, (n+page-1)/page*page)
	a.segs = append(a.segs, segment{base: a.nextAddr, size: space, page: page})
	a.nextAddr += space + page
	sg := a.segs[len(a.segs)-1]
	c := a.newBlock(block{addr: sg.base, size: sg.size, prev: -1, next: -1, seg: int32(len(a.segs) - 1), pool: pi})
	a.insertUnmapped(c)
	return c
}

// mapBlock is map_block: the pages covering the first n bytes of
// unmapped block i mapped, merged with the free blocks beside it.
func (a *Allocator) mapBlock(i int32, n int64) bool {
	b := a.blocks[i]
	page := a.segs[b.seg].page
	m := min((n+page-1)/page*page, b.size)
	if a.cfg.Capacity > 0 && a.st.Reserved+m > a.cfg.Capacity {
		return false
	}
	a.removeUnmapped(i)
	if m < b.size {
		r := a.newBlock(block{addr: b.addr + m, size: b.size - m, prev: i, next: b.next, seg: b.seg, pool: b.pool})
		if b.next >= 0 {
			a.blocks[b.next].prev = r
		}
		a.blocks[i].next = r
		a.insertUnmapped(r)
	}
	u := &a.blocks[i]
	u.size, u.mapped = m, true
	a.merge(i, u.prev)
	a.merge(i, a.blocks[i].next)
	a.insertFree(i)
	a.st.Segments += int(m / page)
	a.reserve(m)
	return true
}

// Event is one step of a trace: a tensor of Size bytes allocated on
// Stream, or (Free) the tensor freed. Tensor names it, 0 to the
// trace's tensors less one.
type Event struct {
	Tensor int32
	Stream int32
	Free   bool
	Size   int64
}

// Replay runs trace on a new allocator of cfg and returns its figures;
// an error where a tensor is freed that is not held, or where the
// device cannot hold the trace (the figures then are those before the
// failing request).
func Replay(cfg Config, trace []Event) (Stats, error) {
	a := New(cfg)
	// A tensor's handle by its id: a trace frees what it allocates, so
	// about half its events allocate (the ids run from 0).
	h := make([]int32, 0, len(trace)/2+1)
	for k, e := range trace {
		if e.Tensor < 0 {
			return a.st, fmt.Errorf("alloc: event %d: tensor %d", k, e.Tensor)
		}
		for int(e.Tensor) >= len(h) {
			h = append(h, -1)
		}
		if e.Free {
			if h[e.Tensor] < 0 {
				return a.st, fmt.Errorf("alloc: event %d frees tensor %d, not held", k, e.Tensor)
			}
			if err := a.Free(h[e.Tensor]); err != nil {
				return a.st, err
			}
			h[e.Tensor] = -1
			continue
		}
		if h[e.Tensor] >= 0 {
			return a.st, fmt.Errorf("alloc: event %d allocates tensor %d, held already", k, e.Tensor)
		}
		b, err := a.Malloc(e.Size, e.Stream)
		if err != nil {
			return a.st, fmt.Errorf("event %d: %w", k, err)
		}
		h[e.Tensor] = b
	}
	return a.st, nil
}
