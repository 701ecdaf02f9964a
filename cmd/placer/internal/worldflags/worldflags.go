package worldflags

import (
	"fmt"
	"sort"
	"strings"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// worldAnnotation is the annotation of a command's flag that one product
// alone takes: its world (inputs.World's String) and why it does not
// apply in the other ("" = that world's usual reason: Check).
const worldAnnotation = "placer_world"

// whyAnnotation is the annotation a binder puts on a flag of its own
// (Why): why the flag does not apply in the other world.
const whyAnnotation = "placer_why_not"

// Set is a command's flags of the two products, each bound by its
// product's binder into the options the command runs.
type Set struct {
	op, cluster *pflag.FlagSet
}

// Bind makes cmd's flags of the two products' flag sets: bindOp binds an
// op graph's into op, bindCluster a transformer's at cluster scale into
// cluster. Each binder is also called once on options of its own, which
// the command line is read into before its world is known (--help,
// completion and the checks before any work read those flags); Choose
// then hands the flags given to the chosen world's set. A flag both
// products take has one usage, default, type and shorthand in both: a
// binder that says otherwise is a programmer's mistake, a panic on
// building the command.
func Bind[O, C any](cmd *cobra.Command, op *O, bindOp func(*pflag.FlagSet, *O), cluster *C, bindCluster func(*pflag.FlagSet, *C)) *Set {
	s := &Set{op: pflag.NewFlagSet("op graph", pflag.ContinueOnError), cluster: pflag.NewFlagSet("cluster scale", pflag.ContinueOnError)}
	bindOp(s.op, op)
	bindCluster(s.cluster, cluster)
	line := [2]*pflag.FlagSet{pflag.NewFlagSet("op graph", pflag.ContinueOnError), pflag.NewFlagSet("cluster scale", pflag.ContinueOnError)}
	bindOp(line[0], new(O))
	bindCluster(line[1], new(C))
	f := cmd.Flags()
	for i, w := range []inputs.World{inputs.OpGraph, inputs.ClusterScale} {
		other := line[1-i]
		line[i].VisitAll(func(fl *pflag.Flag) {
			if both := other.Lookup(fl.Name); both != nil {
				if i == 0 {
					mustAgree(cmd, fl, both)
					f.AddFlag(fl)
				}
				return
			}
			why := ""
			if a := fl.Annotations[whyAnnotation]; len(a) > 0 {
				why = a[0]
			}
			f.AddFlag(fl)
			_ = f.SetAnnotation(fl.Name, worldAnnotation, []string{w.String(), why})
		})
	}
	return s
}

// mustAgree panics unless a and b, one flag of the two products, say the
// same in --help.
func mustAgree(cmd *cobra.Command, a, b *pflag.Flag) {
	if a.Usage != b.Usage || a.DefValue != b.DefValue || a.Value.Type() != b.Value.Type() || a.Shorthand != b.Shorthand {
		panic(fmt.Sprintf("%s --%s: the two products' binders give it two usages, defaults, types or shorthands", cmd.Name(), a.Name))
	}
}

// Why marks the flags bind adds to f as not applying in the other
// world, for why (a binder's own reason, where the usual one, that the
// flag is its world's option, is not the whole story).
func Why(f *pflag.FlagSet, why string, bind func()) {
	before := map[string]bool{}
	f.VisitAll(func(fl *pflag.Flag) { before[fl.Name] = true })
	bind()
	f.VisitAll(func(fl *pflag.Flag) {
		if !before[fl.Name] {
			_ = f.SetAnnotation(fl.Name, whyAnnotation, []string{why})
		}
	})
}

// Choose decides the world of cmd's command line from its --workload
// (Check) and hands the flags it gives to that world's flags alone, which
// bind them into its product's options.
func (s *Set) Choose(cmd *cobra.Command) (inputs.World, error) {
	w, err := Check(cmd, cmd.Flags().Lookup("workload").Value.String())
	if err != nil {
		return w, err
	}
	dst := s.op
	if w == inputs.ClusterScale {
		dst = s.cluster
	}
	var names []string
	cmd.Flags().Visit(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	sort.Strings(names)
	for _, name := range names {
		if err := hand(cmd.Flags().Lookup(name), dst); err != nil {
			return w, err
		}
	}
	return w, nil
}

// hand sets dst's flag of fl's name, if dst has one, to the value fl
// was given (a list's items as a list).
func hand(fl *pflag.Flag, dst *pflag.FlagSet) error {
	to := dst.Lookup(fl.Name)
	if to == nil {
		return nil // the command's own, or the other world's on a line that names no workload
	}
	if list, ok := fl.Value.(pflag.SliceValue); ok {
		to.Changed = true
		return to.Value.(pflag.SliceValue).Replace(list.GetSlice())
	}
	return dst.Set(fl.Name, fl.Value.String())
}

// Check decides the world of a command line, once, from the workload it
// names (inputs.WorldOf), and refuses in one line the first flag set (in
// name order) that the other world's product alone takes, with why: an
// op graph's --method for a transformer at cluster scale, a pod
// (--cluster) for an op graph. A command line that names no workload,
// graph file or profile is an op graph's, whose own check says what is
// missing.
func Check(cmd *cobra.Command, workload string) (inputs.World, error) {
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
		return w, fail.Usagef("--%s does not apply to a transformer at cluster scale (--workload %s): %s (docs/cluster-scale.md)", bad, workload, why)
	}
	return w, fail.Usagef("--%s does not apply to %s: it is for a transformer at cluster scale (--workload gpt:... or llama:...)", bad, w)
}

// Has says whether cmd's flags are two products' (Bind): eval's,
// search's and export's.
func Has(cmd *cobra.Command) bool {
	found := false
	cmd.Flags().VisitAll(func(f *pflag.Flag) { found = found || f.Annotations[worldAnnotation] != nil })
	return found
}

// GPUs is --gpus's usage in the commands that take a strategy around a
// placement (eval, search, export): export.GPUsRule in a line, and the
// pod's GPUs at cluster scale.
const GPUs = "every GPU of the cluster: a strategy of R replicas places one replica's placement on GPUs / R of them (default: the placement file's replica GPUs x R, else the graph file's GPUs, else 1)"

// Workload is --workload's usage on the commands that plan a transformer
// at cluster scale too (eval, search, export): every form --workload
// takes.
func Workload() string {
	return "the workload `NAME`: a built-in op graph (gnmt8, trxl2, ...), or a transformer at cluster scale: " +
		"a preset with its run (" + strings.Join(jobs.PresetNames(), ", ") + ", e.g. llama3-8b:seq=8192,batch=256), " +
		"gpt:KEYS or llama:KEYS (layers, hidden, heads, seq, vocab, batch, ...) or hf:PATH/config.json:seq=N,batch=N " +
		"(placer workloads list; docs/cluster-scale.md)"
}
