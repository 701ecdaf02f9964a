package regal

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/workloads"
)

func synthProblem(t testing.TB, family string, seed uint64, devices int) *optimize.Problem {
	t.Helper()
	g, err := workloads.Synthetic(family, seed)
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.NewProblem(g, devices, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var tiny = Config{Layers: 2, Dim: 6, Neighbors: 3, Hidden: 5, MeanBuckets: 5, VarBuckets: 2}

// loss is Grad's loss, computed directly from the logits.
func loss(cfg Config, logits []float64, N int, a Action, adv, ent float64) float64 {
	cfg = cfg.withDefaults()
	G, C, km := cfg.Groups(), cfg.Choices(), cfg.MeanBuckets
	L := 0.0
	one := func(z []float64, act int) {
		mx := math.Inf(-1)
		for _, v := range z {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range z {
			s += math.Exp(v - mx)
		}
		lse := mx + math.Log(s)
		h := 0.0
		for _, v := range z {
			h -= math.Exp(v-lse) * (v - lse)
		}
		L -= adv*(z[act]-lse) + ent*h
	}
	for v := range N {
		for g := range G {
			o := (v*G + g) * C
			one(logits[o:o+km], int(a.M[v*G+g]))
			one(logits[o+km:o+C], int(a.V[v*G+g]))
		}
	}
	return L / float64(N*G)
}

// TestGradHead checks Grad's logit gradient against finite differences
// of the loss.
func TestGradHead(t *testing.T) {
	cfg := tiny.withDefaults()
	r := rand.New(rand.NewPCG(1, 2))
	const N = 4
	logits := nntest.Rand(r, N*cfg.Outputs())
	for i := range logits {
		logits[i] *= 3
	}
	a := Sample(cfg, logits, N, r, false)
	for _, c := range []struct{ adv, ent float64 }{{1, 0}, {-0.7, 0}, {0, 0.3}, {0.4, 0.05}} {
		d := make([]float64, len(logits))
		Grad(cfg, logits, N, a, c.adv, c.ent, d)
		nntest.Check(t, func() float64 { return loss(cfg, logits, N, a, c.adv, c.ent) },
			[]nntest.Target{{Name: "logits", X: logits, Grad: d}}, len(logits), 1e-6, 1e-6, 1e-9)
	}
}

// TestGradNet checks the whole network (encoder, head, loss) against
// finite differences in float64.
func TestGradNet(t *testing.T) {
	p := synthProblem(t, "ba", 3, 2)
	cfg := tiny.withDefaults()
	in, err := NewInput(p, cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	n := NewNet[float64](cfg, 9)
	// Randomize the biases too, so that no ReLU sits on a kink by chance.
	r := rand.New(rand.NewPCG(3, 4))
	for _, q := range n.Params() {
		for i := range q.W {
			q.W[i] += 0.1 * (r.Float64()*2 - 1)
		}
	}
	ar := &nn.Arena[float64]{}
	logits, _ := n.Forward(ar, in.X, in.N, in.Nbrs)
	a := Sample(cfg, logits, in.N, r, false)
	const adv, ent = 0.8, 0.1
	f := func() float64 {
		ar := &nn.Arena[float64]{}
		lg, _ := n.Forward(ar, in.X, in.N, in.Nbrs)
		return loss(cfg, lg, in.N, a, adv, ent)
	}
	n.Params().ZeroGrad()
	lg, c := n.Forward(ar, in.X, in.N, in.Nbrs)
	d := make([]float64, len(lg))
	Grad(cfg, lg, in.N, a, adv, ent, d)
	n.Backward(ar, c, d)
	if got := nntest.Check(t, f, nntest.ParamTargets(n.Params()), 12, 1e-6, 1e-4, 1e-8); got < 50 {
		t.Fatalf("checked only %d entries", got)
	}
}

func TestUniformBuckets(t *testing.T) {
	for _, c := range []struct {
		km, kv, m, v int
		ok           bool
	}{{5, 5, 2, 1, true}, {11, 2, 5, 0, true}, {4, 5, 0, 0, false}, {5, 4, 0, 0, false}} {
		m, v, ok := uniformBuckets(Config{MeanBuckets: c.km, VarBuckets: c.kv})
		if ok != c.ok || (ok && (m != c.m || v != c.v)) {
			t.Errorf("k=%d,%d: got %d %d %v", c.km, c.kv, m, v, ok)
		}
		if ok {
			if b := BucketBeta(Config{MeanBuckets: c.km, VarBuckets: c.kv}, m, v); math.Abs(b.Alpha-1) > 1e-12 || math.Abs(b.Beta-1) > 1e-12 {
				t.Errorf("k=%d,%d: uniform buckets give Beta(%g, %g)", c.km, c.kv, b.Alpha, b.Beta)
			}
		}
	}
}

// TestMeanVar checks REGAL A.6's dequantization by hand: k = 5, m = 0,
// v = 4: mu = 1/6, sigma2 = (1/6)(5/6)(5/6) = 25/216, beta = (5/6)(6/5 -
// 1) = 1/6, alpha = beta mu/(1-mu) = 1/30.
func TestMeanVar(t *testing.T) {
	cfg := Config{MeanBuckets: 5, VarBuckets: 5}
	mu, s2 := MeanVar(cfg, 0, 4)
	if math.Abs(mu-1.0/6) > 1e-15 || math.Abs(s2-25.0/216) > 1e-15 {
		t.Fatalf("MeanVar = %g %g", mu, s2)
	}
	b := BucketBeta(cfg, 0, 4)
	if math.Abs(b.Beta-1.0/6) > 1e-12 || math.Abs(b.Alpha-1.0/30) > 1e-12 {
		t.Fatalf("BucketBeta = %+v, want alpha 1/30 beta 1/6", b)
	}
}

func TestBetasLayout(t *testing.T) {
	p := synthProblem(t, "er", 1, 3)
	cfg := Config{Devices: 2}.withDefaults()
	l := brkga.NewLayout(p)
	N := p.Graph.NumOps()
	G := cfg.Groups()
	a := Action{M: make([]uint8, N*G), V: make([]uint8, N*G)}
	unit := make([]int32, N)
	for o := range N {
		unit[o] = int32(o)
		for g := range G {
			a.M[o*G+g], a.V[o*G+g] = uint8(g), 0
		}
	}
	bs := Betas(cfg, a, unit, l)
	if len(bs) != l.Len() {
		t.Fatalf("%d Betas for %d genes", len(bs), l.Len())
	}
	for o := range N {
		for d := range 3 {
			if want := BucketBeta(cfg, d%2, 0); bs[l.Affinity(o, d)] != want {
				t.Fatalf("op %d device %d: %+v, want group %d's %+v", o, d, bs[l.Affinity(o, d)], d%2, want)
			}
		}
		if want := BucketBeta(cfg, 2, 0); bs[l.Priority(o)] != want {
			t.Fatalf("op %d priority: %+v, want %+v", o, bs[l.Priority(o)], want)
		}
	}
	for i := range p.Graph.NumTensors() {
		if bs[l.Transfer(i, 0)] != brkga.Uniform {
			t.Fatal("a transfer gene is not uniform")
		}
	}
}

func TestSampleDistribution(t *testing.T) {
	cfg := Config{MeanBuckets: 3, VarBuckets: 2, Devices: 1}.withDefaults()
	logits := []float32{0, float32(math.Log(2)), float32(math.Log(3)), 0, 0, 5, 0, 0, 0, 0}
	r := rand.New(rand.NewPCG(1, 1))
	var cnt [3]int
	const n = 60000
	for range n {
		a := Sample(cfg, logits, 1, r, false)
		cnt[a.M[0]]++
	}
	for i, want := range []float64{1.0 / 6, 2.0 / 6, 3.0 / 6} {
		if got := float64(cnt[i]) / n; math.Abs(got-want) > 0.01 {
			t.Errorf("bucket %d drawn %.4f, want %.4f", i, got, want)
		}
	}
	g := Sample(cfg, logits, 1, r, true)
	if g.M[0] != 2 || g.V[0] != 0 || g.M[1] != 0 {
		t.Errorf("greedy = %v %v", g.M, g.V)
	}
}

func TestModelRoundTrip(t *testing.T) {
	m, err := NewModel(tiny, 4)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.regal")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	m2, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Config() != m.Config() || !reflect.DeepEqual(m2.Net.Params()[3].W, m.Net.Params()[3].W) {
		t.Fatal("round trip changed the model")
	}
	for _, bad := range []string{"", "{}", `{"format":"x"}`, `{"format":"placer-regal-model","version":2}`} {
		if _, err := Read(bytes.NewReader([]byte(bad))); err == nil {
			t.Errorf("Read(%q) accepted", bad)
		}
	}
}

func TestREGALSameSeedSameResult(t *testing.T) {
	p := synthProblem(t, "ws", 2, 2)
	m, _ := NewModel(tiny, 1)
	s := &optimize.Settings{Budget: optimize.Budget{Evaluations: 300}, Seed: 7}
	a, err := (&REGAL{Model: m}).Optimize(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := (&REGAL{Model: m}).Optimize(context.Background(), p, s)
	if a.Eval.StepTime != b.Eval.StepTime || !reflect.DeepEqual(a.Decision, b.Decision) || a.Stats.Evaluations != 300 {
		t.Fatalf("two runs differ (%g, %g) or spent %d evaluations", a.Eval.StepTime, b.Eval.StepTime, a.Stats.Evaluations)
	}
	z, err := (&ZeroShot{Model: m, Samples: 5}).Optimize(context.Background(), p, s)
	if err != nil || z.Stats.Evaluations != 5 || z.Method != "regal-zero-shot" {
		t.Fatalf("zero-shot: %v, %d evaluations", err, z.Stats.Evaluations)
	}
}

func TestConformance(t *testing.T) {
	cs, err := methodstest.StandardCases()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewModel(tiny, 1)
	methodstest.Run(t, "regal", func() (optimize.Optimizer, error) { return &REGAL{Model: m}, nil }, cs, optimize.Settings{Budget: optimize.Budget{Evaluations: 150}, Seed: 2})
	methodstest.Run(t, "regal-zero-shot", func() (optimize.Optimizer, error) { return &ZeroShot{Model: m}, nil }, cs, optimize.Settings{Seed: 2})
}

// TestTrainResume trains 4 steps in one run and 2 + 2 in two, and wants
// the same weights and curve.
func TestTrainResume(t *testing.T) {
	for _, sil := range []float64{0, 1} {
		t.Run(fmt.Sprintf("self-imitation %g", sil), func(t *testing.T) { testTrainResume(t, sil) })
	}
}

// testTrainResume: with self-imitation the checkpoint also keeps each
// graph's best action, so a resumed run replays the same ones.
func testTrainResume(t *testing.T, sil float64) {
	var gs []TrainGraph
	for i, f := range []string{"er", "sbm", "ws"} {
		gs = append(gs, TrainGraph{Name: f, Problem: synthProblem(t, f, uint64(10+i), 2)})
	}
	dir := t.TempDir()
	mk := func(steps int, ck, resume string) *TrainResult {
		// Batch 1 of 3 graphs: a checkpoint after 2 steps has a graph
		// not yet visited.
		tr := &Train{Graphs: gs, Config: tiny, Seed: 3, Samples: 2, Batch: 1, Evaluations: 60, Steps: steps, Checkpoint: ck, Resume: resume, SelfImitation: sil}
		r, err := tr.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := mk(4, filepath.Join(dir, "a"), "")
	mk(2, filepath.Join(dir, "b"), "")
	b := mk(4, filepath.Join(dir, "b"), filepath.Join(dir, "b"))
	if a.Step != 4 || b.Step != 4 || len(b.Curve) != 4 {
		t.Fatalf("steps %d %d, curve %d", a.Step, b.Step, len(b.Curve))
	}
	for i := range a.Curve {
		if a.Curve[i].MeanReward != b.Curve[i].MeanReward {
			t.Fatalf("step %d: mean reward %g vs %g", i+1, a.Curve[i].MeanReward, b.Curve[i].MeanReward)
		}
	}
	if !reflect.DeepEqual(a.Model.Net.Params()[0].W, b.Model.Net.Params()[0].W) {
		t.Fatal("resumed weights differ")
	}
	m, err := Load(filepath.Join(dir, "b"))
	if err != nil || !reflect.DeepEqual(m.Net.Params()[0].W, b.Model.Net.Params()[0].W) {
		t.Fatalf("checkpoint is not the final model: %v", err)
	}
	_, st, err := LoadCheckpoint(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if kept := len(st.Best) == len(gs) && len(st.Best[0].M) > 0; kept != (sil > 0) {
		t.Errorf("self-imitation %g: the checkpoint keeps best actions %v", sil, kept)
	}
}
