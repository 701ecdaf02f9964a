package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
	"github.com/placer/placer/nn/transformerxl"
)

func smallConfig() *Config {
	return &Config{
		SageLayers: 2, SageDim: 6, SageNeighbors: 3, TypeBuckets: 4, HintDim: 2,
		DModel: 8, Layers: 2, Heads: 2, HeadDim: 3, Inner: 10, SegmentLen: 7,
		CondDim: 5, HeadHidden: 6, MaxDevices: 4, PriorityLevels: 3, FusionLevels: 3, RefineSteps: 2,
	}
}

func testGraph(t testing.TB, n int, seed uint64) *graph.Graph {
	t.Helper()
	g, err := nntest.RandomDAG("dag", n, 0.4, seed)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func hintsFor(g *graph.Graph, dim int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 9))
	h := make([]float64, g.NumOps()*dim)
	for i := range h {
		h[i] = r.Float64() * 1e-4
	}
	return h
}

// net64 builds the float64 twin of policy p, with every weight (the
// zero-initialized ones included) perturbed so that every path matters.
func net64(t testing.TB, p *Policy, perturb float64, memoryGrad bool) *net[float64] {
	t.Helper()
	n := newNet[float64](p.cfg, p.seed)
	if err := nn.CopyValues(n.params, nn.Params[float32](p.net.params)); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(77, 78))
	for _, q := range n.params {
		for i := range q.W {
			q.W[i] += perturb * (r.Float64() - 0.5)
		}
	}
	if memoryGrad {
		setMemoryGrad(n)
	}
	return n
}

func setMemoryGrad(n *net[float64]) {
	for _, l := range n.txl {
		transformerxl.SetMemoryGradient(l.Attn, true)
	}
	transformerxl.SetMemoryGradient(n.attn, true)
}

// ppoBatch samples k decisions from a pass and makes a batch with random
// advantages, returns and old log-probabilities near the current ones.
func ppoBatch[T nn.Float](t testing.TB, p *pass[T], k int, seed uint64, ds []decision.Decision) PPOBatch {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 5))
	if ds == nil {
		ds = sample(p, r, k)
	}
	b := PPOBatch{Decisions: ds, ClipEps: 0.2, EntropyCoef: 0.3, ValueCoef: 0.7}
	for _, d := range ds {
		lp, err := logProb(p, &d)
		if err != nil {
			t.Fatal(err)
		}
		b.OldLogProbs = append(b.OldLogProbs, lp+0.6*(r.Float64()-0.5))
		b.Advantages = append(b.Advantages, r.Float64()*2-1)
		b.Returns = append(b.Returns, r.Float64()*2-1)
	}
	return b
}

func checkPPOGradient(t *testing.T, cfg *Config, nOps, devices int, memoryGrad bool, keep float64) {
	p, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := testGraph(t, nOps, 4)
	in, err := p.Prepare(g, devices, hintsFor(g, p.cfg.HintDim, 1))
	if err != nil {
		t.Fatal(err)
	}
	n := net64(t, p, 0.4, memoryGrad)
	var ar nn.Arena[float64]
	ds := sample(n.forward(in, &ar), rand.New(rand.NewPCG(6, 6)), 4)
	// Condition on an initial decision, so the first iteration's action
	// embedding is exercised too.
	if err := in.SetInitial(&ds[0]); err != nil {
		t.Fatal(err)
	}
	if in, err = in.WithKeep(keep); err != nil {
		t.Fatal(err)
	}
	b := ppoBatch(t, n.forward(in, &ar), 4, 6, ds)
	loss := func() float64 {
		var ar nn.Arena[float64]
		res, err := ppoLoss(n.forward(in, &ar), b)
		if err != nil {
			t.Fatal(err)
		}
		return res.Loss
	}
	var ar2 nn.Arena[float64]
	ps := n.forward(in, &ar2)
	res, err := ppoLoss(ps, b)
	if err != nil {
		t.Fatal(err)
	}
	backward(ps)
	if res.ClipFrac == 0 || res.ClipFrac == 1 {
		t.Logf("clip fraction %v: the batch does not exercise both branches", res.ClipFrac)
	}
	checked := nntest.Check(t, loss, nntest.ParamTargets(n.params), 12, 1e-6, 2e-5, 1e-8)
	t.Logf("%d parameters, %d entries checked, loss %.6f, clip fraction %.2f", len(n.params), checked, res.Loss, res.ClipFrac)
}

// TestPPOGradient checks the gradient of the whole policy's PPO loss,
// through every layer, all three task heads and two refinement iterations,
// against finite differences, with the memory's gradient not stopped so
// that the analytic gradient is the full derivative.
func TestPPOGradient(t *testing.T) {
	checkPPOGradient(t, smallConfig(), 30, 3, true, 0)
}

// TestPPOGradientKeep is TestPPOGradient with the distributions leaning
// towards the initial decision (Input.WithKeep).
func TestPPOGradientKeep(t *testing.T) {
	checkPPOGradient(t, smallConfig(), 30, 3, true, 0.9)
}

// TestPPOGradientCoarsened is the same on co-location groups with only the
// placement and fusion tasks.
func TestPPOGradientCoarsened(t *testing.T) {
	cfg := smallConfig()
	cfg.Coarsen = true
	cfg.NoScheduling = true
	checkPPOGradient(t, cfg, 40, 4, true, 0)
}

// TestPPOGradientStopped checks the default stop-gradient build on a graph
// that fits one segment (no memory, so the derivative is complete).
func TestPPOGradientStopped(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentLen = 64
	cfg.RefineSteps = 1
	checkPPOGradient(t, cfg, 30, 2, false, 0)
}

// TestFloat32MatchesFloat64 compares the fast float32 policy with its
// float64 twin: outputs, log-probabilities and gradients.
func TestFloat32MatchesFloat64(t *testing.T) {
	cfg := smallConfig()
	cfg.DModel, cfg.SageDim, cfg.Inner, cfg.HeadDim = 16, 16, 32, 8
	p, err := New(cfg, 8)
	if err != nil {
		t.Fatal(err)
	}
	g := testGraph(t, 200, 2)
	in, err := p.Prepare(g, 4, hintsFor(g, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	n := newNet[float64](p.cfg, p.seed)
	if err := nn.CopyValues(n.params, nn.Params[float32](p.net.params)); err != nil {
		t.Fatal(err)
	}
	out, err := p.Forward(in)
	if err != nil {
		t.Fatal(err)
	}
	var ar nn.Arena[float64]
	ps := n.forward(in, &ar)
	if d := math.Abs(out.Value() - ps.value); d > 1e-4 {
		t.Fatalf("value %v vs %v", out.Value(), ps.value)
	}
	b := ppoBatch(t, ps, 3, 1, nil)
	for i, d := range b.Decisions {
		lp32, err := out.LogProb(d)
		if err != nil {
			t.Fatal(err)
		}
		lp64, _ := logProb(ps, &d)
		if math.Abs(lp32-lp64) > 1e-3*math.Abs(lp64) {
			t.Fatalf("decision %d: log-probability %v vs %v", i, lp32, lp64)
		}
		b.OldLogProbs[i] = lp64 // unclipped: every decision contributes
	}
	if _, err := PPOLoss(out, b); err != nil {
		t.Fatal(err)
	}
	if _, err := ppoLoss(ps, b); err != nil {
		t.Fatal(err)
	}
	backward(ps)
	for i, q := range p.net.params {
		q64 := n.params[i]
		scale := 0.0
		for _, v := range q64.G {
			scale = math.Max(scale, math.Abs(v))
		}
		for j := range q.G {
			if math.Abs(float64(q.G[j])-q64.G[j]) > 2e-3*scale+1e-6 {
				t.Fatalf("%s grad[%d]: float32 %v, float64 %v (max |g| %v)", q.Name, j, q.G[j], q64.G[j], scale)
			}
		}
	}
}

func TestDeterminism(t *testing.T) {
	g := testGraph(t, 300, 7)
	run := func(workers int) ([]decision.Decision, [][]float32) {
		nn.SetWorkers(workers)
		defer nn.SetWorkers(0)
		p, err := New(smallConfig(), 11)
		if err != nil {
			t.Fatal(err)
		}
		in, err := p.Prepare(g, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.Forward(in)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Release()
		ds := out.Sample(rand.New(rand.NewPCG(1, 2)), 5)
		b := PPOBatch{Decisions: ds, Advantages: []float64{1, -1, 0.5, 2, -0.3}, EntropyCoef: 0.05, ValueCoef: 0.5, Returns: []float64{0, 1, 2, 3, 4}}
		for _, d := range ds {
			lp, _ := out.LogProb(d)
			b.OldLogProbs = append(b.OldLogProbs, lp)
		}
		if _, err := PPOLoss(out, b); err != nil {
			t.Fatal(err)
		}
		var grads [][]float32
		for _, q := range p.Params() {
			grads = append(grads, append([]float32(nil), q.G...))
		}
		return ds, grads
	}
	d1, g1 := run(0)
	d2, g2 := run(0)
	d3, g3 := run(1)
	for k := range d1 {
		for i := range d1[k].Device {
			if d1[k].Device[i] != d2[k].Device[i] || d1[k].Priority[i] != d2[k].Priority[i] || d1[k].Fusion[i] != d2[k].Fusion[i] ||
				d1[k].Device[i] != d3[k].Device[i] {
				t.Fatalf("sample %d op %d differs between runs", k, i)
			}
		}
	}
	for i := range g1 {
		for j := range g1[i] {
			if g1[i][j] != g2[i][j] || g1[i][j] != g3[i][j] {
				t.Fatalf("gradient %d[%d] differs between runs: %v %v %v (one worker)", i, j, g1[i][j], g2[i][j], g3[i][j])
			}
		}
	}
}

func TestDevicesAndCoarsening(t *testing.T) {
	cfg := smallConfig()
	cfg.Coarsen = true
	p, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := testGraph(t, 200, 3)
	if g.NumColocationGroups() == 0 {
		t.Fatal("test graph has no co-location groups")
	}
	for _, devices := range []int{2, 3, 4} {
		in, err := p.Prepare(g, devices, nil)
		if err != nil {
			t.Fatal(err)
		}
		if in.NumNodes() >= g.NumOps() {
			t.Fatalf("coarsening kept %d of %d ops", in.NumNodes(), g.NumOps())
		}
		out, err := p.Forward(in)
		if err != nil {
			t.Fatal(err)
		}
		probs, cols := out.Probs(Placement)
		for v := range in.NumNodes() {
			s := 0.0
			for j := range cols {
				if j >= devices && probs[v*cols+j] != 0 {
					t.Fatalf("%d devices: node %d has probability %v on device %d", devices, v, probs[v*cols+j], j)
				}
				s += float64(probs[v*cols+j])
			}
			if math.Abs(s-1) > 1e-5 {
				t.Fatalf("probabilities sum to %v", s)
			}
		}
		ds := out.Sample(rand.New(rand.NewPCG(3, 3)), 20)
		for _, d := range append(ds, out.Argmax()) {
			if err := d.Validate(g, devices); err != nil {
				t.Fatal(err)
			}
			group := map[int]int{}
			for op, dev := range d.Device {
				if c := g.Colocation(op); c >= 0 {
					if prev, ok := group[c]; ok && prev != dev {
						t.Fatalf("co-location group %d split over devices %d and %d", c, prev, dev)
					}
					group[c] = dev
				}
				if d.Fusion[op] < -1 || d.Fusion[op] >= p.cfg.FusionLevels-1 || d.Priority[op] < 0 || d.Priority[op] >= p.cfg.PriorityLevels {
					t.Fatalf("op %d: priority %d, fusion %d out of range", op, d.Priority[op], d.Fusion[op])
				}
			}
		}
		lpMax, _ := out.LogProb(out.Argmax())
		for _, d := range ds {
			lp, err := out.LogProb(d)
			if err != nil {
				t.Fatal(err)
			}
			if lp > lpMax+1e-6 {
				t.Fatalf("a sample has log-probability %v above the argmax's %v", lp, lpMax)
			}
		}
		if h := out.Entropy(); !(h > 0) {
			t.Fatalf("entropy %v", h)
		}
		bad := out.Argmax()
		bad.Device[0] = devices
		if _, err := out.LogProb(bad); err == nil {
			t.Fatal("a device beyond the cluster was accepted")
		}
		out.Release()
	}
	if _, err := p.Prepare(g, 5, nil); err == nil {
		t.Fatal("more devices than MaxDevices accepted")
	}
}

// TestSamplingFollowsProbabilities compares sample frequencies of one node
// with its distribution.
func TestSamplingFollowsProbabilities(t *testing.T) {
	p, err := New(smallConfig(), 2)
	if err != nil {
		t.Fatal(err)
	}
	g := testGraph(t, 50, 1)
	in, _ := p.Prepare(g, 4, nil)
	out, _ := p.Forward(in)
	probs, cols := out.Probs(Scheduling)
	const k = 4000
	ds := out.Sample(rand.New(rand.NewPCG(5, 5)), k)
	op := int(in.Nodes().Members(7)[0])
	count := make([]float64, cols)
	for _, d := range ds {
		count[d.Priority[op]]++
	}
	for j := range cols {
		want := float64(probs[7*cols+j])
		if got := count[j] / k; math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/k)+1e-3 {
			t.Fatalf("level %d sampled with frequency %v, probability %v", j, got, want)
		}
	}
}

func TestInitialDecisionConditions(t *testing.T) {
	p, _ := New(smallConfig(), 2)
	g := testGraph(t, 60, 1)
	in, _ := p.Prepare(g, 3, nil)
	out, _ := p.Forward(in)
	before, cols := out.Probs(Placement)
	before = append([]float32(nil), before...)
	d := out.Sample(rand.New(rand.NewPCG(1, 1)), 1)[0]
	if err := in.SetInitial(&d); err != nil {
		t.Fatal(err)
	}
	out2, _ := p.Forward(in)
	after, _ := out2.Probs(Placement)
	same := true
	for i := range before {
		same = same && before[i] == after[i]
	}
	if same {
		t.Fatal("the initial decision does not change the output")
	}
	d.Device = d.Device[:3]
	if err := in.SetInitial(&d); err == nil {
		t.Fatal("a decision of the wrong length was accepted")
	}
	_ = cols
}

// TestKeep: WithKeep multiplies the odds of every node's initial action by
// e^b, b = ln(keep/(1-keep) (actions-1)), and leaves the other actions'
// ratios alone; keep at or below 1/actions changes nothing.
func TestKeep(t *testing.T) {
	cfg := smallConfig()
	cfg.RefineSteps = 1 // a second iteration would read the changed first
	p, _ := New(cfg, 2)
	g := testGraph(t, 60, 1)
	const devices = 3
	in, _ := p.Prepare(g, devices, nil)
	out, _ := p.Forward(in)
	d := out.Sample(rand.New(rand.NewPCG(1, 1)), 1)[0]
	out.Release()
	if err := in.SetInitial(&d); err != nil {
		t.Fatal(err)
	}
	probs := func(in *Input) []float32 {
		out, err := p.Forward(in)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Release()
		pr, _ := out.Probs(Placement)
		return append([]float32(nil), pr...)
	}
	base := probs(in)
	for _, tc := range []struct {
		keep float64
		odds float64 // factor on the initial action's odds
	}{
		{0, 1},
		{1.0 / devices, 1},
		{0.9, 0.9 / 0.1 * (devices - 1)},
		{0.999, 0.999 / 0.001 * (devices - 1)},
	} {
		kin, err := in.WithKeep(tc.keep)
		if err != nil {
			t.Fatal(err)
		}
		got := probs(kin)
		cols := len(got) / g.NumOps()
		for op, v := range in.Nodes().UnitOf {
			a := d.Device[op]
			v := int(v)
			q := base[v*cols+a]
			want := q * float32(tc.odds) / (q*float32(tc.odds) + 1 - q)
			if diff := got[v*cols+a] - want; diff > 1e-4 || diff < -1e-4 {
				t.Fatalf("keep %v, op %d: p(initial) %v, want %v", tc.keep, v, got[v*cols+a], want)
			}
		}
	}
	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		if _, err := in.WithKeep(bad); err == nil {
			t.Errorf("keep %v accepted", bad)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []Config{{SageNeighbors: 300}, {MaxDevices: 1}, {Heads: -1}, {PriorityLevels: 1}} {
		if _, err := New(&c, 1); err == nil {
			t.Fatalf("config %+v accepted", c)
		}
	}
	p, err := New(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Config() != DefaultConfig() {
		t.Fatal("nil config is not the default")
	}
	c := p.Config()
	if c.SageLayers != 4 || c.SageDim != 128 || c.SageNeighbors != 5 || c.DModel != 128 || c.Layers != 2 || c.Heads != 5 || c.HeadDim != 25 || c.Inner != 256 {
		t.Fatalf("defaults differ from GDP table 3: %+v", c)
	}
}

// TestRefine checks GO's refinement across forward passes: the final pass
// is conditioned on a decision drawn from the pass before, and the same
// random stream gives the same result.
func TestRefine(t *testing.T) {
	p, err := New(smallConfig(), 4)
	if err != nil {
		t.Fatal(err)
	}
	g := testGraph(t, 90, 2)
	in, _ := p.Prepare(g, 3, nil)
	run := func() (*Output, decision.Decision) {
		out, err := p.Refine(in, rand.New(rand.NewPCG(9, 9)), 3)
		if err != nil {
			t.Fatal(err)
		}
		return out, out.Sample(rand.New(rand.NewPCG(1, 1)), 1)[0]
	}
	o1, d1 := run()
	o2, d2 := run()
	if o1.Input() == in || o1.Input().initial == nil {
		t.Fatal("the final pass is not conditioned on a previous decision")
	}
	if in.initial != nil {
		t.Fatal("Refine changed its input")
	}
	lp1, _ := o1.LogProb(d1)
	lp2, _ := o2.LogProb(d2)
	if lp1 != lp2 {
		t.Fatalf("same stream, different refinement: %v vs %v", lp1, lp2)
	}
	if _, err := p.Refine(in, nil, 0); err == nil {
		t.Fatal("zero steps accepted")
	}
	if out, err := p.Refine(in, nil, 2); err != nil || out.Input().initial == nil {
		t.Fatalf("argmax refinement: %v", err)
	}
}

// TestInferMatchesForward checks that the low-memory inference pass
// computes exactly what the training pass computes.
func TestInferMatchesForward(t *testing.T) {
	for _, coarsen := range []bool{false, true} {
		cfg := smallConfig()
		cfg.Coarsen = coarsen
		p, _ := New(cfg, 5)
		g := testGraph(t, 150, 3)
		in, _ := p.Prepare(g, 4, hintsFor(g, 2, 1))
		f, err := p.Forward(in)
		if err != nil {
			t.Fatal(err)
		}
		i, err := p.Infer(in)
		if err != nil {
			t.Fatal(err)
		}
		if f.Value() != i.Value() || f.Entropy() != i.Entropy() {
			t.Fatalf("coarsen=%v: value %v/%v, entropy %v/%v", coarsen, f.Value(), i.Value(), f.Entropy(), i.Entropy())
		}
		for _, task := range []Task{Placement, Scheduling, Fusion} {
			a, _ := f.Probs(task)
			b, _ := i.Probs(task)
			for k := range a {
				if a[k] != b[k] {
					t.Fatalf("coarsen=%v: %v probability %d differs: %v vs %v", coarsen, task, k, a[k], b[k])
				}
			}
		}
		d := i.Argmax()
		if err := i.AddLogProbGrad(d, 1); err != nil {
			t.Fatal(err)
		}
		if err := i.Backward(); err == nil {
			t.Fatal("Backward on an Infer output succeeded")
		}
		if _, err := PPOLoss(i, PPOBatch{Decisions: []decision.Decision{d}, Advantages: []float64{1}, OldLogProbs: []float64{0}}); err == nil {
			t.Fatal("PPOLoss on an Infer output succeeded")
		}
		f.Release()
		i.Release()
	}
}

// TestPPOGradientPerNode checks the gradient of the per-node-clipped PPO
// loss against finite differences, with old per-node log-probabilities
// jittered so that both branches of the clip are taken.
func TestPPOGradientPerNode(t *testing.T) {
	p, err := New(smallConfig(), 3)
	if err != nil {
		t.Fatal(err)
	}
	g := testGraph(t, 30, 4)
	in, err := p.Prepare(g, 3, hintsFor(g, p.cfg.HintDim, 1))
	if err != nil {
		t.Fatal(err)
	}
	n := net64(t, p, 0.4, true)
	var ar nn.Arena[float64]
	ps0 := n.forward(in, &ar)
	b := ppoBatch(t, ps0, 4, 6, nil)
	r := rand.New(rand.NewPCG(9, 9))
	for _, d := range b.Decisions {
		old, err := nodeLogProbs(ps0, d)
		if err != nil {
			t.Fatal(err)
		}
		for i := range old {
			old[i] += float32(0.5 * (r.Float64() - 0.5))
		}
		b.OldNodeLogProbs = append(b.OldNodeLogProbs, old)
	}
	loss := func() float64 {
		var ar nn.Arena[float64]
		res, err := ppoLossPerNode(n.forward(in, &ar), b)
		if err != nil {
			t.Fatal(err)
		}
		return res.Loss
	}
	var ar2 nn.Arena[float64]
	ps := n.forward(in, &ar2)
	res, err := ppoLossPerNode(ps, b)
	if err != nil {
		t.Fatal(err)
	}
	backward(ps)
	if res.ClipFrac == 0 || res.ClipFrac == 1 {
		t.Fatalf("clip fraction %v: the batch does not exercise both branches", res.ClipFrac)
	}
	checked := nntest.Check(t, loss, nntest.ParamTargets(n.params), 12, 1e-6, 2e-5, 1e-8)
	t.Logf("%d entries checked, loss %.6f, clip fraction %.2f", checked, res.Loss, res.ClipFrac)
}

// TestSameWeightsAllSizes runs one policy's weights on graphs of 50,
// 2,000 and 84,000 ops, on 2 and 8 devices.
func TestSameWeightsAllSizes(t *testing.T) {
	p, err := New(nil, 11)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{50, 2000, 84000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		g := testGraph(t, n, 5)
		for _, devices := range []int{2, 8} {
			in, err := p.Prepare(g, devices, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Infer(in)
			if err != nil {
				t.Fatalf("%d ops, %d devices: %v", n, devices, err)
			}
			d := out.Argmax()
			out.Release()
			if len(d.Device) != g.NumOps() {
				t.Fatalf("%d ops: decision of %d", n, len(d.Device))
			}
			for _, dv := range d.Device {
				if dv < 0 || dv >= devices {
					t.Fatalf("%d ops, %d devices: device %d", n, devices, dv)
				}
			}
		}
	}
}
