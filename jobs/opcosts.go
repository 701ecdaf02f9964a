package jobs

import (
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/report/placements"
)

// opCosts is what the figures of graph g (from the ops profile pr, read
// from path) rest on, placed by dev (one replica's, on c.Devices /
// replicas GPUs): each op that does work measured (its profiled time)
// or modelled (the roofline of c's hardware under opts), alone and
// unfused, per GPU.
//
// Under a strategy that splits the batch (replicas, micro-batches) each
// op runs on a share of the profiled batch, its time scaled linearly from
// the measured one (graph.AtBatch): composed, not measured.
func opCosts(pr *profile.Profile, path string, g *graph.Graph, c *roofline.Cluster, opts roofline.Options, dev []int, st decision.Strategy) (*placements.OpCosts, error) {
	replicas := st.R()
	one, err := roofline.NewCluster(c.Hardware, 1, "")
	if err != nil {
		return nil, err
	}
	m, err := roofline.NewModel(g, one, opts)
	if err != nil {
		return nil, err
	}
	sw := "torch " + pr.Software.Torch
	if pr.Software.CUDA != "" {
		sw += ", CUDA " + pr.Software.CUDA
	}
	if pr.Software.Driver != "" {
		sw += ", driver " + pr.Software.Driver
	}
	rc := &placements.OpCosts{
		Profile: path, Model: pr.Model, Device: fmt.Sprintf("%s %q", pr.Device.Kind, pr.Device.Name), Software: sw,
		Precision: pr.DType, Steps: pr.Ops.Steps, Complete: pr.Complete,
		PerDevice: make([]placements.DeviceCost, c.Devices),
	}
	devices := c.Devices / max(1, replicas)
	for i := range g.NumOps() {
		op := g.Op(i)
		if profile.StateOp(op) {
			continue
		}
		t := m.TimeOf(op)
		for r := range max(1, replicas) {
			k := r*devices + dev[i]
			if k >= len(rc.PerDevice) {
				continue
			}
			if op.HasTime {
				rc.PerDevice[k].Measured += t
			} else {
				rc.PerDevice[k].Modelled += t
			}
		}
		if op.HasTime {
			rc.MeasuredOps++
			rc.Measured += t
		} else {
			rc.ModelledOps++
			rc.Modelled += t
		}
	}
	if b := g.Batch(); b > 0 && st.R()*st.M() > 1 {
		rc.ScaledTo = max(1, (b+st.R()*st.M()-1)/(st.R()*st.M()))
		rc.Batch = b
	}
	rc.StepTime = rc.Source(rc.Measured, rc.Modelled)
	for k := range rc.PerDevice {
		rc.PerDevice[k].Busy = rc.Source(rc.PerDevice[k].Measured, rc.PerDevice[k].Modelled)
	}
	return rc, nil
}
