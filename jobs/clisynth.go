package jobs

import (
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/workloads"
)

// CheckWorkloadName is a usage error unless name is a built-in workload.
func CheckWorkloadName(name string) error {
	if _, ok := workloads.Lookup(name); !ok {
		return fail.Usagef("unknown workload %q (placer workloads list)", name)
	}
	return nil
}

// DefaultSynthNodes is SynthOptions.Nodes' default: REGAL's range of
// 50-200 nodes per graph.
var DefaultSynthNodes = workloads.SynthNodes.String()

// SynthOptions are `placer workloads synth`'s options.
type SynthOptions struct {
	Dir    string // the folder to write (train/valid/test under it)
	Family string // er, ba, ws, sbm or all
	Count  int
	Seed   uint64
	Nodes  string // MIN-MAX nodes per graph (DefaultSynthNodes for REGAL's)
}

// Synth checks o and writes o.Count REGAL synthetic graphs of o.Family to
// o.Dir.
func Synth(o SynthOptions) error {
	if o.Dir == "" {
		return fail.Usagef("give the output folder with -o/--out DIR")
	}
	if o.Count < 1 {
		return fail.Usagef("--count %d: must be at least 1", o.Count)
	}
	nr, err := workloads.ParseNodeRange(o.Nodes)
	if err != nil {
		return fail.Usagef("--nodes: %v", err)
	}
	if nr == workloads.SynthNodes {
		return WorkloadSynth(o.Dir, o.Family, o.Count, o.Seed)
	}
	return workloads.WriteSyntheticNodes(o.Dir, o.Family, o.Count, o.Seed, nr)
}
