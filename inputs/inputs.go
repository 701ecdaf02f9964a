package inputs

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/costtable"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/workloads"
	"github.com/placer/placer/workloads/msrfiddle"
)

// GraphSpec names an op graph: a file (with an optional format) or a
// built-in workload.
type GraphSpec struct {
	Path   string // graph file
	Format string // "" = detect; see Formats
	// Workload is a built-in workload's name (instead of Path).
	Workload string
	// Expert is an expert-placement file for the graph: msr-fiddle's
	// ({"fpgas": [{"nodes": [ids]}]}) or a decision or result file. ""
	// = the built-in workload's expert placement, if any.
	Expert string
	// CostTable is a measured-cost table (torchexport --profile
	// --cost-table) whose times fill the graph's ops that have none, on
	// CostDevice ("" = the table's only device). "" = none.
	CostTable  string
	CostDevice string
}

// Graph resolves a GraphSpec.
func Graph(spec GraphSpec) (*graph.Graph, Meta, error) {
	if spec.CostDevice != "" && spec.CostTable == "" {
		return nil, Meta{}, fail.Usagef("--cost-device needs --cost-table")
	}
	g, meta, err := readGraph(spec)
	if err != nil || spec.CostTable == "" {
		return g, meta, err
	}
	g, err = fillCosts(g, spec.CostTable, spec.CostDevice)
	return g, meta, err
}

// fillCosts gives g's ops without a measured time the times of the cost
// table at path, on device ("" = the table's only one).
func fillCosts(g *graph.Graph, path, device string) (*graph.Graph, error) {
	t, err := costtable.Read(path)
	if err != nil {
		return nil, fail.Usagef("--cost-table: %v", err)
	}
	dev, err := t.Device(device)
	if err != nil {
		return nil, fail.Usagef("--cost-table %s: %v", path, err)
	}
	g, _, err = t.Fill(g, dev)
	return g, err
}

// readGraph reads the graph spec names.
func readGraph(spec GraphSpec) (*graph.Graph, Meta, error) {
	switch {
	case spec.Path != "" && spec.Workload != "":
		return nil, Meta{}, fail.Usagef("give either --graph FILE or --workload NAME, not both")
	case spec.Workload != "":
		if err := CheckWorkload(spec.Workload); err != nil {
			return nil, Meta{}, err
		}
		g, err := workloads.Build(spec.Workload)
		return g, Meta{}, err
	case spec.Path == "":
		return nil, Meta{}, fail.Usagef("no graph: give --graph FILE or --workload NAME")
	}
	if spec.Format != "" {
		if _, err := namedFormat(spec.Format); err != nil {
			return nil, Meta{}, err
		}
	}
	// A native graph file is read as a stream (graph.Read), never whole:
	// a 2,000,000-op chain is 500 MB. The head decides the format.
	head, err := readHead(spec.Path, headSize)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("graph: %w", err)
	}
	format, err := GraphFormat(spec, head)
	if err != nil {
		return nil, Meta{}, err
	}
	if format == "native" {
		g, err := readNative(spec.Path)
		if err != nil {
			return nil, Meta{}, fmt.Errorf("%s: %w", spec.Path, err)
		}
		return g, Meta{}, nil
	}
	data, err := bounded.ReadFile(spec.Path, bounded.Graph, "a graph file")
	if err != nil {
		return nil, Meta{}, fmt.Errorf("graph: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(spec.Path), filepath.Ext(spec.Path))
	im := importers[format]
	g, meta, err := im.Decode(data, name)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("%s: %w", spec.Path, err)
	}
	return g, meta, nil
}

// readHead returns the first n bytes of the file at path (all of it when
// shorter).
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return head[:k], err
}

// readNative reads a native graph file with graph.Read.
func readNative(path string) (*graph.Graph, error) {
	f, err := bounded.Open(path, bounded.Graph, "a graph file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return graph.Read(f)
}

// ClusterSpec names the cluster of GPUs an op graph is placed on (a
// transformer's pod at cluster scale is a PodSpec).
type ClusterSpec struct {
	// GPUs is the number of devices, at most MaxGPUs (0 = the graph's own
	// count, else 1).
	GPUs int
	// Hardware is a preset name or a profile file; "" = the default:
	// roofline.GraphFileHardware for a graph file (GraphSpec.Path, in
	// Resolve), else roofline.DefaultHardware.
	Hardware string
	Topology string // "" = the hardware's default
	Memory   int64  // override of the device capacity in bytes (0 = the hardware's)
	// Profile is an ops profile file (placer profile --model;
	// docs/profile.md), which holds the graph (no --graph or --workload
	// then): its measured ops take their times, the rest the roofline's
	// (ProfiledGraph). "" = none.
	Profile string
	// HardwareSet says that Hardware was named (the --hardware flag
	// given): with an ops profile, the profile's device must be it;
	// unnamed, the profile's device is the hardware.
	HardwareSet bool
}

// Cluster resolves a ClusterSpec; meta supplies defaults a graph file
// states.
func Cluster(spec ClusterSpec, meta Meta) (*roofline.Cluster, error) {
	hwName := spec.Hardware
	if hwName == "" {
		hwName = roofline.DefaultHardware
	}
	if spec.GPUs < 0 || spec.GPUs > MaxGPUs {
		return nil, fail.Usagef("--gpus %d: out of range [1, %d]", spec.GPUs, MaxGPUs)
	}
	if spec.Memory < 0 || spec.Memory > MaxMemory {
		return nil, fail.Usagef("--memory %d: out of range [1, %d]", spec.Memory, MaxMemory)
	}
	if t := strings.ToLower(spec.Topology); t != "" && !slices.Contains(roofline.Topologies, t) {
		return nil, fail.Usagef("--topology %q: unknown topology (want one of %s)", spec.Topology, strings.Join(roofline.Topologies, ", "))
	}
	if _, err := roofline.Preset(hwName); err != nil && !isFileName(hwName) {
		return nil, fail.Usagef("--hardware %q: not a preset (%s) nor a profile file", hwName, strings.Join(roofline.Presets(), ", "))
	}
	h, err := roofline.LoadHardware(hwName)
	if err != nil {
		return nil, err
	}
	switch {
	case spec.Memory > 0:
		h.Memory = spec.Memory
	case meta.Capacity > 0:
		h.Memory = meta.Capacity
	}
	n := spec.GPUs
	if n == 0 {
		n = max(meta.Devices, 1)
	}
	return roofline.NewCluster(h, n, spec.Topology)
}

// ExpertFor returns the expert placement of the graph of spec (g, as
// Graph resolved it) on devices devices: read from spec.Expert when set
// (an msr-fiddle expert file, whose node ids are the graph file's, or a
// decision file), else Expert's. An expert file that places on more
// devices than the cluster has is an error.
func ExpertFor(spec GraphSpec, g *graph.Graph, devices int) ([]int, error) {
	if spec.Expert == "" {
		return Expert(g, devices)
	}
	data, err := bounded.ReadFile(spec.Expert, bounded.Decision, "a placement file")
	if err != nil {
		return nil, fmt.Errorf("expert: %w", err)
	}
	var dev []int
	if PlacementFormat(data) == PlacementMSRFiddle {
		ids, err := msrFiddleIDs(spec, g)
		if err != nil {
			return nil, err
		}
		if dev, err = msrfiddle.ReadExpert(data, g, ids); err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Expert, err)
		}
	} else {
		f, err := readDecisionFile(spec.Expert, g, devices)
		if err != nil {
			return nil, fmt.Errorf("expert: %w", err)
		}
		dev = f.Device
	}
	if err := (decision.Decision{Device: dev}).Validate(g, devices); err != nil {
		return nil, fmt.Errorf("expert %s: %w", spec.Expert, err)
	}
	return dev, nil
}

// IsMSRFiddleExpert reports whether path is an msr-fiddle expert
// placement file (its accelerators under "fpgas").
func IsMSRFiddleExpert(path string) bool {
	data, err := bounded.ReadFile(path, bounded.Decision, "a placement file")
	return err == nil && PlacementFormat(data) == PlacementMSRFiddle
}

// PlacementDevices is the number of devices a placement spec was made
// for: a decision or result file's, an msr-fiddle expert file's
// accelerators; 0 for the named strategies and for a file it cannot read
// (whoever reads the file reports why).
func PlacementDevices(spec string) int {
	data, err := bounded.ReadFile(spec, bounded.Decision, "a placement file")
	if err != nil {
		return 0
	}
	if PlacementFormat(data) == PlacementMSRFiddle {
		var e msrfiddle.Expert
		if json.Unmarshal(data, &e) != nil {
			return 0
		}
		return len(e.FPGAs)
	}
	f, err := decision.Decode(data)
	if err != nil {
		return 0
	}
	return f.Devices
}

// PlacementStrategy is the strategy of a decision or result file (the
// zero strategy for anything else).
func PlacementStrategy(spec string) decision.Strategy {
	data, err := bounded.ReadFile(spec, bounded.Decision, "a placement file")
	if err != nil || PlacementFormat(data) == PlacementMSRFiddle {
		return decision.Strategy{}
	}
	f, err := decision.Decode(data)
	if err != nil {
		return decision.Strategy{}
	}
	return f.Decision().Strategy
}

// msrFiddleIDs returns the node ids of the graph file of spec when it is
// an msr-fiddle file (nil otherwise: op index = id).
func msrFiddleIDs(spec GraphSpec, g *graph.Graph) ([]int64, error) {
	if spec.Path == "" {
		return nil, nil
	}
	head, err := readHead(spec.Path, headSize)
	if err != nil {
		return nil, err
	}
	if format, err := GraphFormat(spec, head); err != nil || format != "msr-fiddle" {
		return nil, err
	}
	data, err := bounded.ReadFile(spec.Path, bounded.Graph, "a graph file")
	if err != nil {
		return nil, err
	}
	_, _, ids, err := msrfiddle.DecodeWithIDs(data, g.Name())
	return ids, err
}

// MaxGPUs and MaxMemory are the largest --gpus and --memory (docs/inputs.md).
const (
	MaxGPUs   = 64
	MaxMemory = int64(1) << 50
)

// isFileName reports whether s names a file: one that exists, or a path
// ending in .json.
func isFileName(s string) bool {
	if _, err := os.Stat(s); err == nil {
		return true
	}
	return strings.HasSuffix(strings.ToLower(s), ".json") || strings.ContainsRune(s, os.PathSeparator)
}

// Expert returns the human expert's placement of g on devices devices,
// or nil when there is none: a graph that is not one of the built-in
// workload families (an imported or synthetic graph) has no expert
// placement, which is not an error.
func Expert(g *graph.Graph, devices int) ([]int, error) {
	if _, ok := workloads.FamilyOf(g.Name()); !ok {
		return nil, nil
	}
	return workloads.Expert("", g, devices)
}

// Placement resolves a placement: "single", "round-robin", "expert", or a
// decision or result file whose device list is used.
func Placement(spec string, g *graph.Graph, devices int) ([]int, error) {
	switch strings.ToLower(spec) {
	case "", "single":
		return decision.Single(g), nil
	case "round-robin", "roundrobin", "rr":
		return decision.RoundRobin(g, devices), nil
	case "expert", "human":
		dev, err := Expert(g, devices)
		if err == nil && dev == nil {
			err = fmt.Errorf("placement expert: graph %q is not a built-in workload and has no expert placement", g.Name())
		}
		return dev, err
	}
	f, err := readDecisionFile(spec, g, devices)
	if err != nil {
		return nil, err
	}
	return f.Device, nil
}

// Schedule resolves scheduling priorities: "fifo" (nil) or a decision
// file whose priority list is used.
func Schedule(spec string, g *graph.Graph, devices int) ([]int, error) {
	switch strings.ToLower(spec) {
	case "", "fifo", "tf", "default":
		return nil, nil
	}
	f, err := readDecisionFile(spec, g, devices)
	if err != nil {
		return nil, err
	}
	if f.Priority == nil {
		return nil, fmt.Errorf("%s: the file has no priorities (field \"priority\")", spec)
	}
	return f.Priority, nil
}

// Fusion resolves fusion priorities: "none" (nil), "default"
// (topological, XLA-like) or a decision file whose fusion list is used.
func Fusion(spec string, g *graph.Graph, devices int) ([]int, error) {
	switch strings.ToLower(spec) {
	case "", "none", "off":
		return nil, nil
	case "default", "xla", "topological":
		return decision.TopologicalFusion(g), nil
	}
	f, err := readDecisionFile(spec, g, devices)
	if err != nil {
		return nil, err
	}
	if f.Fusion == nil {
		return nil, fmt.Errorf("%s: the file has no fusion priorities (field \"fusion\")", spec)
	}
	return f.Fusion, nil
}

func readDecisionFile(path string, g *graph.Graph, devices int) (decision.File, error) {
	data, err := bounded.ReadFile(path, bounded.Decision, "a decision or result file")
	if err != nil {
		if os.IsNotExist(err) && !strings.ContainsAny(path, "./") {
			return decision.File{}, fail.Usagef("%q is neither a known strategy nor a file", path)
		}
		return decision.File{}, err
	}
	f, err := decision.Decode(data)
	if err != nil {
		return decision.File{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Check(g, devices); err != nil {
		return decision.File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Decision resolves a whole decision from the three specs. When schedule
// or fusion is empty and placement names a decision or result file, the
// file's own priorities, fusion and transfer priorities are used, so that
// `placer eval --placement result.json` reproduces the result exactly.
func Decision(placement, schedule, fusion string, g *graph.Graph, devices int) (decision.Decision, error) {
	var d decision.Decision
	var err error
	var file *decision.File
	switch strings.ToLower(placement) {
	case "", "single", "round-robin", "roundrobin", "rr", "expert", "human":
		if d.Device, err = Placement(placement, g, devices); err != nil {
			return d, fmt.Errorf("placement: %w", err)
		}
	default:
		f, err := readDecisionFile(placement, g, devices)
		if err != nil {
			return d, fmt.Errorf("placement: %w", err)
		}
		file = &f
		d.Device = f.Device
	}
	if schedule == "" && file != nil {
		d.Priority = file.Priority
	} else if d.Priority, err = Schedule(schedule, g, devices); err != nil {
		return d, fmt.Errorf("schedule: %w", err)
	}
	if fusion == "" && file != nil {
		d.Fusion = file.Fusion
	} else if d.Fusion, err = Fusion(fusion, g, devices); err != nil {
		return d, fmt.Errorf("fusion: %w", err)
	}
	if file != nil {
		d.Transfer, d.Strategy = file.Transfer, file.Decision().Strategy
	}
	return d, nil
}
