package planner

import (
	"reflect"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
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
// withMechanism makes the same registration in a copy of Registered and
// resolves the extension points from it.
type attnOutDropout struct{}

var _ cost.AttentionKernels = attnOutDropout{}

func (attnOutDropout) Name() string { return "attention-output-dropout" }

func (attnOutDropout) When() cost.When {
	return cost.When{cost.Model("attention-dropout>0", func(m *transformer.Spec) bool { return m.Config.AttentionDropout > 0 })}
}

func (d attnOutDropout) Attention(s *cost.Shard) (fwd, bwd cost.Phase) {
	e := s.Tokens * float64(s.M.Heads) / float64(s.Plan.TP) * float64(s.M.HeadDim())
	fwd = s.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e * cost.BF16, Writes: e*cost.BF16 + e})
	bwd = s.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e*cost.BF16 + e, Writes: e * cost.BF16})
	return fwd, bwd
}

// withMechanism is the extension points resolved (cost.Resolve) from
// mechanisms.Registered with p registered after them, as one more line
// of Registered would make them; the registered ones stay as they are.
func withMechanism(t *testing.T, p cost.Plugin) *cost.Points {
	t.Helper()
	mechs, err := mechanisms.Registered.With(p)
	if err != nil {
		t.Fatal(err)
	}
	return cost.Resolve(families.Registered, mechs, codebases.Registered)
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
	pts := withMechanism(t, attnOutDropout{})
	with := c
	with.Points = pts
	decide(&with.Shard)
	f1, b1, _ := with.attnBlock()
	const e = 8388608.0
	wantF := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 16777216, Writes: 25165824}.Time(c.H)
	wantB := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 25165824, Writes: 16777216}.Time(c.H)
	if !near(f1.Busy-f0.Busy, wantF) || !near(b1.Busy-b0.Busy, wantB) || f1.Launches-f0.Launches != 1 || b1.Launches-b0.Launches != 1 {
		t.Errorf("attention with the mechanism: forward +%g s, +%g launches; backward +%g s, +%g launches; want +%g, +1, +%g, +1",
			f1.Busy-f0.Busy, f1.Launches-f0.Launches, b1.Busy-b0.Busy, b1.Launches-b0.Launches, wantF, wantB)
	}
	after := pricedByOf(pts, c.M, c.Plan, c.Pod)
	if want := append(before.Mechanisms, "attention-output-dropout"); !reflect.DeepEqual(after.Mechanisms, want) {
		t.Errorf("priced by %v, want %v", after.Mechanisms, want)
	}
	with.M.Config.AttentionDropout = 0
	if got := pricedByOf(pts, with.M, with.Plan, with.Pod).Mechanisms; !reflect.DeepEqual(got, before.Mechanisms) {
		t.Errorf("no attention dropout: priced by %v, want %v", got, before.Mechanisms)
	}
	decide(&with.Shard)
	if f2, _, _ := with.attnBlock(); f2.Launches != f0.Launches {
		t.Errorf("no attention dropout: %g launches forward, want %g", f2.Launches, f0.Launches)
	}
	if _, err := pts.Mechanisms.With(attnOutDropout{}); err == nil {
		t.Error("the mechanism registered twice: no error")
	}
}

