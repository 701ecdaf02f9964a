package export

import (
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// reuse is a hand-made exported graph whose module blk is called twice:
// blk, then mid, then blk again on mid's output (as a model reusing a
// block), the root's loss, the backward in reverse and both optimizer
// steps.
func reuse(t *testing.T) (*graph.Graph, *TorchMeta) {
	t.Helper()
	b := graph.NewBuilder("reuse")
	b.SetBatch(8)
	ops := []struct {
		name, module, phase, param string
		flops                      float64
		call                       int
	}{
		{"input0", "", "input", "", 0, 0},                  // 0
		{"param:blk.w", "blk", "parameter", "blk.w", 0, 0}, // 1
		{"blk/mm", "blk", "forward", "", 100, 0},           // 2
		{"param:mid.w", "mid", "parameter", "mid.w", 0, 0}, // 3
		{"mid/mm", "mid", "forward", "", 100, 0},           // 4
		{"blk/mm#1", "blk", "forward", "", 100, 1},         // 5: blk's second call
		{"model/loss", "", "forward", "", 10, 0},           // 6
		{"model/bwd/loss", "", "backward", "", 10, 0},      // 7
		{"blk/bwd/mm#1", "blk", "backward", "", 200, 0},    // 8
		{"mid/bwd/mm", "mid", "backward", "", 200, 0},      // 9
		{"blk/bwd/mm", "blk", "backward", "", 200, 0},      // 10
		{"blk/adam:w", "blk", "optimizer", "blk.w", 10, 0}, // 11
		{"mid/adam:w", "mid", "optimizer", "mid.w", 10, 0}, // 12
	}
	m := &TorchMeta{Format: TorchMetaFormat, Version: 1}
	for _, o := range ops {
		b.AddOp(graph.Op{Name: o.name, FLOPs: o.flops})
		m.Ops = append(m.Ops, TorchOp{Name: o.name, Module: o.module, Call: o.call, Phase: o.phase, Param: o.param})
	}
	for _, e := range [][2]int{{0, 2}, {1, 2}, {2, 4}, {3, 4}, {4, 5}, {1, 5}, {5, 6}, {6, 7}, {7, 8}, {4, 8}, {1, 8},
		{8, 9}, {2, 9}, {9, 10}, {0, 10}, {1, 11}, {8, 11}, {10, 11}, {3, 12}, {9, 12}} {
		b.AddTensor(e[0], 8, e[1])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g, m
}

// TestRealize: the placement each decision runs as, by hand. Units are
// cut as NewTorchPlan cuts them; every op of a unit on its stage; the
// root's loss on the stage of its input; an input on its first
// consumer's stage; a reused module's second call (and its backward) on
// the stage its input comes from, its parameter listed as shared.
func TestRealize(t *testing.T) {
	lmG, lmM := lm(t)
	reG, reM := reuse(t)
	for _, c := range []struct {
		name   string
		g      *graph.Graph
		meta   *TorchMeta
		dev    []int
		stages int
		want   []int
		shared []TorchShared
	}{
		{"pipeline", lmG, lmM, []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, 0, []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, nil},
		// The attention apart: emb on 0, the rest on 1, the input with
		// the embedding.
		{"attention apart", lmG, lmM, []int{0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1}, 0, []int{0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, nil},
		// The head alone on 1 (emb moved to 0), the loss with it.
		{"not contiguous", lmG, lmM, []int{1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}, 0, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}, nil},
		// Scattered small ops come home: the loss follows the head.
		{"scattered", lmG, lmM, []int{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, 0, make([]int, 13), nil},
		// Two stages asked for of a placement on 0: the unit at an end
		// with the least work leaves (emb, 101 + 1, against the head's
		// 2001 + 1; blk's 11 is in the middle), with its input.
		{"two stages", lmG, lmM, make([]int, 13), 2, []int{1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, nil},
		// blk on 0, mid on 1: blk's second call runs on 1 after mid (as
		// its backward), its first call and optimizer on 0.
		{"reused block", reG, reM, []int{0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1}, 0, []int{0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},
			[]TorchShared{{Param: "blk.w", Stages: []int{0, 1}}}},
	} {
		r, err := NewRealizer(c.g, c.meta)
		if err != nil {
			t.Fatal(err)
		}
		r.Stages = c.stages
		s := decision.Strategy{MicroBatches: 2, Schedule: decision.OneFOneB}
		d, err := r.Realize(decision.Decision{Device: c.dev, Fusion: decision.TopologicalFusion(c.g), Strategy: s}, 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(d.Device, c.want) {
			t.Errorf("%s: realized %v, want %v", c.name, d.Device, c.want)
		}
		if d.Fusion != nil || d.Strategy != s || d.Priority[0] != c.g.NumOps() || d.Priority[c.g.NumOps()-1] != 1 {
			t.Errorf("%s: fusion %v, strategy %v, priorities %v: want none, %v, program order", c.name, d.Fusion, d.Strategy, d.Priority, s)
		}
		p, err := r.Plan(c.dev, 2, s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Shared, c.shared) {
			t.Errorf("%s: shared %+v, want %+v", c.name, p.Shared, c.shared)
		}
		if c.name == "reused block" {
			// blk's calls run on two stages: each listed as the runner
			// reads it (blk#k, its k-th call), in forward order.
			var got [][]string
			for _, st := range p.Stages {
				got = append(got, st.Modules)
			}
			if want := [][]string{{"blk#0"}, {"mid", "blk#1"}}; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: stages' modules %v, want %v", c.name, got, want)
			}
		}
		// The plan read back is the realized decision.
		back, err := r.Decision(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Device, d.Device) || back.Strategy != s {
			t.Errorf("%s: the plan reads back as %v %v, want %v %v", c.name, back.Device, back.Strategy, d.Device, s)
		}
	}
}

// TestRealizeProperties: for random placements of the hand-made graphs on
// 1 to 4 devices, with and without a number of stages asked for, the
// realized decision is a fixed point (realizing it changes nothing),
// its units' runs are contiguous (a device's units form one run), no
// forward op runs on a stage before one of its forward inputs, the
// number of stages is the one asked for where the replica can hold it,
// and the plan read back is the realized decision.
func TestRealizeProperties(t *testing.T) {
	if g, m := lm(t); !func() bool { r, _ := NewRealizer(g, m); return slices.Contains(r.container, true) }() {
		t.Fatal("lm has no container unit: the property below is not exercised")
	}
	lmG, lmM := lm(t)
	reG, reM := reuse(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, gm := range []struct {
		g *graph.Graph
		m *TorchMeta
	}{{lmG, lmM}, {reG, reM}} {
		r, err := NewRealizer(gm.g, gm.m)
		if err != nil {
			t.Fatal(err)
		}
		n := gm.g.NumOps()
		for trial := range 400 {
			devices := 1 + trial%4
			r.Stages = trial % 3
			dev := make([]int, n)
			for i := range dev {
				dev[i] = rng.IntN(devices)
			}
			d, err := r.Realize(decision.Decision{Device: dev}, devices)
			if err != nil {
				t.Fatal(err)
			}
			again, err := r.Realize(d, devices)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again.Device, d.Device) {
				t.Fatalf("%s %v on %d: realized %v, realized again %v", gm.g.Name(), dev, devices, d.Device, again.Device)
			}
			stageDev, _, _ := r.fixedCut(dev, devices)
			seen, runs := map[int]bool{}, 0
			for k, s := range stageDev {
				if k == 0 || s != stageDev[k-1] {
					if seen[s] {
						t.Fatalf("%v: device %d has two runs: %v", dev, s, stageDev)
					}
					seen[s] = true
					runs++
				}
			}
			if want := min(r.Stages, devices, len(r.units)); r.Stages > 0 && runs != want && !absorbed(r, dev, devices) {
				t.Fatalf("%v: %d stages, asked for %d", dev, runs, want)
			}
			for k := 0; k < len(stageDev); {
				j, only := k, true
				for ; j < len(stageDev) && stageDev[j] == stageDev[k]; j++ {
					only = only && r.container[j]
				}
				if only && len(stageDev) > j-k {
					t.Fatalf("%v: units %d-%d, containers only, are a stage of their own: %v", dev, k, j-1, stageDev)
				}
				k = j
			}
			stage := map[int]int{}
			for k, s := range r.stageIndex(stageDev, devices) {
				stage[stageDev[k]] = s
			}
			for i := range n {
				if r.phase[i] != "forward" {
					continue
				}
				for _, tn := range gm.g.Inputs(i) {
					p := gm.g.Tensor(int(tn)).Producer
					if r.phase[p] == "forward" && stage[d.Device[p]] > stage[d.Device[i]] {
						t.Fatalf("%v: op %d on stage %d reads op %d of stage %d", dev, i, stage[d.Device[i]], p, stage[d.Device[p]])
					}
				}
			}
			p, err := r.Plan(dev, devices, decision.Strategy{})
			if err != nil {
				t.Fatal(err)
			}
			back, err := r.Decision(p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Device, d.Device) {
				t.Fatalf("%v: plan reads back as %v, realized %v", dev, back.Device, d.Device)
			}
		}
	}
}

// TestRealizeZoo: on the zoo's models (make zoo; skipped without them),
// random placements on 4 and 8 GPUs and placements one move away from a
// pipeline realize to a fixed point whose plan reads back as itself, each
// co-location group on one device.
func TestRealizeZoo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, path := range zooFiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		meta, err := ReadTorchMeta(strings.TrimSuffix(path, ".json")+".meta.json", g)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewRealizer(g, meta)
		if err != nil {
			t.Fatal(err)
		}
		n := g.NumOps()
		for trial := range 6 {
			devices := 4 + 4*(trial%2)
			dev := make([]int, n)
			for i := range dev {
				if trial < 2 {
					dev[i] = rng.IntN(devices)
				} else {
					dev[i] = i * devices / n
				}
			}
			if trial >= 2 {
				dev[rng.IntN(n)] = rng.IntN(devices)
			}
			d, err := r.Realize(decision.Decision{Device: dev}, devices)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := r.Realize(d, devices)
			if !reflect.DeepEqual(again.Device, d.Device) {
				t.Fatalf("%s: realizing a realized placement on %d GPUs changed it", g.Name(), devices)
			}
			p, err := r.Plan(dev, devices, decision.Strategy{})
			if err != nil {
				t.Fatal(err)
			}
			back, err := r.Decision(p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Device, d.Device) {
				t.Fatalf("%s: the plan reads back as another placement", g.Name())
			}
			group := map[int]int{}
			for i := range n {
				if k := g.Colocation(i); k >= 0 {
					if j, ok := group[k]; ok && d.Device[j] != d.Device[i] {
						t.Fatalf("%s: co-location group %s on devices %d and %d", g.Name(), g.ColocationName(k), d.Device[j], d.Device[i])
					}
					group[k] = i
				}
			}
		}
	}
}

// absorbed reports whether Cut's program, before containers join their
// neighbours, cut dev with a run of container units alone (so that Cut
// may give fewer stages than asked for).
func absorbed(r *Realizer, dev []int, devices int) bool {
	raw, _, err := r.cut(dev, devices)
	if err != nil {
		return false
	}
	for k := 0; k < len(raw); {
		j, only := k, true
		for ; j < len(raw) && raw[j] == raw[k]; j++ {
			only = only && r.container[j]
		}
		if only {
			return true
		}
		k = j
	}
	return false
}

// TestAbsorbContainers: a run of container units alone joins the run
// after it (the last run, the one before it); other runs stay.
func TestAbsorbContainers(t *testing.T) {
	for _, c := range []struct {
		container []bool
		in, want  []int
	}{
		{[]bool{true, false, false}, []int{0, 1, 1}, []int{1, 1, 1}},
		{[]bool{false, true}, []int{0, 1}, []int{0, 0}},
		{[]bool{true, true, false, false}, []int{2, 3, 0, 1}, []int{0, 0, 0, 1}},
		{[]bool{false, true, false}, []int{0, 1, 2}, []int{0, 2, 2}},
		{[]bool{false, true, false}, []int{0, 0, 2}, []int{0, 0, 2}},
		{[]bool{false, false, false}, []int{0, 1, 2}, []int{0, 1, 2}},
	} {
		r := &Realizer{container: c.container}
		got := slices.Clone(c.in)
		r.absorbContainers(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("containers %v, cut %v: %v, want %v", c.container, c.in, got, c.want)
		}
	}
}
