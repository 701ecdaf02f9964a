package placements

import (
	"fmt"
	"io"
	"strings"

	"github.com/placer/placer/report"
)

// Baselines is the comparison of methods on one graph and cluster: what
// `placer baselines` prints as a table, and as JSON with --json.
type Baselines struct {
	Graph    string `json:"graph"`
	Ops      int    `json:"ops"`
	Hardware string `json:"hardware"`
	Devices  int    `json:"devices"`
	Topology string `json:"topology"`
	// HardwareNote says where the hardware came from when no --hardware
	// named it and it is a graph file's default (jobs.GraphFileNote; ""
	// otherwise).
	HardwareNote string `json:"hardware_note,omitempty"`
	Capacity     int64  `json:"capacity"`  // memory per device, bytes
	Transfers    string `json:"transfers"` // "async" or "sync"
	// Host says that every evaluation modelled each GPU's host thread
	// dispatching its kernels (--host), and at what dispatch times; ""
	// = no host model (the default).
	Host  string `json:"host,omitempty"`
	Tasks string `json:"tasks"` // what the methods may change
	// Objective is what the methods minimised: "step-time" (under the
	// memory limit) or "peak-memory" (the largest per-device peak);
	// "" reads as step-time.
	Objective string `json:"objective"`
	// Budget is the evaluation budget each search method got (0 = each
	// method's default); TimeLimit its wall-time limit in seconds (0 =
	// none).
	Budget int `json:"budget_evaluations"`
	// SearchBudget is what placer search spends in all (its method and
	// the joint space's rows), said in words ("" for a table of methods
	// on their own budgets).
	SearchBudget string  `json:"search_budget,omitempty"`
	TimeLimit    float64 `json:"time_limit_s"`
	CPULimit     float64 `json:"cpu_limit_s,omitempty"` // CPU-time limit per method in seconds (0 = none)
	Seed         uint64  `json:"seed"`
	// Reference is the method speed-ups are measured against: "expert",
	// or "single" when no expert placement is available.
	Reference string  `json:"reference"`
	RefStep   float64 `json:"reference_step_time_s"`
	// LowerBound and LowerBoundFusion are the roofline lower bounds
	// without and with fusion; a row's efficiency uses the one that
	// matches its decision.
	LowerBound       float64        `json:"lower_bound_s"`
	LowerBoundFusion float64        `json:"lower_bound_fusion_s"`
	Rows             []BaselinesRow `json:"methods"`
	// RowsDir is the folder the rows' decisions were written to (--rows:
	// one result file per row, and the index RowsIndex); "" = none.
	RowsDir string `json:"rows_dir,omitempty"`
}

// BaselinesRow is one method's line of the comparison.
type BaselinesRow struct {
	Method   string  `json:"method"`
	StepTime float64 `json:"step_time_s"`
	// Objective is the row's value of the comparison's objective (step
	// time in seconds, or the largest per-device peak in bytes).
	Objective float64 `json:"objective"`
	// Feasible says the decision is valid under the objective (for
	// peak-memory, a decision over capacity still is).
	Feasible bool `json:"feasible"`
	// SpeedUp is the reference's step time over this one's (above 1 is
	// faster than the reference).
	SpeedUp float64 `json:"speedup"`
	// Efficiency is the lower bound over the step time.
	Efficiency float64 `json:"efficiency"`
	Fused      bool    `json:"fused"` // the decision fuses ops
	// PeakMemory is the highest per-device peak; PeakFraction that peak
	// over the device's capacity.
	PeakMemory           int64   `json:"max_peak_memory"`
	PeakFraction         float64 `json:"max_peak_fraction"`
	OOM                  bool    `json:"oom"`
	ColocationViolations int     `json:"colocation_violations"`
	SearchTime           float64 `json:"search_time_s"`
	Evaluations          int     `json:"evaluations"`
	EvalsPerSecond       float64 `json:"evaluations_per_s"`
	Status               string  `json:"status"`
	// Rest says what the row's non-placement parts are: its scheduling
	// ("fifo", TensorFlow's default, or "own") and fusion ("none",
	// "default" for TensorFlow's XLA-like fusion, or "own"), e.g.
	// "fifo, default" for the expert row.
	Rest string `json:"schedule_fusion,omitempty"`
	// Error says why the method gave no decision (for example no expert
	// placement for this graph); the other fields are then zero.
	Error string `json:"error,omitempty"`
	// File is the row's decision as a result file (--rows DIR: DIR/NAME.json;
	// "" when not written).
	File string `json:"decision_file,omitempty"`
}

// hardwareNote is a header's note on where its hardware came from
// ("; NOTE"), "" for none.
func hardwareNote(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}

// WriteBaselines writes b as one table, with a header naming the problem
// and footnotes for the methods that failed.
func WriteBaselines(w io.Writer, b Baselines) error {
	w, flush := report.FitLines(w)
	defer flush()
	fmt.Fprintf(w, "%s (%d ops) on %d x %s (%s), %s per device, %s transfers%s\n",
		b.Graph, b.Ops, b.Devices, b.Hardware, b.Topology, report.Bytes(b.Capacity), b.Transfers, hardwareNote(b.HardwareNote))
	if b.Host != "" {
		fmt.Fprintf(w, "host model on: %s\n", b.Host)
	}
	var limits []string
	if b.Budget > 0 {
		limits = append(limits, fmt.Sprintf("%d evaluations", b.Budget))
	}
	if b.TimeLimit > 0 {
		limits = append(limits, report.Seconds(b.TimeLimit)+" wall")
	}
	if b.CPULimit > 0 {
		limits = append(limits, report.Seconds(b.CPULimit)+" CPU")
	}
	budget := "each method's default"
	if len(limits) > 0 {
		budget = strings.Join(limits, " or ") + " per method"
	}
	if b.SearchBudget != "" {
		budget = b.SearchBudget
	}
	fmt.Fprintf(w, "objective %s; tasks %s; search budget %s; seed %d\nlower bound %s (%s with fusion)\n",
		ObjectiveTitle(b.Objective), b.Tasks, budget, b.Seed, report.Seconds(b.LowerBound), report.Seconds(b.LowerBoundFusion))
	bestObj := -1.0
	for _, r := range b.Rows {
		if r.Error == "" && r.Feasible && (bestObj < 0 || r.Objective < bestObj) {
			bestObj = r.Objective
		}
	}
	var rows [][]string
	var notes []string
	for _, r := range b.Rows {
		if r.Error != "" {
			// A method that does not apply to the graph is absent, not 0 ms.
			rows = append(rows, []string{r.Method, "", "absent", "absent", "", "", "", "", report.Seconds(r.SearchTime), "", ""})
			notes = append(notes, fmt.Sprintf("%s: %s", r.Method, r.Error))
			continue
		}
		oom := yesNo(r.OOM)
		if r.ColocationViolations > 0 {
			oom += fmt.Sprintf(" (%d co-location violations)", r.ColocationViolations)
		}
		eff := report.Percent(r.Efficiency)
		if r.Fused {
			eff += " f"
		}
		rate := ""
		if r.Evaluations > 1 && r.EvalsPerSecond > 0 {
			rate = fmt.Sprintf("%.1f", r.EvalsPerSecond)
		}
		obj := ObjectiveValue(b.Objective, r.Objective)
		if !r.Feasible {
			obj += " (invalid)"
		} else if r.Objective == bestObj {
			obj += " *"
		}
		rows = append(rows, []string{
			r.Method, r.Rest, obj, report.Seconds(r.StepTime), fmt.Sprintf("%.3fx", r.SpeedUp), eff,
			fmt.Sprintf("%s (%s)", report.Bytes(r.PeakMemory), report.Percent(r.PeakFraction)), oom,
			report.Seconds(r.SearchTime), fmt.Sprint(r.Evaluations), rate,
		})
	}
	header := []string{"method", "schedule, fusion", "objective: " + ObjectiveTitle(b.Objective), "step time", "vs " + b.Reference, "efficiency", "peak memory (of capacity)", "OOM", "search time", "evaluations", "evaluations/s"}
	// Left out first where the table is too wide: what another column
	// already says (the step time is the objective's value; out of memory
	// shows as invalid), then the details.
	optional := []int{10, 7, 5, 1}
	if b.Objective == "" || b.Objective == "step-time" {
		optional = append([]int{3}, optional...)
	}
	if err := report.TableFit(w, header, rows, optional); err != nil {
		return err
	}
	fmt.Fprintf(w, "vs %s: the %s step (%s) / step; efficiency: lower bound / step (f: fused, held to the fusion bound)\n", b.Reference, b.Reference, report.Seconds(b.RefStep))
	fmt.Fprintln(w, "objective: each row's value, * = the best; invalid = out of memory (step time) or co-location broken;")
	fmt.Fprintln(w, "  absent = the method does not apply to this graph (the note below says why)")
	fmt.Fprintln(w, "schedule, fusion: the row's non-placement parts; fifo and default are TensorFlow's (FIFO order,")
	fmt.Fprintln(w, "  XLA-like fusion), own the method's")
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return nil
}
