// Cache warming: the read-ahead of the ops' data in front of the event
// loop.

package roofline

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
func (s *simState) warm(u int32) {
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
