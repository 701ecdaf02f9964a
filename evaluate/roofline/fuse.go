package roofline

import "math"

// Fusion: forming the fused kernels of a run.
//
// Ops take turns in decreasing fusion priority (ties by topological
// index); an op of a fusible class joins the group of each producer on
// its device with which fusing is legal. Legality keeps the graph of
// groups acyclic with a sufficient test: merging A (producer side) into B
// is allowed when every edge leaving A enters B, or every edge entering B
// leaves A; then no path A -> X -> B through a third group can exist.
//
// Every op carries the root of its group (groups only ever merge, and the
// smaller one is relabelled, so a lookup is one load), and the members of
// a group form a circular list. A fused group's root is marked notReady:
// initUnit sets it up when it is first needed. fs holds each group's
// state at its root.
//
// The candidates are the Model's fusion pairs (consumer, producer of one
// of its inputs that may absorb it), so the decision only decides the
// order, the devices and the vetoes (a negative priority).

// placeAndFuse places every op on its device, as a kernel of its own, and
// forms the fused kernels. It reports whether every op's device exists
// (Run then asks the decision for the error).
func (s *fusing) placeAndFuse(device []int) bool {
	m := s.m
	s.kernels = m.n
	if s.fusion == nil {
		return s.place(device, 0, int32(m.n))
	}
	if ok, sorted := s.fuseTopological(device); !ok || sorted {
		return ok
	}
	// The priorities are not topological: start again, in their order.
	clear(s.mem)
	if !s.place(device, 0, int32(m.n)) {
		return false
	}
	copy(s.fs[:m.n], m.fuseInit)
	ops, flags := s.r.ops, m.r.flags
	unions := 0
	for _, c32 := range s.fusionOrder() {
		c := int(c32)
		if *flags.at(c)&fuseCons == 0 {
			continue
		}
		oc := ops.at(c)
		for k, end := int(*m.r.fpStart.at(c)), int(*m.r.fpStart.at(c + 1)); k < end; k++ {
			op := ops.at(int(m.r.fpairs.at(k).p))
			if op.dev == oc.dev && op.unit != oc.unit {
				unions += s.union(int(op.unit), int(oc.unit), c)
			}
		}
	}
	s.kernels = m.n - unions
	return true
}

// place puts ops lo..hi-1 on their devices, each a kernel of its own, and
// loads the devices with their parameters. It reports whether every one
// of their devices exists (one that does not is counted as device 0).
func (s *fusing) place(device []int, lo, hi int32) bool {
	m := s.m
	d := m.d
	ops := s.ops[lo:hi]
	param, indeg := m.param[lo:hi], m.indeg[lo:hi]
	mem := s.mem[:d]
	bad := false
	if m.identity {
		device = device[lo:hi]
		for i := range ops {
			dv := device[i]
			if uint(dv) >= uint(d) {
				bad, dv = true, 0
			}
			ops[i] = opState{unit: lo + int32(i), dev: int32(dv), pending: indeg[i], next: lo + int32(i)}
			mem[dv] += param[i]
		}
		return !bad
	}
	orig := m.orig[lo:hi]
	for i := range ops {
		dv := device[orig[i]]
		if uint(dv) >= uint(d) {
			bad, dv = true, 0
		}
		ops[i] = opState{unit: lo + int32(i), dev: int32(dv), pending: indeg[i], next: lo + int32(i)}
		mem[dv] += param[i]
	}
	return !bad
}

// fuseTopological forms the fused kernels when the fusion priorities of
// the ops that may fuse never increase along the topological order (the
// default fusion, decision.TopologicalFusion): the fusion order is then
// the topological order, and one pass over the Model's candidate pairs,
// in order, decides them all. The ops are placed a block at a time just
// ahead of the pass, so that the states it reads were written moments
// before, and what it will read of the next block is loaded meanwhile.
//
// It reports whether every op's device exists and whether the priorities
// were topological; when they are not, it stops at the first that
// increases, and the caller starts again.
func (s *fusing) fuseTopological(device []int) (ok, sorted bool) {
	m := s.m
	n := int32(m.n)
	ok = true
	placed := int32(0) // ops below are placed
	last := math.MaxInt
	unions := 0
	for k, end := 0, len(m.fpairs); k < end; {
		// Place ops far enough ahead of the next pair's consumer, then
		// decide every pair whose consumer is at least fuseAhead ops
		// short of the placed end (all of them once every op is placed).
		if c := m.fpairs[k].c; c >= placed-fuseAhead && placed < n {
			placed, ok = s.placeAhead(device, placed, c, ok)
		}
		stop := end
		if placed < n {
			stop = int(m.fpStart[placed-fuseAhead])
		}
		u, l, sorted := s.fuseBlock(k, stop, last)
		if !sorted {
			return ok, false
		}
		unions, last, k = unions+u, l, stop
	}
	if placed < n {
		ok = s.place(device, placed, n) && ok
		copy(s.fs[placed:n], m.fuseInit[placed:n])
	}
	s.kernels = m.n - unions
	return ok, true
}

const fuseAhead = 256 // ops placed ahead of the fusion pass, a block at a time

// placeAhead places the next block of ops, far enough to hold op c and
// fuseAhead more, sets their lone fusion states, and warms what the
// fusion pass reads of them that placing did not write (see warm). It
// returns the new end of the placed ops and whether all their devices
// exist so far.
func (s *fusing) placeAhead(device []int, placed, c int32, ok bool) (int32, bool) {
	m := s.m
	n := int32(m.n)
	hi := min(n, max(placed, c+1)+fuseAhead)
	ok = s.place(device, placed, hi) && ok
	copy(s.fs[placed:hi], m.fuseInit[placed:hi])
	var x int64
	for v := placed; v < hi; v += 16 {
		x += int64(m.predStart[v]) + int64(m.succStart[v]) + int64(m.fpStart[v])
	}
	for k := m.predStart[placed]; k < m.predStart[hi]; k += 16 {
		x += int64(m.preds[k])
	}
	for k := m.succStart[placed]; k < m.succStart[hi]; k += 16 { // edgesBetween walks them
		x += int64(m.succs[k])
	}
	s.sink += x
	return hi, ok
}

// fuseBlock decides the Model's candidate pairs k0..k1-1, in order, for
// fuseTopological: the consumer c of each joins the group of its producer
// p (union) when both are on one device and in different groups. A
// consumer of negative fusion priority is skipped; one whose priority
// exceeds the one before (last, on the way in) stops the pass. It returns
// the number of merges, the last priority seen, and whether the
// priorities never increased.
//
// Placing is left to the caller, a block at a time: tested for every
// pair inside this loop, with its call, it made the loop save and reload
// its values at every turn (Go's calling convention saves no register),
// 1.6 M instructions per run of the 80,000-op benchmark.
func (s *fusing) fuseBlock(k0, k1, last int) (unions, lastOut int, sorted bool) {
	ops, pairs := s.r.ops, s.m.r.fpairs
	fusion := rawOf(s.fusion)
	for k := k0; k < k1; k++ {
		fp := *pairs.at(k)
		c := int(fp.c)
		f := *fusion.at(c)
		if f < 0 {
			continue
		}
		if f > last {
			return unions, last, false
		}
		last = f
		oc, op := ops.at(c), ops.at(int(fp.p))
		if op.dev == oc.dev && op.unit != oc.unit {
			unions += s.union(int(op.unit), int(oc.unit), c)
		}
	}
	return unions, last, true
}

// union merges group a (holding producer p) and group b (holding its
// consumer c), both on one device, if the size cap and legality allow,
// and returns 1 if it did, 0 if not.
func (s *fusing) union(a, b, c int) int {
	m := s.m
	ops, fs := s.r.ops, s.r.fs
	fa, fb := *fs.at(a), *fs.at(b)
	if fa.size+fb.size > m.Opts.maxFusion() {
		return 0
	}
	cnt := int32(1) // the edge p -> c is the only one leaving a or entering b
	if fa.extOut != 1 && fb.extIn != 1 {
		if fb.size == 1 { // b is c alone: count its predecessors in a
			cnt = 0
			for k, kend := int(*m.r.predStart.at(c)), int(*m.r.predStart.at(c + 1)); k < kend; k++ {
				cnt += b2i(int(ops.at(int(*m.r.preds.at(k))).unit) == a)
			}
		} else {
			cnt = s.edgesBetween(int32(a), int32(b))
		}
		if cnt != fa.extOut && cnt != fb.extIn {
			return 0
		}
	}
	// The larger group's root stays root.
	root, other := a, b
	if fb.size > fa.size {
		root, other = b, a
	}
	for v := other; ; {
		ov := ops.at(v)
		ov.unit = int32(root)
		if v = int(ov.next); v == other {
			break
		}
	}
	*fs.at(root) = fuseState{size: fa.size + fb.size, extIn: fa.extIn + fb.extIn - cnt, extOut: fa.extOut + fb.extOut - cnt}
	oa, ob := ops.at(a), ops.at(b)
	oa.next, ob.next = ob.next, oa.next // splice the circular member lists
	ops.at(root).pending = notReady
	return 1
}

// edgesBetween counts the distinct op pairs (u in a, v in b) with an edge
// u -> v, walking the smaller group.
func (s *fusing) edgesBetween(a, b int32) int32 {
	m := s.m
	if s.fs[a].size <= s.fs[b].size {
		return s.neighboursIn(a, b, m.succStart, m.succs)
	}
	return s.neighboursIn(b, a, m.predStart, m.preds)
}

// neighboursIn counts, over the members of group g, their neighbours in
// the CSR lists (start, list) that belong to group other.
func (s *fusing) neighboursIn(g, other int32, start, list []int32) int32 {
	ops := s.ops
	cnt := int32(0)
	for u := g; ; {
		for _, v := range list[start[u]:start[u+1]] {
			if ops[v].unit == other {
				cnt++
			}
		}
		if u = ops[u].next; u == g {
			return cnt
		}
	}
}

// fusionOrder returns the ops of non-negative fusion priority in fusion
// order: decreasing priority, ties in topological order, in s.order. It
// sorts by counting when the priorities span a small range (the usual
// case), by comparison otherwise.
func (s *fusing) fusionOrder() []int32 {
	m := s.m
	fusion := s.fusion
	lo, hi := math.MaxInt, math.MinInt
	for _, f := range fusion {
		if f >= 0 {
			lo, hi = min(lo, f), max(hi, f)
		}
	}
	s.order = s.order[:0]
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
		if cap(s.order) < total {
			s.order = make([]int32, total)
		}
		s.order = s.order[:total]
		for v, f := range fusion {
			if f < 0 {
				continue
			}
			k := hi - f
			s.order[b[k]] = int32(v)
			b[k]++
		}
		return s.order
	}
	for v, f := range fusion {
		if f >= 0 {
			s.order = append(s.order, int32(v))
		}
	}
	sortByPriority(s.order, fusion)
	return s.order
}

// sortByPriority sorts ops by priority descending, then topological index,
// with an allocation-free heapsort.
func sortByPriority(ops []int32, prio []int) {
	less := func(a, b int32) bool { // a after b in the final order
		if prio[a] != prio[b] {
			return prio[a] < prio[b]
		}
		return a > b
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
