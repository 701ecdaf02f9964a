package scale

import (
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/families"
	"github.com/placer/placer/evaluate/scale/mechanisms"
)

// implementers is the names of the registered plug-ins that implement
// extension point T, families first, in the order registered.
func implementers[T cost.Plugin]() string {
	var names []string
	for _, p := range cost.Each[T](families.Registered) {
		names = append(names, p.Name())
	}
	for _, p := range cost.Each[T](mechanisms.Registered) {
		names = append(names, p.Name())
	}
	return strings.Join(names, ",")
}

// TestExtensionPointsImplemented: the extension points the composition
// asks where it once named a family or a mechanism are each implemented
// by the registered plug-in that priced them by name before, and by no
// other; the coster asks those (hookUp).
func TestExtensionPointsImplemented(t *testing.T) {
	for _, c := range []struct {
		point, got, want string
	}{
		{"OutputHeads", implementers[cost.OutputHeads](), "mlm-nsp-heads"},
	} {
		if c.got != c.want {
			t.Errorf("%s implemented by %q, want %q", c.point, c.got, c.want)
		}
	}
	if len(outputHeads) != 1 || outputHeads[0].Name() != "mlm-nsp-heads" {
		t.Errorf("the coster's output heads %v, want mlm-nsp-heads's", outputHeads)
	}
}

// TestOutputHeadsAsked: an encoder's output layer is the decoder's
// output layer plus what the registered output heads price (the MLM and
// next-sentence heads, families.MLMHeads: its own by-hand test), and a
// decoder's has none: the composition asks the extension point, not the
// family by name.
func TestOutputHeadsAsked(t *testing.T) {
	c := stackCoster(t, "bert-large:seq=512,batch=384", "tp=1,dp=8,mbs=48", "dgx-h100:1")
	fwd, bwd := c.fusedOutput()
	saved := outputHeads
	outputHeads = nil
	bareF, bareB := c.fusedOutput()
	outputHeads = saved
	hf, hb := families.MLMHeads{}.Heads(&c.Shard)
	if hf.Launches != 7 || hb.Launches != 10 {
		t.Fatalf("MLM heads' launches %v, %v: want 7 and 10 (bert.go's kernels)", hf.Launches, hb.Launches)
	}
	if fwd != bareF.Plus(hf) || bwd != bareB.Plus(hb) {
		t.Errorf("output layer with heads %+v, %+v: want the bare layer's plus the heads' %+v, %+v", fwd, bwd, hf, hb)
	}
	d := stackCoster(t, "llama3-8b:seq=4096,batch=64", "tp=1,dp=8,mbs=1", "dgx-h100:1")
	withF, _ := d.fusedOutput()
	outputHeads = nil
	noneF, _ := d.fusedOutput()
	outputHeads = saved
	if withF != noneF {
		t.Errorf("a decoder's output layer %+v changed by the output heads (%+v without)", withF, noneF)
	}
}
