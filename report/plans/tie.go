package plans

import (
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/report"
)

// TieFastest and TieCheapest are placer search --tie's answers: within a
// tie (plans closer than the error of a difference between two plans),
// the fastest predicted
// plan (the default) or the cheapest to run (RunCost's order).
const (
	TieFastest  = "fastest"
	TieCheapest = "cheapest"
)

// TieAnswers are --tie's values, the default first.
var TieAnswers = []string{TieFastest, TieCheapest}

// CheckTie is a --tie value's one-line error ("" = the default).
func CheckTie(v string) error {
	if v == "" || slices.Contains(TieAnswers, v) {
		return nil
	}
	return fmt.Errorf("--tie %q: want %s", v, strings.Join(TieAnswers, " or "))
}

// TieKey is the order of RunCost's comparison, said under the search's
// table, and TieSkipped the level of the documented key
// (docs/cluster-scale.md) that it leaves out, and why.
const (
	TieKey     = "fewer GPUs, then fewer moving parts, then less memory, then the shorter step"
	TieSkipped = "the bytes the collectives move per GPU: scale's result does not carry them"
)

// RunCost is what a plan costs to run, beyond its predicted step: the
// key a tie is ordered by (Less).
type RunCost struct {
	Strategy string `json:"strategy"`
	// GPUs is the GPUs the plan occupies (its replica's x context x
	// data-parallel degree).
	GPUs int `json:"gpus"`
	// MovingParts is what a user sets up, tunes and debugs: one for each
	// of tensor, context, pipeline, virtual-stage and expert parallelism
	// above 1 and for FSDP, and recomputation 1 (selective) or 2 (full:
	// it needs a recompute method and a number of layers chosen as well,
	// which Megatron-Core refuses to leave out: Megatron-LM core_r0.8.0,
	// megatron/core/transformer/transformer_config.py,
	// TransformerConfig.__post_init__). Parts names them.
	MovingParts int      `json:"moving_parts"`
	Parts       []string `json:"parts"`
	// Memory is the plan's peak bytes per GPU (planner.Result.Memory, the
	// table's column) and Step its predicted step.
	Memory int64   `json:"memory_bytes"`
	Step   float64 `json:"step_s"`
	// VsFastest is Step over the tie's fastest step, minus 1.
	VsFastest float64 `json:"vs_fastest"`
}

// RunCostOf is plan p's RunCost (VsFastest left 0).
func RunCostOf(p *ScalePlan) RunCost {
	pl := p.Plan
	c := RunCost{Strategy: p.Strategy, Parts: []string{}, GPUs: pl.ReplicaGPUs() * max(pl.CP, 1) * max(pl.DP, 1), Memory: p.Memory, Step: p.Step}
	if c.GPUs == 0 {
		c.GPUs = p.GPUs // no resolved degrees: the pod's
	}
	for _, d := range []struct {
		name string
		n    int
	}{{"tp", pl.TP}, {"cp", pl.CP}, {"pp", pl.PP}, {"vp", pl.VP}, {"ep", pl.EP}} {
		if d.n > 1 {
			c.Parts = append(c.Parts, fmt.Sprintf("%s=%d", d.name, d.n))
			c.MovingParts++
		}
	}
	if pl.FSDP {
		c.Parts = append(c.Parts, "fsdp")
		c.MovingParts++
	}
	switch pl.Recompute {
	case plan.SelectiveRecompute:
		c.Parts = append(c.Parts, "recompute=selective")
		c.MovingParts++
	case plan.FullRecompute:
		c.Parts = append(c.Parts, "recompute=full (counts 2)")
		c.MovingParts += 2
	}
	return c
}

// Less orders two plans by what is cheaper to run, TieKey's levels in
// turn: fewer GPUs, fewer moving parts, less memory, a shorter step.
func (c RunCost) Less(o RunCost) bool {
	switch {
	case c.GPUs != o.GPUs:
		return c.GPUs < o.GPUs
	case c.MovingParts != o.MovingParts:
		return c.MovingParts < o.MovingParts
	case c.Memory != o.Memory:
		return c.Memory < o.Memory
	}
	return c.Step < o.Step
}

// Tie is a search's tie (ScaleSearch.Tied plans closer to the fastest
// than the error of a difference) ordered by what is cheaper to run.
type Tie struct {
	// Order is the tied plans, the cheapest to run first.
	Order   []RunCost `json:"order"`
	Key     string    `json:"key"`
	Skipped string    `json:"skipped"`
	// Answer is which plan of the tie the search answers with (--tie):
	// TieFastest or TieCheapest.
	Answer string `json:"answer"`
}

// OrderTie orders the first n of plans (fastest first) by RunCost, a
// stable sort: plans alike in every level keep their step order. It
// returns the tie and, per position, the index in plans of the plan
// there; nil where n < 2.
func OrderTie(plans []ScalePlan, n int, answer string) (*Tie, []int) {
	if n < 2 || n > len(plans) {
		return nil, nil
	}
	if answer == "" {
		answer = TieFastest
	}
	idx := make([]int, n)
	costs := make([]RunCost, n)
	for i := range n {
		idx[i] = i
		costs[i] = RunCostOf(&plans[i])
		costs[i].VsFastest = plans[i].Step/plans[0].Step - 1
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case costs[a].Less(costs[b]):
			return -1
		case costs[b].Less(costs[a]):
			return 1
		}
		return 0
	})
	t := &Tie{Key: TieKey, Skipped: TieSkipped, Answer: answer}
	for _, i := range idx {
		t.Order = append(t.Order, costs[i])
	}
	return t, idx
}

// cheapestLine names the cheapest plan to run in tie t, its moving
// parts and memory, and its step over the fastest's.
func cheapestLine(t *Tie) string {
	c := t.Order[0]
	parts := "no moving parts"
	switch c.MovingParts {
	case 0:
	case 1:
		parts = "1 moving part: " + strings.Join(c.Parts, ", ")
	default:
		parts = fmt.Sprintf("%d moving parts: %s", c.MovingParts, strings.Join(c.Parts, ", "))
	}
	answer := ""
	if t.Answer == TieCheapest {
		answer = "; the answer (--tie cheapest)"
	}
	return fmt.Sprintf("cheapest to run in the tie: %s (%s; %s), its step +%s of the fastest%s\n",
		c.Strategy, parts, GB(c.Memory), report.Percent(c.VsFastest), answer)
}
