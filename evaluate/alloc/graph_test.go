package alloc_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/alloc"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/workloads"
)

// TestGraphTraceMatchesSimulator: a whole step on one GPU, its trace in
// the order the roofline simulator ran the ops (its schedule's kernels
// by start) holds at its peak exactly the simulator's peak memory.
// Reserved is at least allocated, at least the tensors' bytes. The
// graph's own topological order (GraphTraces) is another order: its
// peak differs (logged), its books hold all the same.
func TestGraphTraceMatchesSimulator(t *testing.T) {
	hw, err := roofline.Preset(roofline.DefaultHardware)
	if err != nil {
		t.Fatal(err)
	}
	c, err := roofline.NewCluster(hw, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"trxl2", "wavenet2x18", "inception_b32"} {
		spec, ok := workloads.Lookup(name)
		if !ok {
			t.Fatalf("%s: no workload", name)
		}
		g, err := spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		m, err := roofline.NewModel(g, c, roofline.Options{IgnoreMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		d := decision.Decision{Device: decision.Single(g)}
		r, err := roofline.NewSimulator(m, nil).Run(d)
		if err != nil {
			t.Fatal(err)
		}
		_, sched, err := m.Schedule(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		ks := slices.Clone(sched.Kernels)
		slices.SortStableFunc(ks, func(a, b evaluate.Kernel) int { return cmp.Compare(a.Start, b.Start) })
		var order []int32
		for _, k := range ks {
			order = append(order, k.Ops...)
		}
		inOrder, err := alloc.GraphTracesInOrder(g, d.Device, 1, order)
		if err != nil {
			t.Fatal(err)
		}
		topo, err := alloc.GraphTraces(g, d.Device, 1)
		if err != nil {
			t.Fatal(err)
		}
		sim := r.PeakMemory[0]
		for _, tr := range []struct {
			name  string
			exact bool
			ev    []alloc.Event
		}{{"simulator's order", true, inOrder[0]}, {"topological order", false, topo[0]}} {
			st, err := alloc.Replay(alloc.Config{}, tr.ev)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, %s: simulator %d, trace %d, allocated %d, reserved %d", name, tr.name, sim, st.PeakRequested, st.PeakAllocated, st.PeakReserved)
			if tr.exact && st.PeakRequested != sim {
				t.Errorf("%s: trace peak %d against the simulator's %d", name, st.PeakRequested, sim)
			}
			if st.PeakReserved < st.PeakAllocated || st.PeakAllocated < st.PeakRequested {
				t.Errorf("%s: reserved %d allocated %d requested %d", name, st.PeakReserved, st.PeakAllocated, st.PeakRequested)
			}
		}
	}
}

const mib = 1 << 20

// TestGraphTraceByHand: one chain of three ops, 3 MiB tensors (each op's
// output consumed by the next; the last one's by none), worked by hand:
// op0 allocates t0; op1 allocates t1 and frees t0; op2 allocates t2 and
// frees t1 and (no consumer) t2. Peak: two tensors, 6 MiB; each 3 MiB
// request takes a 20 MiB segment's best fit: one segment, 20 MiB. On two
// devices (op1 on device 1) t0 is copied to device 1 at op1 and freed on
// device 0 at once (no consumer there). An order putting op2 first is
// refused by GraphTracesInOrder and mended by Ordered.
func TestGraphTraceByHand(t *testing.T) {
	g := graphtest.Chains(1, 3, 1e-3, 3*mib)
	tr, err := alloc.GraphTraces(g, []int{0, 0, 0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := alloc.Replay(alloc.Config{}, tr[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.PeakRequested != 6*mib || st.PeakReserved != 20*mib || st.Requested != 0 {
		t.Errorf("one device: peak %d reserved %d left %d; want 6 MiB, 20 MiB, 0", st.PeakRequested, st.PeakReserved, st.Requested)
	}
	two, err := alloc.GraphTraces(g, []int{0, 1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for dv, want := range []int64{3 * mib, 6 * mib} {
		st, err := alloc.Replay(alloc.Config{}, two[dv])
		if err != nil {
			t.Fatal(err)
		}
		if st.PeakRequested != want || st.Requested != 0 {
			t.Errorf("device %d: peak %d left %d; want %d, 0", dv, st.PeakRequested, st.Requested, want)
		}
	}
	bad := []int32{2, 0, 1}
	if _, err := alloc.GraphTracesInOrder(g, []int{0, 0, 0}, 1, bad); err == nil {
		t.Error("an order against the edges: no error")
	}
	fixed, err := alloc.Ordered(g, bad)
	if err != nil || !slices.Equal(fixed, []int32{0, 1, 2}) {
		t.Errorf("Ordered(%v) = %v, %v; want [0 1 2]", bad, fixed, err)
	}
	if _, err := alloc.GraphTraces(g, []int{0, 0}, 1); err == nil {
		t.Error("two devices for three ops: no error")
	}
}
