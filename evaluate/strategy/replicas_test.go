package strategy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads"
)

// TestReplicasNeverWorse is the property issue 61 item 3 asks of data
// parallelism on any graph, over every built-in workload (recurrent ones
// included: their unrolled time steps each make a partial weight
// gradient, which is not what DDP exchanges) and the profiled PyTorch
// steps under measurements/: R = 2 replicas of a one-GPU placement take
// at most the whole batch's step on one GPU plus one all-reduce of every
// gradient, each GPU holds at most the whole batch's peak plus its
// buckets, the collectives move 2(R-1) times the gradients' bytes, and
// those bytes are the trainable parameters' (a quarter of an Adam or
// RMSProp update's state: weight, gradient and two slots), no more.
func TestReplicasNeverWorse(t *testing.T) {
	if testing.Short() {
		t.Skip("every workload, up to 76,424 ops")
	}
	type named struct {
		name string
		g    *graph.Graph
	}
	var gs []named
	for _, name := range workloads.Names() {
		g, err := workloads.Build(name)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, named{name, g})
	}
	for _, p := range []string{
		"2026-11-26-h100/graphs/resnet50-b32-fp32.json",
		"2026-11-26-h100/graphs/bert_base-b16-fp32.json",
		"2026-11-26-h100-c/graphs/tools_fidelity_models.py_lstm_lm-b20-fp32.json",
	} {
		f, err := os.Open(filepath.Join("..", "..", "measurements", p))
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		gs = append(gs, named{filepath.Base(p), g})
	}
	const R = 2
	ctx := context.Background()
	for _, w := range gs {
		g := w.g
		if g.Batch() < R {
			continue
		}
		m1, err := roofline.NewModel(g, cluster(t, 1, "nvswitch"), roofline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		single, err := roofline.NewEvaluator(m1).Evaluate(ctx, decision.Decision{Device: decision.Single(g)})
		if err != nil {
			t.Fatal(err)
		}
		c := cluster(t, R, "nvswitch")
		e, err := NewEvaluator(g, c, roofline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Evaluate(ctx, decision.Decision{Device: decision.Single(g), Strategy: decision.Strategy{Replicas: R}})
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		var grads, state int64
		for _, tn := range Gradients(g) {
			grads += g.Tensor(int(tn)).Bytes
		}
		for i, o := range OptimizerOps(g) {
			if o {
				state += g.Op(i).ParamBytes
			}
		}
		if grads <= 0 {
			t.Errorf("%s: no gradient", w.name)
			continue
		}
		full, _, err := c.CollectiveTime(roofline.AllReduce, seq(R), grads)
		if err != nil {
			t.Fatal(err)
		}
		if got.StepTime > single.StepTime+full+1e-12 {
			t.Errorf("%s: dp=%d step %.3f ms, more than one GPU's %.3f ms plus the all-reduce's %.3f ms", w.name, R, 1e3*got.StepTime, 1e3*single.StepTime, 1e3*full)
		}
		for k, p := range got.PeakMemory {
			if p > single.PeakMemory[0]+grads {
				t.Errorf("%s: GPU %d holds %d bytes, more than one GPU's whole-batch %d plus the %d bytes of buckets", w.name, k, p, single.PeakMemory[0], grads)
			}
		}
		if want := 2 * (R - 1) * grads; got.CollectiveBytes != want || got.BytesMoved != want+single.BytesMoved*R {
			t.Errorf("%s: collectives move %d of %d bytes, want %d (2(R-1) x %d of gradients)", w.name, got.CollectiveBytes, got.BytesMoved, want, grads)
		}
		if state > 0 && grads*4 != state {
			t.Errorf("%s: gradients %d bytes, a quarter of the updates' state is %d", w.name, grads, state/4)
		}
	}
}
