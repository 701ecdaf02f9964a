package classical

import (
	"github.com/placer/placer/graph"
)

// memPlan tracks the estimated memory the heuristics have put on each
// device while they place ops one at a time. A co-location group reserves
// the memory of all its ops when its first op is placed (its other ops
// have no choice left), as Baechi's m-ETF does.
type memPlan struct {
	g        *graph.Graph
	limit    int64 // 0 = none
	used     []int64
	opMem    []int64
	groupMem []int64
	groupDev []int
}

func newMemPlan(g *graph.Graph, devices int, opMem []int64, limit int64) *memPlan {
	m := &memPlan{g: g, limit: limit, used: make([]int64, devices), opMem: opMem,
		groupMem: make([]int64, g.NumColocationGroups()), groupDev: make([]int, g.NumColocationGroups())}
	for i := range m.groupDev {
		m.groupDev[i] = -1
	}
	for i := 0; i < g.NumOps(); i++ {
		if c := g.Colocation(i); c >= 0 {
			m.groupMem[c] += opMem[i]
		}
	}
	return m
}

// fixed is the device op v must go to (its group's), or -1.
func (m *memPlan) fixed(v int) int {
	if c := m.g.Colocation(v); c >= 0 {
		return m.groupDev[c]
	}
	return -1
}

// need is the memory placing op v adds: its own, its whole group's if the
// group is not placed yet, nothing if it is.
func (m *memPlan) need(v int) int64 {
	c := m.g.Colocation(v)
	switch {
	case c < 0:
		return m.opMem[v]
	case m.groupDev[c] < 0:
		return m.groupMem[c]
	}
	return 0
}

// fits reports whether op v fits on device d.
func (m *memPlan) fits(v, d int) bool {
	return m.limit <= 0 || m.used[d]+m.need(v) <= m.limit
}

// place records op v on device d.
func (m *memPlan) place(v, d int) {
	m.used[d] += m.need(v)
	if c := m.g.Colocation(v); c >= 0 && m.groupDev[c] < 0 {
		m.groupDev[c] = d
	}
}

// roomiest is the device with the most memory left (the lowest index on
// ties).
func (m *memPlan) roomiest() int {
	best := 0
	for d := range m.used {
		if m.used[d] < m.used[best] {
			best = d
		}
	}
	return best
}
