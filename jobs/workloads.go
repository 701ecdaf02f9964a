package jobs

import (
	"context"
	"fmt"
	"io"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/report"
	"github.com/placer/placer/workloads"
)

// WorkloadsList builds every workload and summarizes it. progress, if not
// nil, is told each name as it is built.
func WorkloadsList(ctx context.Context, progress func(name string)) ([]report.Workload, error) {
	hw, err := roofline.Preset(roofline.DefaultHardware)
	if err != nil {
		return nil, err
	}
	c, err := roofline.NewCluster(hw, 1, "")
	if err != nil {
		return nil, err
	}
	var rows []report.Workload
	for _, name := range workloads.Names() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(name)
		}
		spec, _ := workloads.Lookup(name)
		g, err := spec.Build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		st := g.Stats()
		row := report.Workload{
			Name: name, Family: string(spec.Family), Ops: st.Ops, PaperOps: spec.PaperOps, Edges: st.Edges,
			GFLOPs: st.FLOPs / 1e9, ParamBytes: st.ParamBytes, ExpertDevices: spec.Devices,
		}
		// Activation memory: the peak beyond the parameters when the whole
		// step runs on one GPU in TensorFlow's default order.
		m, err := roofline.NewModel(g, c, roofline.Options{IgnoreMemory: true})
		if err != nil {
			return nil, err
		}
		r, err := roofline.NewSimulator(m, nil).Run(decision.Decision{Device: decision.Single(g)})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		row.ActivationBytes = r.PeakMemory[0] - st.ParamBytes
		row.SingleGPUStep = r.StepTime
		rows = append(rows, row)
	}
	return rows, nil
}

// TransformerPresets lists the published models --workload names at
// cluster scale (graph/transformer's presets), each with its shape and
// parameters; the run's seq and batch follow the name.
func TransformerPresets() []report.Preset {
	var out []report.Preset
	for _, name := range transformer.Presets() {
		m, _ := transformer.Preset(name)
		out = append(out, report.Preset{Name: name, Layers: m.Layers, Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads,
			Experts: m.Experts, TopK: m.TopK, Vocab: m.Vocab, Params: transformer.Params(m), ActiveParams: transformer.ActiveParams(m)})
	}
	return out
}

// PresetNames are the names of TransformerPresets.
func PresetNames() []string { return transformer.Presets() }

// WorkloadExport writes workload name as a native graph file to path ("" or
// "-" = w).
func WorkloadExport(name, path string, w io.Writer) (*graph.Graph, error) {
	g, err := workloads.Build(name)
	if err != nil {
		return nil, err
	}
	if path == "" || path == "-" {
		return g, graph.Write(w, g)
	}
	return g, atomicfile.Write(path, func(f io.Writer) error { return graph.Write(f, g) })
}

// WorkloadSynth writes count REGAL synthetic graphs of family to dir.
func WorkloadSynth(dir, family string, count int, seed uint64) error {
	return workloads.WriteSynthetic(dir, family, count, seed)
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

// Synth writes o.Count REGAL synthetic graphs of o.Family to o.Dir.
func Synth(o SynthOptions) error {
	nr, err := workloads.ParseNodeRange(o.Nodes)
	if err != nil {
		return err
	}
	if nr == workloads.SynthNodes {
		return WorkloadSynth(o.Dir, o.Family, o.Count, o.Seed)
	}
	return workloads.WriteSyntheticNodes(o.Dir, o.Family, o.Count, o.Seed, nr)
}
