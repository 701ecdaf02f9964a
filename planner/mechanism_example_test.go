package planner

import (
	"reflect"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/mechanisms"
)

// attnOutDropout is the worked example of docs/stacks.md, "Adding a
// mechanism": a made-up mechanism (no stack placer models runs it), the
// dropout of a layer's attention output run as a kernel of its own
// where the model has an attention dropout (Config.AttentionDropout):
// forward one elementwise kernel over the GPU's attention output (its
// BF16 elements read and written, a byte of mask each written),
// backward the same through the mask (the gradient and the mask read,
// the gradient written). In the package it is one file of
// planner/mechanisms and one line of its Registered; here
// addMechanism makes the same registration and undoes it when the test
// ends.
type attnOutDropout struct{}

var _ cost.AttentionKernels = attnOutDropout{}

func (attnOutDropout) Name() string { return "attention-output-dropout" }

func (attnOutDropout) Prices(s *cost.Shard) bool { return s.M.Config.AttentionDropout > 0 }

func (d attnOutDropout) Attention(s *cost.Shard) (fwd, bwd cost.Phase) {
	if !d.Prices(s) {
		return fwd, bwd
	}
	e := s.Tokens * float64(s.M.Heads) / float64(s.Plan.TP) * float64(s.M.HeadDim())
	fwd = s.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e * cost.BF16, Writes: e*cost.BF16 + e})
	bwd = s.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e*cost.BF16 + e, Writes: e * cost.BF16})
	return fwd, bwd
}

// addMechanism registers p in mechanisms.Registered and sets the
// extension points from it (hookUp), as one more line of Registered
// would, until the test ends.
func addMechanism(t *testing.T, p cost.Plugin) {
	t.Helper()
	saved := *mechanisms.Registered
	if err := mechanisms.Registered.Register(p); err != nil {
		t.Fatal(err)
	}
	hookUp()
	t.Cleanup(func() {
		*mechanisms.Registered = saved
		hookUp()
	})
}

// TestAddedMechanism: the example mechanism, registered, adds its
// kernels to a layer's attention by hand and is named among what priced
// the step, only where the model has an attention dropout. Llama 3 8B
// at 4,096 tokens, TP 2: 16 query heads of 128 a GPU, e = 4,096 x 16 x
// 128 = 8,388,608 elements: forward read 16,777,216 bytes, written
// 25,165,824; backward read 25,165,824, written 16,777,216; a launch
// each way. A second registration of its name is refused.
func TestAddedMechanism(t *testing.T) {
	c := stackCoster(t, "llama3-8b:seq=4096,batch=64", "tp=2,dp=16,mbs=1", "dgx-h100:4")
	c.M.Config.AttentionDropout = 0.1
	f0, b0, _ := c.attnBlock()
	before := PricedByOf(c.M, c.Plan, c.Pod)
	addMechanism(t, attnOutDropout{})
	f1, b1, _ := c.attnBlock()
	const e = 8388608.0
	wantF := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 16777216, Writes: 25165824}.Time(c.H)
	wantB := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 25165824, Writes: 16777216}.Time(c.H)
	if !near(f1.Busy-f0.Busy, wantF) || !near(b1.Busy-b0.Busy, wantB) || f1.Launches-f0.Launches != 1 || b1.Launches-b0.Launches != 1 {
		t.Errorf("attention with the mechanism: forward +%g s, +%g launches; backward +%g s, +%g launches; want +%g, +1, +%g, +1",
			f1.Busy-f0.Busy, f1.Launches-f0.Launches, b1.Busy-b0.Busy, b1.Launches-b0.Launches, wantF, wantB)
	}
	after := PricedByOf(c.M, c.Plan, c.Pod)
	if want := append(before.Mechanisms, "attention-output-dropout"); !reflect.DeepEqual(after.Mechanisms, want) {
		t.Errorf("priced by %v, want %v", after.Mechanisms, want)
	}
	c.M.Config.AttentionDropout = 0
	if got := PricedByOf(c.M, c.Plan, c.Pod).Mechanisms; !reflect.DeepEqual(got, before.Mechanisms) {
		t.Errorf("no attention dropout: priced by %v, want %v", got, before.Mechanisms)
	}
	if f2, _, _ := c.attnBlock(); f2.Launches != f0.Launches {
		t.Errorf("no attention dropout: %g launches forward, want %g", f2.Launches, f0.Launches)
	}
	if err := mechanisms.Registered.Register(attnOutDropout{}); err == nil {
		t.Error("the mechanism registered twice: no error")
	}
}
