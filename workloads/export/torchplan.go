package export

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// TorchPlan is the TorchPlanFormat plan tools/dev/torchplan runs: a PyTorch
// model's modules cut into pipeline stages, each stage on one device of a
// replica, replicated R times data-parallel, each replica's share of the
// batch run as M micro-batches in the schedule's order
// (docs/torch-plan.md).
type TorchPlan struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Graph   string `json:"graph"`
	// Batch is the graph's global batch (0 = no batch information).
	Batch int `json:"batch"`
	// Devices is one replica's GPUs (the placement's); GPUs is Replicas x
	// Devices.
	Devices int `json:"devices"`
	GPUs    int `json:"gpus"`
	// The strategy: data-parallel replicas R, micro-batches M per replica
	// and the pipeline schedule ("gpipe" or "1f1b"); Shard is "fsdp",
	// "zero2" or absent.
	Replicas     int    `json:"replicas"`
	MicroBatches int    `json:"micro_batches"`
	Schedule     string `json:"schedule"`
	Shard        string `json:"shard,omitempty"`
	// BucketBytes is DDP's gradient bucket (bucket_cap_mb x 2^20) when
	// the strategy sets one (absent: DDP's default, 25 MiB).
	BucketBytes int64 `json:"bucket_bytes,omitempty"`
	// Stages are the pipeline's stages in order.
	Stages []TorchStage `json:"stages"`
	// SplitPoints is the split_spec of torch.distributed.pipelining: the
	// first module of every stage after the first, or its outermost
	// ancestor that starts there -> "BEGINNING".
	SplitPoints map[string]string `json:"split_points"`
	// Joined lists the modules whose parameters an ancestor's forward
	// reads directly (nn.MultiheadAttention's out_proj): each runs with
	// that ancestor, module path -> the ancestor's path.
	Joined map[string]string `json:"joined,omitempty"`
	// Moved lists the units that do not run on the device doing most of
	// their work in the placement, to make the stages contiguous.
	Moved []TorchMove `json:"moved,omitempty"`
	// Shared lists the parameters read on more than one stage (tied
	// weights, a module called again on a later stage): the runner keeps
	// a copy on each of those stages and all-reduces their gradients
	// between them.
	Shared []TorchShared `json:"shared,omitempty"`
}

// TorchShared is a parameter read on several stages, and those stages.
type TorchShared struct {
	Param  string `json:"param"`
	Stages []int  `json:"stages"`
}

// TorchStage is one pipeline stage: its device in the replica and the
// modules that run there, in forward order.
type TorchStage struct {
	Stage   int      `json:"stage"`
	Device  int      `json:"device"`
	Modules []string `json:"modules"`
}

// TorchMove is a unit (a module with the modules joined to it) placed on
// another device than the placement's majority, and why.
type TorchMove struct {
	Module string `json:"module"`
	From   int    `json:"from"`
	To     int    `json:"to"`
	// Share is the fraction of the unit's work (FLOPs + 1 per op) that
	// the placement had on device To.
	Share float64 `json:"share"`
}

// tunit is a unit of the plan: a module that runs as one piece, with the
// modules joined to it.
type tunit struct {
	root    string
	members []string
	first   int // first forward op of any member; MaxInt = never runs
}

// NewTorchPlan derives a torch plan from a placement (one replica's, on
// devices devices) of an exported graph and a strategy.
//
// The unit is a module with its own parameters, buffers or forward ops
// (not the root: its own ops, the loss among them, run where their inputs
// are), together with the modules whose parameters its forward reads
// directly (joined). A unit's work on a device is the FLOPs + 1 of its
// forward and backward ops there, plus 1 per parameter, buffer and
// optimizer op. Units are ordered by their first forward op, and the
// order is cut into contiguous stages, one device each and each device at
// most once, placing as much of the work where the placement put it as
// any such cut can (a dynamic program over the units, the devices used
// and the current device); a unit whose stage is not its majority device
// is listed in Moved. Devices with no unit are left out: the plan may
// have fewer stages than devices.
func NewTorchPlan(g *graph.Graph, meta *TorchMeta, dev []int, devices int, s decision.Strategy) (*TorchPlan, error) {
	r, err := NewRealizer(g, meta)
	if err != nil {
		return nil, err
	}
	return r.Plan(dev, devices, s)
}

// Plan is NewTorchPlan with r's graph and meta file (and r.Stages).
func (r *Realizer) Plan(dev []int, devices int, s decision.Strategy) (*TorchPlan, error) {
	g := r.g
	if err := check(g, dev); err != nil {
		return nil, err
	}
	if err := s.CheckFor(g.Batch(), devices, s.R()*devices); err != nil {
		return nil, fmt.Errorf("export: torch-plan: %w", err)
	}
	stageDev, placed, err := r.fixedCut(dev, devices)
	if err != nil {
		return nil, err
	}
	_, work, err := r.Cut(dev, devices)
	if err != nil {
		return nil, err
	}
	p := &TorchPlan{
		Format: TorchPlanFormat, Version: TorchPlanVersion, Graph: g.Name(), Batch: g.Batch(), Devices: devices, GPUs: s.R() * devices,
		Replicas: s.R(), MicroBatches: s.M(), Schedule: string(s.Sched()), Shard: string(s.Shard),
		BucketBytes: s.BucketBytes, SplitPoints: map[string]string{},
	}
	for i, u := range r.units {
		k := stageDev[i]
		if n := len(p.Stages); n == 0 || p.Stages[n-1].Device != k {
			p.Stages = append(p.Stages, TorchStage{Stage: n, Device: k})
			if n > 0 {
				p.SplitPoints[u.root] = "BEGINNING"
			}
		}
		st := &p.Stages[len(p.Stages)-1]
		st.Modules = append(st.Modules, u.members...)
		w := work[i*devices : (i+1)*devices]
		if best := argmaxF(w); w[k] < w[best] {
			p.Moved = append(p.Moved, TorchMove{Module: u.root, From: best, To: k, Share: w[k] / sum(w)})
		}
	}
	stageOfDev := map[int]int{}
	for _, st := range p.Stages {
		stageOfDev[st.Device] = st.Stage
	}
	p.Shared = r.Shared(placed, stageOfDev)
	p.splitCalls(r.meta, placed, stageOfDev)
	// A split point is the stage's first module, or its outermost
	// ancestor whose modules all run in this stage or later (layers.6
	// rather than layers.6.norm1).
	stageOf := map[string]int{}
	for _, st := range p.Stages {
		for _, m := range st.Modules {
			stageOf[m] = st.Stage
		}
	}
	for first := range p.SplitPoints {
		k, top := stageOf[first], first
		for {
			i := strings.LastIndexByte(top, '.')
			if i < 0 {
				break
			}
			parent, ok := top[:i], true
			for m, j := range stageOf {
				if (m == parent || strings.HasPrefix(m, parent+".")) && j < k {
					ok = false
					break
				}
			}
			if !ok {
				break
			}
			top = parent
		}
		if top != first {
			delete(p.SplitPoints, first)
			p.SplitPoints[top] = "BEGINNING"
		}
	}
	for first := range p.SplitPoints {
		if strings.Contains(first, "#") {
			delete(p.SplitPoints, first) // a call, not a module: no split_spec names it
		}
	}
	for _, u := range r.units {
		for _, m := range u.members {
			if m != u.root {
				if p.Joined == nil {
					p.Joined = map[string]string{}
				}
				p.Joined[m] = u.root
			}
		}
	}
	return p, nil
}

// joinedModules returns, for each module whose parameters are read
// directly by a forward op of a proper ancestor module (other than the
// root), that ancestor: nn.MultiheadAttention's forward reads its
// out_proj's weight and bias itself, so out_proj cannot sit apart from it.
func joinedModules(g *graph.Graph, meta *TorchMeta) map[string]string {
	joined := map[string]string{}
	for i, m := range meta.Ops {
		if m.Phase != "parameter" || m.Module == "" {
			continue
		}
		for _, t := range g.Outputs(i) {
			for _, c := range g.Tensor(int(t)).Consumers {
				cm := meta.Ops[c]
				if cm.Phase != "forward" || cm.Module == "" || !strings.HasPrefix(m.Module, cm.Module+".") {
					continue
				}
				// The nearest such ancestor.
				if old, ok := joined[m.Module]; !ok || len(cm.Module) > len(old) {
					joined[m.Module] = cm.Module
				}
			}
		}
	}
	return joined
}

func argmaxF(v []float64) int {
	best := 0
	for k := range v {
		if v[k] > v[best] {
			best = k
		}
	}
	return best
}

// maxDPDevices bounds the cut's dynamic program (contiguousCut) (its table has
// units x 2^devices x devices entries).
const maxDPDevices = 8

// splitCalls lists, for a module applied several times whose calls run
// on different stages (a reused block with the cut inside its calls),
// each call as "module#k" (its k-th call in a forward, 0-based, as the
// runner reads it) on the stage its forward ops run on, and the module
// itself on none. Each stage's modules stay in forward order: an entry
// sorts by its first forward op (a module without forward ops of its own
// stays after the entry before it). placed is the realized placement.
func (p *TorchPlan) splitCalls(meta *TorchMeta, placed []int, stageOfDev map[int]int) {
	type call struct {
		module string
		k      int
	}
	// A call's first forward op, and its stage: the latest of its ops'
	// (an op reading only the module's parameters, a weight's transpose,
	// stays on the module's first stage in the realized placement; the
	// runner runs the whole call where its inputs are).
	first, stageOfCall := map[call]int{}, map[call]int{}
	for i, op := range meta.Ops {
		if op.Phase != "forward" || op.Module == "" || i >= len(placed) {
			continue
		}
		c := call{op.Module, op.Call}
		if _, ok := first[c]; !ok {
			first[c] = i
		}
		stageOfCall[c] = max(stageOfCall[c], stageOfDev[placed[i]])
	}
	stages := map[string]map[int]bool{}
	for c, s := range stageOfCall {
		if stages[c.module] == nil {
			stages[c.module] = map[int]bool{}
		}
		stages[c.module][s] = true
	}
	split := map[string]bool{}
	for m, st := range stages {
		if len(st) > 1 {
			split[m] = true
		}
	}
	if len(split) == 0 {
		return
	}
	type entry struct {
		name string
		key  int
	}
	lists := make([][]entry, len(p.Stages))
	firstOf := func(m string) (int, bool) {
		best, ok := 0, false
		for c, i := range first {
			if c.module == m && (!ok || i < best) {
				best, ok = i, true
			}
		}
		return best, ok
	}
	for s, st := range p.Stages {
		key := -1
		for _, m := range st.Modules {
			if split[m] {
				continue
			}
			if i, ok := firstOf(m); ok {
				key = i
			}
			lists[s] = append(lists[s], entry{m, key})
		}
	}
	for c, i := range first {
		if split[c.module] {
			s := stageOfCall[c]
			lists[s] = append(lists[s], entry{c.module + "#" + strconv.Itoa(c.k), i})
		}
	}
	for s := range p.Stages {
		l := lists[s]
		sort.SliceStable(l, func(a, b int) bool { return l[a].key < l[b].key })
		p.Stages[s].Modules = p.Stages[s].Modules[:0]
		for _, e := range l {
			p.Stages[s].Modules = append(p.Stages[s].Modules, e.name)
		}
	}
}
