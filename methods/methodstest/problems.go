package methodstest

import (
	"math"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/strategy"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/optimize"
)

// NewProblem builds a roofline problem for g on devices GPUs of the
// default hardware (PCIe topology, so any device count works), with the
// device memory set to capacity when it is positive.
func NewProblem(g *graph.Graph, devices int, capacity int64) (*optimize.Problem, error) {
	h, err := roofline.Preset(roofline.DefaultHardware)
	if err != nil {
		return nil, err
	}
	if capacity > 0 {
		h.Memory = capacity
	}
	c, err := roofline.NewCluster(h, devices, "pcie")
	if err != nil {
		return nil, err
	}
	return RooflineProblem(g, c, roofline.Options{})
}

// RooflineProblem builds a problem for g on cluster c that plans with and
// is scored by the roofline model under opts (decisions with replicas
// composed around one replica's simulation, as jobs score them), with
// every task.
func RooflineProblem(g *graph.Graph, c *roofline.Cluster, opts roofline.Options) (*optimize.Problem, error) {
	m, err := roofline.NewModel(g, c, opts)
	if err != nil {
		return nil, err
	}
	return optimize.NewProblem(g, m, strategy.Wrap(m)), nil
}

// Close reports whether a and b agree to a relative 1e-9.
func Close(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))
}
