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
