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
		{"GroupedGEMM", implementers[cost.GroupedGEMM](), "te-grouped-gemm"},
	} {
		if c.got != c.want {
			t.Errorf("%s implemented by %q, want %q", c.point, c.got, c.want)
		}
	}
	if len(outputHeads) != 1 || outputHeads[0].Name() != "mlm-nsp-heads" {
		t.Errorf("the coster's output heads %v, want mlm-nsp-heads's", outputHeads)
	}
	if groupedGEMM == nil || groupedGEMM.Name() != "te-grouped-gemm" {
		t.Errorf("the coster's grouped GEMM %v, want te-grouped-gemm's", groupedGEMM)
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

// moreCalls is the in-tree grouped GEMM launching one GEMM more from its
// loop for each grouped GEMM.
type moreCalls struct{ mechanisms.TEGroupedGEMM }

func (m moreCalls) Calls(s *cost.Shard, local float64) float64 {
	return m.TEGroupedGEMM.Calls(s, local) + 1
}

// TestGroupedGEMMAsked: the experts' GEMMs are the registered
// cost.GroupedGEMM's: with one that launches a call more for each
// grouped GEMM, the experts' forward (FC1, FC2) launches two calls more and
// their backward (each GEMM's data and weight gradients) four, nothing else
// of them changing.
func TestGroupedGEMMAsked(t *testing.T) {
	c := stackCoster(t, stackMoE, "tp=1,ep=8,dp=8,mbs=1,stack=megatron-bridge-25.11", "dgx-h100:1")
	w := c.expertWork()
	saved := groupedGEMM
	groupedGEMM = moreCalls{}
	more := c.expertWork()
	groupedGEMM = saved
	if w.fwd.Calls == 0 {
		t.Fatalf("experts' forward issues no calls from Transformer Engine's loop: %+v", w.fwd)
	}
	if more.fwd.Calls-w.fwd.Calls != 2 || more.bwd.Calls-w.bwd.Calls != 4 {
		t.Errorf("calls %v, %v with one more a grouped GEMM (%v, %v before): want 2 and 4 more", more.fwd.Calls, more.bwd.Calls, w.fwd.Calls, w.bwd.Calls)
	}
	more.fwd.Calls, more.bwd.Calls = w.fwd.Calls, w.bwd.Calls
	if more.fwd != w.fwd || more.bwd != w.bwd {
		t.Errorf("the experts changed beyond their calls: %+v, %+v; want %+v, %+v", more.fwd, more.bwd, w.fwd, w.bwd)
	}
}
