package regal

import (
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn/graphsage"
	"github.com/placer/placer/optimize"
)

// numHints is the number of per-op cost hints the features carry.
const numHints = 5

// Input is what the network reads of one problem: the node features (one
// node per op, in graphsage's topological numbering) and the neighbour
// samples of each layer.
type Input struct {
	N      int       // nodes (= ops)
	X      []float64 // N x NumFeatures
	Nbrs   [][]int32 // per layer, N x Neighbors
	UnitOf []int32   // op -> node
}

// NumFeatures is the length of a node's feature vector.
func NumFeatures() int { return graphsage.NumFeatures(featureConfig) }

// hints are REGAL A.2's node features that graphsage's own do not carry,
// as graphsage cost hints (op-major, numHints per op): the op's time on
// the problem's devices, the sums of its direct predecessors' and
// successors' times (the runtime features), and the bytes of its input
// and output tensors (the memory features; in units of 1e-9 x bytes so
// that graphsage's log(1 + hint / 1e-6) reads them in KB).
func hints(g *graph.Graph, cost evaluate.CostModel) []float64 {
	n := g.NumOps()
	t := cost.OpTimes()
	h := make([]float64, n*numHints)
	for i := range n {
		row := h[i*numHints : (i+1)*numHints]
		row[0] = t[i]
		for _, p := range g.Preds(i) {
			row[1] += t[p]
		}
		for _, s := range g.Succs(i) {
			row[2] += t[s]
		}
		for _, ti := range g.Inputs(i) {
			row[3] += float64(g.Tensor(int(ti)).Bytes) * 1e-9
		}
		for _, to := range g.Outputs(i) {
			row[4] += float64(g.Tensor(int(to)).Bytes) * 1e-9
		}
	}
	return h
}

// NewInput computes the network's input for p with neighbour samples
// drawn from seed (the same seed gives the same input).
func NewInput(p *optimize.Problem, cfg Config, seed uint64) (*Input, error) {
	cfg = cfg.withDefaults()
	nd := graphsage.NewNodes(p.Graph, false)
	x, _, err := graphsage.Features(p.Graph, nd, hints(p.Graph, p.Cost), featureConfig, graphsage.DefaultNormalization())
	if err != nil {
		return nil, err
	}
	return &Input{N: nd.N, X: x, Nbrs: graphsage.SampleNeighbors(nd, cfg.Neighbors, cfg.Layers, seed), UnitOf: nd.UnitOf}, nil
}
