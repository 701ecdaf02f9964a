package hdp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

// diamond is a → {b, c} (one tensor of 1,023 bytes), b → d (255 bytes),
// c → d (15 bytes); a and c of type T0, b and d of type T1; b and c
// co-located when coloc.
func diamond(t *testing.T, coloc bool) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("diamond")
	a := b.AddOp(graph.Op{Name: "a", Type: "T0", HasTime: true, Time: 1e-3})
	x := b.AddOp(graph.Op{Name: "b", Type: "T1", HasTime: true, Time: 1e-3})
	c := b.AddOp(graph.Op{Name: "c", Type: "T0", HasTime: true, Time: 1e-3})
	d := b.AddOp(graph.Op{Name: "d", Type: "T1", HasTime: true, Time: 1e-3})
	if coloc {
		b.Op(x).Colocation = "g"
		b.Op(c).Colocation = "g"
	}
	b.AddTensor(a, 1023, x, c)
	b.AddTensor(x, 255, d)
	b.AddTensor(c, 15, d)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGraphDataHand: the grouper's units and inputs on the diamond, by
// hand. log-sizes are log2(1 + bytes) / 32: 10/32, 8/32, 4/32.
func TestGraphDataHand(t *testing.T) {
	l3 := math.Log2(3) / 8
	for _, tc := range []struct {
		name   string
		coloc  bool
		unitOf []int32
		types  []int32
		feats  [][]float64 // sizes (4), position, log preds, log succs, preds' and succs' mean positions
	}{
		{"free", false, []int32{0, 1, 2, 3}, []int32{0, 1, 0, 1}, [][]float64{
			{10. / 32, 0, 0, 0, 0, 0, l3, 0, 0.5},
			{8. / 32, 0, 0, 0, 1. / 3, 1. / 8, 1. / 8, 0, 1},
			{4. / 32, 0, 0, 0, 2. / 3, 1. / 8, 1. / 8, 0, 1},
			{0, 0, 0, 0, 1, l3, 0, 0.5, 1},
		}},
		// b and c are one unit, described by b (its first op).
		{"colocated", true, []int32{0, 1, 1, 2}, []int32{0, 1, 1}, [][]float64{
			{10. / 32, 0, 0, 0, 0, 0, l3, 0, 0.5},
			{8. / 32, 0, 0, 0, 1. / 3, 1. / 8, 1. / 8, 0, 1},
			{0, 0, 0, 0, 1, l3, 0, 0.5, 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newGraphData(diamond(t, tc.coloc))
			if d.types != 2 || !slices.Equal(d.unitOf, tc.unitOf) || !slices.Equal(d.unitType, tc.types) {
				t.Fatalf("types %d, units %v of types %v; want 2, %v, %v", d.types, d.unitOf, d.unitType, tc.unitOf, tc.types)
			}
			for u, want := range tc.feats {
				got := d.unitFeats[u*NumOpFeatures : (u+1)*NumOpFeatures]
				for j := range want {
					if math.Abs(got[j]-want[j]) > 1e-12 {
						t.Errorf("unit %d: features %v, want %v", u, got, want)
						break
					}
				}
			}
		})
	}
}

// TestEmbedHand: the group embeddings of two groupings of the diamond
// (b and c co-located) into two groups, by hand. Per group: type counts
// (T0, T1), summed log-sizes (4), edges to groups 0 and 1, edges from
// groups 0 and 1; divided by the row's largest entry plus one.
func TestEmbedHand(t *testing.T) {
	d := newGraphData(diamond(t, true))
	// Sample 0: {a} and {b, c, d}; sample 1: everything in group 1.
	groupings := [][]int32{{0, 1, 1}, {1, 1, 1}}
	want := [][]float64{
		// group 0, sample 0: a; edges a→b, a→c to group 1.
		{1. / 3, 0, 10. / 32 / 3, 0, 0, 0, 0, 2. / 3, 0, 0},
		// group 0, sample 1: empty.
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		// group 1, sample 0: b, c, d; b→d, c→d inside, a→b, a→c from 0.
		{1. / 3, 2. / 3, 12. / 32 / 3, 0, 0, 0, 0, 2. / 3, 2. / 3, 2. / 3},
		// group 1, sample 1: all four ops and all four edges.
		{2. / 5, 2. / 5, 22. / 32 / 5, 0, 0, 0, 0, 4. / 5, 0, 4. / 5},
	}
	e := d.embedDim(2)
	if e != 10 {
		t.Fatalf("embedding of %d, want 10", e)
	}
	x := make([]float64, 4*e)
	for i := range x {
		x[i] = 7 // embed overwrites
	}
	embed(d, 2, groupings, x)
	for r, w := range want {
		got := x[r*e : (r+1)*e]
		for j := range w {
			if math.Abs(got[j]-w[j]) > 1e-12 {
				t.Errorf("row %d: %v, want %v", r, got, w)
				break
			}
		}
	}
}

// gradProblem is a small model in float64 with random parameters, k
// random groupings and placements, and weights.
func gradProblem(t *testing.T, extra Config) (m *model[float64], x []float64, groupings [][]int32, devs [][]int, w []float64) {
	t.Helper()
	g, err := nntest.RandomDAG("grad", 40, 0.3, 9)
	if err != nil {
		t.Fatal(err)
	}
	d := newGraphData(g)
	if d.units() >= g.NumOps() || d.units() < 10 {
		t.Fatalf("%d units of %d ops: the test wants some co-location", d.units(), g.NumOps())
	}
	const groups, devices, k = 4, 3, 3
	// Clusters for the locality seed: five, folded into the four groups.
	of := make([]int32, g.NumOps())
	for op, u := range d.unitOf {
		of[op] = u % 5
	}
	d.setClusters(of, 5, 4)
	cfg := extra
	cfg.Groups, cfg.GroupHidden, cfg.Hidden, cfg.DeviceDim = groups, 4, 5, 2
	m = newModel[float64](d, devices, cfg, 7)
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range m.params() {
		for i := range p.W {
			p.W[i] += 0.2 * (2*r.Float64() - 1)
		}
	}
	groupings = make([][]int32, k)
	devs = make([][]int, k)
	w = make([]float64, k)
	for s := range k {
		groupings[s] = make([]int32, d.units())
		for i := range groupings[s] {
			groupings[s][i] = int32(r.IntN(groups))
		}
		devs[s] = make([]int, groups)
		for i := range devs[s] {
			devs[s][i] = r.IntN(devices)
		}
		w[s] = 2*r.Float64() - 1
	}
	x = make([]float64, groups*k*d.embedDim(groups))
	embed(d, groups, groupings, x)
	return m, x, groupings, devs, w
}

// gradVariants are the controller's variants the gradient checks cover:
// the defaults (TensorFlow's tanh constant 1 and temperature 1, the
// locality seed), the grouper without the seed, no tanh bound
// with a temperature, and the tanh bound with a temperature and the logit
// noise of the first steps (its scales as sampling would have set them).
var gradVariants = []struct {
	name  string
	cfg   Config
	noise bool
}{
	{"tanh-locality", Config{}, false},
	{"published-grouper", Config{Locality: -1}, false},
	{"plain-temperature", Config{TanhConstant: -1, Temperature: 2}, false},
	{"tanh2-temperature-noise", Config{TanhConstant: 2, Temperature: 0.7}, true},
}

// variantNoise is the noise of a gradient check's variant: fixed scales
// (sampling would compute them from the logits) and seed.
func variantNoise(m *model[float64], k int, on bool) *noise {
	if !on {
		return nil
	}
	nz := &noise{on: true, seed: 11, group: 0.3, place: make([]float64, k*m.cfg.Groups)}
	for i := range nz.place {
		nz.place[i] = 0.1 + 0.05*float64(i%3)
	}
	return nz
}

// TestModelGradient checks the joint REINFORCE gradient (the grouper's
// type embedding and layers and its locality matrix, the placer's encoder, attention per sample,
// teacher-forced decoder with its tanh-bounded, tempered and noisy
// logits, and embeddings) against central finite differences of its
// loss, in float64.
func TestModelGradient(t *testing.T) {
	for _, v := range gradVariants {
		t.Run(v.name, func(t *testing.T) {
			m, x, groupings, devs, w := gradProblem(t, v.cfg)
			nz := variantNoise(m, len(w), v.noise)
			ps := m.params()
			loss := nntest.KeepGrads(ps, func() float64 {
				var ar nn.Arena[float64]
				return m.reinforce(&ar, x, groupings, devs, w, nz)
			})
			ps.ZeroGrad()
			var ar nn.Arena[float64]
			m.reinforce(&ar, x, groupings, devs, w, nz)
			grouper := 0.0
			for _, p := range m.grouperParams() {
				for _, v := range p.G {
					grouper += v * v
				}
			}
			if grouper == 0 {
				t.Fatal("no gradient reached the grouper")
			}
			// The loss sums about 40 log-probabilities per sample: a step of
			// 1e-5 keeps the differences' rounding (1e-16 x 50 / h) under 1e-9.
			if c := nntest.Check(t, loss, nntest.ParamTargets(ps), 25, 1e-5, 1e-5, 1e-8); c < 150 {
				t.Fatalf("only %d entries compared", c)
			}
		})
	}
}

// TestNoiseChangesLogProb: the noise is part of the distribution the
// samples are drawn from and scored by (a check that fails if reinforce
// ignored it): the same samples score differently with and without it.
func TestNoiseChangesLogProb(t *testing.T) {
	m, x, groupings, devs, w := gradProblem(t, Config{})
	var ar nn.Arena[float64]
	plain := m.reinforce(&ar, x, groupings, devs, w, nil)
	noisy := m.reinforce(&ar, x, groupings, devs, w, variantNoise(m, len(w), true))
	m.params().ZeroGrad()
	if math.Abs(plain-noisy) < 1e-6*math.Abs(plain) {
		t.Errorf("loss %v with noise, %v without", noisy, plain)
	}
}

// TestTanhBound: with TensorFlow's tanh constant 1 the placer's logits lie
// in [-1, 1], so on three devices no device gets a probability above
// e / (e + 2/e) = 0.787 (hand-computed), whatever the weights.
func TestTanhBound(t *testing.T) {
	m, x, _, _, _ := gradProblem(t, Config{})
	for _, p := range m.params() {
		for i := range p.W {
			p.W[i] *= 50 // saturate every logit
		}
	}
	var ar nn.Arena[float64]
	rng := rand.New(rand.NewPCG(1, 2))
	k := 3
	devs, logp, _ := m.sample(&ar, rng, x, k, nil)
	bound := math.E / (math.E + 2/math.E)
	for s := range k {
		// Every decision's probability is at most the bound.
		if max := float64(len(devs[s])) * math.Log(bound); logp[s] > max+1e-9 {
			t.Errorf("sample %d: log-probability %v above the bound's %v", s, logp[s], max)
		}
	}
}

// TestSampleLogProb: the log-probabilities of the groupings and
// placements as sampled equal the teacher-forced ones of reinforce (whose
// loss with w = -1 for one sample, 0 for the others, is that sample's
// joint log-probability).
func TestSampleLogProb(t *testing.T) {
	for _, v := range gradVariants {
		t.Run(v.name, func(t *testing.T) {
			m, _, _, _, _ := gradProblem(t, v.cfg)
			var ar nn.Arena[float64]
			rng := rand.New(rand.NewPCG(5, 6))
			const k = 3
			var nz *noise
			if v.noise {
				nz = &noise{on: true, seed: 9}
			}
			groupings, glogp, gent := m.group(&ar, rng, k, nz)
			n := m.cfg.Groups
			x := make([]float64, n*k*m.d.embedDim(n))
			embed(m.d, n, groupings, x)
			devs, plogp, pent := m.sample(&ar, rng, x, k, nz)
			if gent <= 0 || gent > math.Log(float64(n))+1e-9 || pent <= 0 || pent > math.Log(3)+1e-9 {
				t.Errorf("entropies %v and %v out of range", gent, pent)
			}
			if v.noise && (nz.group <= 0 || nz.place[0] <= 0) {
				t.Errorf("noise scales %v and %v, want positive", nz.group, nz.place[0])
			}
			for s := range k {
				w := make([]float64, k)
				w[s] = -1
				got := m.reinforce(&ar, x, groupings, devs, w, nz)
				if want := glogp[s] + plogp[s]; math.Abs(got-want) > 1e-9*math.Abs(want) {
					t.Errorf("sample %d: teacher-forced log-probability %v, sampled %v + %v", s, got, glogp[s], plogp[s])
				}
			}
			m.params().ZeroGrad()
		})
	}
}

// TestSetClusters: units take their ops' clusters, folded c*g/n into g
// groups when there are more than g (hand-computed).
func TestSetClusters(t *testing.T) {
	d := &graphData{unitOf: []int32{0, 0, 1, 2, 3}, unitType: make([]int32, 4)}
	d.setClusters([]int32{0, 0, 1, 2, 4}, 5, 40)
	if want := []int32{0, 1, 2, 4}; !slices.Equal(d.cluster, want) {
		t.Errorf("clusters %v, want %v", d.cluster, want)
	}
	d.setClusters([]int32{0, 0, 1, 2, 4}, 5, 2) // 0,1,2,4 -> 0,0,0,1
	if want := []int32{0, 0, 0, 1}; !slices.Equal(d.cluster, want) {
		t.Errorf("folded clusters %v, want %v", d.cluster, want)
	}
}
