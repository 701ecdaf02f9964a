package main

import (
	"slices"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/export"
)

// The checks of the commands that serve both products (eval, search,
// export), in the world the workload named: a transformer's strategy at
// cluster scale (worldflags.CheckStrategy), an op graph's options
// (opflags), in the order the CLI has always checked them.

// checkEval checks eval's options as its flags give them.
func checkEval(o *jobs.EvalOptions) error {
	if o.World == inputs.ClusterScale {
		return worldflags.CheckStrategy(o.World, o.Scale.Strat)
	}
	return opflags.CheckEval(&o.OpGraph)
}

// parseSearchFlags checks the search's options: at cluster scale what
// --strategy keeps (strat), for an op graph s (opflags.ParseSearch).
func parseSearchFlags(w inputs.World, s *opflags.Search, strat string) error {
	if w == inputs.ClusterScale {
		if strat == "" {
			return nil
		}
		return worldflags.CheckStrategy(w, strat)
	}
	return opflags.ParseSearch(s)
}

// checkExport checks export's options as its flags give them.
func checkExport(o *export.Options) error {
	if o.World == inputs.OpGraph {
		if err := opflags.CheckGraphOrProfile(o.OpGraph.Graph, o.OpGraph.Cluster); err != nil {
			return err
		}
	}
	if o.To == "" {
		return fail.Usagef("give --to (one of %s)", strings.Join(export.Formats, ", "))
	}
	// torchtitan@0.2: the format before the release (export.Run checks
	// the release).
	to, _, _ := strings.Cut(strings.ToLower(o.To), "@")
	if !slices.Contains(export.Formats, to) {
		return fail.Usagef("--to %s: unknown format %q (want one of %s)", o.To, to, strings.Join(export.Formats, ", "))
	}
	world := o.World
	if formats := export.FormatsOf(world); !slices.Contains(formats, to) {
		other := inputs.OpGraph
		if world == inputs.OpGraph {
			other = inputs.ClusterScale
		}
		return fail.Usagef("--to %s: %s exports to %s (%s is for %s)", o.To, world, strings.Join(formats, ", "), to, other)
	}
	if o.Strategy != "" {
		if err := worldflags.CheckStrategy(o.World, o.Strategy); err != nil {
			return err
		}
		if !slices.Contains([]string{"torch-plan", "torchtitan", "deepspeed", "megatron", "megatron-bridge"}, to) {
			return fail.Usagef("--strategy is for --to torch-plan, torchtitan, deepspeed, megatron and megatron-bridge")
		}
	}
	if o.OpGraph.Stages != 0 && !slices.Contains([]string{"torch-plan", "torchtitan", "deepspeed"}, to) {
		return fail.Usagef("--stages is for --to torch-plan, torchtitan and deepspeed")
	}
	return nil
}
