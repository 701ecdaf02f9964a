package planner

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
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
	decide(with.Points, &with.Shard)
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
	decide(with.Points, &with.Shard)
	if f2, _, _ := with.attnBlock(); f2.Launches != f0.Launches {
		t.Errorf("no attention dropout: %g launches forward, want %g", f2.Launches, f0.Launches)
	}
	if _, err := pts.Mechanisms.With(attnOutDropout{}); err == nil {
		t.Error("the mechanism registered twice: no error")
	}
}

// keyedDropout is the worked example of docs/stacks.md, "A mechanism
// with a key of its own": the example's dropout (attnOutDropout's
// kernels) switched on by a plan key it declares itself,
// attention-output-dropout=on. In the package it is one file of
// planner/mechanisms (the plug-in, its key, its declaration reading the
// key) and one line of its Registered, which adds the key to the plan's
// keys (mechanisms.AddKeys); with the key's row in docs/stacks.md's key
// table, three files. Here withKeyedMechanism makes the same
// registration for the test.
type keyedDropout struct{ attnOutDropout }

const dropoutKey = "attention-output-dropout"

func (keyedDropout) Name() string { return "attention-output-dropout-switch" }

func (keyedDropout) Keys() []plan.Key {
	return []plan.Key{plan.SwitchKey(plan.Key{Name: dropoutKey, Help: "the attention output's dropout as a kernel of its own",
		Doc: "docs/stacks.md"})}
}

func (keyedDropout) When() cost.When {
	return cost.When{cost.Key(dropoutKey, dropoutKey+"=on", func(pl *plan.Plan) bool { return pl.Declared.On(dropoutKey) })}
}

// withKeyedMechanism is withMechanism with p's keys added to the plan's
// (mechanisms.AddKeys), as its line in Registered adds them; the keys
// are as before when the test ends.
func withKeyedMechanism(t *testing.T, p cost.Plugin) *cost.Points {
	t.Helper()
	keys := slices.Clip(plan.Keys)
	t.Cleanup(func() { plan.Keys = keys; plan.ReindexKeys() })
	if err := mechanisms.AddKeys(p); err != nil {
		t.Fatal(err)
	}
	return withMechanism(t, p)
}

// TestAddedKeyedMechanism: the keyed example, registered, is a key of
// the plan (parsed, written back by String and Plan.String, named in
// the keys of an error) and prices a step where the plan sets it alone:
// its kernels by hand as TestAddedMechanism's (Llama 3 8B at 4,096
// tokens, TP 2: forward 16,777,216 bytes read and 25,165,824 written,
// backward the reverse, a launch each way) on the plan with
// attention-output-dropout=on, none and not in priced_by with it off. Its
// key registered twice, or a key of the plan's own name, is refused.
func TestAddedKeyedMechanism(t *testing.T) {
	if plan.IsKey(dropoutKey) {
		t.Fatalf("%s a key before the mechanism is registered", dropoutKey)
	}
	pts := withKeyedMechanism(t, keyedDropout{})
	const base = "tp=2,dp=16,mbs=1"
	s, err := plan.ParseStrategy(base + "," + dropoutKey + "=on")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); !strings.Contains(got, dropoutKey+"=on") {
		t.Errorf("String: %q, want it to write %s=on", got, dropoutKey)
	}
	if !strings.Contains(plan.StrategyKeys, dropoutKey) {
		t.Errorf("StrategyKeys lacks %s", dropoutKey)
	}
	off := stackCosterOf(t, pts, "llama3-8b:seq=4096,batch=64", base+","+dropoutKey+"=off", "dgx-h100:4")
	on := stackCosterOf(t, pts, "llama3-8b:seq=4096,batch=64", base+","+dropoutKey+"=on", "dgx-h100:4")
	if got := on.Plan.String(); !strings.Contains(got, dropoutKey+"=on") {
		t.Errorf("Plan.String: %q, want it to write %s=on", got, dropoutKey)
	}
	f0, b0, _ := off.attnBlock()
	f1, b1, _ := on.attnBlock()
	const e = 8388608.0
	wantF := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 16777216, Writes: 25165824}.Time(on.H)
	wantB := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 25165824, Writes: 16777216}.Time(on.H)
	if !near(f1.Busy-f0.Busy, wantF) || !near(b1.Busy-b0.Busy, wantB) || f1.Launches-f0.Launches != 1 || b1.Launches-b0.Launches != 1 {
		t.Errorf("attention with the key on: forward +%g s, +%g launches; backward +%g s, +%g launches; want +%g, +1, +%g, +1",
			f1.Busy-f0.Busy, f1.Launches-f0.Launches, b1.Busy-b0.Busy, b1.Launches-b0.Launches, wantF, wantB)
	}
	named := func(c coster) bool {
		return slices.Contains(pricedByOf(pts, c.M, c.Plan, c.Pod).Mechanisms, keyedDropout{}.Name())
	}
	if !named(on) || named(off) {
		t.Errorf("priced_by names it: on %t, off %t; want true, false", named(on), named(off))
	}
	if err := mechanisms.AddKeys(keyedDropout{}); err == nil || !strings.Contains(err.Error(), "named twice") {
		t.Errorf("its key added twice: %v", err)
	}
	if err := plan.AddKey(plan.SwitchKey(plan.Key{Name: "tp", Help: "x", Doc: "docs/stacks.md"})); err == nil {
		t.Error("a key named tp added")
	}
	if err := plan.AddKey(plan.SwitchKey(plan.Key{Name: "nvls", Help: "x", Doc: "docs/stacks.md", Exports: []string{plan.ExportMegatron}})); err == nil {
		t.Error("a declared key an export writes added")
	}
}
