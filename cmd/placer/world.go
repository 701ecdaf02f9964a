package main

import (
	"strconv"

	"github.com/placer/placer/inputs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The commands of both worlds (eval, search, export) bind each flag into
// the options of the world it applies to: an op graph's
// (jobs.GraphEvalOptions, jobs.GraphSearchOptions), a transformer's at
// cluster scale (jobs.ScaleOptions), or both (bothString, bothInt). A
// flag of one world only carries that world, and why it does not apply
// in the other, as data on the flag (onlyIn); chooseWorld reads it.

// worldAnnotation is the annotation of a flag that applies in one world
// only: the world (inputs.World's String) and why the flag does not
// apply in the other ("" = that world's usual reason: chooseWorld).
const worldAnnotation = "placer_world"

// Why an op graph's flags do not apply at cluster scale, where the
// reason is not that they are an op graph's options.
const (
	whyNoMethod   = "the search there tries every plan of its degrees: it has no method, policy or baselines to choose"
	whyNoBudget   = "the search there tries every plan of its degrees, exhaustively: it takes no budget"
	whyNoHardware = "the pod's node sets the hardware (--cluster PRESET:NODES)"
)

// onlyIn marks the flags that bind adds to cmd as applying in world w
// only, with why they do not apply in the other ("" = the usual line).
func onlyIn(cmd *cobra.Command, w inputs.World, why string, bind func()) {
	f := cmd.Flags()
	before := map[string]bool{}
	f.VisitAll(func(fl *pflag.Flag) { before[fl.Name] = true })
	bind()
	f.VisitAll(func(fl *pflag.Flag) {
		if !before[fl.Name] {
			_ = f.SetAnnotation(fl.Name, worldAnnotation, []string{w.String(), why})
		}
	})
}

// chooseWorld decides the world of a command line, once, from the
// workload it names (inputs.WorldOf), and refuses in one line the first
// flag set (in name order) that applies in the other world only
// (onlyIn), with why: an op graph's --method for a transformer at cluster
// scale, a pod (--cluster) for an op graph. A command line that names no
// workload, graph file or profile is an op graph's, whose own check says
// what is missing.
func chooseWorld(cmd *cobra.Command, workload string) (inputs.World, error) {
	w := inputs.WorldOf(workload)
	// A workload that names nothing is that mistake, whatever flag of
	// the other world the line holds (a preset's typo with --cluster).
	if err := inputs.CheckWorkload(workload); err != nil {
		return w, err
	}
	f := cmd.Flags()
	if workload == "" && !f.Changed("graph") && !f.Changed("profile") {
		return w, nil
	}
	var bad, why string
	f.Visit(func(fl *pflag.Flag) {
		a, ok := fl.Annotations[worldAnnotation]
		if bad != "" || !ok || a[0] == w.String() {
			return
		}
		bad, why = fl.Name, a[1]
	})
	switch {
	case bad == "":
		return w, nil
	case w == inputs.ClusterScale:
		if why == "" {
			why = "it is an op graph's option (a placement's, its schedule's, fusion's or evaluation's)"
		}
		return w, usagef("--%s does not apply to a transformer at cluster scale (--workload %s): %s (docs/cluster-scale.md)", bad, workload, why)
	}
	return w, usagef("--%s does not apply to %s: it is for a transformer at cluster scale (--workload gpt:... or llama:...)", bad, w)
}

// bothString is a string flag that applies in both worlds, bound into
// each world's options.
type bothString []*string

func (b bothString) String() string {
	if len(b) == 0 {
		return ""
	}
	return *b[0]
}

func (b bothString) Set(s string) error {
	for _, p := range b {
		*p = s
	}
	return nil
}

func (bothString) Type() string { return "string" }

// stringBoth binds the string flag name into every one of dst, with
// default value def.
func stringBoth(f *pflag.FlagSet, name, def, usage string, dst ...*string) {
	for _, p := range dst {
		*p = def
	}
	f.Var(bothString(dst), name, usage)
}

// bothInt is an int flag that applies in both worlds, bound into each
// world's options.
type bothInt []*int

func (b bothInt) String() string {
	if len(b) == 0 {
		return "0"
	}
	return strconv.Itoa(*b[0])
}

// Set parses s as pflag's own int flags do, with the same error.
func (b bothInt) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, 64)
	for _, p := range b {
		*p = int(v)
	}
	return err
}

func (bothInt) Type() string { return "int" }

// intBoth binds the int flag name into every one of dst, with default
// value def.
func intBoth(f *pflag.FlagSet, name string, def int, usage string, dst ...*int) {
	for _, p := range dst {
		*p = def
	}
	f.Var(bothInt(dst), name, usage)
}

// strategyFlag is --strategy: given more than once, its texts join with
// commas (--strategy tp=2 --strategy pp=2 is tp=2,pp=2), as a user who
// repeats it means, rather than the last one silently replacing the
// others; a key written twice is then the strategy parser's one-line
// refusal ("tp" given twice). Bound into every one of dst.
type strategyFlag struct {
	dst []*string
	set bool
}

func (s *strategyFlag) String() string {
	if len(s.dst) == 0 {
		return ""
	}
	return *s.dst[0]
}

func (s *strategyFlag) Set(v string) error {
	for _, p := range s.dst {
		if s.set && *p != "" && v != "" {
			*p += "," + v
		} else if !s.set || *p == "" {
			*p = v
		}
	}
	s.set = true
	return nil
}

func (*strategyFlag) Type() string { return "string" }

// strategyRepeats is what every --strategy's help says of its repeats.
const strategyRepeats = " (repeatable: --strategy tp=2 --strategy pp=2 is tp=2,pp=2)"

// bindStrategy binds --strategy into every one of dst (strategyFlag).
func bindStrategy(f *pflag.FlagSet, usage string, dst ...*string) {
	for _, p := range dst {
		*p = ""
	}
	f.Var(&strategyFlag{dst: dst}, "strategy", usage+strategyRepeats)
}
