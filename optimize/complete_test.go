package optimize

import (
	"slices"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// TestComplete pins what Complete shares and what it copies: the parts a
// problem's tasks leave to the method are d's own slices (not copied), the
// parts taken from Base are copies (the result never aliases Base), a
// missing placement comes from Base (or every op on device 0 when Base has
// none), and zero Tasks means all tasks.
func TestComplete(t *testing.T) {
	b := graph.NewBuilder("three")
	for _, n := range []string{"a", "b", "c"} {
		b.AddOp(graph.Op{Name: n, HasTime: true, Time: 1e-3})
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	base := decision.Decision{Device: []int{1, 1, 0}, Priority: []int{3, 2, 1}, Fusion: []int{-1, 0, 1}, Transfer: []int{5}}
	d := decision.Decision{Device: []int{0, 1, 1}, Priority: []int{7, 8, 9}, Fusion: []int{2, 2, 2}, Transfer: []int{6}}
	same := func(x, y []int) bool { return len(x) > 0 && &x[0] == &y[0] }
	for _, tc := range []struct {
		name               string
		tasks              Tasks
		device, prio, fuse string // "d" = d's own slice, "base" = a copy of Base's
	}{
		{"all (zero Tasks)", Tasks{}, "d", "d", "d"},
		{"all", AllTasks, "d", "d", "d"},
		{"placement", Tasks{Placement: true}, "d", "base", "base"},
		{"scheduling", Tasks{Scheduling: true}, "base", "d", "base"},
		{"fusion", Tasks{Fusion: true}, "base", "base", "d"},
	} {
		p := &Problem{Graph: g, Tasks: tc.tasks, Base: base}
		got := p.Complete(d)
		check := func(part, want string, got, fromD, fromBase []int) {
			switch want {
			case "d":
				if !same(got, fromD) {
					t.Errorf("%s: %s is not d's own slice", tc.name, part)
				}
			case "base":
				if !slices.Equal(got, fromBase) || same(got, fromBase) {
					t.Errorf("%s: %s = %v, want a copy of Base's %v", tc.name, part, got, fromBase)
				}
			}
		}
		check("device", tc.device, got.Device, d.Device, base.Device)
		check("priority", tc.prio, got.Priority, d.Priority, base.Priority)
		check("transfer", tc.prio, got.Transfer, d.Transfer, base.Transfer)
		check("fusion", tc.fuse, got.Fusion, d.Fusion, base.Fusion)
	}
	// A missing placement: Base's, copied; with no Base placement, all on 0.
	p := &Problem{Graph: g, Base: base}
	if got := p.Complete(decision.Decision{}); !slices.Equal(got.Device, base.Device) || same(got.Device, base.Device) {
		t.Errorf("missing placement: %v, want a copy of Base's %v", got.Device, base.Device)
	}
	p.Base = decision.Decision{}
	if got := p.Complete(decision.Decision{}); !slices.Equal(got.Device, []int{0, 0, 0}) {
		t.Errorf("no placement anywhere: %v, want every op on device 0", got.Device)
	}
}
