package workloads

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
)

// TestSyntheticStatistics checks the generator's distributions over 1,000 graphs.
func TestSyntheticStatistics(t *testing.T) {
	const graphs = 1000
	var nodes, nodes2 float64
	var outCount [3]float64
	var inner float64
	var deps, control float64
	var sizes, sizes2, nsizes float64
	var noise, noise2, nnoise float64
	minN, maxN := 1<<30, 0
	fams := SyntheticFamilies()
	for i := 0; i < graphs; i++ {
		g, err := Synthetic(fams[i%len(fams)], uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		nn := g.NumOps() - 2
		minN, maxN = min(minN, nn), max(maxN, nn)
		nodes += float64(nn)
		nodes2 += float64(nn * nn)
		src, _ := g.Lookup("source")
		sink, _ := g.Lookup("sink")
		if len(g.Preds(src)) != 0 || len(g.Succs(sink)) != 0 || g.Op(src).Time != 0 || g.Op(sink).Time != 0 {
			t.Fatalf("graph %d: source/sink wrong", i)
		}
		for op := 0; op < g.NumOps(); op++ {
			if op == src || op == sink {
				continue
			}
			if len(g.Preds(op)) == 0 || len(g.Succs(op)) == 0 {
				t.Fatalf("graph %d: op %s is a head or tail", i, g.Op(op).Name)
			}
			k := len(g.Outputs(op))
			outCount[k]++
			inner++
			if k > 0 {
				for _, tt := range g.Outputs(op) {
					deps += float64(len(g.Tensor(int(tt)).Consumers))
				}
				deps += float64(len(g.ControlSuccs(op)))
				control += float64(len(g.ControlSuccs(op)))
			}
			var units float64
			for _, tt := range g.Inputs(op) {
				units += float64(g.Tensor(int(tt)).Bytes) / SynthUnitBytes
			}
			for _, tt := range g.Outputs(op) {
				units += float64(g.Tensor(int(tt)).Bytes) / SynthUnitBytes
			}
			o := g.Op(op)
			if !o.HasTime {
				t.Fatal("op without a measured time")
			}
			if units > 0 {
				r := o.Time/SynthUnitTime/units - 1
				noise += r
				noise2 += r * r
				nnoise++
			}
		}
		for tt := 0; tt < g.NumTensors(); tt++ {
			s := float64(g.Tensor(tt).Bytes) / SynthUnitBytes
			sizes += s
			sizes2 += s * s
			nsizes++
		}
	}
	mean := func(s, n float64) float64 { return s / n }
	std := func(s, s2, n float64) float64 { m := s / n; return math.Sqrt(s2/n - m*m) }
	check := func(what string, got, want, tol float64) {
		t.Logf("%s = %.4f (want %.4f +- %.4f)", what, got, want, tol)
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.4f, want %.4f +- %.4f", what, got, want, tol)
		}
	}
	if minN < SynthMinNodes || maxN > SynthMaxNodes {
		t.Errorf("node counts %d..%d", minN, maxN)
	}
	check("mean nodes", mean(nodes, graphs), 125, 3)
	check("node std", std(nodes, nodes2, graphs), 151/math.Sqrt(12), 3)
	for k, p := range SynthOutputProbs {
		check("P(outputs="+string(rune('0'+k))+")", outCount[k]/inner, p, 0.01)
	}
	check("control fraction", control/deps, SynthControlP, 0.01)
	check("size mean", mean(sizes, nsizes), SynthSizeMean, 0.3)
	check("size std", std(sizes, sizes2, nsizes), SynthSizeStd, 0.3)
	check("time noise mean", mean(noise, nnoise), 0, 0.005)
	check("time noise std", std(noise, noise2, nnoise), SynthTimeNoise, 0.005)
}

func TestSyntheticDeterministic(t *testing.T) {
	for _, f := range SyntheticFamilies() {
		a, err := Synthetic(f, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Synthetic(f, 7)
		c, _ := Synthetic(f, 8)
		var ba, bb, bc bytes.Buffer
		graph.Write(&ba, a)
		graph.Write(&bb, b)
		graph.Write(&bc, c)
		if !bytes.Equal(ba.Bytes(), bb.Bytes()) {
			t.Errorf("%s: same seed, different graphs", f)
		}
		if bytes.Equal(ba.Bytes(), bc.Bytes()) {
			t.Errorf("%s: different seeds, same graph", f)
		}
	}
	if _, err := Synthetic("grid", 1); err == nil {
		t.Error("unknown family accepted")
	}
}

func TestAugment(t *testing.T) {
	syn, err := Synthetic("ba", 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*graph.Graph{syn, smallRNNLM(t, Adam)} {
		a := Augment(g, 11)
		if a.NumOps() != g.NumOps() || a.NumTensors() != g.NumTensors() || len(a.Control()) != len(g.Control()) {
			t.Fatal("structure changed")
		}
		if a.Batch() != 0 || a.Tensor(0).BatchDim != graph.NoBatch {
			t.Fatal("an augmented graph kept batch information")
		}
		in := func(f float64) bool { return f >= 0.5-1e-9 && f <= 1.5+1e-9 }
		changed := false
		for i := range g.Ops() {
			o, n := g.Op(i), a.Op(i)
			if o.Name != n.Name || o.Type != n.Type || o.Colocation != n.Colocation || o.HasTime != n.HasTime || len(g.Succs(i)) != len(a.Succs(i)) {
				t.Fatalf("op %d changed", i)
			}
			if o.HasTime && o.Time > 0 {
				if !in(n.Time / o.Time) {
					t.Fatalf("time factor %g", n.Time/o.Time)
				}
				changed = changed || n.Time != o.Time
			}
			if !o.HasTime && o.FLOPs > 0 && !in(n.FLOPs/o.FLOPs) {
				t.Fatalf("flops factor %g", n.FLOPs/o.FLOPs)
			}
		}
		for tt := range g.Tensors() {
			o, n := g.Tensor(tt), a.Tensor(tt)
			if o.Producer != n.Producer || len(o.Consumers) != len(n.Consumers) {
				t.Fatalf("tensor %d changed", tt)
			}
			if f := float64(n.Bytes) / float64(o.Bytes); o.Bytes > 100 && !in(f) {
				t.Fatalf("size factor %g", f)
			}
		}
		if g.Stats().Measured > 0 && !changed {
			t.Error("nothing was scaled")
		}
	}
}

func TestWriteSynthetic(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynthetic(dir, "all", 24, 5); err != nil {
		t.Fatal(err)
	}
	for split, want := range map[string]int{"train": 20, "valid": 2, "test": 2} {
		files, _ := filepath.Glob(filepath.Join(dir, split, "*.json"))
		if len(files) != want {
			t.Errorf("%s: %d files, want %d", split, len(files), want)
		}
		for _, f := range files {
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := graph.Read(r); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			r.Close()
		}
	}
	if err := WriteSynthetic(dir, "grid", 3, 1); err == nil {
		t.Error("unknown family accepted")
	}
	if err := WriteSynthetic(dir, "er", 0, 1); err == nil {
		t.Error("count 0 accepted")
	}
}
