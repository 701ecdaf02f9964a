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
	var bad string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		addr, ok := flagAddr(f)
		if bad != "" || !ok {
			return
		}
		for _, o := range opts {
			if _, foreign := w.Foreign(o, addr); foreign {
				bad = f.Name
				return
			}
		}
	})
	switch {
	case bad == "":
		return nil
	case w == inputs.ClusterScale:
		return usagef("--%s does not apply to a transformer at cluster scale (--workload %s): the pod's node sets the hardware, and the search evaluates every plan (docs/cluster-scale.md)", bad, g.Workload)
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
