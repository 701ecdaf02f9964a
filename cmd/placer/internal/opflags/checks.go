package opflags

// The checks and list parsing the commands' flags share (parse.go parses
// each command's raw flag values into its jobs options). A mistake in how
// a command was called is a usage error (fail.Usage, exit 2), with the
// message the command has always printed.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/optimize"
)

// ParseObjectiveList reads a comma-separated list of objectives (the
// --objectives flag).
func ParseObjectiveList(list string) ([]optimize.Objective, error) {
	var out []optimize.Objective
	for _, v := range strings.Split(list, ",") {
		obj, err := optimize.ParseObjective(v)
		if err != nil {
			return nil, fail.Usagef("--objectives: %v", err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// CheckGraphGiven is the check of every command that reads one graph.
func CheckGraphGiven(g inputs.GraphSpec) error {
	if g.Path == "" && g.Workload == "" {
		return fail.Usagef("give --graph FILE or --workload NAME")
	}
	return nil
}

// CheckGraphOrProfile is CheckGraphGiven of the commands that read a
// graph from an ops profile too (eval, search, export: --profile FILE).
func CheckGraphOrProfile(g inputs.GraphSpec, c inputs.ClusterSpec) error {
	if c.Profile != "" && g.Path == "" && g.Workload == "" {
		return nil
	}
	if g.Path == "" && g.Workload == "" {
		return fail.Usagef("give --graph FILE or --workload NAME (or --profile FILE, placer profile --model's)")
	}
	return nil
}

// CheckMethodList checks the methods of a --methods list (tag names the
// flag) against the registry.
func CheckMethodList(tag string, list []string) error {
	if err := methods.Check(list); err != nil {
		return fail.Usagef("%s: %v", tag, err)
	}
	return nil
}

// CheckUserMethodList checks a --methods list of a command for users
// (baselines, search): the distinct algorithms only (methods.Methods), an
// experiment arm being refused with a line naming its method.
func CheckUserMethodList(tag string, list []string) error {
	if err := methods.CheckMethods(list); err != nil {
		return fail.Usagef("%s: %v", tag, err)
	}
	return nil
}

// CheckTaskList checks a --tasks value.
func CheckTaskList(tasks string) error {
	if _, err := optimize.ParseTasks(tasks); err != nil {
		return fail.Usagef("--tasks: %v", err)
	}
	return nil
}

// SplitList splits a comma-separated flag value; "" is no list (nil).
func SplitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// ParseSeeds parses --seeds: two or more distinct seeds, comma-separated.
func ParseSeeds(list string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fail.Usagef("--seeds %q: want seeds (non-negative integers), comma-separated, e.g. 0,1,2", list)
		}
		if slices.Contains(out, v) {
			return nil, fail.Usagef("--seeds %q: seed %d is listed twice", list, v)
		}
		out = append(out, v)
	}
	if len(out) < 2 {
		return nil, fail.Usagef("--seeds %q: want two or more seeds (one seed is --seed)", list)
	}
	return out, nil
}

// ComparisonLists parses the list flags that equal-time and learned share:
// --graphs, --methods (checked against the registry) and --budgets
// (positive durations; example shows the form in the error).
func ComparisonLists(graphs, ms, budgets, example string) (gs, mlist []string, bs []time.Duration, err error) {
	gs = SplitList(graphs)
	if ms != "" {
		mlist = strings.Split(ms, ",")
		if err := CheckMethodList("--methods", mlist); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, b := range strings.Split(budgets, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(b))
		if err != nil || d <= 0 {
			return nil, nil, nil, fail.Usagef("--budgets %q: want positive durations, e.g. %s", budgets, example)
		}
		bs = append(bs, d)
	}
	return gs, mlist, bs, nil
}

// CheckSearchMethod checks a --method value: a search or learned method.
func CheckSearchMethod(name string) error {
	if methods.IsSearch(name) {
		return nil
	}
	return fmt.Errorf("%w %q for --method (searches: %s)", methods.ErrUnknown, name, strings.Join(methods.Searches(), ", "))
}
