package scale

import (
	"slices"
	"testing"

	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/mechanisms"
	"github.com/placer/placer/evaluate/scale/plan"
)

// TestStepExtensionPoints: the step-level extension points are set from
// the registered mechanisms (hookUp), in the order registered; and a
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
	var opt, step, stage, fsdp []cost.Plugin
	for _, p := range optimizers {
		opt = append(opt, p)
	}
	for _, p := range stepKernels {
		step = append(step, p)
	}
	for _, p := range stageKernels {
		stage = append(stage, p)
	}
	for _, p := range fsdps {
		fsdp = append(fsdp, p)
	}
	for _, c := range []struct {
		point     string
		got, want []string
	}{
		{"Optimizer", names(opt...), []string{"lamb", "adam"}},
		{"StepKernels", names(step...), []string{"fp8-casts", "torchao-float8"}},
		{"StageKernels", names(stage...), []string{"fsdp2"}},
		{"FSDP", names(fsdp...), []string{"fsdp2"}},
		{"StepClock, Contention, Host", names(stepClock, contention, host), []string{"power-limit", "sm-contention", "host-issue"}},
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
		f, b := (mechanisms.FSDP2{}).StageKernels(s, &st)
		if priced := (mechanisms.FSDP2{}).Prices(s); priced != (f.Busy+b.Busy > 0) || priced != (sw.Stack != "") {
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
		if priced := (mechanisms.PowerLimit{}).Prices(stepShard(m, pl, &p)); priced != (got != held) || priced != (pod == "dgx-h100") {
			t.Errorf("power-limit on %s: prices %t, the step %+v at the held clock's %+v", pod, priced, got, held)
		}
	}
}
