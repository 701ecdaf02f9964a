package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayerETP: a layer's expert-tensor degree is part of its shape
// (testdata/etp.json, the tiny MoE at tp 2: etp absent, read as 1, and
// 2; ep 2 x etp 2 alone; tp 1 x etp 2 in place): a lookup finds the
// layer of its etp and no other, etp 0 and 1 the same; and out of range
// or not dividing the expert FFN it is refused in one line.
func TestLayerETP(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "etp.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s        Shape
		fwd, bwd float64
		src      Source
		inPlace  bool
	}{
		{Shape{TP: 2, SP: true, MBS: 1, Seq: 256}, 0.004, 0.008, Measured, false},
		{Shape{TP: 2, SP: true, ETP: 1, MBS: 1, Seq: 256}, 0.004, 0.008, Measured, false},
		{Shape{TP: 2, SP: true, ETP: 2, MBS: 1, Seq: 256}, 0.003, 0.006, Measured, false},
		{Shape{TP: 2, SP: true, ETP: 2, MBS: 1, Seq: 256}, 0.0042, 0.0081, Measured, true},
		// Twice the tokens: proportional from the one measured.
		{Shape{TP: 2, SP: true, ETP: 2, MBS: 2, Seq: 256}, 0.006, 0.012, Composed, false},
		{Shape{TP: 2, SP: true, EP: 2, ETP: 2, MBS: 1, Seq: 256}, 0.0028, 0.0055, Measured, false},
		{Shape{TP: 2, SP: true, EP: 2, ETP: 2, MBS: 1, Seq: 256}, 0, 0, Modelled, true},
		{Shape{TP: 1, ETP: 2, MBS: 1, Seq: 256}, 0.006, 0.012, Measured, true},
		{Shape{TP: 2, SP: true, ETP: 4, MBS: 1, Seq: 256}, 0, 0, Modelled, false},
		{Shape{TP: 1, MBS: 1, Seq: 256}, 0, 0, Modelled, false},
	} {
		look := p.Layer
		if c.inPlace {
			look = p.LayerInPlace
		}
		f, b, src := look(c.s)
		if src != c.src || src != Modelled && (!nearly(f, c.fwd) || !nearly(b, c.bwd)) {
			t.Errorf("%+v (in place %v): %g + %g s %s, want %g + %g %s", c.s, c.inPlace, f, b, src, c.fwd, c.bwd, c.src)
		}
	}
	text := string(data)
	for _, c := range []struct{ name, text, want string }{
		{"etp not dividing", strings.Replace(text, `"etp": 2, "mbs"`, `"etp": 3, "mbs"`, 1), "layers[1]: etp 3 does not divide the model's expert FFN of 256"},
		{"etp negative", strings.Replace(text, `"etp": 2, "mbs"`, `"etp": -1, "mbs"`, 1), "layers[1]: etp -1: want at least 1"},
		{"etp without experts", strings.Replace(text, `,experts=8,topk=2,expert_ffn=256`, ``, 1), "etp 2 does not divide"},
	} {
		_, err := Decode([]byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line holding %q", c.name, err, c.want)
		}
	}
}

func nearly(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 }
