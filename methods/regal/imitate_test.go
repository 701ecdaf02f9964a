package regal

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
	"github.com/placer/placer/optimize"
)

// TestNewTargets computes the targets of a three-op chain a -> b -> c on
// two GPUs by hand (5 mean buckets: means 1/6 .. 5/6; 2 variance buckets).
func TestNewTargets(t *testing.T) {
	p, err := methodstest.NewProblem(graphtest.Chains(1, 3, 1e-3, 4), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := tiny.withDefaults() // 2 devices: groups 0, 1 (affinities), 2 (priority)
	in, err := NewInput(p, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Teacher 1 runs a, b on GPU 1 and c on GPU 0; GPU 1's ops come first
	// (mean topological index 0.5 against 2), so it is renamed 0. Its
	// order is a, b, c: keys 1, 1/2, 0 -> mean buckets round(6 key) - 1
	// clamped: 4, 2, 0.
	t1 := decision.Decision{Device: []int{1, 1, 0}, Priority: []int{3, 2, 1}}
	// Teacher 2 runs a on GPU 0 and b, c on GPU 1 (no renaming), in the
	// same order.
	t2 := decision.Decision{Device: []int{0, 1, 1}, Priority: []int{30, 20, 10}}
	tg, err := NewTargets(cfg, p, in, []decision.Decision{t1, t2}, TargetOptions{Spread: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Canonical devices: t1 a:0 b:0 c:1; t2 a:0 b:1 c:1.
	want := map[[3]int]float64{ // (op, group, mean bucket) -> weight
		{0, 0, 4}: 1, {0, 1, 0}: 1, // a on 0 for both
		{1, 0, 4}: 0.5, {1, 0, 0}: 0.5, {1, 1, 0}: 0.5, {1, 1, 4}: 0.5, // b split
		{2, 0, 0}: 1, {2, 1, 4}: 1, // c on 1 for both
		{0, 2, 4}: 1, {1, 2, 2}: 1, {2, 2, 0}: 1, // priorities
	}
	G, km, kv := cfg.Groups(), cfg.MeanBuckets, cfg.VarBuckets
	for v := range 3 {
		for g := range G {
			for m := range km {
				if got := tg.TM[(v*G+g)*km+m]; math.Abs(got-want[[3]int{v, g, m}]) > 1e-12 {
					t.Errorf("op %d group %d mean bucket %d: %g, want %g", v, g, m, got, want[[3]int{v, g, m}])
				}
			}
			for s := range kv {
				w := 0.0
				if s == 1 {
					w = 1
				}
				if got := tg.TV[(v*G+g)*kv+s]; got != w {
					t.Errorf("op %d group %d variance bucket %d: %g, want %g", v, g, s, got, w)
				}
			}
		}
	}
	// Left-out groups target the uniform buckets (mean 2, variance 1 of a
	// 5 x 5 quantization).
	cfg5 := Config{Layers: 1, Dim: 4, Neighbors: 2, Hidden: 4}.withDefaults()
	in5, _ := NewInput(p, cfg5, 1)
	tg, err = NewTargets(cfg5, p, in5, []decision.Decision{t1}, TargetOptions{SkipPlacement: true})
	if err != nil {
		t.Fatal(err)
	}
	G, km, kv = cfg5.Groups(), cfg5.MeanBuckets, cfg5.VarBuckets
	if tg.TM[(0*G+0)*km+2] != 1 || tg.TV[(0*G+1)*kv+1] != 1 || tg.TM[(0*G+2)*km+4] != 1 || tg.TV[(0*G+2)*kv+0] != 1 {
		t.Errorf("skip placement: affinities should target the uniform buckets and the priority its own: %v %v", tg.TM[:G*km], tg.TV[:G*kv])
	}
	// Bad input.
	if _, err := NewTargets(cfg, p, in, []decision.Decision{{Device: []int{0, 2, 0}, Priority: []int{1, 2, 3}}}, TargetOptions{}); err == nil {
		t.Error("a teacher on device 2 of 2 was accepted")
	}
	if _, err := NewTargets(cfg, p, in, []decision.Decision{t1}, TargetOptions{Spread: 2}); err == nil {
		t.Error("spread 2 of 2 variance buckets was accepted")
	}
	cfg3 := Config{Layers: 1, Dim: 4, Neighbors: 2, Hidden: 4, MeanBuckets: 4, VarBuckets: 3}.withDefaults()
	if _, err := NewTargets(cfg3, p, in, []decision.Decision{t1}, TargetOptions{SkipPriority: true}); err == nil {
		t.Error("a quantization without the uniform buckets was accepted with a skipped group")
	}
}

// TestImitationGrad checks the cross-entropy gradient against finite
// differences, and through the whole network in float64.
func TestImitationGrad(t *testing.T) {
	p := synthProblem(t, "ws", 4, 2)
	cfg := tiny.withDefaults()
	in, err := NewInput(p, cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	tg := &Targets{N: in.N, TM: make([]float64, in.N*cfg.Groups()*cfg.MeanBuckets), TV: make([]float64, in.N*cfg.Groups()*cfg.VarBuckets)}
	for _, ts := range []struct {
		x []float64
		k int
	}{{tg.TM, cfg.MeanBuckets}, {tg.TV, cfg.VarBuckets}} {
		for i := 0; i < len(ts.x); i += ts.k {
			s := 0.0
			for j := range ts.k {
				ts.x[i+j] = r.Float64()
				s += ts.x[i+j]
			}
			for j := range ts.k {
				ts.x[i+j] /= s
			}
		}
	}
	n := NewNet[float64](cfg, 9)
	for _, q := range n.Params() {
		for i := range q.W {
			q.W[i] += 0.1 * (r.Float64()*2 - 1)
		}
	}
	lossOf := func(lg []float64) float64 {
		d := make([]float64, len(lg))
		l, _ := ImitationGrad(cfg, lg, tg, d)
		return l
	}
	ar := &nn.Arena[float64]{}
	lg, c := n.Forward(ar, in.X, in.N, in.Nbrs)
	logits := append([]float64(nil), lg...)
	d := make([]float64, len(logits))
	ImitationGrad(cfg, logits, tg, d)
	nntest.Check(t, func() float64 { return lossOf(logits) }, []nntest.Target{{Name: "logits", X: logits, Grad: d}}, 40, 1e-6, 1e-6, 1e-9)
	n.Params().ZeroGrad()
	n.Backward(ar, c, d)
	f := func() float64 {
		ar := &nn.Arena[float64]{}
		lg, _ := n.Forward(ar, in.X, in.N, in.Nbrs)
		return lossOf(lg)
	}
	if got := nntest.Check(t, f, nntest.ParamTargets(n.Params()), 12, 1e-6, 1e-4, 1e-8); got < 50 {
		t.Fatalf("checked only %d entries", got)
	}
}

// TestImitation fits a small network to the teachers of three graphs:
// the fit lowers the loss, the same seed gives the same weights, and a
// teacher file gives the same model as running the teachers.
func TestImitation(t *testing.T) {
	var gs []TrainGraph
	for i, f := range []string{"er", "sbm", "ws"} {
		gs = append(gs, TrainGraph{Name: f, Problem: synthProblem(t, f, uint64(20+i), 2)})
	}
	file := filepath.Join(t.TempDir(), "teachers.json")
	run := func(tf string) *ImitationResult {
		im := &Imitation{Graphs: gs, Config: tiny, Seed: 4, Objective: optimize.PeakMemory, Teachers: 2, TeacherEvaluations: 300, Epochs: 30,
			LearningRate: 1e-2, TeacherFile: tf}
		r, err := im.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := run("")
	if len(a.Curve) != 30 || len(a.Teacher) != 3 || a.Model.Objective != optimize.PeakMemory {
		t.Fatalf("curve %d, teachers %d, objective %v", len(a.Curve), len(a.Teacher), a.Model.Objective)
	}
	if first, last := a.Curve[0].Loss, a.Curve[29].Loss; !(last < first) {
		t.Errorf("the fit did not lower the loss: %g -> %g", first, last)
	}
	b := run(file)
	if _, err := os.Stat(file); err != nil {
		t.Fatal("no teacher file written:", err)
	}
	c := run(file) // read back
	for _, r := range []*ImitationResult{b, c} {
		if !reflect.DeepEqual(a.Model.Net.Params()[0].W, r.Model.Net.Params()[0].W) || !reflect.DeepEqual(a.Teacher, r.Teacher) {
			t.Fatal("same seed, different model or teachers")
		}
	}
	// A teacher file of other teachers is not read back.
	if err := os.WriteFile(file, []byte(`{"format":"placer-regal-teachers","objective":"step-time"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := run(file); !reflect.DeepEqual(a.Model.Net.Params()[0].W, d.Model.Net.Params()[0].W) {
		t.Fatal("a mismatched teacher file changed the model")
	}
}
