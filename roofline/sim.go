package roofline

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
)

// Recorder receives the timeline of one simulation (for traces and
// tests). Times are in seconds. A nil Recorder costs nothing.
type Recorder interface {
	// Kernel: device dev ran the ops ops (one kernel; several when fused).
	Kernel(dev int, ops []int32, start, end float64)
	// Transfer: tensor went from src to dst over channel ch.
	Transfer(ch, src, dst, tensor int, bytes int64, start, end float64)
	// Memory: device dev holds bytes from time t on.
	Memory(dev int, t float64, bytes int64)
}

// Simulator evaluates decisions against one Model. It owns all its
// buffers and reuses them, so an evaluation allocates nothing once the
// buffers have grown. A Simulator is not safe for concurrent use; make one
// per goroutine (Evaluator does).
//
// Ops and tensors are numbered as in the Model (topologically, tensors by
// producer). A run does little before its event loop: it places the ops,
// forms the fused groups, and leaves the state of each fused kernel to be
// computed when the kernel is first signalled, close to when it runs, so
// that what a kernel touches is still in cache when it starts and ends. An
// op that runs alone needs no such state: the Model's is its own.
type Simulator struct {
	m   *Model
	rec Recorder

	ops []opState // per op
	// Per fused kernel, in the order initUnit set them up (roughly the
	// order they run in), rather than indexed by root op: the fused
	// kernels are a minority of the ops, and kept dense they are written
	// and read back in sequence instead of being spread over n slots
	// that warm would have to load.
	units []unitState
	uslot []int32     // per op: the index in units of the fused kernel it roots
	fs    []fuseState // per op: the fusion state of the group it roots
	tref  []int32     // per tensor: pending local consumers and outbound sends of the local copy; notMat for a tensor that stays on chip
	xbase []int32     // per tensor: its first transfer (a tensor's transfers are consecutive in xs)
	xs    []xfer      // transfers of this run (task ids n+x)
	// What each fused kernel does when it ends, written by initUnit (see
	// there) and read by finishUnit: its external inputs, and its stored
	// outputs and members with control successors. Arenas, filled from
	// the start in each run.
	planIn, planOut []int32

	prio, fusion []int   // the decision's, in topological numbering
	pbuf, fbuf   []int   // their buffers, for a graph not numbered topologically
	order        []int32 // fusion order, sources
	bucket       []int32
	kernels      int
	finished     int

	// resources: devices 0..d-1, channels d..d+ch-1
	rs      []resource
	hold    []int32 // sync mode: transfer a device holds, waiting for its receiver
	dirty   []int32 // resources that may have to start something
	ev      []event // the busy resources' events: a ring, ev[evHead] first, sorted
	evHead  int
	evN     int // events in the ring
	mem     []int64
	peak    []int64
	busy    []float64
	lastRec []int64
	members []int32 // scratch for the recorder
	res     evaluate.Result

	r simViews // raw views of the per-op and per-tensor buffers above

	nIn, nOut     int32 // used lengths of planIn and planOut
	pfEnd, pfNext int32 // warm: ops below pfEnd are warmed; signalling pfNext or above warms more
	sink          int64 // warm's loads end here, so that the compiler keeps them
}

// simViews are raw views (raw.go) of the Simulator's fixed-size buffers,
// set once by NewSimulator.
type simViews struct {
	ops             raw[opState]
	units           raw[unitState]
	fs              raw[fuseState]
	uslot, tref     raw[int32]
	planIn, planOut raw[int32]
}

// opState is the per-op state the event loop touches for every op.
type opState struct {
	unit    int32 // root op of the op's fused group (itself when unfused)
	dev     int32 // device from the decision
	pending int32 // for a unit root: dependencies not yet satisfied (notReady: not computed yet)
	next    int32 // next member of the op's group (a circular list)
}

// unitState is the state of a fused kernel.
type unitState struct {
	dur   float64 // duration
	alloc int64   // bytes allocated at start: temps and materialized outputs
	temp  int64   // temp bytes, freed at the end
	prio  int32   // highest priority of its ops
	topo  int32   // lowest topological index of its ops
	pin   int32   // its external inputs: s.planIn[pin] of them from pin+1 on
	pout  int32   // its outputs: s.planOut[pout] entries from pout+1 on
}

// fuseState is the state of a fused group, valid at its root.
type fuseState struct {
	size          int32
	extIn, extOut int32 // distinct edges entering / leaving the group
}

// xfer is one transfer of a tensor to another device.
type xfer struct {
	t, src, dst int32
	ref         int32 // consumers on dst that have not finished
}

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

const (
	notReady = math.MinInt32 // pending of a fused kernel not set up yet
	notMat   = -1            // tref of a tensor that never reaches device memory
)

// NewSimulator returns a simulator for m. rec may be nil.
func NewSimulator(m *Model, rec Recorder) *Simulator {
	n, nt, d := m.n, m.nt, m.d
	r := d + m.Cluster.Channels
	s := &Simulator{
		m: m, rec: rec,
		ops: make([]opState, n), units: make([]unitState, 0, n/2), uslot: make([]int32, n), fs: make([]fuseState, n),
		tref: make([]int32, nt), xbase: make([]int32, nt),
		planIn: make([]int32, n+len(m.in)+1), planOut: make([]int32, n+5*nt+len(m.cons)+2*n+1),
		rs: make([]resource, r), hold: make([]int32, d), dirty: make([]int32, 0, r), ev: make([]event, ringSize(r+1)),
		mem: make([]int64, d), peak: make([]int64, d), busy: make([]float64, d), lastRec: make([]int64, d),
	}
	s.r = simViews{
		ops: rawOf(s.ops), units: rawOf(s.units[:cap(s.units)]), fs: rawOf(s.fs), uslot: rawOf(s.uslot),
		tref: rawOf(s.tref), planIn: rawOf(s.planIn), planOut: rawOf(s.planOut),
	}
	return s
}

// ErrDeadlock means the simulation could not finish every op; it cannot
// happen for a valid graph and decision and indicates a bug.
var ErrDeadlock = errors.New("roofline: simulation deadlocked")

// Run simulates decision dec and returns the result. The returned Result's
// slices belong to the Simulator and are overwritten by the next Run: copy
// them (Result.Clone) to keep them.
func (s *Simulator) Run(dec decision.Decision) (*evaluate.Result, error) {
	m := s.m
	if dec.ValidateShape(m.G, m.d) != nil {
		return nil, dec.Validate(m.G, m.d) // placeAndFuse checks the devices
	}
	s.reset(dec.Priority == nil && (!m.Opts.SyncTransfers || dec.Transfer == nil), dec.Transfer == nil)
	s.prio, s.pbuf = s.renumber(dec.Priority, s.pbuf)
	s.fusion, s.fbuf = s.renumber(dec.Fusion, s.fbuf)
	if !s.placeAndFuse(dec.Device) {
		return nil, dec.Validate(m.G, m.d) // a device that does not exist
	}
	for k := 0; k < m.d; k++ {
		s.peak[k] = s.mem[k]
		s.lastRec[k] = s.mem[k]
		if s.rec != nil {
			s.rec.Memory(k, 0, s.mem[k])
		}
	}
	s.queueSources()
	if err := s.loop(dec.Transfer); err != nil {
		return nil, err
	}
	s.fillResult(dec.Device)
	return &s.res, nil
}

// renumber returns the per-op values x in topological numbering, in buf
// unless the graph is numbered topologically.
func (s *Simulator) renumber(x, buf []int) (out, newBuf []int) {
	if x == nil || s.m.identity {
		return x, buf
	}
	if cap(buf) < len(x) {
		buf = make([]int, len(x))
	}
	buf = buf[:len(x)]
	for v, i := range s.m.orig {
		buf[v] = x[i]
	}
	return buf, buf
}

// reset empties the resources and the per-run counters.
func (s *Simulator) reset(fifoDev, fifoCh bool) {
	d := s.m.d
	for k := range s.rs {
		r := &s.rs[k]
		r.head, r.n, r.running, r.dirty = 0, 0, -1, false
		r.fifo = fifoCh
		if k < d {
			r.fifo = fifoDev
		}
	}
	for k := 0; k < d; k++ {
		s.hold[k], s.mem[k], s.busy[k] = -1, 0, 0
	}
	s.dirty, s.xs, s.units = s.dirty[:0], s.xs[:0], s.units[:0]
	s.evHead, s.evN = 0, 0
	s.nIn, s.nOut = 0, 0
	s.kernels, s.finished = 0, 0
	s.pfEnd, s.pfNext = 0, 0
	s.res.BytesMoved, s.res.Transfers = 0, 0
	if cap(s.res.LinkBytes) < d*d {
		s.res.LinkBytes = make([]int64, d*d)
	}
	s.res.LinkBytes = s.res.LinkBytes[:d*d]
	clear(s.res.LinkBytes)
}

// ------------------------------------------------------------ units

// queueSources queues the kernels without dependencies, in the order of
// their roots.
func (s *Simulator) queueSources() {
	ops := s.ops
	ready := s.order[:0]
	for _, v := range s.m.sources {
		u := ops[v].unit
		if ops[u].pending == notReady {
			s.initUnit(int(u))
		}
		if ops[u].pending == 0 {
			ops[u].pending = -1 // listed
			ready = append(ready, u)
		}
	}
	slices.Sort(ready) // in order unless fusion made a later source a root
	for _, u := range ready {
		ops[u].pending = 0
		s.push(ops[u].dev, s.readyEntry(u, 0))
	}
	s.order = ready
}

// readyEntry is the queue entry of kernel u, ready at time now.
func (s *Simulator) readyEntry(u int32, now float64) entry {
	prio, topo := int32(0), u
	if s.ops[u].next != u {
		us := &s.units[s.uslot[u]]
		prio, topo = us.prio, us.topo
	} else if s.prio != nil {
		prio = int32(s.prio[u])
	}
	return makeEntry(now, prio, topo, u)
}

// costOf is the duration of kernel u and the bytes it allocates when it
// starts. An op alone costs launch + max(compute, memory traffic / rate)
// (or its measured time, Model.aloneTime) and allocates its temps and
// outputs.
func (s *Simulator) costOf(u int) (dur float64, alloc int64) {
	if int(s.r.ops.at(u).next) != u {
		us := s.r.units.at(int(*s.r.uslot.at(u)))
		return us.dur, us.alloc
	}
	return s.costAlone(u)
}

// costAlone is costOf for an op that runs alone.
func (s *Simulator) costAlone(u int) (dur float64, alloc int64) {
	m := s.m
	mr := &m.r
	if *mr.flags.at(u)&hasTemp != 0 {
		alloc = *mr.temp.at(u)
	}
	for t, end := int(*mr.outStart.at(u)), int(*mr.outStart.at(u + 1)); t < end; t++ {
		alloc += m.memOf(t)
	}
	return m.aloneTime(u), alloc
}

// initUnit computes the state of fused kernel u: its dependencies,
// duration and memory, and which of its tensors reach device memory.
//
// It also writes the kernel's plan, so that finishUnit need not walk the
// members' edges a second time (and sort out again which are internal):
//
//	planIn[pin]:  the number k of external inputs, then k entries: the
//	              tensor t, or ^t for a copy received from another device
//	planOut[pout]: the length of what follows, a sequence of
//	              v, t, mask lo, mask hi, j, then j kernels:
//	                  member v's output t is stored; it goes to the
//	                  devices of mask and wakes the j kernels listed
//	                  (in consumer order) on this device
//	              v, -1: member v signals its control successors
//
// in member order, which is the order finishUnit used to act in.
//
// A fused kernel has one launch, the summed compute time of its ops, and
// only their external memory traffic: a tensor whose consumers are all in
// its producer's group never reaches device memory (neither its write nor
// its reads count), and a read of a tensor from inside the group does not
// count.
func (s *Simulator) initUnit(u int) {
	m := s.m
	mr, sr := &m.r, &s.r
	ops, tref, planIn, planOut := sr.ops, sr.tref, sr.planIn, sr.planOut
	inStart, in, outStart, consStart, cons, tBytes, flags := mr.inStart, mr.in, mr.outStart, mr.consStart, mr.cons, mr.tBytes, mr.flags
	u32 := int32(u)
	dv := ops.at(u).dev
	var us unitState
	us.pin, us.pout = s.nIn, s.nOut
	ki, ko := int(us.pin)+1, int(us.pout)+1 // past the counts
	pending := int32(0)
	comp, memT := 0.0, 0.0
	us.topo = u32
	prio := s.prio
	if prio != nil {
		us.prio = int32(prio[u])
	}
	v := u
	for {
		var internal int64 // bytes of v's traffic that stay on chip
		for k, end := int(*inStart.at(v)), int(*inStart.at(v + 1)); k < end; k++ {
			e := in.at(k)
			t := int(e.t)
			po := ops.at(int(e.p))
			ext := b2i(po.unit != u32)
			pending += ext
			b := *tBytes.at(t)
			if ext != 0 {
				b = 0
			}
			internal += b
			// Branch-free append: an internal input's entry is
			// overwritten by the next one.
			x := e.t
			if po.dev != dv {
				x = ^x
			}
			*planIn.at(ki) = x
			ki += int(ext)
		}
		fl := *flags.at(v)
		if fl&ctrlIn != 0 {
			for k, end := int(*mr.cinStart.at(v)), int(*mr.cinStart.at(v + 1)); k < end; k++ {
				if ops.at(int(*mr.cin.at(k))).unit != u32 {
					pending++
				}
			}
		}
		for t, tend := int(*outStart.at(v)), int(*outStart.at(v + 1)); t < tend; t++ {
			// The entry of t: v, t, the devices it goes to (a mask in two
			// halves), and the kernels it wakes on this device, counted
			// and listed. The list is written branch-free and dropped if
			// t stays on chip.
			cs, ce := int(*consStart.at(t)), int(*consStart.at(t + 1))
			ext := b2i(cs == ce)
			var mask uint64
			k := ko + 5
			for j := cs; j < ce; j++ {
				co := ops.at(int(*cons.at(j)))
				out := b2i(co.unit != u32)
				remote := b2i(co.dev != dv)
				ext |= out
				mask |= uint64(remote) << (uint(co.dev) & 63)
				*planOut.at(k) = co.unit
				k += int(out &^ remote)
			}
			if ext != 0 {
				*tref.at(t) = 0
				us.alloc += m.memOf(t)
				*planOut.at(ko) = int32(v)
				*planOut.at(ko + 1) = int32(t)
				*planOut.at(ko + 2) = int32(uint32(mask))
				*planOut.at(ko + 3) = int32(uint32(mask >> 32))
				*planOut.at(ko + 4) = int32(k - ko - 5)
				ko = k
			} else {
				*tref.at(t) = notMat
				internal += *tBytes.at(t)
			}
		}
		fc := mr.cost.at(v)
		comp += fc.compute
		if b := fc.bytes - internal; b > 0 {
			memT += float64(b) * m.classRate[fl>>classShift]
		}
		if fl&hasTemp != 0 {
			us.temp += *mr.temp.at(v)
		}
		if fl&ctrlOut != 0 {
			*planOut.at(ko) = int32(v)
			*planOut.at(ko + 1) = -1
			ko += 2
		}
		us.topo = min(us.topo, int32(v))
		if prio != nil {
			us.prio = max(us.prio, int32(prio[v]))
		}
		v = int(ops.at(v).next)
		if v == u {
			break
		}
	}
	*planIn.at(int(us.pin)) = int32(ki) - us.pin - 1
	*planOut.at(int(us.pout)) = int32(ko) - us.pout - 1
	s.nIn, s.nOut = int32(ki), int32(ko)
	us.alloc += us.temp
	us.dur = m.launch + max(comp, memT)
	ops.at(u).pending = pending
	slot := len(s.units)
	*sr.uslot.at(u) = int32(slot)
	s.units = s.units[:slot+1] // never grows past its capacity: a fused kernel has at least two ops
	*sr.units.at(slot) = us
}

// ------------------------------------------------------------ queues

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
func (s *Simulator) push(res int32, e entry) {
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
func (s *Simulator) pop(res int32) int32 { return s.rs[res].pop() }

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
func (s *Simulator) markDirty(res int32) { s.listDirty(&s.rs[res], res) }

// listDirty is markDirty for r, resource res.
func (s *Simulator) listDirty(r *resource, res int32) {
	if !r.dirty {
		r.dirty = true
		// A resource is listed at most once, and s.dirty has room for
		// all of them: no append, whose growth path would cost a call.
		k := len(s.dirty)
		s.dirty = s.dirty[:k+1]
		s.dirty[k] = res
	}
}

// event: resource r finishes at time t.
type event struct {
	t float64
	r int32
}

// evPush adds the event that resource res finishes at t. The events are
// few (one per busy resource, about 11 on the 80,000-op benchmark) and
// kept sorted in a ring, earliest first. A new event is inserted from the
// tail: about five moves. The comparison tests the times alone and only
// looks at the resources when they are equal, which is rare: one branch
// per step, the same that ends the loop. (A winner tree over the
// resources, tried, costs more: six levels for the 36 resources of 8
// cube-mesh GPUs, or two trees' paths of 3 and 5 levels, twice per
// event. So does an unordered array scanned for the earliest event.)
func (s *Simulator) evPush(res int32, t float64) {
	h := rawOf(s.ev)
	mask := len(s.ev) - 1
	i := (s.evHead + s.evN) & mask
	for k := s.evN; k > 0; k-- {
		j := (i - 1) & mask
		p := h.at(j)
		if t > p.t || t == p.t && res > p.r {
			break
		}
		*h.at(i) = *p
		i = j
	}
	*h.at(i) = event{t, res}
	s.evN++
}

// evNext is the time of the next event; there must be one.
func (s *Simulator) evNext() float64 { return s.ev[s.evHead].t }

// evPop removes and returns the resource of the next event.
func (s *Simulator) evPop() int32 {
	r := s.ev[s.evHead].r
	s.evHead = (s.evHead + 1) & (len(s.ev) - 1)
	s.evN--
	return r
}

// ringSize is the smallest power of two >= n.
func ringSize(n int) int {
	return 1 << bits.Len(uint(n-1))
}

// ------------------------------------------------------------ memory

func (s *Simulator) alloc(dev int32, bytes int64) {
	m := s.mem[dev] + bytes
	s.mem[dev] = m
	s.peak[dev] = max(s.peak[dev], m)
}

// record reports device dev's memory to the recorder when it changed.
func (s *Simulator) record(dev int32, now float64) {
	if s.rec != nil {
		s.recordMemory(dev, now)
	}
}

func (s *Simulator) recordMemory(dev int32, now float64) {
	if s.mem[dev] != s.lastRec[dev] {
		s.lastRec[dev] = s.mem[dev]
		s.rec.Memory(int(dev), now, s.mem[dev])
	}
}

// ------------------------------------------------------------ the loop

func (s *Simulator) loop(transferPrio []int) error {
	var now float64
	if s.m.Opts.SyncTransfers {
		now = s.loopSync(transferPrio)
	} else {
		now = s.loopAsync(transferPrio)
	}
	if s.finished != s.kernels {
		return fmt.Errorf("%w: %d of %d kernels ran", ErrDeadlock, s.finished, s.kernels)
	}
	s.res.StepTime = now
	return nil
}

// loopAsync is the event loop of the default model, transfers on the
// channels: it starts work on every idle resource that has some, then
// takes the next events, all those at the same time, and handles the end
// of what their resources ran; until nothing runs. It is the loop of
// every evaluation, so what happens once per event is written out here
// rather than called (about half of its instructions went to calls and
// to reloading the same fields in each). Starting work marks nothing
// dirty, so the dirty list is read from its end (the order in which
// dispatch takes it) and then emptied.
func (s *Simulator) loopAsync(transferPrio []int) float64 {
	m := s.m
	n, d := int32(m.n), int32(m.d)
	rs, ops, ev := rawOf(s.rs), s.r.ops, rawOf(s.ev)
	evMask := len(s.ev) - 1
	now := 0.0
	for {
		for k := len(s.dirty) - 1; k >= 0; k-- {
			res := s.dirty[k]
			r := rs.at(int(res))
			r.dirty = false
			if r.running >= 0 || r.n == 0 {
				continue
			}
			if res < d {
				var u int32
				if r.fifo {
					u = r.popFIFO()
				} else {
					u = r.popHeap()
				}
				// startUnit, written out, with costOf's test and
				// evPush: this runs once per kernel.
				var dur float64
				var alloc int64
				if ops.at(int(u)).next != u {
					us := s.r.units.at(int(*s.r.uslot.at(int(u))))
					dur, alloc = us.dur, us.alloc
				} else {
					dur, alloc = s.costAlone(int(u))
				}
				t := s.charge(res, u, dur, alloc, now)
				i := (s.evHead + s.evN) & evMask
				for k := s.evN; k > 0; k-- {
					j := (i - 1) & evMask
					p := ev.at(j)
					if t > p.t || t == p.t && res > p.r {
						break
					}
					*ev.at(i) = *p
					i = j
				}
				*ev.at(i) = event{t, res}
				s.evN++
				if s.rec != nil {
					s.recordKernel(res, u, now, t)
				}
			} else {
				s.startTransfer(res, r.pop()-n, now)
			}
		}
		s.dirty = s.dirty[:0]
		if s.evN == 0 {
			return now
		}
		now = ev.at(s.evHead).t
		for s.evN > 0 {
			e := ev.at(s.evHead)
			if e.t != now {
				break
			}
			res := e.r
			s.evHead = (s.evHead + 1) & evMask
			s.evN--
			r := rs.at(int(res))
			task := r.running
			r.running = -1
			s.listDirty(r, res)
			switch t := int(task); {
			case task >= n:
				s.arrive(task-n, now)
			case ops.at(t).next == task:
				s.finishOp(t, now, transferPrio)
			default:
				s.finishUnit(t, now, transferPrio)
			}
		}
	}
}

// loopSync is the event loop with REGAL's synchronous transfers: loop
// with dispatchSync, which pairs each transfer's sender and receiver.
func (s *Simulator) loopSync(transferPrio []int) float64 {
	now := 0.0
	for {
		s.dispatchSync(now)
		if s.evN == 0 {
			return now
		}
		now = s.evNext()
		for s.evN > 0 && s.evNext() == now {
			s.complete(s.evPop(), now, transferPrio)
		}
	}
}

// complete handles the end of whatever resource res was running (in
// synchronous mode; loopAsync does the same inline).
func (s *Simulator) complete(res int32, now float64, transferPrio []int) {
	m := s.m
	n := int32(m.n)
	task := s.rs[res].running
	s.rs[res].running = -1
	s.markDirty(res)
	if task >= n {
		x := task - n
		if m.Opts.SyncTransfers { // the receiver was blocked too
			r := s.xs[x].dst
			s.rs[r].running = -1
			s.markDirty(r)
		}
		s.arrive(x, now)
		return
	}
	if s.r.ops.at(int(task)).next == task {
		s.finishOp(int(task), now, transferPrio)
		return
	}
	s.finishUnit(int(task), now, transferPrio)
}

// finishOp is finishUnit for an op that runs alone: no input or consumer
// is inside its kernel, and all its outputs are materialized.
func (s *Simulator) finishOp(v int, now float64, transferPrio []int) {
	mr := &s.m.r
	ops, tref := s.r.ops, s.r.tref
	m := s.m
	in, consStart, cons := mr.in, mr.consStart, mr.cons
	fl := *mr.flags.at(v)
	dv := ops.at(v).dev
	s.finished++
	var freed int64
	if fl&hasTemp != 0 {
		freed = *mr.temp.at(v)
	}
	for k, end := int(*mr.inStart.at(v)), int(*mr.inStart.at(v + 1)); k < end; k++ {
		e := in.at(k)
		if ops.at(int(e.p)).dev != dv {
			freed += s.releaseCopy(e.t, dv)
			continue
		}
		t := int(e.t)
		rt := tref.at(t)
		r := *rt - 1
		*rt = r
		b := m.memOf(t)
		if r != 0 {
			b = 0
		}
		freed += b
	}
	for t, tend := int(*mr.outStart.at(v)), int(*mr.outStart.at(v + 1)); t < tend; t++ {
		var mask uint64
		local := int32(0)
		for j, ce := int(*consStart.at(t)), int(*consStart.at(t + 1)); j < ce; j++ {
			co := ops.at(int(*cons.at(j)))
			if co.dev != dv {
				mask |= 1 << (uint(co.dev) & 63)
			} else {
				local++
				s.signal(int(co.unit), now)
			}
		}
		ref := local
		if mask != 0 {
			ref += s.send(int32(t), int32(v), dv, mask, now, transferPrio)
		}
		*tref.at(t) = ref
		if ref == 0 {
			freed += m.memOf(t)
		}
	}
	if fl&ctrlOut != 0 {
		s.signalControl(int32(v), int32(v), now)
	}
	s.mem[dv] -= freed
	s.record(dv, now)
}

// releaseCopy releases a consumer's hold on the copy of tensor t received
// on device dv and returns the bytes freed.
func (s *Simulator) releaseCopy(t, dv int32) int64 {
	x := s.findXfer(t, dv)
	s.xs[x].ref--
	if s.xs[x].ref == 0 {
		return s.m.tBytes[t]
	}
	return 0
}

// send queues the transfers of tensor t, made by op prod on device src,
// to the devices of mask, and returns their number.
func (s *Simulator) send(t, prod, src int32, mask uint64, now float64, transferPrio []int) int32 {
	s.xbase[t] = int32(len(s.xs))
	n := int32(bits.OnesCount64(mask))
	for mask != 0 {
		dst := int32(bits.TrailingZeros64(mask))
		mask &= mask - 1
		s.newTransfer(t, prod, src, dst, now, transferPrio)
	}
	return n
}

// signalControl signals the control successors of op v outside unit u.
func (s *Simulator) signalControl(v, u int32, now float64) {
	m := s.m
	for _, c := range m.cout[m.coutStart[v]:m.coutStart[v+1]] {
		if cu := s.ops[c].unit; cu != u {
			s.signal(int(cu), now)
		}
	}
}

// finishUnit releases the external inputs of fused kernel u, sends or
// hands over its stored outputs, and wakes its successors, as listed by
// initUnit. (finishOp is the same for an op that runs alone.)
func (s *Simulator) finishUnit(u int, now float64, transferPrio []int) {
	m := s.m
	ops, tref, planIn, planOut := s.r.ops, s.r.tref, s.r.planIn, s.r.planOut
	dv := ops.at(u).dev
	s.finished++
	us := s.r.units.at(int(*s.r.uslot.at(u)))
	freed := us.temp
	pin, pout := int(us.pin), int(us.pout)
	for k, end := pin+1, pin+1+int(*planIn.at(pin)); k < end; k++ {
		x := *planIn.at(k)
		if x < 0 { // a copy received
			freed += s.releaseCopy(^x, dv)
			continue
		}
		t := int(x)
		rt := tref.at(t)
		r := *rt - 1
		*rt = r
		b := m.memOf(t)
		if r != 0 {
			b = 0
		}
		freed += b
	}
	for k, end := pout+1, pout+1+int(*planOut.at(pout)); k < end; {
		v, t := *planOut.at(k), *planOut.at(k + 1)
		if t < 0 {
			s.signalControl(v, int32(u), now)
			k += 2
			continue
		}
		mask := uint64(uint32(*planOut.at(k + 2))) | uint64(uint32(*planOut.at(k + 3)))<<32
		local := *planOut.at(k + 4)
		k += 5
		for lend := k + int(local); k < lend; k++ {
			s.signal(int(*planOut.at(k)), now)
		}
		ref := local
		if mask != 0 {
			ref += s.send(t, v, dv, mask, now, transferPrio)
		}
		*tref.at(int(t)) = ref
		if ref == 0 {
			freed += m.memOf(int(t))
		}
	}
	s.mem[dv] -= freed
	s.record(dv, now)
}

// signal satisfies one dependency of kernel u; the last one queues it.
func (s *Simulator) signal(u int, now float64) {
	if o := &s.ops[u]; o.pending > 1 { // (a raw view here would make signal too big to inline)
		o.pending--
		return
	}
	s.signalSlow(u, now)
}

// signalSlow is signal for a kernel not set up yet or becoming ready.
func (s *Simulator) signalSlow(u int, now float64) {
	if int32(u) >= s.pfNext {
		s.warm(int32(u))
	}
	o := s.r.ops.at(u)
	if o.pending == notReady {
		s.initUnit(u)
	}
	o.pending--
	if o.pending != 0 {
		return
	}
	e := s.readyEntry(int32(u), now)
	r := &s.rs[o.dev]
	if !r.fifo || int(r.n) == len(r.q) {
		s.push(o.dev, e)
		return
	}
	r.pushFIFO(e)
	s.listDirty(r, o.dev)
}

// Cache warming. The simulation runs roughly in topological order, which
// is the ops' numbering, but at several points at once (one per device),
// and what it reads of an op is spread over a dozen arrays, some 10 MB for
// 80,000 ops: left alone, nearly every first touch of an op's data misses
// the caches, one dependent miss after another (the member list of a
// group, then each member's edges, then the ops at their ends). warm reads
// ahead of the front instead, a block of ops at a time and one load per
// cache line, in loops whose loads do not depend on one another, so that
// the misses overlap and the hardware prefetchers see plain streams; the
// data is then in the core's cache when the event loop gets to it. Every
// op is warmed at most once per run, and a kernel signalled far ahead of
// the front (an op of high number whose inputs are all early) moves the
// warming forward by at most two leads, so that the cost stays bounded by
// one pass over the arrays whatever the graph.
const (
	warmLead = 1024 // ops warmed ahead of the front: about 150 KB here, well inside a core's L2
	// Ops warmed at a time: the lead runs from warmLead-warmBlock to
	// warmLead. Blocks of 512 or 768 ran 3% faster than 256 (fewer,
	// longer bursts of misses in flight), 1024 and 64 no faster.
	warmBlock = 512
)

// warm warms the data of the ops up to warmLead past op u, the highest
// kernel signalled yet.
func (s *Simulator) warm(u int32) {
	m := s.m
	a := s.pfEnd
	b := min(int32(m.n), min(u, a+warmLead)+warmLead)
	s.pfEnd, s.pfNext = b, b-warmLead+warmBlock
	if a >= b {
		return
	}
	var x int64
	for v := a; v < b; v += 4 {
		x += m.cost[v].bytes
	}
	for v := a; v < b; v += 4 {
		x += int64(s.ops[v].pending)
	}
	for v := a; v < b; v += 16 {
		x += int64(m.inStart[v]) + int64(m.outStart[v]) + int64(m.flags[v]) + int64(s.uslot[v])
	}
	for k := m.inStart[a]; k < m.inStart[b]; k += 8 {
		x += int64(m.in[k].t)
	}
	ta, tb := m.outStart[a], m.outStart[b]
	for t := ta; t < tb; t += 8 {
		x += m.tBytes[t]
	}
	for t := ta; t < tb; t += 16 {
		x += int64(m.consStart[t]) + int64(s.tref[t])
	}
	for k := m.consStart[ta]; k < m.consStart[tb]; k += 16 {
		x += int64(m.cons[k])
	}
	s.sink += x
}

// b2i is 1 for true, 0 for false (compiled without a branch).
func b2i(b bool) int32 {
	var i int32
	if b {
		i = 1
	}
	return i
}

// findXfer finds the transfer of tensor t to device dst.
func (s *Simulator) findXfer(t int32, dst int32) int32 {
	x := s.xbase[t]
	for s.xs[x].dst != dst {
		x++
	}
	return x
}

// newTransfer queues the transfer of tensor t, made by op prod, from src to dst.
func (s *Simulator) newTransfer(t, prod, src, dst int32, now float64, transferPrio []int) {
	m := s.m
	x := int32(len(s.xs))
	s.xs = append(s.xs, xfer{t: t, src: src, dst: dst})
	prio := int32(0)
	if transferPrio != nil {
		prio = int32(transferPrio[int(m.tOrig[t])*m.d+int(dst)])
	}
	e := makeEntry(now, prio, prod, int32(m.n)+x)
	if m.Opts.SyncTransfers {
		s.push(src, e)
	} else {
		s.push(int32(m.d)+m.Cluster.Channel[int(src)*m.d+int(dst)], e)
	}
}

// arrive: transfer x has landed on its destination.
func (s *Simulator) arrive(x int32, now float64) {
	m := s.m
	xf := s.xs[x]
	t := xf.t
	s.tref[t]--
	if s.tref[t] == 0 {
		s.mem[xf.src] -= m.memOf(int(t))
	}
	ref := int32(0)
	for _, c := range m.consumers(t) {
		if o := s.ops[c]; o.dev == xf.dst {
			ref++
			s.signal(int(o.unit), now)
		}
	}
	s.xs[x].ref = ref
	s.record(xf.src, now)
}

// dispatchSync is dispatch for synchronous transfers: a device whose next
// task is a transfer holds it until the receiver is idle; then both run it.
func (s *Simulator) dispatchSync(now float64) {
	m := s.m
	n := int32(m.n)
	s.clearDirty()
	for changed := true; changed; {
		changed = false
		for dv := int32(0); dv < int32(m.d); dv++ {
			if s.rs[dv].running >= 0 {
				continue
			}
			if s.hold[dv] < 0 {
				if s.rs[dv].n == 0 {
					continue
				}
				task := s.pop(dv)
				if task < n {
					s.startUnit(dv, task, now)
					changed = true
					continue
				}
				s.hold[dv] = task
			}
			x := s.hold[dv] - n
			r := s.xs[x].dst
			if s.rs[r].running >= 0 {
				continue
			}
			s.hold[dv] = -1
			s.startTransfer(dv, x, now)
			s.rs[r].running = s.rs[dv].running
			changed = true
		}
	}
	s.clearDirty()
}

func (s *Simulator) clearDirty() {
	s.dirty = s.dirty[:0]
	for k := range s.rs {
		s.rs[k].dirty = false
	}
}

// startUnit starts kernel u on device dv: it allocates the kernel's
// memory and adds the event of its end. (loopSync's; loopAsync, the loop
// of every default evaluation, writes it out.)
func (s *Simulator) startUnit(dv int32, u int32, now float64) {
	dur, alloc := s.costOf(int(u))
	t := s.charge(dv, u, dur, alloc, now)
	s.evPush(dv, t)
	if s.rec != nil {
		s.recordKernel(dv, u, now, t)
	}
}

// charge gives device dv kernel u from now on, lasting dur and
// allocating alloc bytes, and returns when the kernel ends.
func (s *Simulator) charge(dv, u int32, dur float64, alloc int64, now float64) float64 {
	mem := s.mem[dv] + alloc
	s.mem[dv] = mem
	s.peak[dv] = max(s.peak[dv], mem)
	s.busy[dv] += dur
	s.rs[dv].running = u
	return now + dur
}

// recordKernel reports kernel u, run on device dv from start to end, and
// the memory it allocated, to the recorder.
func (s *Simulator) recordKernel(dv, u int32, start, end float64) {
	s.recordMemory(dv, start)
	s.members = s.members[:0]
	v := u
	for {
		s.members = append(s.members, s.m.orig[v])
		v = s.ops[v].next
		if v == u {
			break
		}
	}
	s.rec.Kernel(int(dv), s.members, start, end)
}

// startTransfer starts transfer x on resource res (a channel, or in
// synchronous mode the sending device).
func (s *Simulator) startTransfer(res int32, x int32, now float64) {
	m := s.m
	xf := s.xs[x]
	t, src, dst := xf.t, xf.src, xf.dst
	bytes := m.tBytes[t]
	dur := -1.0
	if m.anyXfer {
		dur = m.tXfer[t]
	}
	if dur < 0 {
		dur = m.Cluster.TransferTime(int(src), int(dst), bytes)
	}
	s.alloc(dst, bytes)
	s.record(dst, now)
	s.rs[res].running = int32(m.n) + x
	s.evPush(res, now+dur)
	s.res.BytesMoved += bytes
	s.res.Transfers++
	s.res.LinkBytes[int(src)*m.d+int(dst)] += bytes
	if s.rec != nil {
		ch := int(m.Cluster.Channel[int(src)*m.d+int(dst)])
		s.rec.Transfer(ch, int(src), int(dst), int(m.tOrig[t]), bytes, now, now+dur)
	}
}

func (s *Simulator) fillResult(device []int) {
	m := s.m
	d := m.d
	r := &s.res
	r.DeviceBusy = growF(r.DeviceBusy, d)
	r.PeakMemory = growI(r.PeakMemory, d)
	r.Capacity = growI(r.Capacity, d)
	r.OOM = false
	for k := 0; k < d; k++ {
		r.DeviceBusy[k] = s.busy[k]
		r.PeakMemory[k] = s.peak[k]
		r.Capacity[k] = m.Cluster.Hardware.Memory
		if !m.Opts.IgnoreMemory && s.peak[k] > r.Capacity[k] {
			r.OOM = true
		}
	}
	r.Kernels = s.kernels
	r.ColocationViolations = s.colocViolations(device)
}

func (s *Simulator) colocViolations(device []int) int {
	g := s.m.G
	k := g.NumColocationGroups()
	if k == 0 {
		return 0
	}
	if cap(s.bucket) < k {
		s.bucket = make([]int32, k)
	}
	first := s.bucket[:k]
	for i := range first {
		first[i] = -1
	}
	bad := 0
	for _, i := range s.m.colocOps {
		c, dv := g.Colocation(int(i)), int32(device[i])
		if first[c] < 0 {
			first[c] = dv
		} else if first[c] != dv {
			bad++
		}
	}
	return bad
}

func growF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func growI(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}
