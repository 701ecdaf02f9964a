package placements

import (
	"fmt"
	"io"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/report"
)

// ResultFormat and ResultVersion identify a result file (placer search
// --out), which `placer eval --placement FILE` also reads.
const (
	ResultFormat  = "placer-result"
	ResultVersion = 1
)

// Result is the file a search writes: the best decision with how it
// scores, the run's statistics and seed, and its learning curve.
type Result struct {
	Format     string  `json:"format"`
	Version    int     `json:"version"`
	Method     string  `json:"method"`
	Graph      string  `json:"graph"`
	Ops        int     `json:"ops"`
	Hardware   string  `json:"hardware"`
	Devices    int     `json:"devices"`
	Topology   string  `json:"topology"`
	Transfers  string  `json:"transfers"` // "async" or "sync" (eval --sync-transfers)
	Tasks      string  `json:"tasks"`
	Seed       uint64  `json:"seed"`
	StepTime   float64 `json:"step_time_s"`
	LowerBound float64 `json:"lower_bound_s"`
	PeakMemory []int64 `json:"peak_memory"`
	Capacity   []int64 `json:"capacity"`
	OOM        bool    `json:"oom"`
	BytesMoved int64   `json:"bytes_moved"`
	// Reference is the baseline the reward was normalized by.
	Reference string  `json:"reference"`
	RefStep   float64 `json:"reference_step_time_s"`
	// Source, if set, names the comparison's row whose decision this is:
	// the search did not improve on the best row, and a search never
	// returns worse than its own table.
	Source string `json:"source,omitempty"`
	// OnePass is the step time of the policy's own most likely decision
	// (one forward pass, no sampling), beside StepTime, the best found.
	OnePass      float64 `json:"one_pass_step_time_s,omitempty"`
	OnePassValid bool    `json:"one_pass_valid,omitempty"`
	// BudgetNote says, for a search on its default budget, what that
	// budget is and how to search longer ("" otherwise).
	BudgetNote  string        `json:"budget_note,omitempty"`
	Steps       int           `json:"steps"`
	Evaluations int           `json:"evaluations"`
	SearchTime  float64       `json:"search_time_s"`
	Status      string        `json:"status"`
	Decision    decision.File `json:"decision"`
	// Training holds the learned methods' knobs, defaults resolved (the
	// rollout size, warm-up, PPO settings and network), so that a result
	// says how it was made; with the seed they reproduce it.
	Training any `json:"training,omitempty"`
	Curve    any `json:"curve,omitempty"`
}

// WriteSearchSummary writes what a search did under its comparison table
// (steps, evaluations, time, why it stopped, its anchor) and, when it did
// not improve on a row of the table, whose decision the result is; lines
// wider than MaxWidth are wrapped.
func WriteSearchSummary(w io.Writer, r Result) error {
	fw, flush := report.FitLines(w)
	count := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	fmt.Fprintf(fw, "%s: %s, %s in %s (%s); anchor and reference %s (%s)\n",
		r.Method, count(r.Steps, "step"), count(r.Evaluations, "evaluation"), report.Seconds(r.SearchTime), r.Status, r.Reference, report.Seconds(r.RefStep))
	if r.Source != "" {
		fmt.Fprintf(fw, "%s did not improve on %s: the result is %s's decision (%s)\n", r.Method, r.Source, r.Source, report.Seconds(r.StepTime))
	}
	if r.BudgetNote != "" {
		fmt.Fprintln(fw, r.BudgetNote)
	}
	return flush()
}
