package planner

import (
	"slices"
	"testing"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// TestStepExtensionPoints: the step-level extension points are set from
// the registered mechanisms (registered: cost.Resolve), in the order registered; and a
// step-level plug-in says it priced a plan (Prices) exactly where it
// changes the step: FSDP2's copies (1e9 parameters, 0.8e9 of them in the
// blocks) on torchtitan's FSDP and none on Megatron-FSDP; the power
// limit's clock on dgx-h100 (700 W, its compute priced at the held
// clock) and the step as it was with power=off.
func TestStepExtensionPoints(t *testing.T) {
	names := func(ps ...cost.Plugin) []string {
		var n []string
		for _, p := range ps {
			n = append(n, p.Name())
		}
		return n
	}
	var opt, step, stage, fsdp, wire []cost.Plugin
	for _, p := range registered.Optimizer.Plugins() {
		opt = append(opt, p)
	}
	for _, p := range registered.StepKernels {
		step = append(step, p)
	}
	for _, p := range registered.StageKernels.Plugins() {
		stage = append(stage, p)
	}
	for _, p := range registered.FSDP.Plugins() {
		fsdp = append(fsdp, p)
	}
	for _, p := range registered.GatherWire.Plugins() {
		wire = append(wire, p)
	}
	for _, c := range []struct {
		point     string
		got, want []string
	}{
		{"Optimizer", names(opt...), []string{"lamb", "adam"}},
		{"StepKernels", names(step...), []string{"fp8-casts", "torchao-float8"}},
		{"StageKernels", names(stage...), []string{"fp8-casts", "amax-sync", "fsdp2"}},
		{"FSDP", names(fsdp...), []string{"fsdp2"}},
		{"GatherWire", names(wire...), []string{"torchao-float8"}},
		{"StepClock, Contention, Host", names(registered.StepClock, registered.Contention.Plugins()[0], registered.Host), []string{"power-limit", "sm-contention", "host-issue"}},
		{"StepHost", names(stepHostPlugins()...), []string{"graph-step-sync"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.point, c.got, c.want)
		}
	}

	m := mustSpec(t, "llama:layers=4,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=1024,vocab=32000,batch=64")
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, sw := range []plan.Software{{Stack: "torchtitan-0.2"}, {}} {
		pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, Software: sw}, p)
		if err != nil {
			t.Fatal(err)
		}
		s := stepShard(m, pl, &p)
		st := cost.Stage{Params: 1e9, Layers: 0.8e9}
		f, b := asked(registered, s, mechanisms.FSDP2{}, func() (cost.Phase, cost.Phase) { return (mechanisms.FSDP2{}).StageKernels(s, &st) })
		if priced := cost.Applies(mechanisms.FSDP2{}, s); priced != (f.Busy+b.Busy > 0) || priced != (sw.Stack != "") {
			t.Errorf("fsdp2 on %q: prices %t, its copies %g s", sw.Stack, priced, f.Busy+b.Busy)
		}
	}
	for _, pod := range []string{"dgx-h100", "dgx-h100,power=off"} {
		p, err := plan.PodOf(pod, 8)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1}, p)
		if err != nil {
			t.Fatal(err)
		}
		// A step of compute, its time the clock's slowdown, and short
		// idle gaps (0.1 s of the host's waits), which let the held
		// clock rise above compute alone's (TestBalancedStep).
		at := func(q *plan.Pod) cost.Breakdown {
			s := max(q.Hardware.ComputeSlowdown, 1)
			return cost.Breakdown{Step: s + 0.1, Compute: s, HostExposed: 0.1, TFLOPs: 1 / (s + 0.1)}
		}
		held := at(&p)
		got := (mechanisms.PowerLimit{}).Clocked(&p, held, at)
		if priced := cost.Applies(mechanisms.PowerLimit{}, stepShard(m, pl, &p)); priced != (got != held) || priced != (pod == "dgx-h100") {
			t.Errorf("power-limit on %s: prices %t, the step %+v at the held clock's %+v", pod, priced, got, held)
		}
	}
}

// TestGatherWireAsked: FSDP's all-gather moves the parameters in the
// format the registered cost.GatherWire says (torchao-float8: the blocks'
// linear weights in float8 with fp8gather=on), worked by hand for 10
// gathered parameters of which 6 are linear weights, in BF16 (2 bytes):
//   - fp8gather=on: 2 x (10 - 6) + 1 x 6 = 14 bytes, 7 linears a block
//     (torchtitan's wq, wk, wv, wo, w1, w2, w3);
//   - float8 without fp8gather: torchao prices the step, but gathers in
//     BF16: 2 x 10 = 20 bytes;
//   - BF16 on torchtitan: no wire prices it, 20 bytes, no linear apart.
func TestGatherWireAsked(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	if p.WeightBytes() != 2 {
		t.Fatalf("dgx-h100's weights %v bytes, want BF16's 2", p.WeightBytes())
	}
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=1024,vocab=32000,batch=32")
	for _, c := range []struct {
		name          string
		fp8           string
		gather        bool
		wire          string
		bytes, blocks float64
	}{
		{"fp8gather=on", plan.FP8Current, true, "torchao-float8", 14, 7},
		{"float8, BF16 gather", plan.FP8Current, false, "torchao-float8", 20, 7},
		{"BF16", "", false, "", 20, 0},
	} {
		s := plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, FP8: c.fp8, FP8Gather: c.gather, Software: plan.Software{Stack: "torchtitan-0.2"}}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, pl.TP, float64(pl.MBS)*float64(m.Seq))
		w := gatherWireOf(co.Points, &co.Shard)
		name := ""
		if w != nil {
			name = w.Name()
		}
		if name != c.wire {
			t.Errorf("%s: gathered in %q's format, want %q's", c.name, name, c.wire)
		}
		if got := gatheredBytes(w, &pl, &p, 10, 6); got != c.bytes {
			t.Errorf("%s: %v bytes for 10 parameters, 6 of them linear weights; want %v", c.name, got, c.bytes)
		}
		if got := blockLinears(w); got != c.blocks {
			t.Errorf("%s: %v linears a block apart, want %v", c.name, got, c.blocks)
		}
	}
}

// stepHostPlugins is the registered cost.StepHost plug-ins as plug-ins.
func stepHostPlugins() []cost.Plugin {
	hs := registered.StepHost.Plugins()
	ps := make([]cost.Plugin, len(hs))
	for i, w := range hs {
		ps[i] = w
	}
	return ps
}
