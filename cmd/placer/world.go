package main

import (
	"reflect"

	"github.com/placer/placer/inputs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkWorld refuses, in one line, the first flag the user set whose
// option belongs to another world than the workload's (an op graph's
// --method for a transformer at cluster scale, say): each option's field
// says which world it is for (its world:"..." tag, inputs.World.Foreign),
// found by the address the flag is bound to in one of opts (pointers to
// options structs). No list of flag names.
func checkWorld(cmd *cobra.Command, g inputs.GraphSpec, c inputs.ClusterSpec, opts ...any) error {
	w := inputs.WorldOf(g, c)
	var bad, why string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		addr, ok := flagAddr(f)
		if bad != "" || !ok {
			return
		}
		for _, o := range opts {
			if _, reason, foreign := w.ForeignWhy(o, addr); foreign {
				bad, why = f.Name, reason
				return
			}
		}
	})
	switch {
	case bad == "":
		return nil
	case w == inputs.ClusterScale:
		// Why this option does not apply there: its field's why:"..."
		// tag (the hardware, a search's budget or method), else that it
		// is an op graph's.
		if why == "" {
			why = "it is an op graph's option (a placement's, its schedule's, fusion's or evaluation's)"
		}
		return usagef("--%s does not apply to a transformer at cluster scale (--workload %s): %s (docs/cluster-scale.md)", bad, g.Workload, why)
	}
	return usagef("--%s does not apply to %s: it is for a transformer at cluster scale (--workload gpt:... or llama:...)", bad, w)
}

// flagAddr is the address of the variable flag f is bound to: pflag's
// values are the variable's address under another type, or a struct whose
// first field is it (this package's own flag types).
func flagAddr(f *pflag.Flag) (uintptr, bool) {
	v := reflect.ValueOf(f.Value)
	if v.Kind() == reflect.Struct && v.NumField() > 0 {
		v = v.Field(0)
	}
	if v.Kind() != reflect.Pointer {
		return 0, false
	}
	return v.Pointer(), true
}
