package jobs

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
)

// TestLeaveOneSourceOut: a constant chosen with source A (here the GEMMs'
// efficiency, 0.755 on dgx-h100, said to be chosen with A's rows and
// 0.5 without them) is reset in A's sweep only: A's out-of-sample
// prediction is the row evaluated on a pod whose GEMM efficiency is set
// to 0.5 by hand, its error that over the measured figure, and its mean
// and Spearman those of the reset rows; B's sweep (another source) is the
// same in and out of sample, to the bit, and says no constant was chosen
// with it.
func TestLeaveOneSourceOut(t *testing.T) {
	const w, c = "gpt:layers=4,hidden=1024,heads=16,seq=2048,vocab=32000,batch=64", "dgx-h100:1"
	plans := []string{"tp=1,pp=1,dp=8,mbs=1", "tp=2,pp=1,dp=4,mbs=1,sp=on", "tp=4,pp=1,dp=2,mbs=1,sp=on"}
	sweep := func(set string) published.Sweep {
		sw := published.Sweep{Name: "sweep " + set, Set: set, Unit: published.StepSeconds}
		for i, s := range plans {
			sw.Rows = append(sw.Rows, published.SweepRow{Label: s, Workload: w, Cluster: c, Strategy: s, Measured: 0.1 * float64(i+1)})
		}
		return sw
	}
	gemm := plan.TunedConstant{Name: "GEMM", Value: 0.755, Without: 0.5, Sources: []string{"a"},
		Set: func(p *plan.Pod, v float64) { p.Hardware.ComputeEff[graph.ClassMatMul] = v }}
	rep, err := SweepsOf(context.Background(), []published.Sweep{sweep("a"), sweep("b")}, []plan.TunedConstant{gemm})
	if err != nil {
		t.Fatal(err)
	}
	a, b := rep.Sweeps[0], rep.Sweeps[1]

	// By hand: each of A's rows on dgx-h100 with the matmul efficiency
	// written 0.5.
	m, err := transformer.Parse(w)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParsePod(c)
	if err != nil {
		t.Fatal(err)
	}
	p.Hardware.ComputeEff[graph.ClassMatMul] = 0.5
	var measured, in, out []float64
	for i, r := range a.Rows {
		s, err := plan.ParseStrategy(plans[i])
		if err != nil {
			t.Fatal(err)
		}
		want, err := planner.Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.OutOfSamplePredicted != want.Step || r.OutOfSampleError != want.Step/r.Measured-1 {
			t.Errorf("A, %s: out of sample %g s (error %g), want %g s (error %g)", r.Label, r.OutOfSamplePredicted, r.OutOfSampleError,
				want.Step, want.Step/r.Measured-1)
		}
		if !(r.OutOfSamplePredicted > r.Predicted) {
			t.Errorf("A, %s: GEMMs at 0.5 of the peak predict %g s, not slower than at 0.755 (%g s)", r.Label, r.OutOfSamplePredicted, r.Predicted)
		}
		measured, in, out = append(measured, r.Measured), append(in, r.Predicted), append(out, want.Step)
	}
	var mean float64
	for i := range measured {
		mean += math.Abs(out[i]/measured[i]-1) / 3
	}
	rho := Spearman(measured, out)
	if a.Sample.Set != "a" || !reflect.DeepEqual(a.Sample.Reset, []string{"GEMM 0.755 -> 0.5"}) || !near(a.Sample.OutMeanAbs, mean, 1e-12) ||
		a.Sample.OutSpearman == nil || *a.Sample.OutSpearman != rho || !near(a.Sample.MeanAbs, a.MeanAbsError, 1e-12) {
		t.Errorf("A: %+v, want set a, GEMM 0.755 -> 0.5 reset, out-of-sample mean %g, Spearman %g", a.Sample, mean, rho)
	}
	for i, r := range b.Rows {
		if math.Float64bits(r.OutOfSamplePredicted) != math.Float64bits(r.Predicted) || r.OutOfSampleError != r.Error || r.Predicted != in[i] {
			t.Errorf("B, %s: out of sample %g, in sample %g (A's in sample %g): want all the same", r.Label, r.OutOfSamplePredicted, r.Predicted, in[i])
		}
	}
	if len(b.Sample.Reset) != 0 || b.Sample.OutMeanAbs != b.Sample.MeanAbs {
		t.Errorf("B: %+v, want nothing reset, the same mean", b.Sample)
	}
}
