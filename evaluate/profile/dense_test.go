package profile

import (
	"os"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
)

// testdata/dense-mla.json: a DeepSeek-like model's profile (latent
// attention, 2 dense layers before the experts), its MoE layer 3 + 6 ms
// and its dense layer 1 + 2 ms at mbs 1, the dense layer 2 + 4.5 ms
// under selective recomputation at mbs 2.
func TestDenseBlocks(t *testing.T) {
	p, err := ReadFile("testdata/dense-mla.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		at       func(Shape) (float64, float64, Source)
		s        Shape
		fwd, bwd float64
		src      Source
	}{
		{"moe", p.Layer, Shape{TP: 1, MBS: 1, Seq: 16}, 0.003, 0.006, Measured},
		{"dense", p.DenseLayer, Shape{TP: 1, MBS: 1, Seq: 16}, 0.001, 0.002, Measured},
		// A dense layer has no experts: at ep 2 it is its ep-1 entry.
		{"dense at ep 2", p.DenseLayer, Shape{TP: 1, EP: 2, MBS: 1, Seq: 16}, 0.001, 0.002, Measured},
		{"moe at ep 2", p.Layer, Shape{TP: 1, EP: 2, MBS: 1, Seq: 16}, 0.002, 0.004, Measured},
		// Full recomputation: the backward plus one forward (composed).
		{"dense full", p.DenseLayer, Shape{TP: 1, MBS: 1, Seq: 16, Recompute: true}, 0.001, 0.003, Composed},
		// Twice the tokens: proportional from mbs 1 (composed).
		{"dense mbs 2", p.DenseLayer, Shape{TP: 1, MBS: 2, Seq: 16}, 0.002, 0.004, Composed},
		{"dense selective", p.DenseLayer, Shape{TP: 1, MBS: 2, Seq: 16, Selective: true}, 0.002, 0.0045, Measured},
		// The MoE layer has no selective entry: the dense one does not answer for it.
		{"moe selective", p.Layer, Shape{TP: 1, MBS: 2, Seq: 16, Selective: true}, 0, 0, Modelled},
		{"dense tp 2", p.DenseLayer, Shape{TP: 2, MBS: 1, Seq: 16}, 0, 0, Modelled},
	} {
		f, b, src := c.at(c.s)
		if src != c.src || !approx(f, c.fwd) || !approx(b, c.bwd) {
			t.Errorf("%s: %g + %g s %s, want %g + %g %s", c.name, f, b, src, c.fwd, c.bwd, c.src)
		}
	}
	if !p.HasDense() {
		t.Error("HasDense false")
	}
	// An older profile (no block): every layer the model's own, no dense.
	old, err := ReadFile("testdata/small.json")
	if err != nil {
		t.Fatal(err)
	}
	if old.HasDense() {
		t.Error("small.json: HasDense true")
	}
	if _, _, src := old.DenseLayer(Shape{TP: 1, MBS: 1, Seq: 128}); src != Modelled {
		t.Errorf("small.json: dense layer %s, want modelled", src)
	}
}

func approx(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 }

// A block the model does not have, or of no known kind, is refused in
// one line naming the entry.
func TestDenseBlocksRefused(t *testing.T) {
	data, err := os.ReadFile("testdata/dense-mla.json")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, c := range []struct{ old, new, want string }{
		{`"block": "dense"`, `"block": "mlp"`, `layers[1]: block "mlp": want dense or moe`},
		{`dense_layers=2,`, ``, `layers[1]: block "dense": the model has no dense layers before its experts`},
		{`"forward_s": 0.002, "backward_s": 0.0045, "block": "dense"`, `"ep": 2, "forward_s": 0.002, "backward_s": 0.0045, "block": "dense"`, `layers[3]: block "dense" at ep 2`},
	} {
		bad := strings.Replace(text, c.old, c.new, 1)
		if bad == text {
			t.Fatalf("%q not in the file", c.old)
		}
		_, err := Decode([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.new, err, c.want)
		}
	}
}

// A profile of other latent-attention widths is another model's.
func TestCheckLatent(t *testing.T) {
	p, err := ReadFile("testdata/dense-mla.json")
	if err != nil {
		t.Fatal(err)
	}
	m := p.Spec()
	if err := p.Check(m, "cpu"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  func(*transformer.Spec)
		want string
	}{
		{func(m *transformer.Spec) { m.QLoRA = 24 }, "q_lora 20, the workload's 24"},
		{func(m *transformer.Spec) { m.KVLoRA = 8 }, "kv_lora 10, the workload's 8"},
		{func(m *transformer.Spec) { m.RopeDim = 8 }, "rope_dim 4, the workload's 8"},
	} {
		w := m
		c.set(&w)
		if err := p.Check(w, "cpu"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
