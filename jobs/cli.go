package jobs

// What the placer CLI needs besides the jobs themselves: the names and
// defaults its flags and completions offer, and the parsing and checking
// of its raw flag values into the jobs' options (files cli*.go). A
// mistake in how a command was called is a usage error (fail.Usage, exit
// 2), with the message the command has always printed.

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/workloads"
)

// Objective is what the methods minimise (--objective).
type Objective = optimize.Objective

// DefaultObjective is --objective's default: the step time under each
// GPU's memory.
const DefaultObjective = optimize.StepTime

// ParseObjective reads an --objective value (step-time, peak-memory or
// one of their spellings).
func ParseObjective(s string) (Objective, error) { return optimize.ParseObjective(s) }

// parseObjectiveList reads a comma-separated list of objectives (the
// --objectives flag).
func parseObjectiveList(list string) ([]Objective, error) {
	var out []Objective
	for _, v := range strings.Split(list, ",") {
		obj, err := optimize.ParseObjective(v)
		if err != nil {
			return nil, fail.Usagef("--objectives: %v", err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// LearnPoint is one step of a learned search or fine-tuning run (a
// progress callback's argument).
type LearnPoint = gdp.Point

// PretrainPoint is one step of pre-training (a progress callback's
// argument).
type PretrainPoint = gdp.PretrainPoint

// DefaultHardware is --hardware's default preset.
const DefaultHardware = roofline.DefaultHardware

// HardwarePresets are the names --hardware accepts besides a profile file.
func HardwarePresets() []string { return roofline.Presets() }

// Topologies are the names --topology accepts.
func Topologies() []string { return slices.Clone(roofline.Topologies) }

// MethodNames are the distinct algorithms a user chooses among
// (methods.Methods); the report commands also take their experiment arms.
func MethodNames() []string { return methods.Methods() }

// WorkloadNames are the built-in workloads.
func WorkloadNames() []string { return workloads.Names() }

// DefaultModelAvailable reports whether this build embeds the default
// pre-trained model (used by infer and finetune without --model).
func DefaultModelAvailable() bool { return defaultmodel.Available() }

// PretrainStateFile is the state file beside pre-training's model file
// (MODEL.state.json): the checkpoint is both.
func PretrainStateFile(model string) string { return gdp.CheckpointState(model) }

// PretrainCheckpointStep loads the pre-training checkpoint model (the
// model file and its state file) and returns the step it was written at.
func PretrainCheckpointStep(model string) (int, error) {
	_, st, err := gdp.LoadCheckpoint(model)
	if err != nil {
		return 0, err
	}
	return st.Step, nil
}

// checkGraphGiven is the check of every command that reads one graph.
func checkGraphGiven(g inputs.GraphSpec) error {
	if g.Path == "" && g.Workload == "" {
		return fail.Usagef("give --graph FILE or --workload NAME")
	}
	return nil
}

// checkMethodList checks the methods of a --methods list (tag names the
// flag) against the registry.
func checkMethodList(tag string, list []string) error {
	if err := methods.Check(list); err != nil {
		return fail.Usagef("%s: %v", tag, err)
	}
	return nil
}

// checkUserMethodList checks a --methods list of a command for users
// (baselines, search): the distinct algorithms only (methods.Methods), an
// experiment arm being refused with a line naming its method.
func checkUserMethodList(tag string, list []string) error {
	if err := methods.CheckMethods(list); err != nil {
		return fail.Usagef("%s: %v", tag, err)
	}
	return nil
}

// checkTaskList checks a --tasks value.
func checkTaskList(tasks string) error {
	if _, err := optimize.ParseTasks(tasks); err != nil {
		return fail.Usagef("--tasks: %v", err)
	}
	return nil
}

// splitList splits a comma-separated flag value; "" is no list (nil).
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// parseSeeds parses --seeds: two or more distinct seeds, comma-separated.
func parseSeeds(list string) ([]uint64, error) {
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

// comparisonLists parses the list flags that equal-time and learned share:
// --graphs, --methods (checked against the registry) and --budgets
// (positive durations; example shows the form in the error).
func comparisonLists(graphs, ms, budgets, example string) (gs, mlist []string, bs []time.Duration, err error) {
	gs = splitList(graphs)
	if ms != "" {
		mlist = strings.Split(ms, ",")
		if err := checkMethodList("--methods", mlist); err != nil {
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
