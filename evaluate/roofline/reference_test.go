package roofline

// This file is a frozen copy of the simulator as it was before the
// performance rewrite (commit 0f8dbac). The tests use it as an oracle: the
// optimized simulator must give the same results and the same timeline.

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
)

// refSimulator evaluates decisions against one Model. It owns all its
// buffers and reuses them, so an evaluation allocates nothing once the
// buffers have grown. A refSimulator is not safe for concurrent use; make one
// per goroutine (Evaluator does).
type refSimulator struct {
	m   *refModel
	rec Recorder

	ops  []refOpState // per op: hot state packed in one cache-friendly record
	prio []int32      // per op, from the decision

	// fusion state, per op (unit = fused group, named by its root op)
	parent, size, extIn, extOut []int32
	order, bucket               []int32
	internal                    []int64
	mat                         []bool // per tensor: materialized in device memory
	fused                       bool

	// per unit
	readyAt  []float64
	uprio    []int32
	utopo    []int32
	udur     []float64
	kernels  int
	finished int

	// per tensor
	refcnt   []int32
	xferBase []int32
	xferCnt  []int8

	// transfers (task ids n+x)
	xT, xSrc, xDst, xRef, xPrio, xTopo []int32
	xReady                             []float64

	// devices and channels: resources 0..d-1 and d..d+ch-1
	running []int32 // task running on the resource, -1 idle
	hold    []int32 // sync mode: transfer a device holds, waiting for its receiver
	heaps   [][]refEntry
	qhead   []int // FIFO mode: index of the first live refEntry of each queue
	fifoDev bool  // device queues are FIFO (no priorities): a sorted ring, not a heap
	fifoCh  bool  // channel queues are FIFO (no transfer priorities)
	dirty   []int32
	isDirty []bool
	mem     []int64
	peak    []int64
	busy    []float64
	lastRec []int64
	evTime  []float64
	evHeap  []int32
	evPos   []int32
	members []int32 // scratch for the recorder
	res     evaluate.Result
}

// refOpState is the per-op state the event loop touches for every op.
type refOpState struct {
	unit    int32 // root op of the op's fused group (itself when unfused)
	dev     int32 // device from the decision
	pending int32 // for a unit root: dependencies not yet satisfied
	next    int32 // next member of the op's group (a circular list)
}

// newRefSimulator returns a simulator for m. rec may be nil.
func newRefSimulator(m *refModel, rec Recorder) *refSimulator {
	n, nt, d := m.n, m.nt, m.d
	ch := m.Cluster.Channels
	r := d + ch
	s := &refSimulator{
		m: m, rec: rec,
		ops: make([]refOpState, n), prio: make([]int32, n),
		parent: make([]int32, n), size: make([]int32, n),
		extIn: make([]int32, n), extOut: make([]int32, n), order: make([]int32, 0, n),
		internal: make([]int64, n), mat: make([]bool, nt),
		readyAt: make([]float64, n),
		uprio:   make([]int32, n), utopo: make([]int32, n), udur: make([]float64, n),
		refcnt: make([]int32, nt), xferBase: make([]int32, nt), xferCnt: make([]int8, nt),
		running: make([]int32, r), hold: make([]int32, d), heaps: make([][]refEntry, r), qhead: make([]int, r),
		isDirty: make([]bool, r), mem: make([]int64, d), peak: make([]int64, d), busy: make([]float64, d), lastRec: make([]int64, d),
		evTime: make([]float64, r), evPos: make([]int32, r),
	}
	return s
}

// Run simulates decision dec and returns the result. The returned Result's
// slices belong to the refSimulator and are overwritten by the next Run: copy
// them (Result.Clone) to keep them.
func (s *refSimulator) Run(dec decision.Decision) (*evaluate.Result, error) {
	m := s.m
	if err := dec.Validate(m.G, m.d); err != nil {
		return nil, err
	}
	for i := 0; i < m.n; i++ {
		s.ops[i].dev = int32(dec.Device[i])
		if dec.Priority != nil {
			s.prio[i] = int32(dec.Priority[i])
		} else {
			s.prio[i] = 0
		}
	}
	s.fifoDev = dec.Priority == nil && (!m.Opts.SyncTransfers || dec.Transfer == nil)
	s.fifoCh = dec.Transfer == nil
	s.fuse(dec.Fusion)
	s.initUnits()
	s.initResources()
	if err := s.loop(dec.Transfer); err != nil {
		return nil, err
	}
	s.fillResult(dec.Device)
	return &s.res, nil
}

// ---------------------------------------------------------------- fusion

func (s *refSimulator) find(i int32) int32 {
	for s.parent[i] != i {
		s.parent[i] = s.parent[s.parent[i]]
		i = s.parent[i]
	}
	return i
}

// fuse forms the fused groups: ops take turns in decreasing fusion
// priority (ties by topological index); an op of a fusible class joins
// the group of each producer on its device with which fusing is legal.
// Legality keeps the graph of groups acyclic with a sufficient test:
// merging A (producer side) into B is allowed when every edge leaving A
// enters B, or every edge entering B leaves A; then no path A -> X -> B
// through a third group can exist.
func (s *refSimulator) fuse(fusion []int) {
	m := s.m
	n := m.n
	for i := 0; i < n; i++ {
		s.parent[i] = int32(i)
		s.size[i] = 1
		s.ops[i].next = int32(i)
		s.internal[i] = 0
	}
	s.fused = fusion != nil
	if !s.fused {
		for t := range s.mat {
			s.mat[t] = true
		}
		return
	}
	g := m.G
	for i := 0; i < n; i++ {
		s.extIn[i] = int32(len(g.Preds(i)))
		s.extOut[i] = int32(len(g.Succs(i)))
	}
	s.fusionOrder(fusion)
	maxSize := m.Opts.maxFusion()
	for _, c := range s.order {
		if !m.fuseCons[c] {
			continue
		}
		for _, t := range g.Inputs(int(c)) {
			p := m.tProd[t]
			if s.ops[p].dev != s.ops[c].dev || !m.fuseProd[p] {
				continue
			}
			a, b := s.find(p), s.find(c)
			if a == b || s.size[a]+s.size[b] > maxSize {
				continue
			}
			var cnt int32
			if s.extOut[a] == 1 || s.extIn[b] == 1 {
				cnt = 1 // the edge p -> c is the only one leaving a or entering b
			} else if cnt = s.edgesBetween(a, b); cnt != s.extOut[a] && cnt != s.extIn[b] {
				continue
			}
			// union: the larger group's root stays root
			root, other := a, b
			if s.size[b] > s.size[a] {
				root, other = b, a
			}
			s.parent[other] = root
			s.size[root] = s.size[a] + s.size[b]
			s.extOut[root] = s.extOut[a] + s.extOut[b] - cnt
			s.extIn[root] = s.extIn[a] + s.extIn[b] - cnt
			s.ops[a].next, s.ops[b].next = s.ops[b].next, s.ops[a].next // splice the circular member lists
		}
	}
	for i := 0; i < n; i++ {
		// Deliberate change from the frozen code, which called s.find(i)
		// and relied on it to leave every op's parent at its root: find
		// halves paths, so an op three or more links below its root kept
		// a parent that was not the root, and initUnits, which reads
		// s.parent as the op's kernel, split a group (a fusion order that
		// merged a long chain from its far end first deadlocked:
		// TestBigKernels).
		s.parent[i] = s.find(int32(i))
	}
	// A tensor whose consumers all sit in its producer's group never
	// reaches device memory.
	for t := range s.mat {
		p := s.parent[m.tProd[t]]
		cons := m.consumers(int32(t))
		mat := len(cons) == 0
		for _, c := range cons {
			if s.parent[c] != p {
				mat = true
			} else {
				s.internal[c] += m.tBytes[t] // read stays on chip
			}
		}
		s.mat[t] = mat
		if !mat {
			s.internal[m.tProd[t]] += m.tBytes[t] // write stays on chip
		}
	}
}

// edgesBetween counts the distinct op pairs (u in a, v in b) with an edge
// u -> v, walking the smaller group.
func (s *refSimulator) edgesBetween(a, b int32) int32 {
	g := s.m.G
	cnt := int32(0)
	if s.size[a] <= s.size[b] {
		u := a
		for {
			for _, v := range g.Succs(int(u)) {
				if s.find(v) == b {
					cnt++
				}
			}
			u = s.ops[u].next
			if u == a {
				break
			}
		}
		return cnt
	}
	v := b
	for {
		for _, u := range g.Preds(int(v)) {
			if s.find(u) == a {
				cnt++
			}
		}
		v = s.ops[v].next
		if v == b {
			break
		}
	}
	return cnt
}

// fusionOrder fills s.order with the ops of non-negative fusion priority,
// highest first, ties in topological order; a counting sort when the
// priorities span a small range (the usual case), a comparison sort
// otherwise.
func (s *refSimulator) fusionOrder(fusion []int) {
	m := s.m
	s.order = s.order[:0]
	lo, hi := math.MaxInt, math.MinInt
	for _, f := range fusion {
		if f < 0 {
			continue
		}
		lo, hi = min(lo, f), max(hi, f)
	}
	if lo > hi {
		return
	}
	span := hi - lo + 1
	if span <= 4*m.n+64 {
		if cap(s.bucket) < span+1 {
			s.bucket = make([]int32, span+1)
		}
		b := s.bucket[:span+1]
		clear(b)
		for _, f := range fusion {
			if f >= 0 {
				b[hi-f+1]++ // bucket 0 = highest priority
			}
		}
		for k := 1; k <= span; k++ {
			b[k] += b[k-1]
		}
		total := int(b[span])
		s.order = s.order[:total]
		for _, v := range m.topo {
			f := fusion[v]
			if f < 0 {
				continue
			}
			k := hi - f
			s.order[b[k]] = v
			b[k]++
		}
		return
	}
	for _, v := range m.topo {
		if fusion[v] >= 0 {
			s.order = append(s.order, v)
		}
	}
	refSortByPriority(s.order, fusion, m.topoPos)
}

// refSortByPriority sorts ops by priority descending, then topological index,
// with an allocation-free heapsort.
func refSortByPriority(ops []int32, prio []int, topoPos []int32) {
	less := func(a, b int32) bool { // a after b in the final order
		if prio[a] != prio[b] {
			return prio[a] < prio[b]
		}
		return topoPos[a] > topoPos[b]
	}
	n := len(ops)
	sift := func(i, n int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			c := l
			if r := l + 1; r < n && less(ops[c], ops[r]) {
				c = r
			}
			if !less(ops[i], ops[c]) {
				return
			}
			ops[i], ops[c] = ops[c], ops[i]
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		sift(i, n)
	}
	for end := n - 1; end > 0; end-- {
		ops[0], ops[end] = ops[end], ops[0]
		sift(0, end)
	}
	// heapsort with a max-heap of "less" leaves ascending order of less,
	// i.e. lowest priority first; reverse it.
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
}

// ------------------------------------------------------------ units

func (s *refSimulator) initUnits() {
	m := s.m
	g := m.G
	n := m.n
	for i := 0; i < n; i++ {
		s.ops[i].unit = s.parent[i]
		s.ops[i].pending = 0
		s.readyAt[i] = 0
		// Deliberate change from the frozen code, which set the root's
		// own values here and so dropped the members of lower index than
		// the root: a group has the highest priority and the lowest
		// topological index of all its ops (docs/performance-model.md).
		s.uprio[i], s.utopo[i] = math.MinInt32, math.MaxInt32
	}
	s.kernels = 0
	for i := 0; i < n; i++ {
		u := s.ops[i].unit
		if int32(i) == u {
			s.kernels++
			if s.size[u] == 1 {
				s.udur[u] = m.opTime[i]
			}
		}
		s.uprio[u] = max(s.uprio[u], s.prio[i])
		s.utopo[u] = min(s.utopo[u], m.topoPos[i])
		for _, p := range m.inP[m.inStart[i]:m.inStart[i+1]] {
			if s.ops[p].unit != u {
				s.ops[u].pending++
			}
		}
		for _, p := range g.ControlPreds(i) {
			if s.ops[p].unit != u {
				s.ops[u].pending++
			}
		}
	}
	if s.fused {
		// Fused kernels: one launch, summed compute, only external bytes.
		for i := 0; i < n; i++ {
			u := s.ops[i].unit
			if int32(i) != u || s.size[u] == 1 {
				continue
			}
			comp, memT := 0.0, 0.0
			v := u
			for {
				comp += m.opCompute[v]
				b := m.opBytes[v] - s.internal[v]
				if b > 0 {
					memT += float64(b) * m.opMemRate[v]
				}
				v = s.ops[v].next
				if v == u {
					break
				}
			}
			s.udur[u] = m.launch + max(comp, memT)
		}
	}
}

func (s *refSimulator) initResources() {
	m := s.m
	d := m.d
	r := len(s.running)
	for k := 0; k < r; k++ {
		s.running[k] = -1
		s.heaps[k] = s.heaps[k][:0]
		s.qhead[k] = 0
		s.isDirty[k] = false
		s.evPos[k] = -1
	}
	s.dirty = s.dirty[:0]
	s.evHeap = s.evHeap[:0]
	for k := 0; k < d; k++ {
		s.hold[k] = -1
		s.mem[k] = 0
		s.busy[k] = 0
	}
	for i := 0; i < m.n; i++ {
		s.mem[s.ops[i].dev] += m.opParam[i]
	}
	for k := 0; k < d; k++ {
		s.peak[k] = s.mem[k]
		s.lastRec[k] = s.mem[k]
		if s.rec != nil {
			s.rec.Memory(k, 0, s.mem[k])
		}
	}
	s.xT, s.xSrc, s.xDst, s.xRef, s.xPrio, s.xReady, s.xTopo = s.xT[:0], s.xSrc[:0], s.xDst[:0], s.xRef[:0], s.xPrio[:0], s.xReady[:0], s.xTopo[:0]
	s.finished = 0
	s.res.BytesMoved, s.res.Transfers = 0, 0
	if cap(s.res.LinkBytes) < d*d {
		s.res.LinkBytes = make([]int64, d*d)
	}
	s.res.LinkBytes = s.res.LinkBytes[:d*d]
	clear(s.res.LinkBytes)
	for _, v := range m.topo {
		if s.ops[v].unit == v && s.ops[v].pending == 0 {
			s.push(int(s.ops[v].dev), v)
		}
	}
}

// ------------------------------------------------------------ queues

// refEntry is a task in a ready queue with its sort key inline, so that heap
// comparisons touch only the heap's own memory.
type refEntry struct {
	ready float64 // ready time
	prio  int32   // higher first
	topo  int32   // lower first
	task  int32   // unit root op, or n + transfer index
}

func (a *refEntry) before(b *refEntry) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.ready != b.ready {
		return a.ready < b.ready
	}
	if a.topo != b.topo {
		return a.topo < b.topo
	}
	return a.task < b.task
}

func (s *refSimulator) push(res int, task int32) {
	var e refEntry
	e.task = task
	if n := int32(s.m.n); task < n {
		e.prio, e.ready, e.topo = s.uprio[task], s.readyAt[task], s.utopo[task]
	} else {
		x := task - n
		e.prio, e.ready, e.topo = s.xPrio[x], s.xReady[x], s.xTopo[x]
	}
	h := append(s.heaps[res], e)
	i := len(h) - 1
	if s.fifo(res) {
		// Keys arrive in nondecreasing ready time; insertion at the tail
		// keeps the ring sorted in O(1) amortized.
		for head := s.qhead[res]; i > head && h[i].before(&h[i-1]); i-- {
			h[i], h[i-1] = h[i-1], h[i]
		}
	} else {
		for i > 0 {
			p := (i - 1) / 2
			if !h[i].before(&h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	s.heaps[res] = h
	if !s.isDirty[res] {
		s.isDirty[res] = true
		s.dirty = append(s.dirty, int32(res))
	}
}

func (s *refSimulator) fifo(res int) bool {
	if res < s.m.d {
		return s.fifoDev
	}
	return s.fifoCh
}

// queued is the number of tasks waiting on resource res.
func (s *refSimulator) queued(res int) int { return len(s.heaps[res]) - s.qhead[res] }

func (s *refSimulator) pop(res int) int32 {
	h := s.heaps[res]
	if s.fifo(res) {
		head := s.qhead[res]
		top := h[head].task
		head++
		if head == len(h) {
			s.heaps[res], s.qhead[res] = h[:0], 0
		} else if head >= 1024 && head > len(h)/2 { // compact
			n := copy(h, h[head:])
			s.heaps[res], s.qhead[res] = h[:n], 0
		} else {
			s.qhead[res] = head
		}
		return top
	}
	top := h[0].task
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		c := l
		if r := l + 1; r < len(h) && h[r].before(&h[l]) {
			c = r
		}
		if !h[c].before(&h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	s.heaps[res] = h
	return top
}

// event heap: resources ordered by (finish time, resource id)
func (s *refSimulator) evLess(a, b int32) bool {
	if s.evTime[a] != s.evTime[b] {
		return s.evTime[a] < s.evTime[b]
	}
	return a < b
}

func (s *refSimulator) evPush(res int32, t float64) {
	s.evTime[res] = t
	s.evHeap = append(s.evHeap, res)
	i := len(s.evHeap) - 1
	s.evPos[res] = int32(i)
	h := s.evHeap
	for i > 0 {
		p := (i - 1) / 2
		if !s.evLess(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		s.evPos[h[i]], s.evPos[h[p]] = int32(i), int32(p)
		i = p
	}
}

func (s *refSimulator) evPop() int32 {
	h := s.evHeap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	s.evPos[h[0]] = 0
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		c := l
		if r := l + 1; r < len(h) && s.evLess(h[r], h[l]) {
			c = r
		}
		if !s.evLess(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		s.evPos[h[i]], s.evPos[h[c]] = int32(i), int32(c)
		i = c
	}
	s.evHeap = h
	s.evPos[top] = -1
	return top
}

// ------------------------------------------------------------ memory

func (s *refSimulator) alloc(dev int32, bytes int64, now float64) {
	if bytes == 0 {
		return
	}
	s.mem[dev] += bytes
	if s.mem[dev] > s.peak[dev] {
		s.peak[dev] = s.mem[dev]
	}
}

func (s *refSimulator) free(dev int32, bytes int64, now float64) {
	if bytes == 0 {
		return
	}
	s.mem[dev] -= bytes
}

// record reports device dev's memory to the recorder when it changed.
func (s *refSimulator) record(dev int32, now float64) {
	if s.rec != nil && s.mem[dev] != s.lastRec[dev] {
		s.lastRec[dev] = s.mem[dev]
		s.rec.Memory(int(dev), now, s.mem[dev])
	}
}

// ------------------------------------------------------------ the loop

func (s *refSimulator) loop(transferPrio []int) error {
	now := 0.0
	for {
		s.dispatch(now, transferPrio)
		if len(s.evHeap) == 0 {
			break
		}
		now = s.evTime[s.evHeap[0]]
		for len(s.evHeap) > 0 && s.evTime[s.evHeap[0]] == now {
			res := s.evPop()
			s.complete(res, now, transferPrio)
		}
	}
	units := s.kernels
	if s.finished != units {
		return fmt.Errorf("%w: %d of %d kernels ran", ErrDeadlock, s.finished, units)
	}
	s.res.StepTime = now
	return nil
}

// complete handles the end of whatever resource res was running.
func (s *refSimulator) complete(res int32, now float64, transferPrio []int) {
	m := s.m
	n := int32(m.n)
	task := s.running[res]
	s.running[res] = -1
	if !s.isDirty[res] {
		s.isDirty[res] = true
		s.dirty = append(s.dirty, res)
	}
	if task >= n {
		x := task - n
		if m.Opts.SyncTransfers { // the receiver was blocked too
			r := s.xDst[x]
			s.running[r] = -1
			if !s.isDirty[r] {
				s.isDirty[r] = true
				s.dirty = append(s.dirty, r)
			}
		}
		s.arrive(x, now)
		return
	}
	s.finishUnit(task, now, transferPrio)
}

// finishUnit releases the inputs of unit u, sends or hands over its
// outputs, and wakes its successors.
func (s *refSimulator) finishUnit(u int32, now float64, transferPrio []int) {
	m := s.m
	g := m.G
	// Slices hoisted into locals: Go reloads a field through s on every
	// access otherwise, and this is the simulator's hottest loop.
	ops, refcnt, mat := s.ops, s.refcnt, s.mat
	inStart, inT, inP, outStart, outT := m.inStart, m.inT, m.inP, m.outStart, m.outT
	consStart, cons, tBytes, tMem := m.consStart, m.cons, m.tBytes, m.tMem
	dv := ops[u].dev
	s.finished++
	var freed int64
	v := u
	for {
		freed += m.opTemp[v]
		for k := inStart[v]; k < inStart[v+1]; k++ {
			t, p := inT[k], inP[k]
			if ops[p].unit == u {
				continue
			}
			if ops[p].dev == dv {
				refcnt[t]--
				if refcnt[t] == 0 {
					freed += tMem[t]
				}
			} else {
				x := s.findXfer(t, dv)
				s.xRef[x]--
				if s.xRef[x] == 0 {
					freed += tBytes[t]
				}
			}
		}
		for _, t := range outT[outStart[v]:outStart[v+1]] {
			if !mat[t] {
				continue
			}
			var mask uint64
			local := int32(0)
			for _, c := range cons[consStart[t]:consStart[t+1]] {
				cu := ops[c].unit
				if cu == u {
					continue
				}
				if dc := ops[c].dev; dc == dv {
					local++
					s.signal(cu, now)
				} else {
					mask |= 1 << uint(dc)
				}
			}
			remote := int32(bits.OnesCount64(mask))
			refcnt[t] = local + remote
			if refcnt[t] == 0 {
				freed += tMem[t]
			}
			if remote > 0 {
				s.xferBase[t] = int32(len(s.xT))
				s.xferCnt[t] = int8(remote)
				for mask != 0 {
					dst := int32(bits.TrailingZeros64(mask))
					mask &= mask - 1
					s.newTransfer(t, dv, dst, now, transferPrio)
				}
			}
		}
		for _, c := range g.ControlSuccs(int(v)) {
			if cu := ops[c].unit; cu != u {
				s.signal(cu, now)
			}
		}
		v = ops[v].next
		if v == u {
			break
		}
	}
	s.mem[dv] -= freed
	s.record(dv, now)
}

func (s *refSimulator) signal(u int32, now float64) {
	s.ops[u].pending--
	if s.ops[u].pending == 0 {
		s.readyAt[u] = now
		s.push(int(s.ops[u].dev), u)
	}
}

func (s *refSimulator) findXfer(t int32, dst int32) int32 {
	base := s.xferBase[t]
	for x := base; x < base+int32(s.xferCnt[t]); x++ {
		if s.xDst[x] == dst {
			return x
		}
	}
	panic("roofline: internal error: missing transfer") // unreachable for a consistent simulation
}

func (s *refSimulator) newTransfer(t, src, dst int32, now float64, transferPrio []int) {
	m := s.m
	x := int32(len(s.xT))
	s.xT = append(s.xT, t)
	s.xSrc = append(s.xSrc, src)
	s.xDst = append(s.xDst, dst)
	s.xRef = append(s.xRef, 0)
	p := int32(0)
	if transferPrio != nil {
		p = int32(transferPrio[int(t)*m.d+int(dst)])
	}
	s.xPrio = append(s.xPrio, p)
	s.xReady = append(s.xReady, now)
	s.xTopo = append(s.xTopo, m.topoPos[m.tProd[t]])
	task := int32(m.n) + x
	if m.Opts.SyncTransfers {
		s.push(int(src), task)
	} else {
		ch := int(m.Cluster.Channel[int(src)*m.d+int(dst)])
		s.push(m.d+ch, task)
	}
}

// arrive: transfer x has landed on its destination.
func (s *refSimulator) arrive(x int32, now float64) {
	m := s.m
	t, src, dst := s.xT[x], s.xSrc[x], s.xDst[x]
	s.refcnt[t]--
	if s.refcnt[t] == 0 {
		s.free(src, m.tMem[t], now)
	}
	ref := int32(0)
	for _, c := range m.consumers(int32(t)) {
		if s.ops[c].dev == dst {
			ref++
			s.signal(s.ops[c].unit, now)
		}
	}
	s.xRef[x] = ref
	s.record(src, now)
}

// dispatch starts work on every idle resource that has some.
func (s *refSimulator) dispatch(now float64, transferPrio []int) {
	m := s.m
	if m.Opts.SyncTransfers {
		s.dispatchSync(now)
		return
	}
	for len(s.dirty) > 0 {
		res := s.dirty[len(s.dirty)-1]
		s.dirty = s.dirty[:len(s.dirty)-1]
		s.isDirty[res] = false
		if s.running[res] >= 0 || s.queued(int(res)) == 0 {
			continue
		}
		task := s.pop(int(res))
		if int(res) < m.d {
			s.startUnit(res, task, now)
		} else {
			s.startTransfer(res, task-int32(m.n), now)
		}
	}
}

// dispatchSync is dispatch for synchronous transfers: a device whose next
// task is a transfer holds it until the receiver is idle; then both run it.
func (s *refSimulator) dispatchSync(now float64) {
	m := s.m
	n := int32(m.n)
	s.dirty = s.dirty[:0]
	for k := range s.isDirty {
		s.isDirty[k] = false
	}
	for changed := true; changed; {
		changed = false
		for dv := int32(0); dv < int32(m.d); dv++ {
			if s.running[dv] >= 0 {
				continue
			}
			if s.hold[dv] < 0 {
				if s.queued(int(dv)) == 0 {
					continue
				}
				task := s.pop(int(dv))
				if task < n {
					s.startUnit(dv, task, now)
					changed = true
					continue
				}
				s.hold[dv] = task
			}
			x := s.hold[dv] - n
			r := s.xDst[x]
			if s.running[r] >= 0 {
				continue
			}
			s.hold[dv] = -1
			s.startTransfer(dv, x, now)
			s.running[r] = s.running[dv]
			changed = true
		}
	}
	s.dirty = s.dirty[:0]
	for k := range s.isDirty {
		s.isDirty[k] = false
	}
}

func (s *refSimulator) startUnit(dv int32, u int32, now float64) {
	m := s.m
	ops, mat, tMem, outStart, outT := s.ops, s.mat, m.tMem, m.outStart, m.outT
	var bytes int64
	v := u
	for {
		bytes += m.opTemp[v]
		for _, t := range outT[outStart[v]:outStart[v+1]] {
			if mat[t] {
				bytes += tMem[t]
			}
		}
		v = ops[v].next
		if v == u {
			break
		}
	}
	s.alloc(dv, bytes, now)
	s.record(dv, now)
	dur := s.udur[u]
	s.busy[dv] += dur
	s.running[dv] = u
	s.evPush(dv, now+dur)
	if s.rec != nil {
		s.members = s.members[:0]
		v := u
		for {
			s.members = append(s.members, v)
			v = ops[v].next
			if v == u {
				break
			}
		}
		s.rec.Kernel(int(dv), s.members, now, now+dur)
	}
}

// startTransfer starts transfer x on resource res (a channel, or in
// synchronous mode the sending device).
func (s *refSimulator) startTransfer(res int32, x int32, now float64) {
	m := s.m
	t, src, dst := s.xT[x], s.xSrc[x], s.xDst[x]
	bytes := m.tBytes[t]
	dur := m.tXfer[t]
	if dur < 0 {
		dur = m.Cluster.TransferTime(int(src), int(dst), bytes)
	}
	s.alloc(dst, bytes, now)
	s.record(dst, now)
	s.running[res] = int32(m.n) + x
	s.evPush(res, now+dur)
	s.res.BytesMoved += bytes
	s.res.Transfers++
	s.res.LinkBytes[int(src)*m.d+int(dst)] += bytes
	if s.rec != nil {
		ch := int(m.Cluster.Channel[int(src)*m.d+int(dst)])
		s.rec.Transfer(ch, int(src), int(dst), int(t), bytes, now, now+dur)
	}
}

func (s *refSimulator) fillResult(device []int) {
	m := s.m
	d := m.d
	r := &s.res
	r.DeviceBusy = refGrowF(r.DeviceBusy, d)
	r.PeakMemory = refGrowI(r.PeakMemory, d)
	r.Capacity = refGrowI(r.Capacity, d)
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

func (s *refSimulator) colocViolations(device []int) int {
	g := s.m.G
	k := g.NumColocationGroups()
	if k == 0 {
		return 0
	}
	// reuse order's backing store is not safe (int32 ops); use bucket
	if cap(s.bucket) < k {
		s.bucket = make([]int32, k)
	}
	first := s.bucket[:k]
	for i := range first {
		first[i] = -1
	}
	bad := 0
	for i, dv := range device {
		c := g.Colocation(i)
		if c < 0 {
			continue
		}
		if first[c] < 0 {
			first[c] = int32(dv)
		} else if first[c] != int32(dv) {
			bad++
		}
	}
	return bad
}

func refGrowF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func refGrowI(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// refModel is a graph compiled for a cluster: the per-op costs and flat
// arrays the simulator walks. It is read-only after NewModel and safe for
// concurrent use by many Simulators.
type refModel struct {
	G       *graph.Graph
	Cluster *Cluster
	Opts    Options

	n, nt, d int

	opTime     []float64 // unfused duration, launch included (or the measured time)
	opCompute  []float64 // flops / attainable peak (no launch)
	opMemRate  []float64 // seconds per byte of memory traffic (1 / (bw * eff_mem))
	opBytes    []int64   // bytes read + written
	fuseCons   []bool    // may be fused into a producer (elementwise, reduction, data movement)
	fuseProd   []bool    // may absorb a fusible consumer
	opParam    []int64
	opTemp     []int64
	tBytes     []int64
	tMem       []int64   // memory on the producer's device: 0 for a view (the output of an alias op)
	tXfer      []float64 // measured transfer time, or -1
	consStart  []int32   // tensor -> range in cons
	cons       []int32   // consumers of each tensor
	inStart    []int32   // op -> range in inT/inP
	inT, inP   []int32   // input tensors of each op and their producers
	outStart   []int32   // op -> range in outT
	outT       []int32   // output tensors of each op
	tProd      []int32
	topo       []int32
	topoPos    []int32
	launch     float64
	lbNoFusion float64
	lbFusion   float64
}

// newRefModel compiles graph g for cluster c.
func newRefModel(g *graph.Graph, c *Cluster, opts Options) (*refModel, error) {
	if g == nil || c == nil {
		return nil, fmt.Errorf("roofline: nil graph or cluster")
	}
	if opts.MaxFusion < 0 {
		return nil, fmt.Errorf("roofline: MaxFusion %d is negative", opts.MaxFusion)
	}
	n, nt := g.NumOps(), g.NumTensors()
	h := &c.Hardware
	m := &refModel{
		G: g, Cluster: c, Opts: opts, n: n, nt: nt, d: c.Devices,
		opTime: make([]float64, n), opCompute: make([]float64, n), opMemRate: make([]float64, n),
		opBytes: make([]int64, n), fuseCons: make([]bool, n), fuseProd: make([]bool, n),
		opParam: make([]int64, n), opTemp: make([]int64, n),
		tBytes: make([]int64, nt), tMem: make([]int64, nt), tXfer: make([]float64, nt), tProd: make([]int32, nt),
		topo: g.Topo(), topoPos: make([]int32, n), launch: h.Launch,
	}
	for i := 0; i < n; i++ {
		op := g.Op(i)
		m.topoPos[i] = int32(g.TopoIndex(i))
		m.opParam[i] = op.ParamBytes
		m.opTemp[i] = op.TempBytes
		m.opBytes[i] = op.BytesRead + op.BytesWritten
		m.opMemRate[i] = 1 / (h.MemBandwidth * h.MemEff[op.Class])
		if op.FLOPs > 0 {
			m.opCompute[i] = op.FLOPs / (h.PeakFLOPS(op.Class, op.DType) * h.ComputeEff[op.Class])
		}
		if op.HasTime {
			m.opTime[i] = op.Time
			m.opCompute[i] = op.Time
			continue
		}
		m.opTime[i] = h.Launch + max(m.opCompute[i], float64(m.opBytes[i])*m.opMemRate[i])
		switch op.Class {
		case graph.ClassElementwise, graph.ClassReduction, graph.ClassDataMovement:
			m.fuseCons[i], m.fuseProd[i] = true, true
		case graph.ClassMatMul, graph.ClassConv:
			m.fuseProd[i] = true
		}
	}
	m.consStart = make([]int32, nt+1)
	for t := 0; t < nt; t++ {
		ts := g.Tensor(t)
		m.tBytes[t] = ts.Bytes
		m.tMem[t] = ts.Bytes
		if g.Op(ts.Producer).Alias {
			m.tMem[t] = 0
		}
		m.consStart[t+1] = m.consStart[t] + int32(len(ts.Consumers))
		for _, c := range ts.Consumers {
			m.cons = append(m.cons, int32(c))
		}
		m.tProd[t] = int32(ts.Producer)
		m.tXfer[t] = -1
		if ts.HasTransferTime {
			m.tXfer[t] = ts.TransferTime
		}
	}
	m.inStart = make([]int32, n+1)
	m.outStart = make([]int32, n+1)
	for i := 0; i < n; i++ {
		for _, t := range g.Inputs(i) {
			m.inT = append(m.inT, t)
			m.inP = append(m.inP, m.tProd[t])
		}
		m.inStart[i+1] = int32(len(m.inT))
		m.outT = append(m.outT, g.Outputs(i)...)
		m.outStart[i+1] = int32(len(m.outT))
	}
	return m, nil
}

func (m *refModel) consumers(t int32) []int32 { return m.cons[m.consStart[t]:m.consStart[t+1]] }
