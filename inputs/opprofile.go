package inputs

import (
	"fmt"
	"strings"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/fail"
)

// ProfiledGraph is the op graph g names, or with c.Profile set the graph
// of that ops profile (placer profile --model; docs/profile.md), its
// measured ops with their times, and the profile. A profile that cannot
// be read, or is a transformer's layers, is the file's mistake (exit 1);
// --graph, --workload or --cost-table beside it the command line's.
func ProfiledGraph(g GraphSpec, c ClusterSpec) (*graph.Graph, Meta, *profile.Profile, error) {
	if c.Profile == "" {
		gr, meta, err := Graph(g)
		return gr, meta, nil, err
	}
	switch {
	case g.Path != "" || g.Workload != "":
		return nil, Meta{}, nil, fail.Usagef("--profile %s holds the graph it measured: give it without --graph or --workload (or --workload llama:... with a layers profile)", c.Profile)
	case g.CostTable != "" || g.Expert != "":
		return nil, Meta{}, nil, fail.Usagef("--profile %s: its measured times are the graph's; --cost-table and --expert do not apply", c.Profile)
	}
	pr, err := profile.ReadFile(c.Profile)
	if err != nil {
		return nil, Meta{}, nil, err
	}
	if pr.Kind != profile.KindOps {
		return nil, Meta{}, nil, fmt.Errorf("profile %s: a transformer's layers (%s), not an op graph: give it with --workload %s", c.Profile, pr.Model, pr.Model)
	}
	return pr.Graph(), Meta{}, pr, nil
}

// ProfileCluster is the cluster of an ops profile pr: the hardware c
// names (c.HardwareSet), which must be the profile's device, else the
// profile's own (a GPU: the preset its name holds; a CPU:
// ProfileHardware), on c.GPUs devices (default 1).
func ProfileCluster(c ClusterSpec, pr *profile.Profile) (*roofline.Cluster, error) {
	var h roofline.Hardware
	var err error
	switch {
	case c.HardwareSet && !(pr.Device.Kind == "cpu" && c.Hardware == "cpu"):
		if _, perr := roofline.Preset(c.Hardware); perr != nil && !isFileName(c.Hardware) {
			return nil, fail.Usagef("--hardware %q: not a preset (%s) nor a profile file", c.Hardware, strings.Join(roofline.Presets(), ", "))
		}
		if h, err = roofline.LoadHardware(c.Hardware); err != nil {
			return nil, err
		}
		if !pr.OfDevice(h.Name) {
			return nil, fmt.Errorf("profile %s: of another device: %s %q (torch %s), the run's %s", c.Profile, pr.Device.Kind, pr.Device.Name, pr.Software.Torch, h.Name)
		}
	case pr.Device.Kind == "cpu":
		h = ProfileHardware(pr)
	default:
		for _, name := range roofline.Presets() {
			if pr.OfDevice(name) {
				h, err = roofline.Preset(name)
				break
			}
		}
		if err != nil {
			return nil, err
		}
		if h.Name == "" {
			return nil, fmt.Errorf("profile %s: of a GPU no preset names (%q): give --hardware FILE (placer calibrate) for its roofline", c.Profile, pr.Device.Name)
		}
	}
	if c.GPUs < 0 || c.GPUs > MaxGPUs {
		return nil, fail.Usagef("--gpus %d: out of range [1, %d]", c.GPUs, MaxGPUs)
	}
	if c.Memory < 0 || c.Memory > MaxMemory {
		return nil, fail.Usagef("--memory %d: out of range [1, %d]", c.Memory, MaxMemory)
	}
	if c.Memory > 0 {
		h.Memory = c.Memory
	}
	return roofline.NewCluster(h, max(c.GPUs, 1), c.Topology)
}

// ProfileHardware is the roofline of a CPU's ops profile, for the ops it
// did not time: the rates of the ops it did (their FLOPs over their
// time as the peak of every class, their bytes over their time as the
// memory's bandwidth; efficiencies 1, no launch), the host's memory.
func ProfileHardware(pr *profile.Profile) roofline.Hardware {
	g := pr.Graph()
	var flops, fTime, bytes, bTime float64
	for i := range g.NumOps() {
		op := g.Op(i)
		if !op.HasTime || op.Time <= 0 {
			continue
		}
		if op.FLOPs > 0 {
			flops, fTime = flops+op.FLOPs, fTime+op.Time
		}
		if b := float64(op.BytesRead + op.BytesWritten); b > 0 {
			bytes, bTime = bytes+b, bTime+op.Time
		}
	}
	h := roofline.Hardware{Name: "cpu", Memory: pr.Device.Memory, Source: "profile: " + pr.Device.Name, FP32: 1e11, MemBandwidth: 1e10}
	if flops > 0 && fTime > 0 {
		h.FP32 = flops / fTime
	}
	if bytes > 0 && bTime > 0 {
		h.MemBandwidth = bytes / bTime
	}
	h.FP64, h.FP16, h.TF32, h.FP16Tensor = h.FP32, h.FP32, h.FP32, h.FP32
	// One device, no links; NewCluster wants a bandwidth for them.
	h.PCIeGen, h.PCIeBandwidth, h.PCIeLatency = 3, h.MemBandwidth, 1e-5
	for c := range graph.NumClasses {
		h.ComputeEff[c], h.MemEff[c] = 1, 1
	}
	if h.Memory <= 0 {
		h.Memory = 1 << 30
	}
	return h
}
