package scale

import (
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
)

// Plan is a strategy resolved against a model and a pod: every degree
// filled in (DP from the GPUs left, the micro-batch size 1 unless named,
// M from the batch).
type Plan struct {
	decision.Strategy
	T, P, D, V int // tensor, pipeline, data-parallel degrees; virtual stages
	MBS, M     int // micro-batch size; micro-batches per replica per step
	// Stages are the layers of each pipeline stage (decision.Strategy's
	// StageLayers: L/P each unless first= or last= say otherwise).
	Stages []int
}

// Resolve checks s against model m on pod p and fills in its degrees.
// Errors are one line naming the field: tp must divide the heads (and
// the key/value heads) and a node's GPUs, pp x vp the layers, tp x pp x
// dp the GPUs, and dp x mbs the batch.
func Resolve(m transformer.Spec, s decision.Strategy, p Pod) (Plan, error) {
	if err := s.Check(); err != nil {
		return Plan{}, err
	}
	if err := m.Check(); err != nil {
		return Plan{}, fmt.Errorf("workload %s: %w", m, err)
	}
	if s.Shard == decision.FullShard || s.Shard == decision.GradShard {
		return Plan{}, fmt.Errorf("strategy %s: shard=%s is not modelled at cluster scale (use distopt=on, ZeRO-1)", s, s.Shard)
	}
	if s.BucketBytes > 0 {
		return Plan{}, fmt.Errorf("strategy %s: bucket is DDP's, for op graphs; at cluster scale gradients are reduced in one overlapped pass", s)
	}
	pl := Plan{Strategy: s, T: s.T(), P: s.P(), V: s.V(), MBS: max(s.MicroBatchSize, 1)}
	n := p.GPUs()
	switch {
	case m.Heads%pl.T != 0:
		return Plan{}, fmt.Errorf("strategy %s: tp=%d does not divide the %d attention heads", s, pl.T, m.Heads)
	case m.KVHeads%pl.T != 0:
		return Plan{}, fmt.Errorf("strategy %s: tp=%d does not divide the %d key/value heads", s, pl.T, m.KVHeads)
	case pl.T > p.PerNode || p.PerNode%pl.T != 0:
		return Plan{}, fmt.Errorf("strategy %s: tp=%d does not divide the %d GPUs of a node (tensor groups stay inside a node)", s, pl.T, p.PerNode)
	case pl.P > m.Layers:
		return Plan{}, fmt.Errorf("strategy %s: pp=%d is more than the %d layers", s, pl.P, m.Layers)
	case s.FirstLayers == 0 && s.LastLayers == 0 && m.Layers%(pl.P*pl.V) != 0:
		return Plan{}, fmt.Errorf("strategy %s: pp=%d x vp=%d does not divide the %d layers", s, pl.P, pl.V, m.Layers)
	case n%(pl.T*pl.P) != 0:
		return Plan{}, fmt.Errorf("strategy %s: tp=%d x pp=%d does not divide the %d GPUs", s, pl.T, pl.P, n)
	}
	stages, err := s.StageLayers(m.Layers)
	if err != nil {
		return Plan{}, fmt.Errorf("strategy %s: %w", s, err)
	}
	for i, l := range stages {
		if l < pl.V {
			return Plan{}, fmt.Errorf("strategy %s: stage %d has %d layers, fewer than vp=%d model chunks", s, i, l, pl.V)
		}
	}
	pl.Stages = stages
	if k := s.RecomputeLayers; k > 0 {
		most := 0
		for _, l := range stages {
			most = max(most, (l+pl.V-1)/pl.V)
		}
		if k > most {
			return Plan{}, fmt.Errorf("strategy %s: recompute-layers=%d is more than the %d layers of a model chunk", s, k, most)
		}
	}
	pl.D = n / (pl.T * pl.P)
	if s.Replicas > 0 && s.Replicas != pl.D {
		return Plan{}, fmt.Errorf("strategy %s: tp=%d x pp=%d x dp=%d is %d GPUs, the cluster has %d", s, pl.T, pl.P, s.Replicas, pl.T*pl.P*s.Replicas, n)
	}
	if m.Batch%(pl.D*pl.MBS) != 0 {
		return Plan{}, fmt.Errorf("strategy %s: the batch of %d is not divisible by dp=%d x mbs=%d", s, m.Batch, pl.D, pl.MBS)
	}
	pl.M = m.Batch / (pl.D * pl.MBS)
	if s.MicroBatches > 0 && s.MicroBatches != pl.M {
		return Plan{}, fmt.Errorf("strategy %s: mb=%d, but the batch of %d over dp=%d x mbs=%d is %d micro-batches", s, s.MicroBatches, m.Batch, pl.D, pl.MBS, pl.M)
	}
	if pl.V > 1 && pl.M%pl.P != 0 {
		return Plan{}, fmt.Errorf("strategy %s: interleaved stages need the %d micro-batches to be a multiple of pp=%d", s, pl.M, pl.P)
	}
	if s.Shard == decision.OptimizerShard && pl.D == 1 {
		return Plan{}, fmt.Errorf("strategy %s: distopt with dp=1: the distributed optimizer shards over data-parallel replicas", s)
	}
	// The resolved strategy, as it is written back.
	pl.Strategy.Tensor, pl.Strategy.Pipeline, pl.Strategy.Replicas = pl.T, pl.P, pl.D
	pl.Strategy.MicroBatchSize, pl.Strategy.MicroBatches = pl.MBS, pl.M
	if pl.V > 1 {
		pl.Strategy.Virtual = pl.V
	}
	if pl.M > 1 && pl.P > 1 && pl.Strategy.Schedule == "" {
		pl.Strategy.Schedule = decision.OneFOneB
	}
	return pl, nil
}

// recomputed is how many layers of stage s recompute their forward in the
// backward: with full recomputation every one, or RecomputeLayers of each
// of its V model chunks (block recomputation); none otherwise.
func (pl Plan) recomputed(s int) float64 {
	if pl.Recompute != decision.FullRecompute {
		return 0
	}
	l := pl.Stages[s]
	if pl.RecomputeLayers > 0 {
		l = min(l, pl.RecomputeLayers*pl.V)
	}
	return float64(l)
}

// groups are where the plan's parallel groups sit, with Megatron-LM's
// rank order (tensor fastest, then data, then pipeline: rank = t + T (d +
// D p)): a tensor group is T consecutive GPUs of one node; a data-parallel
// group strides T; neighbouring stages stride T x D.
func (pl Plan) groups(p Pod) (tp, dp Group, stagesShareNode bool) {
	tp = Group{PerNode: pl.T, Nodes: 1}
	inNode := max(1, p.PerNode/pl.T) // data-parallel ranks per node
	if pl.D <= inNode {
		dp = Group{PerNode: pl.D, Nodes: 1}
	} else {
		dp = Group{PerNode: inNode, Nodes: (pl.D + inNode - 1) / inNode}
	}
	return tp, dp, pl.T*pl.D < p.PerNode
}

// String writes the plan as decision.ParseStrategy reads it, degrees
// first: "tp=8,pp=16,dp=48,vp=7,mbs=1,sp=on,distopt=on" (the
// micro-batches and the 1F1B schedule follow from it).
func (pl Plan) String() string {
	s := fmt.Sprintf("tp=%d,pp=%d,dp=%d", pl.T, pl.P, pl.D)
	if pl.V > 1 {
		s += fmt.Sprintf(",vp=%d", pl.V)
	}
	s += fmt.Sprintf(",mbs=%d", pl.MBS)
	if pl.SequenceParallel {
		s += ",sp=on"
	}
	if pl.TPOverlap {
		s += ",tpoverlap=on"
	}
	if pl.Shard == decision.OptimizerShard {
		s += ",distopt=on"
	}
	if pl.Recompute != decision.NoRecompute {
		s += ",recompute=" + string(pl.Recompute)
	}
	if pl.RecomputeLayers > 0 {
		s += fmt.Sprintf(",recompute-layers=%d", pl.RecomputeLayers)
	}
	if pl.FirstLayers > 0 {
		s += fmt.Sprintf(",first=%d", pl.FirstLayers)
	}
	if pl.LastLayers > 0 {
		s += fmt.Sprintf(",last=%d", pl.LastLayers)
	}
	if pl.P > 1 && pl.Sched() == decision.GPipe {
		s += ",schedule=gpipe"
	}
	return s
}
