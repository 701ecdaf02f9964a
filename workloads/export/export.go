package export

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/workloads/costgraph"
)

// DeviceMap is TensorFlow's view of a placement: op name -> device name.
func DeviceMap(g *graph.Graph, dev []int) (map[string]string, error) {
	if err := check(g, dev); err != nil {
		return nil, err
	}
	m := make(map[string]string, g.NumOps())
	for i, k := range dev {
		m[g.Op(i).Name] = costgraph.TFDevice(k)
	}
	return m, nil
}

func check(g *graph.Graph, dev []int) error {
	if len(dev) != g.NumOps() {
		return fmt.Errorf("export: placement has %d devices for %d ops of graph %s", len(dev), g.NumOps(), g.Name())
	}
	for i, k := range dev {
		if k < 0 {
			return fmt.Errorf("export: op %d (%s): device %d", i, g.Op(i).Name, k)
		}
	}
	return nil
}

// TorchMeta is the meta file the PyTorch exporter writes beside a graph
// (format "placer-torch-meta"): per op, its module path, phase and source
// ATen operator; the parameters and the modules.
type TorchMeta struct {
	Format              string        `json:"format"`
	Version             int           `json:"version"`
	Graph               string        `json:"graph"`
	Torch               string        `json:"torch"`
	Optimizer           string        `json:"optimizer"`
	ParamBytes          int64         `json:"param_bytes"`
	GradBytes           int64         `json:"grad_bytes"`
	OptimizerStateBytes int64         `json:"optimizer_state_bytes"`
	OptimizerSlotBytes  int64         `json:"optimizer_slot_bytes"`
	BufferBytes         int64         `json:"buffer_bytes"`
	Params              []TorchParam  `json:"params"`
	Modules             []TorchModule `json:"modules"`
	Ops                 []TorchOp     `json:"ops"`
	// TrainMode lists the modules whose train-mode result depends on how
	// the batch is split or on their random stream (the exporter's
	// placer_torch.semantics; docs/import.md, "Train-mode modules"):
	// absent from older meta files.
	TrainMode []TrainModeModule `json:"train_mode,omitempty"`
}

// TrainModeModule is a module whose train-mode step a plan changes, and
// how (one of the TrainMode effects).
type TrainModeModule struct {
	Module string `json:"module"` // its path; "" is the root
	Class  string `json:"class"`
	Effect string `json:"effect"`
}

// The effects of a train-mode module (placer_torch.semantics).
const (
	// TrainModeBatch: a batch normalization with batch statistics,
	// which a plan computes per micro-batch of a replica
	// (SyncBatchNorm: per micro-batch over the replicas).
	TrainModeBatch = "batch-statistics"
	// TrainModeRandom: random draws from torch's generator, which the
	// runner seeds per micro-batch and stage boundary.
	TrainModeRandom = "random"
	// TrainModeOwnGenerator: random draws from a torch.Generator of the
	// module's own, whose state is each rank's.
	TrainModeOwnGenerator = "own-generator"
)

// SyncBatchNorm is the class whose batch statistics are over the
// replicas: only micro-batches change them.
const SyncBatchNorm = "SyncBatchNorm"

// ChangedByPlan is the train-mode modules a plan of replicas x
// microBatches changes (placer_torch.semantics.changed_by_plan): batch
// statistics only when the plan splits the batch (SyncBatchNorm's only
// when it has micro-batches), random draws always.
func ChangedByPlan(mods []TrainModeModule, replicas, microBatches int) []TrainModeModule {
	var out []TrainModeModule
	for _, m := range mods {
		if m.Effect == TrainModeBatch {
			if m.Class == SyncBatchNorm && microBatches <= 1 {
				continue
			}
			if replicas*microBatches <= 1 {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// TorchParam is one trainable parameter.
type TorchParam struct {
	Name       string  `json:"name"`
	Module     string  `json:"module"`
	Shape      []int64 `json:"shape"`
	DType      string  `json:"dtype"`
	Bytes      int64   `json:"bytes"`
	GradBytes  int64   `json:"grad_bytes"`
	StateBytes int64   `json:"state_bytes"`
	SlotBytes  int64   `json:"slot_bytes"`
	Op         string  `json:"op"`
}

// TorchModule is one module of the model, in named_modules order.
type TorchModule struct {
	Path  string `json:"path"`
	Class string `json:"class"`
}

// TorchOp is what the graph format has no field for, per op.
type TorchOp struct {
	Name   string `json:"name"`
	Module string `json:"module"`
	// Call is which call of Module a forward op belongs to, 0-based (a
	// module applied several times in one forward; 0 when absent).
	Call   int    `json:"call,omitempty"`
	Phase  string `json:"phase"` // input, parameter, forward, backward, optimizer
	Source string `json:"source"`
	Param  string `json:"param,omitempty"`
}

// TorchMetaFormat is the format name of the exporter's meta file.
const TorchMetaFormat = "placer-torch-meta"

// ReadTorchMeta reads the exporter's meta file and checks it against g:
// one entry per op, with the same names.
func ReadTorchMeta(path string, g *graph.Graph) (*TorchMeta, error) {
	data, err := bounded.ReadFile(path, bounded.Decision, "an exporter's meta file")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return DecodeTorchMeta(path, data, g)
}

// DecodeTorchMeta is ReadTorchMeta of data, the meta file's contents
// (an ops profile holds them: placer profile --model), path naming
// where they came from in its errors.
func DecodeTorchMeta(path string, data []byte, g *graph.Graph) (*TorchMeta, error) {
	var m TorchMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, graph.JSONError("export: "+path, data, err)
	}
	if m.Format != TorchMetaFormat {
		return nil, fmt.Errorf("export: %s: format %q, want %q (the meta file tools/dev/torchexport writes)", path, m.Format, TorchMetaFormat)
	}
	if len(m.Ops) != g.NumOps() {
		return nil, fmt.Errorf("export: %s: %d ops, graph %s has %d: not this graph's meta file", path, len(m.Ops), g.Name(), g.NumOps())
	}
	for i, op := range m.Ops {
		if op.Name != g.Op(i).Name {
			return nil, fmt.Errorf("export: %s: ops[%d] is %q, graph %s has %q: not this graph's meta file", path, i, op.Name, g.Name(), g.Op(i).Name)
		}
	}
	for i, t := range m.TrainMode {
		switch t.Effect {
		case TrainModeBatch, TrainModeRandom, TrainModeOwnGenerator:
		default:
			return nil, fmt.Errorf("export: %s: train_mode[%d] (module %q): effect %q, want %s, %s or %s", path, i, t.Module, t.Effect, TrainModeBatch, TrainModeRandom, TrainModeOwnGenerator)
		}
	}
	return &m, nil
}

// ModuleMapFormat is the format name of a module map.
const ModuleMapFormat = "placer-module-map"

// ModuleMap places a PyTorch model's modules: tools/dev/torchexport/placement.py
// applies it to an nn.Module.
type ModuleMap struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Graph   string `json:"graph"`
	Devices int    `json:"devices"`
	// Modules maps each module path ("" is the root) that owns parameters,
	// buffers or ops to a device index.
	Modules map[string]int `json:"modules"`
	// Pipeline is set when the placement is a contiguous pipeline.
	Pipeline *Pipeline `json:"pipeline,omitempty"`
}

// Pipeline is a contiguous pipeline: stage k runs on device Devices[k].
type Pipeline struct {
	// Stages lists the modules of each stage, in forward order.
	Stages [][]string `json:"stages"`
	// Devices is the device of each stage.
	Devices []int `json:"devices"`
	// SplitPoints is the split_spec of torch.distributed.pipelining:
	// module path -> "BEGINNING" for the first module of every stage after
	// the first.
	SplitPoints map[string]string `json:"split_points"`
}

// NewModuleMap derives a module map from a placement of an exported graph.
//
// A module that owns parameters goes where the most of its parameter
// bytes are (their Parameter ops'); one without goes where the most of its
// forward FLOPs run (each op counted as FLOPs + 1, so that ops without
// arithmetic still count); ties go to the lower device. A module whose
// parameters an ancestor's forward reads directly (nn.MultiheadAttention's
// out_proj: MultiheadAttention's forward multiplies by out_proj.weight
// without calling out_proj) goes where that ancestor goes, whatever the
// placement did with its Parameter ops. Modules with no parameters,
// buffers or ops of their own (containers) are left out.
//
// The placement is a contiguous pipeline when, taking the non-root modules
// in the order their first forward op ran, each device's modules form one
// run; with two or more runs, each run is a stage and the first module of
// every later stage is a split point. The root module (the loss) is left
// out of the pipeline, as torch.distributed.pipelining takes the loss
// apart.
func NewModuleMap(g *graph.Graph, meta *TorchMeta, dev []int, devices int) (*ModuleMap, error) {
	if err := check(g, dev); err != nil {
		return nil, err
	}
	if len(meta.Ops) != g.NumOps() {
		return nil, fmt.Errorf("export: meta file has %d ops, graph %s has %d", len(meta.Ops), g.Name(), g.NumOps())
	}
	type score struct {
		param []float64
		fwd   []float64
		first int // first forward op, -1 = none
		own   bool
	}
	mods := map[string]*score{}
	get := func(path string) *score {
		s := mods[path]
		if s == nil {
			s = &score{param: make([]float64, devices), fwd: make([]float64, devices), first: -1}
			mods[path] = s
		}
		return s
	}
	for i, m := range meta.Ops {
		k := dev[i]
		if k >= devices {
			return nil, fmt.Errorf("export: op %d (%s): device %d out of range [0, %d)", i, g.Op(i).Name, k, devices)
		}
		switch m.Phase {
		case "parameter", "buffer":
			s := get(m.Module)
			s.param[k] += float64(g.Op(i).ParamBytes) + 1
			s.own = true
		case "forward":
			s := get(m.Module)
			s.fwd[k] += g.Op(i).FLOPs + 1
			if s.first < 0 {
				s.first = i
			}
			s.own = true
		}
	}
	mm := &ModuleMap{Format: ModuleMapFormat, Version: 1, Graph: g.Name(), Devices: devices, Modules: map[string]int{}}
	argmax := func(v []float64) int {
		best := 0
		for k := range v {
			if v[k] > v[best] {
				best = k
			}
		}
		return best
	}
	for path, s := range mods {
		if !s.own {
			continue
		}
		if sum(s.param) > 0 {
			mm.Modules[path] = argmax(s.param)
		} else {
			mm.Modules[path] = argmax(s.fwd)
		}
	}
	// A module whose parameters an ancestor's forward reads directly
	// (nn.MultiheadAttention's out_proj) goes with that ancestor: apart,
	// the ancestor's ops would read a parameter on another device.
	joined := joinedModules(g, meta)
	for path := range joined {
		if _, ok := mm.Modules[path]; !ok {
			continue
		}
		root := path
		for {
			p, ok := joined[root]
			if !ok {
				break
			}
			root = p
		}
		if k, ok := mm.Modules[root]; ok {
			mm.Modules[path] = k
		}
	}
	// Pipeline: non-root modules with forward ops, in forward order.
	type step struct {
		path  string
		first int
	}
	var order []step
	for path, s := range mods {
		if path != "" && s.first >= 0 {
			order = append(order, step{path, s.first})
		}
	}
	sort.Slice(order, func(a, b int) bool { return order[a].first < order[b].first })
	var p Pipeline
	used := map[int]bool{}
	contiguous := len(order) > 0
	for _, st := range order {
		k := mm.Modules[st.path]
		if n := len(p.Devices); n > 0 && p.Devices[n-1] == k {
			p.Stages[n-1] = append(p.Stages[n-1], st.path)
			continue
		}
		if used[k] {
			contiguous = false
			break
		}
		used[k] = true
		p.Devices = append(p.Devices, k)
		p.Stages = append(p.Stages, []string{st.path})
	}
	if contiguous && len(p.Stages) > 1 {
		p.SplitPoints = map[string]string{}
		for _, stage := range p.Stages[1:] {
			p.SplitPoints[stage[0]] = "BEGINNING"
		}
		mm.Pipeline = &p
	}
	return mm, nil
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
