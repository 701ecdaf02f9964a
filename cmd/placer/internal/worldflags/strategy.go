package worldflags

import (
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/spf13/pflag"
)

// strategyFlag is --strategy: given more than once, its texts join with
// commas (--strategy tp=2 --strategy pp=2 is tp=2,pp=2), as a user who
// repeats it means, rather than the last one silently replacing the
// others; a key written twice is then the strategy parser's one-line
// refusal ("tp" given twice).
type strategyFlag struct {
	dst *string
	set bool
}

func (s *strategyFlag) String() string { return *s.dst }

func (s *strategyFlag) Set(v string) error {
	if s.set && *s.dst != "" && v != "" {
		*s.dst += "," + v
	} else if !s.set || *s.dst == "" {
		*s.dst = v
	}
	s.set = true
	return nil
}

func (*strategyFlag) Type() string { return "string" }

// strategyRepeats is what every --strategy's help says of its repeats.
const strategyRepeats = " (repeatable: --strategy tp=2 --strategy pp=2 is tp=2,pp=2)"

// Strategy binds --strategy into dst (strategyFlag), "" by default.
func Strategy(f *pflag.FlagSet, usage string, dst *string) {
	*dst = ""
	f.Var(&strategyFlag{dst: dst}, "strategy", usage+strategyRepeats)
}

// The usages of the flags both products' binders of one command take.
const (
	// EvalPlacement is eval's --placement.
	EvalPlacement = "single, round-robin, expert, or a decision/result FILE (an eval -o report too); at cluster scale a plan FILE, as --plan"
	// EvalPlan is eval's --plan.
	EvalPlan = "the plan to evaluate: a search's -o result (its best) or an eval's -o report `FILE`, for this workload and cluster, read as export reads it (not with --strategy at cluster scale; an op graph's as --placement)"
	// EvalStrategy is eval's --strategy.
	EvalStrategy = "the strategy around the placement, e.g. dp=4 (data-parallel replicas; docs/decision-format.md): the placement is then one replica's, on GPUs/replicas GPUs (default: the placement file's, else one replica); at cluster scale the plan, e.g. tp=8,pp=4: keys left out take their defaults (tp, cp, pp 1, dp what they leave), a key written is kept or refused, never replaced"
	// Profile is eval's and search's --profile.
	Profile = "price what this profile `FILE` measured (placer profile; docs/profile.md): a model's ops (--model's profile, which holds its graph: no --graph), or with a transformer its layers, collectives, optimizer and host (a CPU profile's pod is --cluster cpu)"
	// ExportProfile is export's --profile.
	ExportProfile = "an ops profile `FILE` (placer profile --model) in place of --graph: its graph, and its meta for module-map and torch-plan"
	// SearchOut is search's -o/--out.
	SearchOut = "write the result (decision, statistics, curve) to `FILE`"
	// SearchSeed is search's --seed: an op graph's (the search at
	// cluster scale is exhaustive), accepted in both worlds as it always
	// was.
	SearchSeed = "random seed: same seed, same result"
)

// CheckStrategy checks --strategy s in world w (jobs.CheckStrategy: an
// op graph's strategy or a transformer's plan), a usage error naming the
// flag.
func CheckStrategy(w inputs.World, s string) error {
	if err := jobs.CheckStrategy(w, s); err != nil {
		return fail.Usagef("--strategy: %v", err)
	}
	return nil
}
