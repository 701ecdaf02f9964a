package policy

import (
	"fmt"
	"math"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn/graphsage"
)

// Input is a graph prepared for the policy on a cluster of a given size:
// its nodes (ops or co-location groups), normalized features and sampled
// neighbourhoods. Preparing is deterministic (the neighbour sample is
// seeded by the policy's seed), so every forward pass on the same Input
// computes the same function. An Input may be shared by concurrent forward
// passes, but not while SetInitial changes it.
type Input struct {
	g       *graph.Graph
	devices int
	nodes   *graphsage.Nodes
	feats   []float64 // N x NumFeatures
	stats   []float64
	nbrs    [][]int32
	fc      graphsage.FeatureConfig
	nz      graphsage.Normalization
	initial []float64 // N x sum(action sizes) one-hot previous actions; nil = none
	anchor  [][]int32 // per task, each node's previous action (-1 = none); nil = none
	keep    float64   // see WithKeep; 0 = no bias
	sumA    int
	adims   []int
	tasks   []Task
}

// Graph is the graph the input was prepared from.
func (in *Input) Graph() *graph.Graph { return in.g }

// Devices is the cluster's device count.
func (in *Input) Devices() int { return in.devices }

// NumNodes is the number of decision units: ops, or co-location groups
// when the policy coarsens.
func (in *Input) NumNodes() int { return in.nodes.N }

// Nodes returns the decision units and their op membership.
func (in *Input) Nodes() *graphsage.Nodes { return in.nodes }

// Prepare builds the input for graph g on a cluster of devices devices (1
// to Config.MaxDevices). hints holds Config.HintDim cost hints per op, indexed
// by op id (for example each op's roofline time on the target device);
// nil means none.
func (p *Policy) Prepare(g *graph.Graph, devices int, hints []float64) (*Input, error) {
	if g == nil || g.NumOps() == 0 {
		return nil, fmt.Errorf("policy: empty graph")
	}
	return p.prepare(g, devices, hints, graphsage.NewNodes(g, p.cfg.Coarsen))
}

// PrepareUnits is Prepare with the decision units given: unit[op] names
// op's unit (any non-negative ids; ops sharing one form one node and take
// one decision). Units should respect co-location groups, which Config.
// Coarsen would otherwise keep together; unit == nil is Prepare.
func (p *Policy) PrepareUnits(g *graph.Graph, devices int, hints []float64, unit []int32) (*Input, error) {
	if unit == nil {
		return p.Prepare(g, devices, hints)
	}
	if g == nil || g.NumOps() == 0 {
		return nil, fmt.Errorf("policy: empty graph")
	}
	nd, err := graphsage.NewNodesFrom(g, unit)
	if err != nil {
		return nil, err
	}
	return p.prepare(g, devices, hints, nd)
}

func (p *Policy) prepare(g *graph.Graph, devices int, hints []float64, nd *graphsage.Nodes) (*Input, error) {
	cfg := &p.cfg
	if devices < 1 || devices > cfg.MaxDevices {
		return nil, fmt.Errorf("policy: %d devices; this policy serves 1 to %d", devices, cfg.MaxDevices)
	}
	fc := graphsage.FeatureConfig{TypeBuckets: cfg.TypeBuckets, HintDim: cfg.HintDim}
	x, stats, err := graphsage.Features(g, nd, hints, fc, cfg.Normalization)
	if err != nil {
		return nil, err
	}
	tasks, adims := cfg.tasks()
	sumA := 0
	for _, a := range adims {
		sumA += a
	}
	return &Input{
		g: g, devices: devices, nodes: nd, feats: x, stats: stats, fc: fc, nz: cfg.Normalization,
		nbrs:  graphsage.SampleNeighbors(nd, cfg.SageNeighbors, cfg.SageLayers, p.seed),
		sumA:  sumA,
		adims: adims,
		tasks: tasks,
	}, nil
}

// WithHints returns a copy of the input with new cost hints (Config.HintDim
// per op, op-major, as Prepare takes them): the features and graph
// statistics are recomputed, the decision units, neighbour samples and
// the initial decision kept. A method whose hints describe its current
// decision (its schedule) calls it when the decision changes.
func (in *Input) WithHints(hints []float64) (*Input, error) {
	x, stats, err := graphsage.Features(in.g, in.nodes, hints, in.fc, in.nz)
	if err != nil {
		return nil, err
	}
	c := *in
	c.feats, c.stats = x, stats
	return &c, nil
}

// WithInitial returns a copy of the input whose forward passes condition
// on decision d as the previous iteration's actions (GO eq. 2: y(t)
// depends on y(t-1)). A node takes the decision of its first op; fields
// for inactive tasks are ignored, and a nil Priority or Fusion leaves that
// task's previous actions empty. d == nil conditions on nothing.
func (in *Input) WithInitial(d *decision.Decision) (*Input, error) {
	c := *in
	if err := c.SetInitial(d); err != nil {
		return nil, err
	}
	return &c, nil
}

// SetInitial is WithInitial in place; it must not run while a forward pass
// uses the input.
func (in *Input) SetInitial(d *decision.Decision) error {
	if d == nil {
		in.initial, in.anchor = nil, nil
		return nil
	}
	init := make([]float64, in.nodes.N*in.sumA)
	anchor := make([][]int32, len(in.tasks))
	off := 0
	for ti, t := range in.tasks {
		a := in.adims[ti]
		anchor[ti] = make([]int32, in.nodes.N)
		for v := range in.nodes.N {
			act, ok, err := in.action(d, t, v)
			if err != nil {
				return err
			}
			anchor[ti][v] = -1
			if ok {
				init[v*in.sumA+off+act] = 1
				anchor[ti][v] = int32(act)
			}
		}
		off += a
	}
	in.initial, in.anchor = init, anchor
	return nil
}

// WithKeep returns a copy of the input whose distributions lean towards
// the initial decision (WithInitial): each node's initial action gets a
// fixed logit bonus, the same for every node of a task, so large that
// where the network's own logits are all equal the initial action has
// probability keep. The network then learns changes to the initial
// decision on top of copying it, instead of having to learn the copy: a
// sample is the initial decision with about (1-keep) x nodes changes per
// task. keep <= 1/actions (or 0) adds nothing; keep must be below 1. The
// bonus is part of the distribution: log-probabilities, samples and
// gradients of forward passes on the returned input all include it.
func (in *Input) WithKeep(keep float64) (*Input, error) {
	if math.IsNaN(keep) || keep < 0 || keep >= 1 {
		return nil, fmt.Errorf("policy: keep probability %v is outside [0, 1)", keep)
	}
	c := *in
	c.keep = keep
	return &c, nil
}

// Keep is the probability set by WithKeep (0 = none).
func (in *Input) Keep() float64 { return in.keep }

// bonus returns the logit bonus of task ti's initial actions over
// actions choices (see WithKeep), 0 when there is none.
func (in *Input) bonus(ti, actions int) float64 {
	if in.anchor == nil || in.anchor[ti] == nil || actions < 2 || in.keep*float64(actions) <= 1 {
		return 0
	}
	// keep = e^b / (e^b + actions-1)  <=>  b = ln(keep/(1-keep) (actions-1)).
	return math.Log(in.keep / (1 - in.keep) * float64(actions-1))
}

// action returns node v's action for task t in decision d (the action of
// its first op); ok is false when d has no such field.
func (in *Input) action(d *decision.Decision, t Task, v int) (act int, ok bool, err error) {
	op := int(in.nodes.Members(v)[0])
	ti := -1
	for i, tt := range in.tasks {
		if tt == t {
			ti = i
		}
	}
	var field []int
	var name string
	limit := in.adims[ti]
	shift := 0
	switch t {
	case Placement:
		field, name, limit = d.Device, "device", in.devices
	case Scheduling:
		field, name = d.Priority, "priority"
	case Fusion:
		field, name, shift = d.Fusion, "fusion", 1
	}
	if field == nil {
		return 0, false, nil
	}
	if len(field) != in.nodes.NumOps {
		return 0, false, fmt.Errorf("policy: decision %s has %d entries, graph %q has %d ops", name, len(field), in.g.Name(), in.nodes.NumOps)
	}
	act = field[op] + shift
	if act < 0 || act >= limit {
		return 0, false, fmt.Errorf("policy: decision %s of op %q is %d, outside 0..%d", name, in.g.Op(op).Name, field[op], limit-1-shift)
	}
	return act, true, nil
}
