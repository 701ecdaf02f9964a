package cost

import (
	"reflect"
	"strings"
	"testing"
)

// named is a plug-in by name that prices a shard of CP above 1.
type named string

func (n named) Name() string                                   { return string(n) }
func (n named) Prices(s *Shard) bool                           { return s.Plan.CP > 1 }
func (named) Attention(*Shard, FusedAttn, bool, RingMsg) Phase { return Phase{Busy: 1} }

// other is a plug-in of no extension point, pricing every shard.
type other string

func (o other) Name() string     { return string(o) }
func (other) Prices(*Shard) bool { return true }

// TestRegistry: names kept in order, an empty or a taken name refused,
// Priced lists those that price the shard in order, First finds the
// first plug-in of an extension point.
func TestRegistry(t *testing.T) {
	r, err := NewRegistry(other("a"), named("b"), other("c"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Names(); got != "a, b, c" {
		t.Errorf("Names: %q", got)
	}
	if err := r.Register(named("a")); err == nil || !strings.Contains(err.Error(), `"a" registered twice`) {
		t.Errorf("a taken name: %v", err)
	}
	if err := r.Register(other("")); err == nil {
		t.Error("an empty name: no error")
	}
	if _, err := NewRegistry(other("x"), other("x")); err == nil {
		t.Error("NewRegistry of a duplicate: no error")
	}
	var s Shard
	if got := r.Priced(&s); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("Priced, CP 1: %v", got)
	}
	s.Plan.CP = 2
	if got := r.Priced(&s); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Priced, CP 2: %v", got)
	}
	if got := First[CPAttention](r); got == nil || got.Name() != "b" {
		t.Errorf("First CPAttention: %v", got)
	}
	if got := First[CPAttention](MustRegistry(other("z"))); got != nil {
		t.Errorf("First CPAttention of none: %v", got)
	}
	if r.Lookup("c") == nil || r.Lookup("d") != nil {
		t.Error("Lookup")
	}
}

// TestPricing: the first plug-in that prices the shard, in order; the
// zero value (nil) where none does.
func TestPricing(t *testing.T) {
	ps := []Plugin{named("ring"), other("any"), named("late")}
	var s Shard
	s.Plan.CP = 1
	if got := Pricing(ps, &s); got == nil || got.Name() != "any" {
		t.Errorf("CP 1: %v, want any (ring prices only CP above 1)", got)
	}
	s.Plan.CP = 2
	if got := Pricing(ps, &s); got == nil || got.Name() != "ring" {
		t.Errorf("CP 2: %v, want ring, the first", got)
	}
	s.Plan.CP = 1
	if got := Pricing([]Plugin{named("ring")}, &s); got != nil {
		t.Errorf("none pricing: %v, want nil", got)
	}
}
