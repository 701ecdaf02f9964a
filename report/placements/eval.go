package placements

import (
	"fmt"
	"io"
	"slices"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/opcheck"
	"github.com/placer/placer/report"
)

// Eval is the report of one evaluated decision: what `placer eval`
// prints as a table, and as JSON with --json.
type Eval struct {
	Graph    string `json:"graph"`
	Ops      int    `json:"ops"`
	Hardware string `json:"hardware"`
	Devices  int    `json:"devices"`
	Topology string `json:"topology"`
	// HardwareNote says where the hardware came from when no --hardware
	// named it and it is a graph file's default (jobs.GraphFileNote; ""
	// otherwise).
	HardwareNote string `json:"hardware_note,omitempty"`
	Placement    string `json:"placement"`
	Schedule     string `json:"schedule"`
	Fusion       string `json:"fusion"`
	// Strategy is the decision's strategy around the placement (e.g.
	// "dp=4"; "" = one replica).
	Strategy  string `json:"strategy,omitempty"`
	Replicas  int    `json:"replicas,omitempty"`
	Transfers string `json:"transfers"` // "async" or "sync"
	// Execution says how the step is costed where the graph records how
	// it runs (torchexport's settings) or --tf32 says so ("" otherwise).
	Execution string `json:"execution,omitempty"`
	// Host says that the evaluation modelled each GPU's host thread
	// dispatching its kernels, at what issue times and, where the graph's
	// record turned it on, why; "" = no host model.
	Host string `json:"host,omitempty"`
	// Objective ("step-time" or "peak-memory") and the decision's value
	// of it (seconds or bytes); Feasible says whether the decision is
	// valid under it.
	Objective      string  `json:"objective"`
	ObjectiveValue float64 `json:"objective_value"`
	Feasible       bool    `json:"feasible"`
	StepTime       float64 `json:"step_time_s"`
	LowerBound     float64 `json:"lower_bound_s"`
	Efficiency     float64 `json:"efficiency"` // lower bound / step time
	Kernels        int     `json:"kernels"`
	BytesMoved     int64   `json:"bytes_moved"`
	NumXfers       int     `json:"transfer_count"`
	// CollectiveBytes is the part of BytesMoved that collectives move
	// (each device's sent and received count its transfers and its share
	// of the collectives: the devices' sent add up to BytesMoved).
	CollectiveBytes int64 `json:"collective_bytes,omitempty"`
	OOM             bool  `json:"oom"`
	// ColocationViolations counts ops away from their co-location group.
	ColocationViolations int           `json:"colocation_violations"`
	PerDevice            []DeviceStats `json:"devices_detail"`
	Trace                string        `json:"trace,omitempty"`
	Measured             *Measured     `json:"measured,omitempty"`
	// Decision is the decision evaluated, as a decision file (one
	// replica's placement with its strategy): eval --placement and
	// export --placement read a report holding it as they read a result
	// file.
	Decision *decision.File `json:"decision,omitempty"`
	// Checked is what this graph's op kinds were checked against: the
	// profiled steps on this GPU that have them and how close the
	// roofline came there (evaluate/opcheck).
	Checked *opcheck.Report `json:"checked_against,omitempty"`
	// Costs says which figures are measured and which modelled, where an
	// ops profile priced the graph (eval --profile; nil: none, every
	// figure the roofline's).
	Costs *OpCosts `json:"costs,omitempty"`
}

// Measured is a decision run on real GPUs (placer eval --measure).
type Measured struct {
	StepTime  float64   `json:"step_time_s"` // median of the timed runs
	Runs      []float64 `json:"runs_s"`
	Predicted float64   `json:"predicted_s"` // the roofline model's step time
	Mapping   string    `json:"mapping"`     // how devices map onto GPUs
	Shared    bool      `json:"shared"`      // some GPU runs several devices as streams
	GPUs      int       `json:"gpus"`
	Notes     []string  `json:"notes,omitempty"`
	// Classes compares summed kernel time per op class.
	Classes []ClassTime `json:"classes,omitempty"`
}

// ClassTime is one op class's summed kernel time, predicted and measured.
type ClassTime struct {
	Class     string  `json:"class"`
	Kernels   int     `json:"kernels"`
	Predicted float64 `json:"predicted_s"`
	Measured  float64 `json:"measured_s"`
}

// DeviceStats is one device's share of a step.
type DeviceStats struct {
	Device      int     `json:"device"`
	Ops         int     `json:"ops"`
	Busy        float64 `json:"busy_s"`
	Utilization float64 `json:"utilization"` // busy / step time
	PeakMemory  int64   `json:"peak_memory"`
	Capacity    int64   `json:"capacity"`
	// Reserved and ReservedExpandable are what PyTorch's caching
	// allocator reserves at its peak for the device's tensors, without
	// and with expandable segments, and AllocatorAllocated what it counts
	// allocated (requests rounded, blocks not split counted whole):
	// evaluate/alloc's simulator on the device's allocation trace (0: not
	// simulated).
	Reserved           int64 `json:"reserved,omitempty"`
	ReservedExpandable int64 `json:"reserved_expandable,omitempty"`
	AllocatorAllocated int64 `json:"allocator_allocated,omitempty"`
	OOM                bool  `json:"oom"`
	// BytesOut and BytesIn are what the device sends and receives, in
	// transfers and in collectives; Collective the collectives' part of
	// each (a ring collective sends what it receives).
	BytesOut   int64 `json:"bytes_out"`
	BytesIn    int64 `json:"bytes_in"`
	Collective int64 `json:"collective_bytes,omitempty"`
}

// NewEval fills the numeric part of an Eval from a result; opsPerDevice
// counts the ops placed on each device.
func NewEval(r *evaluate.Result, lowerBound float64, opsPerDevice []int) Eval {
	e := Eval{StepTime: r.StepTime, LowerBound: lowerBound, Kernels: r.Kernels, BytesMoved: r.BytesMoved,
		NumXfers: r.Transfers, CollectiveBytes: r.CollectiveBytes, OOM: r.OOM, ColocationViolations: r.ColocationViolations}
	if r.StepTime > 0 {
		e.Efficiency = lowerBound / r.StepTime
	}
	d := len(r.DeviceBusy)
	for k := 0; k < d; k++ {
		ds := DeviceStats{Device: k, Ops: opsPerDevice[k], Busy: r.DeviceBusy[k], PeakMemory: r.PeakMemory[k], Capacity: r.Capacity[k]}
		ds.OOM = ds.PeakMemory > ds.Capacity
		if r.StepTime > 0 {
			ds.Utilization = ds.Busy / r.StepTime
		}
		for j := 0; j < d; j++ {
			if len(r.LinkBytes) == d*d {
				ds.BytesOut += r.LinkBytes[k*d+j]
				ds.BytesIn += r.LinkBytes[j*d+k]
			}
		}
		if len(r.Collective) == d {
			ds.Collective = r.Collective[k]
			ds.BytesOut += ds.Collective
			ds.BytesIn += ds.Collective
		}
		e.PerDevice = append(e.PerDevice, ds)
	}
	return e
}

// moved says what moved between GPUs: the transfers and what collectives
// moved (each GPU's sent and received below are its part of both).
func moved(e Eval) string {
	if e.CollectiveBytes == 0 {
		return fmt.Sprintf("%s in %d transfers", report.Bytes(e.BytesMoved), e.NumXfers)
	}
	return fmt.Sprintf("%s: %s in %d transfers, %s by collectives", report.Bytes(e.BytesMoved),
		report.Bytes(e.BytesMoved-e.CollectiveBytes), e.NumXfers, report.Bytes(e.CollectiveBytes))
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "no"
}

// WriteEval writes e as two tables: the step summary and the per-device
// breakdown.
func WriteEval(w io.Writer, e Eval) error {
	w, flush := report.FitLines(w)
	defer flush()
	fmt.Fprintf(w, "%s (%d ops) on %d x %s (%s)%s\n", e.Graph, e.Ops, e.Devices, e.Hardware, e.Topology, hardwareNote(e.HardwareNote))
	fmt.Fprintf(w, "placement %s, schedule %s, fusion %s, %s transfers\n", e.Placement, e.Schedule, e.Fusion, e.Transfers)
	if e.Strategy != "" {
		fmt.Fprintf(w, "strategy %s: the placement is one replica's, on %d of the %d GPUs\n", e.Strategy, e.Devices/max(1, e.Replicas), e.Devices)
	}
	if e.Execution != "" {
		fmt.Fprintf(w, "run as: %s\n", e.Execution)
	}
	if e.Host != "" {
		fmt.Fprintf(w, "host model on: %s\n", e.Host)
	}
	WriteOpCosts(w, e.Costs)
	obj := ObjectiveValue(e.Objective, e.ObjectiveValue)
	if !e.Feasible {
		obj += " (invalid)"
	}
	rows := [][2]string{
		{"objective: " + ObjectiveTitle(e.Objective), obj},
		{"step time", report.Seconds(e.StepTime)},
		{"lower bound", report.Seconds(e.LowerBound)},
		{"efficiency (lower bound / step)", report.Percent(e.Efficiency)},
		{"kernels", fmt.Sprint(e.Kernels)},
		{"bytes moved", moved(e)},
		{"out of memory", yesNo(e.OOM)},
	}
	if e.ColocationViolations > 0 {
		rows = append(rows, [2]string{"co-location violations", fmt.Sprint(e.ColocationViolations)})
	}
	if err := report.KeyValue(w, rows); err != nil {
		return err
	}
	var dev [][]string
	reserved := false
	for _, d := range e.PerDevice {
		oom := ""
		if d.OOM {
			oom = " OOM"
		}
		row := []string{fmt.Sprint(d.Device), fmt.Sprint(d.Ops), report.Seconds(d.Busy), report.Percent(d.Utilization),
			report.Bytes(d.PeakMemory) + oom, report.Percent(float64(d.PeakMemory) / float64(max(d.Capacity, 1))), report.Bytes(d.BytesOut), report.Bytes(d.BytesIn)}
		if d.Reserved > 0 {
			reserved = true
			row = slices.Insert(row, 5, report.Bytes(d.Reserved)+" / "+report.Bytes(d.ReservedExpandable))
		} else {
			row = slices.Insert(row, 5, "-")
		}
		dev = append(dev, row)
	}
	head := []string{"GPU", "ops", "busy", "util", "peak memory", "reserved", "of capacity", "sent", "received"}
	if !reserved {
		for i := range dev {
			dev[i] = slices.Delete(dev[i], 5, 6)
		}
		head = slices.Delete(head, 5, 6)
	}
	if err := report.Table(w, head, dev); err != nil {
		return err
	}
	if reserved {
		fmt.Fprintln(w, "peak memory: what the tensors hold (allocated); reserved: what PyTorch's caching allocator would reserve for them at its peak, without / with expandable segments (simulated on each GPU's allocation trace)")
	}
	if e.CollectiveBytes > 0 {
		fmt.Fprintln(w, "sent and received: each GPU's transfers and its part of the collectives")
	}
	if m := e.Measured; m != nil {
		rows := [][2]string{
			{"measured step (median of " + fmt.Sprint(len(m.Runs)) + ")", report.Seconds(m.StepTime)},
			{"predicted step", report.Seconds(m.Predicted)},
			{"predicted / measured", report.Percent(m.Predicted / m.StepTime)},
			{"GPUs", fmt.Sprintf("%d: %s", m.GPUs, m.Mapping)},
		}
		if err := report.KeyValue(w, rows); err != nil {
			return err
		}
		if len(m.Classes) > 0 {
			var rows [][]string
			for _, c := range m.Classes {
				rows = append(rows, []string{c.Class, fmt.Sprint(c.Kernels), report.Seconds(c.Predicted), report.Seconds(c.Measured), report.Percent(c.Predicted / c.Measured)})
			}
			if err := report.Table(w, []string{"op class", "kernels", "predicted", "measured", "predicted / measured"}, rows); err != nil {
				return err
			}
		}
		if m.Shared {
			fmt.Fprintln(w, "note: fewer physical GPUs than devices: devices ran as streams on shared GPUs")
		}
		for _, n := range m.Notes {
			fmt.Fprintln(w, "note:", n)
		}
	}
	if e.Checked != nil {
		if err := WriteChecked(w, *e.Checked); err != nil {
			return err
		}
	}
	if e.Trace != "" {
		fmt.Fprintf(w, "trace written to %s (open in https://ui.perfetto.dev or chrome://tracing)\n", e.Trace)
	}
	return nil
}

// checkedKinds is how many kinds, largest share first, the checked-against
// table shows (--json has them all).
const checkedKinds = 8

// WriteChecked writes what an op graph's figures were checked against: its
// largest op kinds by share of the GPU time, the profiled steps on this
// GPU that have each and the roofline's error on their ops of that kind,
// then one line per warning.
func WriteChecked(w io.Writer, c opcheck.Report) error {
	fmt.Fprintf(w, "checked against: %s of the GPU time is in op kinds that %d profiled steps on %s have (evaluate/opcheck)\n",
		report.Percent(c.Checked), c.Steps, c.Hardware)
	if c.Steps > 0 {
		var rows [][]string
		for i, k := range c.Kinds {
			if i == checkedKinds {
				break
			}
			refs, errs := "none", "-"
			if n := len(k.References); n > 0 {
				refs = k.References[0]
				if n > 1 {
					refs = fmt.Sprintf("%s and %d more", refs, n-1)
				}
			}
			if k.Error != nil {
				errs = fmt.Sprintf("%+.0f%%", 100**k.Error)
			}
			rows = append(rows, []string{k.Kind.String(), fmt.Sprint(k.Ops), report.Percent(k.Share), refs, errs})
		}
		if err := report.Table(w, []string{"op kind", "ops", "of GPU time", "profiled in", "roofline vs measured"}, rows); err != nil {
			return err
		}
		if n := len(c.Kinds) - checkedKinds; n > 0 {
			fmt.Fprintf(w, "%d smaller kinds left out (--json lists them)\n", n)
		}
	}
	if x := c.Casts; x != nil {
		fmt.Fprintf(w, "autocast %s: %d casts (%d forward, %d backward) move %s: %s of GPU work (%s), %s of host issue\n",
			x.DType, x.Forward+x.Backward, x.Forward, x.Backward, report.Bytes(x.Bytes), report.Seconds(x.GPU), report.Percent(x.Share), report.Seconds(x.Issue))
	}
	if len(c.Stages) > 1 {
		var rows [][]string
		for _, st := range c.Stages {
			bound := "GPU"
			if st.HostBound {
				bound = "host"
			}
			rows = append(rows, []string{fmt.Sprint(st.GPU), fmt.Sprint(st.Ops), report.Seconds(st.Issue), report.Seconds(st.GPUTime), bound})
		}
		if err := report.Table(w, []string{"GPU", "ops", "host issue", "GPU work", "bound by"}, rows); err != nil {
			return err
		}
	}
	for _, x := range c.Warnings {
		fmt.Fprintln(w, "warning:", x)
	}
	return nil
}
