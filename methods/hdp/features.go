package hdp

import (
	"math"
	"slices"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods/rl17"
	"github.com/placer/placer/nn"
)

// NumOpFeatures is the width of an op's numeric input to the grouper: the
// log-sizes of its rl17.ShapeSlots largest output tensors (the zero-padded
// "output shape"), then its adjacency: its topological position, the
// log-counts of its predecessors and successors, and their mean
// topological positions.
const NumOpFeatures = rl17.ShapeSlots + 5

// graphData is what the grouper and the group embeddings read of a graph,
// computed once per run.
type graphData struct {
	ops, types int
	typeOf     []int32   // op -> its type's index
	size       []float64 // op -> rl17.ShapeSlots log-sizes of its largest outputs
	edges      []int32   // producer, consumer pairs of the data edges (one per tensor and consumer)
	// The grouper decides per unit: a co-location group of the graph, or
	// an op in none. Units are numbered in the topological order of
	// their first ops.
	unitOf    []int32   // op -> unit
	unitType  []int32   // unit -> the type of its first op
	unitFeats []float64 // unit -> NumOpFeatures numeric features of its first op
	// cluster is each unit's cluster in [0, groups) for Config.Locality
	// (nil until SetClusters).
	cluster []int32
}

// clusterBy sets each unit's cluster for Config.Locality: its rl17
// co-location group (rl17.Group, op times opTime, nil = every op weighs
// 1) contracted to about groups clusters.
func (d *graphData) clusterBy(g *graph.Graph, opTime []float64, groups int, seed uint64) error {
	gr, err := rl17.Group(g, opTime, groups, seed)
	if err != nil {
		return err
	}
	d.setClusters(gr.Of, gr.N(), groups)
	return nil
}

// setClusters sets each unit's cluster from a grouping of the ops (op ->
// cluster in [0, n), n >= 1) in which co-located ops share a cluster,
// folded into g clusters: clusters numbered in the topological order of
// their first ops, cluster c to c*g/n, so that neighbouring clusters fold
// together when there are more than g.
func (d *graphData) setClusters(of []int32, n, g int) {
	d.cluster = make([]int32, d.units())
	seen := make(map[int32]bool)
	for op, u := range d.unitOf {
		if seen[u] {
			continue
		}
		seen[u] = true
		d.cluster[u] = of[op]
	}
	if n > g {
		for u, c := range d.cluster {
			d.cluster[u] = int32(int(c) * g / n)
		}
	}
}

// units is the number of the grouper's decisions.
func (d *graphData) units() int { return len(d.unitType) }

// logSize scales a tensor size to about [0, 1] as rl17's features do.
func logSize(bytes int64) float64 { return math.Log2(1+float64(bytes)) / 32 }

func newGraphData(g *graph.Graph) *graphData {
	n := g.NumOps()
	var names []string
	for i := range n {
		names = append(names, g.Op(i).Type)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	d := &graphData{ops: n, types: len(names), typeOf: make([]int32, n), size: make([]float64, n*rl17.ShapeSlots), unitOf: make([]int32, n)}
	for i := range n {
		k, _ := slices.BinarySearch(names, g.Op(i).Type)
		d.typeOf[i] = int32(k)
	}
	outs := make([][]float64, n)
	for t := range g.NumTensors() {
		ts := g.Tensor(t)
		if len(ts.Consumers) > 0 {
			outs[ts.Producer] = append(outs[ts.Producer], logSize(ts.Bytes))
		}
		for _, c := range ts.Consumers {
			d.edges = append(d.edges, int32(ts.Producer), int32(c))
		}
	}
	for i, s := range outs {
		slices.Sort(s)
		slices.Reverse(s)
		copy(d.size[i*rl17.ShapeSlots:(i+1)*rl17.ShapeSlots], s)
	}
	pos := func(v int32) float64 {
		if n < 2 {
			return 0
		}
		return float64(g.TopoIndex(int(v))) / float64(n-1)
	}
	meanPos := func(vs []int32, own float64) float64 {
		if len(vs) == 0 {
			return own
		}
		s := 0.0
		for _, v := range vs {
			s += pos(v)
		}
		return s / float64(len(vs))
	}
	colocUnit := map[int]int32{}
	for _, v := range g.Topo() {
		if c := g.Colocation(int(v)); c >= 0 {
			if u, ok := colocUnit[c]; ok {
				d.unitOf[v] = u
				continue
			}
			colocUnit[c] = int32(len(d.unitType))
		}
		d.unitOf[v] = int32(len(d.unitType))
		d.unitType = append(d.unitType, d.typeOf[v])
		p, s := g.Preds(int(v)), g.Succs(int(v))
		own := pos(v)
		f := append(slices.Clone(d.size[int(v)*rl17.ShapeSlots:(int(v)+1)*rl17.ShapeSlots]),
			own, math.Log2(1+float64(len(p)))/8, math.Log2(1+float64(len(s)))/8, meanPos(p, own), meanPos(s, own))
		d.unitFeats = append(d.unitFeats, f...)
	}
	return d
}

// embedDim is the width of a group's embedding with g groups: the
// op-type counts, the summed output sizes, and the edges to and from
// every group.
func (d *graphData) embedDim(g int) int { return d.types + rl17.ShapeSlots + 2*g }

// embed writes the group embeddings of k groupings (grouping[s][unit]) of
// g groups into x, step-major (row t*k + s is sample s's group t): per
// group, HDP's sums over its ops of their type counts and output sizes,
// then the count of data edges from it to each group and from each group
// to it, the row divided by its largest entry plus one (as TensorFlow's
// hierarchical controller normalizes). An empty group's row is zero.
func embed[T nn.Float](d *graphData, g int, groupings [][]int32, x []T) {
	k, e := len(groupings), d.embedDim(g)
	clear(x[:g*k*e])
	row := make([]float64, g*e)
	for s, gs := range groupings {
		clear(row)
		for op := range d.ops {
			c := int(gs[d.unitOf[op]])
			r := row[c*e : (c+1)*e]
			r[d.typeOf[op]]++
			for j, v := range d.size[op*rl17.ShapeSlots : (op+1)*rl17.ShapeSlots] {
				r[d.types+j] += v
			}
		}
		base := d.types + rl17.ShapeSlots
		for i := 0; i < len(d.edges); i += 2 {
			a, b := int(gs[d.unitOf[d.edges[i]]]), int(gs[d.unitOf[d.edges[i+1]]])
			row[a*e+base+b]++
			row[b*e+base+g+a]++
		}
		for t := range g {
			r := row[t*e : (t+1)*e]
			m := 0.0
			for _, v := range r {
				m = max(m, v)
			}
			dst := x[(t*k+s)*e : (t*k+s+1)*e]
			for j, v := range r {
				dst[j] = T(v / (m + 1))
			}
		}
	}
}
