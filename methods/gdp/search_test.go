package gdp

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
)

// small is a policy small enough for quick tests.
var small = &policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32, SegmentLen: 16}

func cluster(t *testing.T, n int) *roofline.Cluster {
	h, _ := roofline.Preset("v100")
	c, err := roofline.NewCluster(h, n, "nvswitch")
	if err != nil {
		// V100 has no NVSwitch preset topology; fall back to PCIe.
		if c, err = roofline.NewCluster(h, n, "pcie"); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestSearchSplitsTwoBranches: two heavy independent branches (12 ops of
// 1 ms each) from a tiny source to a tiny sink, on two GPUs. The optimum
// runs one branch per GPU: about 12 ms instead of 24 ms on one GPU. The
// search starts from the single-GPU placement and must find the split.
func TestSearchSplitsTwoBranches(t *testing.T) {
	b := graph.NewBuilder("branches")
	src := b.AddOp(graph.Op{Name: "src", HasTime: true, Time: 1e-6})
	sink := b.AddOp(graph.Op{Name: "sink", HasTime: true, Time: 1e-6})
	for br := 0; br < 2; br++ {
		prev := src
		for i := 0; i < 12; i++ {
			v := b.AddOp(graph.Op{Name: fmt.Sprintf("b%d_%d", br, i), HasTime: true, Time: 1e-3})
			b.AddTensor(prev, 1024, v)
			prev = v
		}
		b.AddTensor(prev, 1024, sink)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	optimum := 0.0
	for seed := uint64(1); seed <= 4; seed++ {
		p, err := methodstest.RooflineProblem(g, cluster(t, 2), roofline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Tasks = optimize.Tasks{Placement: true}
		optimum = 12e-3 + 2e-6 + 2*p.Cost.TransferTime(0, 1, 1024)
		s := &Search{Config: small, Samples: 16, Warmup: -1}
		res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 100}, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		curve := res.Learning.Curve
		first, last := curve[0], curve[len(curve)-1]
		t.Logf("seed %d: best step %v, mean reward %.3f -> %.3f", seed, res.Eval.StepTime, first.MeanReward, last.MeanReward)
		// Reached: within a few transfers' latency of the optimum (the
		// source and sink may sit on either GPU), and learnt: the policy's
		// mean reward moved towards the split's -sqrt(12/24) = -0.71.
		if res.Eval.StepTime <= optimum+100e-6 && last.MeanReward > first.MeanReward+0.05 {
			return
		}
	}
	t.Fatalf("no seed of 4 reached the split optimum %v (single GPU: 24 ms)", optimum)
}

// TestSearchLearnsFusionOrder: 8 independent chains a->b->c->d of
// memory-bound elementwise ops on one GPU, kernels of at most 2 ops. Only
// the fusion order decides the step time: b must take its turn before c in
// every chain, so that (a,b) and (c,d) fuse; if c goes first, (b,c) fuse
// and a and d run alone. The search starts with no fusion at all.
func TestSearchLearnsFusionOrder(t *testing.T) {
	b := graph.NewBuilder("chains")
	const mb = 1 << 22
	for ch := 0; ch < 8; ch++ {
		prev := -1
		for i, name := range []string{"a", "b", "c", "d"} {
			v := b.AddOp(graph.Op{Name: fmt.Sprintf("%s%d", name, ch), Class: graph.ClassElementwise, FLOPs: 1e6, BytesRead: mb, BytesWritten: mb})
			if prev >= 0 {
				b.AddTensor(prev, mb, v)
			}
			prev = v
			_ = i
		}
		b.AddTensor(prev, mb)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.RooflineProblem(g, cluster(t, 1), roofline.Options{MaxFusion: 2})
	if err != nil {
		t.Fatal(err)
	}
	p.Tasks = optimize.Tasks{Fusion: true}
	p.Base = decision.Decision{Device: decision.Single(g)}
	best, err := p.Evaluator.Evaluate(context.Background(), decision.Decision{Device: decision.Single(g), Fusion: decision.TopologicalFusion(g)})
	if err != nil || best.Kernels != 16 {
		t.Fatalf("topological fusion: %d kernels (%v), want 16", best.Kernels, err)
	}
	s := &Search{Config: small, Samples: 16, Warmup: -1}
	res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 60}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Eval.StepTime > best.StepTime*1.0001 {
		t.Fatalf("best step %v (%d kernels) after %d steps, want the pairwise optimum %v (16 kernels)", res.Eval.StepTime, res.Eval.Kernels, res.Stats.Steps, best.StepTime)
	}
}

func TestSearchDeterministicAndCancellable(t *testing.T) {
	b := graph.NewBuilder("d")
	prev := b.AddOp(graph.Op{Name: "x", HasTime: true, Time: 1e-3})
	for i := 0; i < 6; i++ {
		v := b.AddOp(graph.Op{Name: fmt.Sprint("o", i), HasTime: true, Time: 1e-3})
		b.AddTensor(prev, 4096, v)
		if i%2 == 1 {
			prev = v
		}
	}
	g, _ := b.Build()
	run := func(ctx context.Context) *optimize.Result {
		p, _ := methodstest.RooflineProblem(g, cluster(t, 2), roofline.Options{})
		r, err := (&Search{Config: small, Samples: 8}).Optimize(ctx, p, &optimize.Settings{Budget: optimize.Budget{Steps: 5}, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r1, r2 := run(context.Background()), run(context.Background())
	if r1.Eval.StepTime != r2.Eval.StepTime || fmt.Sprint(r1.Decision.Device) != fmt.Sprint(r2.Decision.Device) {
		t.Fatalf("same seed, different results: %v vs %v", r1.Eval.StepTime, r2.Eval.StepTime)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := run(ctx)
	if r.Stats.Status != optimize.Cancelled || len(r.Decision.Device) != g.NumOps() {
		t.Fatalf("cancelled run: status %v, decision of %d ops", r.Stats.Status, len(r.Decision.Device))
	}
}

// TestSearchSettings: the settings a result file records are the ones a
// Search runs with, defaults resolved.
func TestSearchSettings(t *testing.T) {
	st := (&Search{}).Settings()
	if st.Samples != 16 || st.Warmup != 200 || st.Moves != DefaultMoves || st.MaxUnits != MaxUnits || st.Refine != 1 || !st.Anchored || st.Policy != nil {
		t.Errorf("defaults: %+v", st)
	}
	if st.PPO != DefaultPPO.Filled() || st.PPO.ClipEps != 0.2 || st.PPO.Epochs != 1 {
		t.Errorf("default PPO: %+v", st.PPO)
	}
	s := &Search{Samples: 4, Warmup: -3, Moves: -2, Refine: 3, NoAnchor: true, MaxUnits: 100, PPO: ppo.Settings{Epochs: 2}}
	st = s.Settings()
	if st.Samples != 4 || st.Warmup != -1 || st.Moves != -1 || st.Refine != 3 || st.Anchored || st.MaxUnits != 100 {
		t.Errorf("set: %+v", st)
	}
	if st := (&Search{MaxUnits: -5}).Settings(); st.MaxUnits != -1 {
		t.Errorf("negative MaxUnits: %d, want -1 (no contraction)", st.MaxUnits)
	}
	if st.PPO.Epochs != 2 || st.PPO.LearningRate != 3e-3 { // ppo's own defaults fill the rest
		t.Errorf("set PPO: %+v", st.PPO)
	}
}

// TestSearchNoLearning: the ablation leaves every weight as it was made,
// still runs its steps, and, like the learning search, never returns
// worse than its reference.
func TestSearchNoLearning(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 80, Width: 6, Seed: 5})
	p, err := methodstest.RooflineProblem(g, cluster(t, 2), roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref := p.Complete(decision.Decision{Device: decision.RoundRobin(g, 2)})
	refRes, err := p.Evaluator.Evaluate(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := NewPolicy(small, optimize.AllTasks, 9)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := NewPolicy(small, optimize.AllTasks, 9)
	if err != nil {
		t.Fatal(err)
	}
	s := &Search{Policy: pol, Samples: 8, Reference: ref, NoLearning: true}
	res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 4}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range pol.Params() {
		if !slices.Equal(q.W, fresh.Params()[i].W) {
			t.Fatalf("parameter %d changed without learning", i)
		}
	}
	if res.Stats.Steps != 4 || res.Learning == nil || len(res.Learning.Curve) != 4 {
		t.Fatalf("%d steps, learning %+v", res.Stats.Steps, res.Learning)
	}
	if st := res.Learning.Settings.(SearchSettings); st.Learning || st.Warmup != -1 {
		t.Errorf("settings %+v: learning off, no warm-up", st)
	}
	if res.Eval.StepTime > refRes.StepTime {
		t.Errorf("step %v, worse than the reference's %v", res.Eval.StepTime, refRes.StepTime)
	}
}
