package decision

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/placer/placer/graph"
)

// FormatName and FormatVersion identify the JSON decision file
// (docs/decision-format.md). A file without a strategy is written as
// version 1, byte for byte as before strategies existed; one with a
// strategy as version 2. Both are read.
const (
	FormatName    = "placer-decision"
	FormatVersion = 2
	// FormatVersionPlacement is the version of a decision without a
	// strategy (one replica, one micro-batch).
	FormatVersionPlacement = 1
)

// File is a decision as stored on disk, with the graph and cluster it was
// made for, so that a mismatch is caught when it is read back.
type File struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Graph   string `json:"graph"` // graph name
	// GraphSHA256 is graph.Hash of the graph the decision was made for;
	// files written before it was recorded have none.
	GraphSHA256 string `json:"graph_sha256,omitempty"`
	Ops         int    `json:"ops"`     // number of ops of that graph
	Devices     int    `json:"devices"` // devices in the cluster
	Device      []int  `json:"device"`
	Priority    []int  `json:"priority,omitempty"`
	Fusion      []int  `json:"fusion,omitempty"`
	Transfer    []int  `json:"transfer,omitempty"`
	// Strategy is absent from version 1 files (one replica, one
	// micro-batch).
	Strategy *Strategy `json:"strategy,omitempty"`
}

// NewFile wraps d, made for a cluster of devices GPUs, for writing. With
// a strategy of R replicas the file's devices are one replica's,
// devices / R.
func NewFile(g *graph.Graph, devices int, d Decision) File {
	devices /= d.Strategy.R()
	f := File{
		Format: FormatName, Version: FormatVersionPlacement, Graph: g.Name(), GraphSHA256: graph.Hash(g), Ops: g.NumOps(), Devices: devices,
		Device: d.Device, Priority: d.Priority, Fusion: d.Fusion, Transfer: d.Transfer,
	}
	if !d.Strategy.IsZero() {
		s := d.Strategy
		f.Version, f.Strategy = FormatVersion, &s
	}
	return f
}

// Decision returns the decision the file holds.
func (f File) Decision() Decision {
	d := Decision{Device: f.Device, Priority: f.Priority, Fusion: f.Fusion, Transfer: f.Transfer}
	if f.Strategy != nil {
		d.Strategy = *f.Strategy
	}
	return d
}

// Write encodes d for graph g on a cluster of the given size.
func Write(w io.Writer, g *graph.Graph, devices int, d Decision) error {
	f := NewFile(g, devices, d)
	enc := json.NewEncoder(w)
	return enc.Encode(&f)
}

// Decode reads a decision file. It also accepts a result file (placer
// search --out) or an evaluation's report (placer eval -o) that holds a
// decision file under the key "decision".
func Decode(data []byte) (File, error) {
	var probe struct {
		Format   string          `json:"format"`
		Kind     string          `json:"kind"`
		Decision json.RawMessage `json:"decision"`
		StepTime json.RawMessage `json:"step_time_s"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return File{}, graph.JSONError("decision", data, err)
	}
	if probe.Format == profileFormat {
		return File{}, profileGiven(probe.Kind)
	}
	if probe.Format != FormatName && len(probe.Decision) > 0 {
		data = probe.Decision
	}
	if err := scalePlanFile(data); err != nil {
		return File{}, err
	}
	if probe.Format == "" && len(probe.Decision) == 0 && len(probe.StepTime) > 0 {
		// A report (placer eval -o) from before reports held their decision.
		return File{}, fmt.Errorf("decision: a report without the decision it evaluated (an older placer eval -o): run placer eval -o again, which writes it")
	}
	if err := checkScaleFields(data); err != nil {
		return File{}, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, graph.JSONError("decision", data, err)
	}
	if err := graph.CheckEnd("decision", data, dec); err != nil {
		return File{}, err
	}
	if f.Format != FormatName {
		return File{}, fmt.Errorf("decision: format is %q, want %q (is this a placer decision or result file?)", f.Format, FormatName)
	}
	switch {
	case f.Version == FormatVersionPlacement && f.Strategy != nil:
		return File{}, fmt.Errorf("decision: a version %d file has no strategy (strategies came with version %d)", f.Version, FormatVersion)
	case f.Version != FormatVersionPlacement && f.Version != FormatVersion:
		return File{}, fmt.Errorf("decision: format version %d is not supported (this placer reads versions %d and %d)", f.Version, FormatVersionPlacement, FormatVersion)
	}
	if f.Strategy != nil {
		if err := f.Strategy.Check(); err != nil {
			return File{}, err
		}
	}
	return f, nil
}

// Check verifies that the file was made for graph g on the given number of
// devices and that its decision fits.
func (f File) Check(g *graph.Graph, devices int) error {
	if f.Ops != g.NumOps() {
		return fmt.Errorf("decision: made for graph %q with %d ops, this graph %q has %d ops", f.Graph, f.Ops, g.Name(), g.NumOps())
	}
	if f.GraphSHA256 != "" {
		if h := graph.Hash(g); h != f.GraphSHA256 {
			return fmt.Errorf("decision: made for graph %q (sha256 %.12s), not this graph %q (sha256 %.12s)", f.Graph, f.GraphSHA256, g.Name(), h)
		}
	}
	if f.Devices != devices {
		return fmt.Errorf("decision: made for %d devices, the cluster has %d (use --gpus %d)", f.Devices, devices, f.Devices)
	}
	return f.Decision().Validate(g, devices)
}

// profileFormat is a profile's format name (evaluate/profile.Format,
// which decision may not import; cmd/placer's TestProfileNotADecision
// gives eval profiles that placer profile writes).
const profileFormat = "placer-profile"

// profileGiven is the line for a profile (placer profile's) given where
// a decision goes, naming the flag that takes it: an ops profile
// (--model's measured op times) is a graph to eval, search or export; a
// layers profile (--workload's) prices a transformer at cluster scale.
func profileGiven(kind string) error {
	if kind == "ops" {
		return fmt.Errorf("decision: a profile (placer profile --model's measured op times), not a decision: give it to eval, search or export as --profile FILE (it holds the graph it measured)")
	}
	return fmt.Errorf("decision: a profile (placer profile --workload's layers), not a decision: give it to eval or search as --profile FILE with its --workload and --cluster")
}

// scaleFields are the JSON fields of a strategy that placer wrote before
// a transformer's plan at cluster scale had a type of its own
// (planner/plan.Strategy); no decision carried them, and a file that
// does is refused by name rather than as an unknown field.
var scaleFields = []string{"tensor", "sequence_parallel", "pipeline", "virtual_stages", "micro_batch_size", "recompute",
	"recompute_layers", "tp_overlap", "first_stage_layers", "last_stage_layers", "tensor_stages", "context"}

// scalePlanFile refuses, in one line, a plan file of a transformer at
// cluster scale (placer search -o's, its plan under "best", or placer
// eval -o's: a model, a cluster and a strategy written as text) given
// where an op graph's decision goes, naming what takes it: eval or export
// with that workload and cluster, and --plan.
func scalePlanFile(data []byte) error {
	type plan struct {
		Model    string          `json:"model"`
		Cluster  string          `json:"cluster"`
		Strategy json.RawMessage `json:"strategy"`
	}
	var probe struct {
		plan
		Best *plan `json:"best"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return nil // Decode's own decoding reports it
	}
	pl := probe.plan
	if probe.Best != nil {
		pl = *probe.Best
	}
	if pl.Model == "" || pl.Cluster == "" || len(pl.Strategy) == 0 || pl.Strategy[0] != '"' {
		return nil
	}
	return fmt.Errorf("decision: a plan of a transformer at cluster scale (placer search -o or eval -o), not an op graph's decision: give it to eval or export as --plan FILE with --workload %s --cluster %s", pl.Model, pl.Cluster)
}

// checkScaleFields refuses a decision file whose strategy has a field of
// a transformer's plan at cluster scale, naming the first, in one line.
func checkScaleFields(data []byte) error {
	var probe struct {
		Strategy map[string]json.RawMessage `json:"strategy"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return nil // Decode's own decoding reports it
	}
	for _, k := range scaleFields {
		if _, ok := probe.Strategy[k]; ok {
			return &Error{Field: "strategy", Msg: fmt.Sprintf("%q is a field of a transformer's plan at cluster scale, not of an op graph's strategy", k)}
		}
	}
	return nil
}
