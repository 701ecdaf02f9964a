package cost

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// named is a plug-in by name that prices a shard of CP above 1.
type named string

func (n named) Name() string { return string(n) }
func (n named) When() When {
	return When{Key("cp", "cp>1", func(pl *plan.Plan) bool { return pl.CP > 1 })}
}
func (named) Attention(*Shard, FusedAttn, bool, RingMsg) Phase { return Phase{Busy: 1} }

// other is a plug-in of no extension point, pricing every shard.
type other string

func (o other) Name() string { return string(o) }
func (other) When() When     { return nil }

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

// TestDecide: the record of a registry's plug-ins that price a shard,
// bit i the i-th registered: a, c (bits 1 and 4) at CP 1, all three at
// CP 2, and over two shards those pricing either; Named reads it back
// in order, Bit finds a plug-in's bit by name (0: not registered);
// Union keeps the first record's code base; a 65th plug-in is refused.
func TestDecide(t *testing.T) {
	r := MustRegistry(other("a"), named("b"), other("c"))
	var one, two Shard
	one.Plan.CP, two.Plan.CP = 1, 2
	for _, c := range []struct {
		ss   []*Shard
		want Set
	}{
		{[]*Shard{&one}, 5},
		{[]*Shard{&two}, 7},
		{[]*Shard{&one, &two}, 7},
		{nil, 0},
	} {
		if got := r.Decide(c.ss...); got != c.want {
			t.Errorf("Decide of %d shards: %b, want %b", len(c.ss), got, c.want)
		}
	}
	if got := r.Named(5); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("Named(101): %v, want [a c]", got)
	}
	if got := r.Named(0); got != nil {
		t.Errorf("Named(0): %v, want nil", got)
	}
	if r.Bit(named("b")) != 2 || r.Bit(other("c")) != 4 || r.Bit(other("d")) != 0 {
		t.Errorf("Bit: b %b, c %b, d %b; want 10, 100, 0", r.Bit(named("b")), r.Bit(other("c")), r.Bit(other("d")))
	}
	u := Record{Families: 1, Mechanisms: 2, CodeBases: 1}.Union(Record{Families: 4, Mechanisms: 2, CodeBases: 2})
	if u != (Record{Families: 5, Mechanisms: 2, CodeBases: 1}) {
		t.Errorf("Union: %+v, want families 101, mechanisms 10, code base 1", u)
	}
	full := &Registry{}
	for i := range 64 {
		if err := full.Register(other(fmt.Sprint("p", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := full.Register(other("p64")); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("a 65th plug-in: %v, want refused", err)
	}
}
