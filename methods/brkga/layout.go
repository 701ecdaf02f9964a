package brkga

import (
	"github.com/placer/placer/optimize"
)

// Layout says where each part of a chromosome lies (REGAL A.5): for a
// graph of o ops and t tensors on d devices, o x d op-device affinities
// (op-major), then o scheduling priorities, then t x d tensor transfer
// priorities (tensor-major), then, when fusion is searched too, o fusion
// priorities. A part the problem's tasks exclude is left out (affinities
// without placement; scheduling and transfer priorities without
// scheduling; fusion priorities without fusion).
type Layout struct {
	Ops, Tensors, Devices         int
	Placement, Scheduling, Fusion bool
}

// NewLayout is the chromosome layout BRKGA uses for p.
func NewLayout(p *optimize.Problem) Layout {
	t := p.EffectiveTasks()
	return Layout{Ops: p.Graph.NumOps(), Tensors: p.Graph.NumTensors(), Devices: p.Devices(),
		Placement: t.Placement && p.Devices() > 1, Scheduling: t.Scheduling, Fusion: t.Fusion}
}

func (l Layout) affinityLen() int {
	if !l.Placement {
		return 0
	}
	return l.Ops * l.Devices
}

func (l Layout) priorityLen() int {
	if !l.Scheduling {
		return 0
	}
	return l.Ops
}

func (l Layout) transferLen() int {
	if !l.Scheduling {
		return 0
	}
	return l.Tensors * l.Devices
}

func (l Layout) fusionLen() int {
	if !l.Fusion {
		return 0
	}
	return l.Ops
}

// Len is the number of genes.
func (l Layout) Len() int {
	return l.affinityLen() + l.priorityLen() + l.transferLen() + l.fusionLen()
}

// Affinity is the index of op's affinity for device dev, or -1 when the
// chromosome has no placement part.
func (l Layout) Affinity(op, dev int) int {
	if !l.Placement {
		return -1
	}
	return op*l.Devices + dev
}

// Priority is the index of op's scheduling priority, or -1.
func (l Layout) Priority(op int) int {
	if !l.Scheduling {
		return -1
	}
	return l.affinityLen() + op
}

// Transfer is the index of the priority of sending tensor to device dev,
// or -1.
func (l Layout) Transfer(tensor, dev int) int {
	if !l.Scheduling {
		return -1
	}
	return l.affinityLen() + l.priorityLen() + tensor*l.Devices + dev
}

// FusionPriority is the index of op's fusion priority, or -1.
func (l Layout) FusionPriority(op int) int {
	if !l.Fusion {
		return -1
	}
	return l.affinityLen() + l.priorityLen() + l.transferLen() + op
}
