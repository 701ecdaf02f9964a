package gdp

import (
	"math"
	"sort"

	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/gdp/policy"
)

// unitFeatures are go-scored's features of each unit of the search,
// fixed for the run: its row of standardized policy features (from the
// GO network's outputs for the anchor), its placement log probabilities
// (up to the devices) and their entropy, its time, and its neighbours
// with the bytes between.
type unitFeatures struct {
	pf       [][]float32
	place    [][]float32
	placeEnt []float32
	logTime  []float32
	nbrStart []int32
	nbr      []int32
	nbrBytes []float32
	unitByte []float32
}

// zero gives nu units zero network features (Scored.NoNetwork) over nd
// devices.
func (f *unitFeatures) zero(nu, nd int) {
	f.pf = make([][]float32, nu)
	f.place = make([][]float32, nu)
	f.placeEnt = make([]float32, nu)
	for u := range nu {
		f.pf[u] = make([]float32, policyFeatures)
		f.place[u] = make([]float32, nd)
	}
}

// fromNetwork reads the network features of the units (members, each
// unit's ops) off the GO network's output out, whose node of op i is
// nodeOf[i], over nd devices.
func (f *unitFeatures) fromNetwork(out *policy.Output, members [][]int32, nodeOf []int32, nd int) {
	nu := len(members)
	f.pf = make([][]float32, nu)
	f.place = make([][]float32, nu)
	f.placeEnt = make([]float32, nu)
	logp := func(logits []float32) []float32 {
		lp := make([]float32, len(logits))
		m := float32(math.Inf(-1))
		for _, x := range logits {
			m = max(m, x)
		}
		sum := 0.0
		for _, x := range logits {
			if !math.IsInf(float64(x), -1) {
				sum += math.Exp(float64(x - m))
			}
		}
		lse := float64(m) + math.Log(sum)
		for i, x := range logits {
			lp[i] = float32(math.Max(float64(x)-lse, -30))
		}
		return lp
	}
	resample := func(dst, src []float32) {
		for i := range dst {
			dst[i] = src[i*len(src)/len(dst)]
		}
	}
	pl, pcols := out.Logits(policy.Placement)
	pr, prCols := out.Logits(policy.Scheduling)
	fu, fuCols := out.Logits(policy.Fusion)
	for u, ms := range members {
		node := int(nodeOf[ms[0]])
		row := make([]float32, policyFeatures)
		if pr != nil {
			resample(row[0:16], logp(pr[node*prCols:(node+1)*prCols]))
		}
		if fu != nil {
			resample(row[16:32], logp(fu[node*fuCols:(node+1)*fuCols]))
		}
		f.pf[u] = row
		lp := logp(pl[node*pcols : node*pcols+nd])
		f.place[u] = lp
		ent := 0.0
		for _, x := range lp {
			ent -= math.Exp(float64(x)) * float64(x)
		}
		f.placeEnt[u] = float32(ent)
	}
	standardize(f.pf, 0, 32)
}

// build computes the features that do not come from the network: unit
// times, neighbours and the bytes between.
func (f *unitFeatures) build(v classical.SearchView) {
	members := v.Members()
	nu := len(members)
	f.logTime = make([]float32, nu)
	mean := 0.0
	for u := range members {
		mean += v.UnitTime(u) / float64(nu)
	}
	for u := range members {
		f.logTime[u] = float32(math.Log((v.UnitTime(u) + 1e-9) / (mean + 1e-9)))
	}
	f.buildNeighbours(v)
}

// standardize makes columns [lo, hi) of rows zero-mean, unit-variance
// (clipped to +-4).
func standardize(rows [][]float32, lo, hi int) {
	n := float64(len(rows))
	if n == 0 {
		return
	}
	for c := lo; c < hi; c++ {
		m, s := 0.0, 0.0
		for _, r := range rows {
			m += float64(r[c]) / n
		}
		for _, r := range rows {
			d := float64(r[c]) - m
			s += d * d / n
		}
		sd := math.Sqrt(s)
		for _, r := range rows {
			x := 0.0
			if sd > 1e-9 {
				x = (float64(r[c]) - m) / sd
			}
			r[c] = float32(math.Max(-4, math.Min(4, x)))
		}
	}
}

// buildNeighbours lists each unit's neighbour units with the tensor bytes
// between them (a tensor counted once per consuming unit).
func (f *unitFeatures) buildNeighbours(v classical.SearchView) {
	g := v.Problem().Graph
	unitOf := v.UnitOf()
	nu := len(v.Members())
	type edge struct {
		a, b  int32
		bytes float64
	}
	var es []edge
	for t := 0; t < g.NumTensors(); t++ {
		ts := g.Tensor(t)
		pu := unitOf[ts.Producer]
		seen := int32(-1)
		for _, c := range ts.Consumers {
			cu := unitOf[c]
			if cu == pu || cu == seen {
				continue
			}
			seen = cu
			es = append(es, edge{pu, cu, float64(ts.Bytes)}, edge{cu, pu, float64(ts.Bytes)})
		}
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].a != es[j].a {
			return es[i].a < es[j].a
		}
		return es[i].b < es[j].b
	})
	f.nbrStart = make([]int32, nu+1)
	f.unitByte = make([]float32, nu)
	for i := 0; i < len(es); {
		j := i
		sum := 0.0
		for ; j < len(es) && es[j].a == es[i].a && es[j].b == es[i].b; j++ {
			sum += es[j].bytes
		}
		f.nbr = append(f.nbr, es[i].b)
		f.nbrBytes = append(f.nbrBytes, float32(sum))
		f.nbrStart[es[i].a+1]++
		f.unitByte[es[i].a] += float32(sum)
		i = j
	}
	for u := 0; u < nu; u++ {
		f.nbrStart[u+1] += f.nbrStart[u]
	}
}

// write writes move m's unit features into its row x: the policy block,
// for a placement the network's and the loads' view of it (maxLoad the
// most loaded device's time) and the partitioning gain, and the unit's
// time.
func (f *unitFeatures) write(v classical.SearchView, m classical.Move, maxLoad float64, x []float32) {
	u := m.Unit
	copy(x[fPolicy:], f.pf[u][:32])
	if m.Kind == classical.MovePlace {
		x[32] = f.place[u][m.From] / 4
		x[33] = f.place[u][m.To] / 4
		x[34] = f.placeEnt[u]
		load := v.Load()
		ml := maxLoad
		if ml <= 0 {
			ml = 1
		}
		t := v.UnitTime(u)
		x[fPlace] = float32(load[m.From] / ml)
		x[fPlace+1] = float32(load[m.To] / ml)
		x[fPlace+2] = float32(math.Min(t/ml*10, 4))
		x[fPlace+3] = float32(math.Min((load[m.To]+t-ml)/ml*10, 4))
		// The bytes the unit would stop sending (neighbours on To) less
		// those it would start sending (neighbours on From), over its
		// bytes: the partitioning gain of Kernighan-Lin and METIS.
		dev := v.Device()
		members := v.Members()
		gain := 0.0
		for i := f.nbrStart[u]; i < f.nbrStart[u+1]; i++ {
			d := dev[members[f.nbr[i]][0]]
			switch d {
			case m.To:
				gain += float64(f.nbrBytes[i])
			case m.From:
				gain -= float64(f.nbrBytes[i])
			}
		}
		if b := float64(f.unitByte[u]); b > 0 {
			x[fPlace+4] = float32(gain / b)
		}
	}
	x[fUnit] = f.logTime[u] / 4
}

// moveHistory is what earlier moves gave, per unit and kind group
// (placement, priority, fusion): the last target and when (accepted moves
// so far).
type moveHistory struct {
	last    []float32
	lastAt  []int32
	tried   []bool
	accepts int
}

func newMoveHistory(units int) moveHistory {
	return moveHistory{last: make([]float32, 3*units), lastAt: make([]int32, 3*units), tried: make([]bool, 3*units)}
}

// moveGroup is a move kind's group: placement, priority or fusion.
func moveGroup(k classical.MoveKind) int {
	switch k {
	case classical.MovePlace:
		return 0
	case classical.MovePrioLevel, classical.MovePrioFine:
		return 1
	}
	return 2
}

// record keeps y, the target of a move of unit u and kind k, as of now.
func (h *moveHistory) record(u int, k classical.MoveKind, y float32) {
	gi := 3*u + moveGroup(k)
	h.last[gi], h.lastAt[gi], h.tried[gi] = y, int32(h.accepts), true
}

// write writes what earlier moves of m's unit gave into its row x: the
// last of m's kind group, decayed by the accepted moves since, its decay,
// and the best of the unit's groups.
func (h *moveHistory) write(m classical.Move, x []float32) {
	u := m.Unit
	gi := 3*u + moveGroup(m.Kind)
	if h.tried[gi] {
		age := float64(h.accepts - int(h.lastAt[gi]))
		x[fUnit+1] = h.last[gi] * float32(math.Exp(-age/16))
		x[fUnit+2] = float32(math.Exp(-age / 16))
	}
	best := float32(0)
	for k := 0; k < 3; k++ {
		if h.tried[3*u+k] {
			best = max(best, h.last[3*u+k])
		}
	}
	x[fUnit+3] = best
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func abs(x int) int { return max(x, -x) }
