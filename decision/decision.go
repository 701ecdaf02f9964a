package decision

import (
	"fmt"

	"github.com/placer/placer/graph"
)

// Decision is everything a placer decides for one graph on one cluster.
// Slices are indexed by op index (Transfer by tensor*devices+destination).
type Decision struct {
	// Device maps op index -> device index. Required.
	Device []int
	// Priority maps op index -> scheduling priority: among the ops ready on
	// a device, the highest priority runs first. nil = FIFO by ready time,
	// ties by topological index (TensorFlow's default).
	Priority []int
	// Fusion maps op index -> fusion priority: ops try to fuse with their
	// producers in decreasing priority order; a negative value means the op
	// never initiates a fusion. nil = no fusion.
	Fusion []int
	// Transfer maps tensor*devices+destination -> transfer priority: among
	// the transfers waiting for a link, the highest goes first (REGAL's
	// tensor transfer priorities). nil = FIFO.
	Transfer []int
	// Strategy is how the step is split around this placement: replicas,
	// micro-batches and their schedule, sharding. The zero value is one
	// replica and one micro-batch.
	Strategy Strategy
}

// Clone returns a deep copy of d.
func (d Decision) Clone() Decision {
	return Decision{
		Device:   cloneInts(d.Device),
		Priority: cloneInts(d.Priority),
		Fusion:   cloneInts(d.Fusion),
		Transfer: cloneInts(d.Transfer),
		Strategy: d.Strategy,
	}
}

func cloneInts(s []int) []int {
	if s == nil {
		return nil
	}
	return append([]int(nil), s...)
}

// Error is a decision that does not fit its graph or cluster.
type Error struct {
	Field string // "device", "priority", "fusion" or "transfer"
	Op    string // op name, when one op is at fault
	Msg   string
}

func (e *Error) Error() string {
	if e.Op != "" {
		return fmt.Sprintf("decision: %s of op %q: %s", e.Field, e.Op, e.Msg)
	}
	return fmt.Sprintf("decision: %s: %s", e.Field, e.Msg)
}

// Validate checks that d fits graph g on a cluster of the given number of
// devices: every slice of the right length and every device in range.
// Co-location and memory are not checked here: a decision that breaks
// them is valid input whose evaluation reports the violation.
func (d Decision) Validate(g *graph.Graph, devices int) error {
	if err := d.validateDevices(g, devices); err != nil {
		return err
	}
	for i, dev := range d.Device {
		if dev < 0 || dev >= devices {
			return &Error{Field: "device", Op: g.Op(i).Name, Msg: fmt.Sprintf("device %d does not exist (cluster has devices 0..%d)", dev, devices-1)}
		}
	}
	if err := d.validateLengths(g, devices); err != nil {
		return err
	}
	if err := d.Strategy.Check(); err != nil {
		return err
	}
	return d.validateRanges(g)
}

// MaxPriority bounds scheduling, fusion and transfer priorities (either
// sign), so that the spans the simulator computes (hi - lo + 1) cannot
// overflow. Validate checks it; the simulator's hot path does not.
const MaxPriority = 1 << 40

// validateRanges checks every priority against MaxPriority.
func (d Decision) validateRanges(g *graph.Graph) error {
	for _, f := range []struct {
		name string
		v    []int
	}{{"priority", d.Priority}, {"fusion", d.Fusion}, {"transfer", d.Transfer}} {
		for i, p := range f.v {
			if p > MaxPriority || p < -MaxPriority {
				e := &Error{Field: f.name, Msg: fmt.Sprintf("%d is outside [-2^40, 2^40]", p)}
				if f.name != "transfer" {
					e.Op = g.Op(i).Name
				} else {
					e.Msg = fmt.Sprintf("entry %d: %s", i, e.Msg)
				}
				return e
			}
		}
	}
	return nil
}

// ValidateShape is Validate less the check that every op's device exists:
// it checks the number of devices and the length of every field. It is
// for a caller that reads every op's device anyway (a simulator placing
// the ops), checks each against the number of devices there, and asks
// Validate for the error when one is out of range. When ValidateShape
// fails, Validate fails too, with the error Validate gives.
func (d Decision) ValidateShape(g *graph.Graph, devices int) error {
	if err := d.validateDevices(g, devices); err != nil {
		return err
	}
	return d.validateLengths(g, devices)
}

// validateDevices checks the number of devices and of per-op devices.
func (d Decision) validateDevices(g *graph.Graph, devices int) error {
	if devices < 1 {
		return &Error{Field: "device", Msg: fmt.Sprintf("cluster has %d devices", devices)}
	}
	if n := g.NumOps(); len(d.Device) != n {
		return &Error{Field: "device", Msg: fmt.Sprintf("has %d entries, graph %q has %d ops", len(d.Device), g.Name(), n)}
	}
	return nil
}

// validateLengths checks the lengths of the priorities, fusion priorities
// and transfer priorities.
func (d Decision) validateLengths(g *graph.Graph, devices int) error {
	n := g.NumOps()
	if d.Priority != nil && len(d.Priority) != n {
		return &Error{Field: "priority", Msg: fmt.Sprintf("has %d entries, graph %q has %d ops", len(d.Priority), g.Name(), n)}
	}
	if d.Fusion != nil && len(d.Fusion) != n {
		return &Error{Field: "fusion", Msg: fmt.Sprintf("has %d entries, graph %q has %d ops", len(d.Fusion), g.Name(), n)}
	}
	if d.Transfer != nil && len(d.Transfer) != g.NumTensors()*devices {
		return &Error{Field: "transfer", Msg: fmt.Sprintf("has %d entries, want tensors x devices = %d x %d", len(d.Transfer), g.NumTensors(), devices)}
	}
	return nil
}

// ColocationViolations counts the ops placed on a different device than
// the first op of their co-location group.
func ColocationViolations(g *graph.Graph, device []int) int {
	first := make([]int, g.NumColocationGroups())
	for i := range first {
		first[i] = -1
	}
	bad := 0
	for i, dev := range device {
		c := g.Colocation(i)
		if c < 0 {
			continue
		}
		if first[c] < 0 {
			first[c] = dev
		} else if first[c] != dev {
			bad++
		}
	}
	return bad
}

// Single places every op on device 0.
func Single(g *graph.Graph) []int {
	return make([]int, g.NumOps())
}

// RoundRobin deals ops to devices in topological order, one at a time;
// an op of a co-location group follows the group's first op, so the result
// honours co-location.
func RoundRobin(g *graph.Graph, devices int) []int {
	dev := make([]int, g.NumOps())
	group := make([]int, g.NumColocationGroups())
	for i := range group {
		group[i] = -1
	}
	next := 0
	for _, v := range g.Topo() {
		c := g.Colocation(int(v))
		if c >= 0 && group[c] >= 0 {
			dev[v] = group[c]
			continue
		}
		dev[v] = next
		if c >= 0 {
			group[c] = next
		}
		next = (next + 1) % devices
	}
	return dev
}

// ReverseTopologicalFusion is the default fusion order reversed: ops try
// to fuse from the end of the graph backwards (on gnmt4 it beat the
// default order by 5.1%, where every quick baseline uses the default).
func ReverseTopologicalFusion(g *graph.Graph) []int {
	f := make([]int, g.NumOps())
	for i := range f {
		f[i] = g.TopoIndex(i) + 1
	}
	return f
}

// TopologicalFusion is the default (XLA-like) fusion order: ops try to
// fuse in topological order.
func TopologicalFusion(g *graph.Graph) []int {
	f := make([]int, g.NumOps())
	n := g.NumOps()
	for i := range f {
		f[i] = n - g.TopoIndex(i)
	}
	return f
}
