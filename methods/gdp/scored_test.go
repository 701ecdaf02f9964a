package gdp

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// TestMoveHeadGradient checks the head's backward pass against central
// finite differences of the loss, for every parameter, on random rows
// (float32 forward passes, so the tolerance is loose).
func TestMoveHeadGradient(t *testing.T) {
	h := NewMoveHead(3)
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range h.Params() {
		for i := range p.W {
			p.W[i] = float32(r.NormFloat64() * 0.3) // the output layer too, else its gradient path is trivial
		}
	}
	const rows = 5
	var ps headPass
	ps.resize(rows)
	y := make([]float32, rows)
	for i := range ps.x {
		ps.x[i] = float32(r.NormFloat64())
	}
	for i := range y {
		y[i] = float32(r.NormFloat64())
	}
	loss := func() float64 {
		var q headPass
		q.resize(rows)
		copy(q.x, ps.x)
		h.forward(&q)
		d := make([]float32, rows)
		return headLoss(&q, y, d)
	}
	h.forward(&ps)
	dout := make([]float32, rows)
	headLoss(&ps, y, dout)
	var ar nn.Arena[float32]
	h.Params().ZeroGrad()
	h.backward(&ar, &ps, dout)
	for _, p := range h.Params() {
		for i := range p.W {
			w := p.W[i]
			const eps = 1e-2
			p.W[i] = w + eps
			lp := loss()
			p.W[i] = w - eps
			lm := loss()
			p.W[i] = w
			num := (lp - lm) / (2 * eps)
			got := float64(p.G[i])
			if math.Abs(num-got) > 2e-2*math.Max(1, math.Abs(num)) {
				t.Errorf("%s[%d]: backward %.5f, finite differences %.5f", p.Name, i, got, num)
			}
		}
	}
}

// TestMoveHeadStartsUniform: a new head scores every move alike, so that
// a head that never learns picks uniformly (the ablation is plain anchored
// local search).
func TestMoveHeadStartsUniform(t *testing.T) {
	h := NewMoveHead(9)
	var ps headPass
	ps.resize(50)
	r := rand.New(rand.NewPCG(4, 4))
	for i := range ps.x {
		ps.x[i] = float32(r.NormFloat64())
	}
	h.forward(&ps)
	for i, s := range ps.out {
		if s != ps.out[0] {
			t.Fatalf("row %d scores %v, row 0 %v", i, s, ps.out[0])
		}
	}
}

// TestMoveHeadLearnsUpside: trained as Observe trains it, on examples
// where only rows with a positive first feature ever gain, the head ranks
// those first.
func TestMoveHeadLearnsUpside(t *testing.T) {
	h := NewMoveHead(1)
	sc := &scorer{head: h, lr: 3e-3, learn: true, rng: rand.New(rand.NewPCG(1, 1))}
	sc.replay.init()
	x := make([]float32, MoveFeatures)
	r := rand.New(rand.NewPCG(2, 2))
	row := func(x []float32) float32 {
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		if x[0] > 0 && r.Float64() < 0.3 {
			return float32(1 + r.Float64())
		}
		return 0
	}
	for step := 0; step < 400; step++ {
		for k := 0; k < 8; k++ {
			y := row(x)
			sc.replay.add(x, y, false)
		}
		sc.trainStep()
	}
	var ps headPass
	ps.resize(200)
	for i := 0; i < 200; i++ {
		row(ps.x[i*MoveFeatures : (i+1)*MoveFeatures])
	}
	h.forward(&ps)
	pos, neg := 0.0, 0.0
	npos, nneg := 0, 0
	for i := 0; i < 200; i++ {
		if ps.x[i*MoveFeatures] > 0 {
			pos += float64(ps.out[i])
			npos++
		} else {
			neg += float64(ps.out[i])
			nneg++
		}
	}
	if pos/float64(npos) < neg/float64(nneg)+0.2 {
		t.Errorf("mean score %.3f where moves gain, %.3f where they never do", pos/float64(npos), neg/float64(nneg))
	}
}

// TestMoveHeadFile: a saved head reads back the same; malformed files are
// one-line errors.
func TestMoveHeadFile(t *testing.T) {
	h := NewMoveHead(5)
	for _, p := range h.Params() {
		for i := range p.W {
			p.W[i] = float32(i%7) * 0.125
		}
	}
	h.Updates = 42
	path := filepath.Join(t.TempDir(), "head.json")
	if err := h.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadMoveHead(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got.Params() {
		if !slices.Equal(p.W, h.Params()[i].W) {
			t.Errorf("%s differs after a round trip", p.Name)
		}
	}
	if got.Updates != 42 {
		t.Errorf("updates %d, want 42", got.Updates)
	}
	for _, c := range []struct{ name, text string }{
		{"not json", "{"},
		{"format", `{"format":"x","version":1}`},
		{"features", `{"format":"placer-move-head","version":1,"features":3,"hidden":32}`},
		{"weights", `{"format":"placer-move-head","version":1,"features":58,"hidden":32,"weights":[[1]]}`},
	} {
		if _, err := DecodeMoveHead([]byte(c.text)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := LoadMoveHead(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file: no error")
	}
}

// FuzzDecodeMoveHead: any input decodes to a head or a clean error.
func FuzzDecodeMoveHead(f *testing.F) {
	h := NewMoveHead(1)
	path := filepath.Join(f.TempDir(), "h.json")
	if err := h.Save(path); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"format":"placer-move-head","version":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeMoveHead(b)
		if err == nil && len(h.Params()) != 4 {
			t.Fatal("decoded a head with the wrong parameters")
		}
	})
}

// roundRobinStart is a layered graph on two GPUs, its round-robin
// placement (with topological fusion if fused) completed, and that
// placement's evaluation: the start of go-scored's tests.
func roundRobinStart(t *testing.T, l graphtest.Layered, fused bool) (*optimize.Problem, decision.Decision, evaluate.Result) {
	t.Helper()
	g := graphtest.LayeredDAG(l)
	p, err := methodstest.RooflineProblem(g, cluster(t, 2), roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := decision.Decision{Device: decision.RoundRobin(g, 2)}
	if fused {
		d.Fusion = decision.TopologicalFusion(g)
	}
	ref := p.Complete(d)
	refRes, err := p.Evaluator.Evaluate(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return p, ref, refRes
}

// TestScored: go-scored from a round-robin anchor on a layered graph
// beats the anchor; the same seed gives the same result; the ablation
// never updates its head, and learning does.
func TestScored(t *testing.T) {
	p, ref, refRes := roundRobinStart(t, graphtest.Layered{Ops: 120, Width: 6, Seed: 7}, true)
	anchor := classical.Anchor{From: &optimize.Result{Decision: ref, Eval: refRes}}
	run := func(noLearning bool) *optimize.Result {
		s := &Scored{Config: small, Anchor: anchor, NoLearning: noLearning}
		res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 800}, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(false)
	if res.Method != "go-scored" || !res.Eval.Valid() || res.Eval.StepTime >= refRes.StepTime {
		t.Fatalf("%s: step %v, the anchor's %v", res.Method, res.Eval.StepTime, refRes.StepTime)
	}
	st := res.Learning.Settings.(ScoredSettings)
	if !st.Learning || st.Updates == 0 || st.Batch != DefaultScoredBatch || st.Pool != ScoredPoolFactor*DefaultScoredBatch {
		t.Errorf("settings %+v", st)
	}
	again := run(false)
	if again.Eval.StepTime != res.Eval.StepTime || !slices.Equal(again.Decision.Device, res.Decision.Device) {
		t.Errorf("same seed, different results: %v vs %v", again.Eval.StepTime, res.Eval.StepTime)
	}
	abl := run(true)
	ast := abl.Learning.Settings.(ScoredSettings)
	if abl.Method != "go-scored-no-learning" || ast.Learning || ast.Updates != 0 {
		t.Errorf("ablation %s: settings %+v", abl.Method, ast)
	}
	if abl.Eval.StepTime > refRes.StepTime {
		t.Errorf("ablation %v worse than its anchor %v", abl.Eval.StepTime, refRes.StepTime)
	}
	if len(res.Learning.Curve) == 0 {
		t.Error("no learning curve")
	}
	// Hit rates: with learning both kinds of picks are made (a quarter
	// uniform), and some of each improve early on; the ablation's picks
	// are all uniform.
	var head, explore float64
	for _, pt := range res.Learning.Curve {
		if pt.HeadHit < 0 || pt.HeadHit > 1 || pt.ExploreHit < 0 || pt.ExploreHit > 1 {
			t.Fatalf("hit rates out of [0, 1]: %+v", pt)
		}
		head, explore = head+pt.HeadHit, explore+pt.ExploreHit
	}
	if head == 0 || explore == 0 {
		t.Errorf("learning: head hits %g, uniform hits %g over the curve, want both positive", head, explore)
	}
	explore = 0
	for _, pt := range abl.Learning.Curve {
		if pt.HeadHit != 0 {
			t.Fatalf("ablation: a head hit rate %g, but every pick is uniform", pt.HeadHit)
		}
		explore += pt.ExploreHit
	}
	if explore == 0 {
		t.Error("ablation: no uniform pick ever improved")
	}
}

// TestScoredPretrainedHeadUnchanged: a given head is trained as a copy.
func TestScoredPretrainedHeadUnchanged(t *testing.T) {
	p, ref, refRes := roundRobinStart(t, graphtest.Layered{Ops: 60, Width: 4, Seed: 3}, false)
	h := NewMoveHead(2)
	before := h.Clone()
	s := &Scored{Config: small, Head: h, Anchor: classical.Anchor{From: &optimize.Result{Decision: ref, Eval: refRes}}}
	res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 300}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range h.Params() {
		if !slices.Equal(q.W, before.Params()[i].W) {
			t.Errorf("the given head's %s changed", q.Name)
		}
	}
	if res.Learning.Model.(*MoveHead).Updates == 0 {
		t.Error("the run's head never learned")
	}
}

// pretrainGraphs is a pre-training set on 2 GPUs, one layered graph per
// seed (the i-th of ops+10i ops, its reference the round-robin
// placement), and a small policy for the features.
func pretrainGraphs(t *testing.T, ops int, seeds ...uint64) ([]TrainGraph, *policy.Policy) {
	t.Helper()
	var graphs []TrainGraph
	for i, seed := range seeds {
		g := graphtest.LayeredDAG(graphtest.Layered{Ops: ops + 10*i, Width: 4, Seed: seed})
		p, err := methodstest.RooflineProblem(g, cluster(t, 2), roofline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		graphs = append(graphs, TrainGraph{Name: g.Name(), Problem: p, Reference: p.Complete(decision.Decision{Device: decision.RoundRobin(g, 2)})})
	}
	pol, err := NewPolicy(small, optimize.AllTasks, 1)
	if err != nil {
		t.Fatal(err)
	}
	return graphs, pol
}

// TestScoredPretrainResumeIsOneRun: three visits in one run give the
// same head, to the bit, as two visits and a resumed third (what lets
// make default-head grow its recipe by resuming a checkpoint).
func TestScoredPretrainResumeIsOneRun(t *testing.T) {
	graphs, pol := pretrainGraphs(t, 40, 5, 6)
	budget := optimize.Budget{Evaluations: 150}
	one, err := (&ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: budget, Seed: 7, Visits: 3}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "head.json")
	if _, err := (&ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: budget, Seed: 7, Visits: 2, Checkpoint: path}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	two, err := (&ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: budget, Visits: 3, Checkpoint: path, Resume: path}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(two.Curve) != 1 || two.Curve[0].Visit != 3 {
		t.Fatalf("the resumed run made visits %+v, want the third only", two.Curve)
	}
	if one.Head.Updates != two.Head.Updates {
		t.Errorf("updates: one run %d, resumed %d", one.Head.Updates, two.Head.Updates)
	}
	for i, q := range one.Head.Params() {
		if !slices.Equal(q.W, two.Head.Params()[i].W) {
			t.Errorf("%s differs between one run and a resumed one", q.Name)
		}
	}
}

// TestScoredPretrain: a head pre-trained over two graphs learns (its
// updates grow), writes a checkpoint, and a resumed run goes on from the
// checkpoint's visit count to the total asked for; a corrupt state is an
// error.
func TestScoredPretrain(t *testing.T) {
	graphs, pol := pretrainGraphs(t, 50, 3, 4)
	path := filepath.Join(t.TempDir(), "head.json")
	sp := &ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: optimize.Budget{Evaluations: 200}, Seed: 1, Visits: 2, Checkpoint: path}
	r, err := sp.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Visits != 2 || len(r.Curve) != 2 || r.Head.Updates == 0 || r.Curve[0].Graph != graphs[0].Name || r.Curve[1].Graph != graphs[1].Name {
		t.Fatalf("visits %d, curve %+v, updates %d", r.Visits, r.Curve, r.Head.Updates)
	}
	updates := r.Head.Updates
	sp2 := &ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: optimize.Budget{Evaluations: 200}, Visits: 3, Checkpoint: path, Resume: path}
	r2, err := sp2.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r2.Visits != 3 || len(r2.Curve) != 1 || r2.Curve[0].Visit != 3 || r2.Head.Updates <= updates {
		t.Errorf("resumed: visits %d, curve %+v, updates %d (were %d)", r2.Visits, r2.Curve, r2.Head.Updates, updates)
	}
	if err := os.WriteFile(path+".state.json", []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&ScoredPretrain{Graphs: graphs, Policy: pol, Resume: path}).Run(context.Background()); err == nil {
		t.Error("a corrupt state file: no error")
	}
	if _, err := (&ScoredPretrain{Graphs: graphs[:1], Policy: pol, Resume: path + "x"}).Run(context.Background()); err == nil {
		t.Error("a missing checkpoint: no error")
	}
}

// TestScoredNetwork: go-scored's untrained feature network is the same
// whatever the run's seed (so a pre-trained head reads the network it
// was trained with), and the control without a network runs no forward
// pass, reads zero network features, still learns and beats its anchor.
func TestScoredNetwork(t *testing.T) {
	p, ref, refRes := roundRobinStart(t, graphtest.Layered{Ops: 120, Width: 6, Seed: 7}, true)
	anchor := classical.Anchor{From: &optimize.Result{Decision: ref, Eval: refRes}}
	begin := func(seed uint64, noNetwork bool) *scorer {
		s := &Scored{Config: small, Anchor: anchor, NoNetwork: noNetwork}
		sc := &scorer{s: s, head: NewMoveHead(seed), seed: seed, lr: 3e-3, learn: true}
		ls := classical.AnchoredLocalSearch{Anchor: anchor, Guide: sc, Pool: 64}
		if _, err := ls.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 16}, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		return sc
	}
	a, b := begin(1, false), begin(2, false)
	pa, pb := a.pol.Params(), b.pol.Params()
	if len(pa) == 0 || len(pa) != len(pb) {
		t.Fatalf("%d and %d parameter tensors", len(pa), len(pb))
	}
	for i := range pa {
		if !slices.Equal(pa[i].W, pb[i].W) {
			t.Fatalf("seeds 1 and 2 read different networks (tensor %d)", i)
		}
	}
	c := begin(1, true)
	for u := range c.units.pf {
		for _, x := range c.units.pf[u] {
			if x != 0 {
				t.Fatalf("no-network unit %d has network features %v", u, c.units.pf[u])
			}
		}
	}
	s := &Scored{Config: small, Anchor: anchor, NoNetwork: true}
	res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 800}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Learning.Settings.(ScoredSettings); st.Updates == 0 || !res.Eval.Valid() || res.Eval.StepTime >= refRes.StepTime {
		t.Errorf("no-network: step %v against the anchor's %v, %d updates", res.Eval.StepTime, refRes.StepTime, st.Updates)
	}
}

// TestScoredPrior: with Prior, the given head stays as it is (a frozen
// prior) and a new head learns the residual: the run's model is a head
// other than the prior, trained, and the run is reproducible and never
// worse than its anchor.
func TestScoredPrior(t *testing.T) {
	p, ref, refRes := roundRobinStart(t, graphtest.Layered{Ops: 60, Width: 4, Seed: 3}, false)
	prior := NewMoveHead(2)
	r := rand.New(rand.NewPCG(4, 5))
	for i := range prior.L2.W.W {
		prior.L2.W.W[i] = float32(r.NormFloat64()) // a prior that ranks the moves
	}
	prior.Updates = 10
	before := prior.Clone()
	run := func() *optimize.Result {
		s := &Scored{Config: small, Head: prior, Prior: true, Anchor: classical.Anchor{From: &optimize.Result{Decision: ref, Eval: refRes}}}
		res, err := s.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 300}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run()
	for i, q := range prior.Params() {
		if !slices.Equal(q.W, before.Params()[i].W) {
			t.Errorf("the prior's %s changed", q.Name)
		}
	}
	st := res.Learning.Settings.(ScoredSettings)
	resid := res.Learning.Model.(*MoveHead)
	if !st.Prior || !st.Pretrained || resid == prior || resid.Updates == 0 || resid.Updates != st.Updates {
		t.Errorf("settings %+v, residual head updates %d", st, resid.Updates)
	}
	if slices.Equal(resid.L2.W.W, prior.L2.W.W) {
		t.Error("the residual head is the prior")
	}
	if !res.Eval.Valid() || res.Eval.StepTime > refRes.StepTime {
		t.Errorf("step %v, the anchor's %v", res.Eval.StepTime, refRes.StepTime)
	}
	if again := run(); again.Eval.StepTime != res.Eval.StepTime || !slices.Equal(again.Decision.Device, res.Decision.Device) {
		t.Errorf("same seed, different results: %v vs %v", again.Eval.StepTime, res.Eval.StepTime)
	}
}
