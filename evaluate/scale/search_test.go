package scale

import (
	"context"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale/plan"
)

// TestSpaceOf: a partial plan as a search space. The run's settings go to
// Space's fields; each degree or switch named keeps only the plans that
// have it (a resolved plan passes, the same with any one of them changed
// does not); vp and mbs above the search's defaults raise its bounds;
// what the search cannot keep is refused in one line.
func TestSpaceOf(t *testing.T) {
	if sp, err := SpaceOf(""); err != nil || sp.Keep != nil || sp.FP8 != "" || sp.GradBF16 || sp.FSDP {
		t.Errorf(`SpaceOf(""): %+v, %v; want the whole space`, sp, err)
	}
	sp, err := SpaceOf("fp8=blockwise,grads=bf16,imbalance=1.5,fsdp=on")
	if err != nil || sp.FP8 != plan.FP8Blockwise || !sp.GradBF16 || sp.Imbalance != 1.5 || !sp.FSDP || sp.Keep == nil {
		t.Errorf("settings: %+v, %v", sp, err)
	}
	m := mustSpec(t, strings.Replace(smallMoE, "batch=8", "batch=256", 1))
	p, err := plan.PodOf("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	const fixed = "tp=2,pp=2,vp=1,mbs=16,sp=on,tpoverlap=off,distopt=on,recompute=selective,ep=4,etp=1,epoverlap=off"
	sp, err = SpaceOf(fixed)
	if err != nil || sp.MaxMBS != 16 || sp.MaxVirtual != 8 {
		t.Fatalf("SpaceOf(%s): %+v, %v", fixed, sp, err)
	}
	s, err := plan.ParseStrategy(fixed)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.Keep(pl) {
		t.Errorf("%s: its own plan is not kept", fixed)
	}
	for _, change := range []func(*plan.Plan){
		func(q *plan.Plan) { q.T = 4 }, func(q *plan.Plan) { q.P = 4 }, func(q *plan.Plan) { q.V = 2 }, func(q *plan.Plan) { q.MBS = 8 },
		func(q *plan.Plan) { q.SequenceParallel = false }, func(q *plan.Plan) { q.TPOverlap = true }, func(q *plan.Plan) { q.DistOpt = false },
		func(q *plan.Plan) { q.Recompute = plan.FullRecompute }, func(q *plan.Plan) { q.EP = 8 }, func(q *plan.Plan) { q.ETP = 2 },
		func(q *plan.Plan) { q.EPOverlap = true },
	} {
		q := pl
		change(&q)
		if sp.Keep(q) {
			t.Errorf("%s: kept %s", fixed, q)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"schedule=gpipe", "the search runs 1F1B"},
		{"tq=2", `unknown key "tq"`},
		{"grads=fp8", "want bf16 or fp32"},
	} {
		if _, err := SpaceOf(c.text); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("SpaceOf(%q): %v, want one line with %q", c.text, err, c.want)
		}
	}
	// The search with a partial plan: every plan it keeps has what was
	// named, and the settings.
	sp, err = SpaceOf("tp=2,ep=4,fp8=current,grads=bf16")
	if err != nil {
		t.Fatal(err)
	}
	sp.Top = 5
	got, err := Search(context.Background(), m, p, sp)
	if err != nil || !got.Found || len(got.Top) == 0 {
		t.Fatalf("search: %+v, %v", got, err)
	}
	for _, r := range got.Top {
		if r.Plan.T != 2 || r.Plan.EP != 4 || r.Plan.FP8 != plan.FP8Current || !r.Plan.GradBF16 {
			t.Errorf("search kept %s", r.Plan)
		}
	}
}
