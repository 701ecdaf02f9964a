package cost

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestWhen: a declaration holds where each of its conditions does, a
// negated one where it does not; each condition reads its part alone
// (a key's the plan, a model's the model, the precision the plan's
// recipe and the pod's FP8 peak, a stack's the framework or the settings, the
// costing NoComm and NoHost); Runs holds only for settings' conditions;
// String writes them as the docs do.
func TestWhen(t *testing.T) {
	cp := Key("cp", "cp>1", func(pl *plan.Plan) bool { return pl.CP > 1 })
	lamb := Setting("lamb", func(st *plan.Settings) bool { return st.LAMB })
	mxfp8 := Precision("fp8=mxfp8", func(r string) bool { return r == "mxfp8" })
	power := GPU("power-limited", func(p *plan.Pod) bool { return p.PowerLimit > 0 })
	base := func() *Shard {
		s := &Shard{M: transformer.Spec{Experts: 8}, Pod: &plan.Pod{}}
		s.Plan.CP, s.Plan.FP8, s.Pod.Kernels.FP8Peak = 2, "mxfp8", 1.979e15
		s.Plan.Software.Stack = "torchtitan-0.2"
		return s
	}
	for _, c := range []struct {
		name string
		w    When
		edit func(*Shard)
		want bool
	}{
		{"empty", nil, func(*Shard) {}, true},
		{"cp>1", When{cp}, func(*Shard) {}, true},
		{"cp 1", When{cp}, func(s *Shard) { s.Plan.CP = 1 }, false},
		{"!cp>1 at cp 1", When{Not(cp)}, func(s *Shard) { s.Plan.CP = 1 }, true},
		{"moe", When{MoE, cp}, func(*Shard) {}, true},
		{"dense", When{MoE, cp}, func(s *Shard) { s.M.Experts = 0 }, false},
		{"fp8 priced", When{FP8, mxfp8}, func(*Shard) {}, true},
		{"fp8 not priced on the pod", When{mxfp8}, func(s *Shard) { s.Pod.Kernels.FP8Peak = 0 }, false},
		{"bf16", When{FP8}, func(s *Shard) { s.Plan.FP8 = "" }, false},
		{"another recipe", When{mxfp8}, func(s *Shard) { s.Plan.FP8 = "delayed" }, false},
		{"torchtitan", When{Framework(plan.FrameworkTorchTitan)}, func(*Shard) {}, true},
		{"megatron", When{Megatron}, func(*Shard) {}, false},
		{"lamb", When{lamb}, func(s *Shard) { s.Plan.Run.LAMB = true }, true},
		{"adam", When{lamb}, func(*Shard) {}, false},
		{"power", When{power}, func(s *Shard) { s.Pod.PowerLimit = 700 }, true},
		{"no power limit", When{power}, func(*Shard) {}, false},
		{"comm", When{WithComm, WithHost}, func(*Shard) {}, true},
		{"no comm", When{WithComm, WithHost}, func(s *Shard) { s.NoComm = true }, false},
		{"no host", When{WithComm, WithHost}, func(s *Shard) { s.NoHost = true }, false},
	} {
		s := base()
		c.edit(s)
		if got := c.w.Holds(s); got != c.want {
			t.Errorf("%s: %s holds %t, want %t", c.name, c.w, got, c.want)
		}
	}
	st := plan.Settings{LAMB: true}
	if !(When{lamb}).Runs(&st) || (When{Not(lamb)}).Runs(&st) || (When{lamb, cp}).Runs(&st) {
		t.Error("Runs: want lamb alone to run on LAMB's settings")
	}
	if got, want := (When{MoE, Not(cp), WithHost}).String(), "moe, !cp>1, host"; got != want {
		t.Errorf("String: %q, want %q", got, want)
	}
	if got := When(nil).String(); got != "every step" {
		t.Errorf("String of none: %q", got)
	}
}
