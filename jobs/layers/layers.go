package layers

import (
	"errors"
	"fmt"
	"io"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/report/plans"
)

// LayersOptions are placer report layers'.
type LayersOptions struct {
	// Measured is the file of measured blocks (published.ReadMeasuredLayers).
	Measured string
	// Steps is a kernelbench file whose whole one-GPU steps and their
	// parts are checked too (published.ReadMeasuredSteps); "": none.
	Steps string
	// Cluster is the pod whose kernels predict them ("" = dgx-h100).
	Cluster string
}

// Layers is placer report layers: each measured block against the pod's
// prediction of it, and the GEMM efficiency the blocks give (the fit,
// with each block's leave-one-out error).
func Layers(o LayersOptions) (plans.Layers, error) {
	if o.Measured == "" && o.Steps == "" {
		return plans.Layers{}, fail.Usagef("--measured: a file of measured blocks is required (or --kernelbench, a kernelbench file)")
	}
	cluster := o.Cluster
	if cluster == "" {
		cluster = "dgx-h100"
	}
	p, err := plan.ParsePod(cluster)
	if err != nil {
		return plans.Layers{}, fail.Usagef("--cluster: %w", err)
	}
	// The blocks and kernels were timed in bursts on a rested GPU: they
	// are predicted at the same clock, the pod's power limit left out.
	p = p.AtBurst()
	rep := plans.Layers{Measured: o.Measured, StepsFile: o.Steps, Cluster: p.Name, GEMMEff: p.Hardware.ComputeEff[graph.ClassMatMul]}
	if o.Steps != "" {
		if err := kernelBench(&rep, o.Steps, &p); err != nil {
			return plans.Layers{}, err
		}
	}
	if o.Measured == "" {
		return rep, nil
	}
	layers, err := readFile(o.Measured, published.ReadMeasuredLayers)
	if err != nil {
		return plans.Layers{}, err
	}
	if rep.Layers, err = published.CheckLayers(layers, p); err != nil {
		return plans.Layers{}, fmt.Errorf("%s: %w", o.Measured, err)
	}
	fit, err := published.FitGEMM(layers, p)
	if err != nil {
		return plans.Layers{}, fmt.Errorf("%s: %w", o.Measured, err)
	}
	rep.Fit = &fit
	return rep, nil
}

// readFile opens name and reads it with read; its errors name the file.
// kernelBench checks what kernelbench file name holds against pod p:
// whole steps (its between section), attention cases, the MoE layer's
// glue, whole eager MoE layers (moehost); a file with none of them is an
// error.
func kernelBench(rep *plans.Layers, name string, p *plan.Pod) error {
	steps, err := readFile(name, published.ReadMeasuredSteps)
	if err != nil && !errors.Is(err, published.ErrNoSteps) {
		return err
	}
	if len(steps) > 0 {
		if rep.Steps, err = published.CheckSteps(steps, *p); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	attn, err := readFile(name, kernels.ReadAttentionBench)
	if err != nil {
		return err
	}
	if len(attn) > 0 {
		if rep.Attention, err = kernels.CheckAttention(attn, p.Kernels); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	moe, err := readFile(name, published.ReadMoEBench)
	if err != nil {
		return err
	}
	rep.MoE = published.CheckMoE(moe, p)
	host, err := readFile(name, published.ReadMoEHostBench)
	if err != nil {
		return err
	}
	rep.MoEHost = published.CheckMoEHost(host, p)
	if len(rep.Steps) == 0 && len(rep.Attention) == 0 && len(rep.MoE) == 0 && len(rep.MoEHost) == 0 {
		return fmt.Errorf("%s: no whole steps, attention cases, MoE parts or MoE layers (kernelbench's between, attention, moe and moehost sections)", name)
	}
	return nil
}

func readFile[T any](name string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := bounded.Open(name, bounded.Decision, "a measurements file")
	if err != nil {
		return zero, err
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}
