package published

import (
	"github.com/placer/placer/planner"
)

// Sweep is a published sweep: one model (or one family at several
// sequence lengths) run under several plans on one cluster and one
// software stack, measured side by side. What a user
// acts on is placer's order of such plans, so each sweep is a test of
// the order (Spearman within it) as much as of each figure. Rows keep
// what a user would type (placer eval --workload W --cluster C
// --strategy S) so that a row's prediction is placer eval's; a row placer
// cannot write yet keeps the publication's plan in words and is refused
// by placer's own reading of its strategy, with that refusal shown.
type Sweep struct {
	Name string
	// Set is the published source set the sweep's figures come from
	// (SourceSets' keys).
	Set string
	// Source cites where every row's figure is published.
	Source string
	// Unit is what Measured holds: TokensPerGPU (tokens a second per
	// GPU), StepSeconds, or Order (a rank: only the order is published).
	Unit SweepUnit
	// Stack is the software the sweep ran, and what of it placer leaves
	// out (the same for every row: it shifts the figures, not their
	// order).
	Stack string
	Rows  []SweepRow
}

// SweepUnit is what a sweep measured.
type SweepUnit int

// The units.
const (
	TokensPerGPU SweepUnit = iota // tokens a second per GPU
	StepSeconds                   // seconds a training step
	// Order: the publication states only which plan is faster. Measured
	// is each row's rank as stated (1 the fastest; equal ranks for plans
	// stated alike); placer's prediction is the step's seconds, and no
	// error is counted, only the order.
	Order
)

func (u SweepUnit) String() string {
	return [...]string{"tokens/s per GPU", "step s", "order stated, 1 the fastest; predicted: step s"}[u]
}

// SweepRow is one plan of a sweep as published and as placer reads it.
type SweepRow struct {
	// Label is the row as the publication names it.
	Label string
	// Workload, Cluster and Strategy are placer's reading of the row
	// (--workload, --cluster, --strategy); Note says what of the row
	// the reading assumes where the publication is silent.
	Workload, Cluster, Strategy string
	Note                        string
	// Measured is the published figure, in the sweep's Unit (its rank
	// where the Unit is Order).
	Measured float64
	// PeakGiB is the published peak memory of a GPU in GiB (0: none
	// published), and PeakReserved whether it is what the allocator
	// reserved (torchtitan's memory monitor: torch.cuda's
	// max_memory_reserved, the largest over the GPUs) rather than what
	// tensors held (max_memory_allocated).
	PeakGiB      float64
	PeakReserved bool
	// Regression cites where the framework's own maintainers list the
	// row's figure as a regression of its release (an issue of their
	// tracker): the row stays a test and keeps its error, and the
	// errors a user's figure carries are said with and without it
	// (RegimeError.Regressions, the reports' means without regressions).
	Regression string
}

// BridgeQwen3DroplessRegression is Megatron-Bridge's tracker listing
// Qwen3-30B-A3B's dropless runs of 25.11 and 26.02 on H100 and B200 as
// 2x slower than 25.09's token-dropping ones ("[Regression] Low QWEN3
// 30B B200 and H100 performance with dropless", opened 2026-01-20, open
// when read on 2026-11-28); v0.3.1 (26.02.01) changed the recipes
// (HybridEP; on H100 EP 16 without a pipeline, on B200 MBS 4 and
// attention graphs) rather than the code.
const BridgeQwen3DroplessRegression = "github.com/NVIDIA-NeMo/Megatron-Bridge/issues/1998"

// regressed is r listed as its release's known regression
// (BridgeQwen3DroplessRegression's rows).
func (r SweepRow) regressed() SweepRow { r.Regression = BridgeQwen3DroplessRegression; return r }

// measured is r with its published figure.
func (r SweepRow) measured(tps float64) SweepRow { r.Measured = tps; return r }

// CodeBase is the code base whose runs the sweep's rows are, where its
// rows' stack does not name it ("": the stack's).
func (s Sweep) CodeBase() string { return codeBases[s.Set] }

// PeakError is placer's peak memory of a GPU in r over row's published
// one, minus 1: a reserved figure against placer's reserved (the
// caching allocator simulated on the plan's trace, where r has it), an
// allocated one against its allocated; 0 where none is published.
func PeakError(row SweepRow, r planner.Result) float64 {
	if row.PeakGiB <= 0 {
		return 0
	}
	pred := float64(r.Memory)
	if row.PeakReserved && r.Allocator != nil {
		pred = float64(r.Allocator.Reserved)
	}
	return pred/(1<<30)/row.PeakGiB - 1
}
