package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFP8 is the fuzz corpus's profile with layers under each recipe
// (testdata/fuzz/FuzzDecode/seed-fp8): BF16 1 + 2 ms and current 0.7 +
// 1.3 ms at tp 1, mbs 1; delayed 1.2 + 3.5 ms at mbs 2 with full
// recomputation; blockwise at tp 2 with sp.
func seedFP8(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzDecode", "seed-fp8"))
	if err != nil {
		t.Fatal(err)
	}
	// The corpus file's one value, a Go string literal: its JSON.
	s := string(raw)
	s = s[strings.Index(s, "(\"")+2 : strings.LastIndex(s, "\")")]
	r := strings.NewReplacer(`\n`, "\n", `\"`, `"`, `\\`, `\`)
	return []byte(r.Replace(s))
}

// TestFP8Lookup: each recipe's layers answer its own shapes alone (by
// the same rules as the profile's dtype's), a recipe not measured at a
// degree is modelled, and the embedding and the loss ignore the recipe.
func TestFP8Lookup(t *testing.T) {
	p, err := Decode(seedFP8(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Software.FP8 == "" {
		t.Errorf("software.fp8 not read")
	}
	cases := []struct {
		s        Shape
		fwd, bwd float64
		src      Source
	}{
		{Shape{TP: 1, MBS: 1, Seq: 128}, 0.001, 0.002, Measured},
		{Shape{TP: 1, MBS: 1, Seq: 128, FP8: "current"}, 0.0007, 0.0013, Measured},
		// current at mbs 2: proportional to tokens from its own mbs 1.
		{Shape{TP: 1, MBS: 2, Seq: 128, FP8: "current"}, 0.0014, 0.0026, Composed},
		// delayed without recomputation: the backward less a forward.
		{Shape{TP: 1, MBS: 2, Seq: 128, FP8: "delayed"}, 0.0012, 0.0023, Composed},
		{Shape{TP: 1, MBS: 2, Seq: 128, Recompute: true, FP8: "delayed"}, 0.0012, 0.0035, Measured},
		// blockwise only at tp 2; nothing at tp 1.
		{Shape{TP: 1, MBS: 1, Seq: 128, FP8: "blockwise"}, 0, 0, Modelled},
		{Shape{TP: 2, SP: true, MBS: 1, Seq: 64, FP8: "blockwise"}, 0.0004, 0.0008, Measured},
		// BF16 at tp 2 with sp: only blockwise was measured there.
		{Shape{TP: 2, SP: true, MBS: 1, Seq: 64}, 0, 0, Modelled},
	}
	for _, c := range cases {
		f, b, src := p.Layer(c.s)
		if src != c.src || !near(f, c.fwd) || !near(b, c.bwd) {
			t.Errorf("%+v: %g + %g %s, want %g + %g %s", c.s, f, b, src, c.fwd, c.bwd, c.src)
		}
	}
	if f, b, src := p.LayerInPlace(Shape{TP: 2, SP: true, MBS: 1, Seq: 64, FP8: "blockwise"}); src != Measured || !near(f, 0.001) || !near(b, 0.002) {
		t.Errorf("blockwise in place: %g + %g %s", f, b, src)
	}
	for _, fp8 := range []string{"", "current", "delayed"} {
		if f, _, src := p.EmbeddingAt(Shape{TP: 1, MBS: 1, Seq: 128, FP8: fp8}); src != Measured || !near(f, 0.0001) {
			t.Errorf("embedding under %q: %g %s, want the measured 0.0001", fp8, f, src)
		}
		if f, _, src := p.LossAt(Shape{TP: 1, MBS: 1, Seq: 128, FP8: fp8}); src != Measured || !near(f, 0.0003) {
			t.Errorf("loss under %q: %g %s, want the measured 0.0003", fp8, f, src)
		}
	}
}

// TestFP8Refused: a recipe placer does not know, or one on the
// embedding or the loss, is one line naming it and where.
func TestFP8Refused(t *testing.T) {
	good := string(seedFP8(t))
	for _, c := range []struct{ old, new, want string }{
		{`"fp8": "current"`, `"fp8": "mxfp8"`, `layers[1]: fp8 "mxfp8": want one of current, delayed, blockwise`},
		{`"embedding": [
  {
   "tp": 1,`, `"embedding": [
  {
   "fp8": "current", "tp": 1,`, `embedding[0]: fp8 "current": a recipe covers the blocks' linears`},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		if bad == good {
			t.Fatalf("%q not in the seed", c.old)
		}
		_, err := Decode([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.new, err, c.want)
		}
	}
}
