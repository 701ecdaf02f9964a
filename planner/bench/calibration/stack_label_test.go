package calibration

import (
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestStatedErrorNamesPlanStack: a torchtitan plan compiled is in the
// regime of fused kernels, whose rows ran Megatron-Core; its stated
// error says the plan runs torchtitan, never that its stack is
// Megatron-Core. Placer's default stack's says
// nothing more.
func TestStatedErrorNamesPlanStack(t *testing.T) {
	m, err := transformer.Parse("llama3-8b:seq=8192,batch=64")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ strat, want, not string }{
		{"fsdp=on,stack=torchtitan-0.2,compile=on", "; the plan runs torchtitan-0.2 compiled, in this regime for its fused kernels, not on Megatron-Core", ""},
		{"tp=1", "Megatron-Core", "the plan runs"},
	} {
		s, err := plan.ParseStrategy(tc.strat)
		if err != nil {
			t.Fatal(err)
		}
		e, err := For(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.String(); !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%s: %q; want %q, no %q", tc.strat, got, tc.want, tc.not)
		}
	}
}

// TestMegatronCoreStatesItsOwn: on the bench, a Megatron-Core plan of
// 1,024 Hopper GPUs states its error from Megatron-Core's own
// development rows, none of another code base's (nanotron's, read on the
// same fused layers, are off by up to +212% there), and a bound no wider
// than the pooled regime's of every code base.
func TestMegatronCoreStatesItsOwn(t *testing.T) {
	m, err := transformer.Parse("llama3-70b:seq=8192,batch=1024")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 1024)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=8,pp=4,dp=32,mbs=1,sp=on")
	if err != nil {
		t.Fatal(err)
	}
	e, err := For(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if e.Regime.CodeBase != "megatron-core" || e.From.CodeBase != "megatron-core" || e.Rows < OwnCodeBaseRows {
		t.Fatalf("stated %s from %s (%d rows), want Megatron-Core's own rows", e.Regime.Key(), e.From.Key(), e.Rows)
	}
	tb, err := Development()
	if err != nil {
		t.Fatal(err)
	}
	pooled := e.Regime
	pooled.CodeBase = ""
	if pe := tb.ForRegime(pooled); e.Bound > pe.Bound {
		t.Errorf("own rows' bound %.3f wider than every code base's %.3f (%s)", e.Bound, pe.Bound, pe.From.Key())
	}
}
