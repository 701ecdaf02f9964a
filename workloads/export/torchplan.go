package export

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// TorchPlan is the TorchPlanFormat plan tools/torchplan runs: a PyTorch
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
	// and the pipeline schedule ("gpipe" or "1f1b"); Shard is "fsdp" or
	// absent.
	Replicas     int    `json:"replicas"`
	MicroBatches int    `json:"micro_batches"`
	Schedule     string `json:"schedule"`
	Shard        string `json:"shard,omitempty"`
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
	first   int       // first forward op of any member (or of a reader of its parameters); MaxInt = never runs
	work    []float64 // per device: FLOPs + 1 of its forward and backward ops, 1 per state op
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
	if err := check(g, dev); err != nil {
		return nil, err
	}
	if len(meta.Ops) != g.NumOps() {
		return nil, fmt.Errorf("export: meta file has %d ops, graph %s has %d", len(meta.Ops), g.Name(), g.NumOps())
	}
	for i, k := range dev {
		if k >= devices {
			return nil, fmt.Errorf("export: op %d (%s): device %d out of range [0, %d)", i, g.Op(i).Name, k, devices)
		}
	}
	if err := s.CheckFor(g.Batch(), devices, s.R()*devices); err != nil {
		return nil, fmt.Errorf("export: torch-plan: %w", err)
	}
	joined := joinedModules(g, meta)
	unitOf := func(path string) string {
		for {
			p, ok := joined[path]
			if !ok {
				return path
			}
			path = p
		}
	}
	units := map[string]*tunit{}
	get := func(root string) *tunit {
		u := units[root]
		if u == nil {
			u = &tunit{root: root, first: math.MaxInt, work: make([]float64, devices)}
			units[root] = u
		}
		return u
	}
	members := map[string]bool{}
	for i, m := range meta.Ops {
		if m.Module == "" {
			continue
		}
		root := unitOf(m.Module)
		if root == "" {
			continue
		}
		op := g.Op(i)
		switch m.Phase {
		case "forward":
			u := get(root)
			u.work[dev[i]] += op.FLOPs + 1
			u.first = min(u.first, i)
			// A module joined to another runs when its reader's first
			// forward op does; its own entry in the plan too.
		case "backward":
			get(root).work[dev[i]] += op.FLOPs + 1
		case "parameter", "buffer", "optimizer":
			get(root).work[dev[i]]++
		default:
			continue
		}
		if !members[m.Module] {
			members[m.Module] = true
			u := get(root)
			u.members = append(u.members, m.Module)
		}
	}
	order := make([]*tunit, 0, len(units))
	for _, u := range units {
		sort.Slice(u.members, func(a, b int) bool {
			if (u.members[a] == u.root) != (u.members[b] == u.root) {
				return u.members[a] == u.root
			}
			return u.members[a] < u.members[b]
		})
		order = append(order, u)
	}
	sort.Slice(order, func(a, b int) bool {
		if order[a].first != order[b].first {
			return order[a].first < order[b].first
		}
		return order[a].root < order[b].root
	})
	if len(order) == 0 {
		return nil, fmt.Errorf("export: torch-plan: graph %s has no module with parameters or forward ops (is its meta file from tools/torchexport?)", g.Name())
	}
	stageDev := contiguousStages(order, devices)
	p := &TorchPlan{
		Format: TorchPlanFormat, Version: TorchPlanVersion, Graph: g.Name(), Batch: g.Batch(), Devices: devices, GPUs: s.R() * devices,
		Replicas: s.R(), MicroBatches: s.M(), Schedule: string(s.Sched()), Shard: string(s.Shard),
		SplitPoints: map[string]string{},
	}
	for i, u := range order {
		k := stageDev[i]
		if n := len(p.Stages); n == 0 || p.Stages[n-1].Device != k {
			p.Stages = append(p.Stages, TorchStage{Stage: n, Device: k})
			if n > 0 {
				p.SplitPoints[u.root] = "BEGINNING"
			}
		}
		st := &p.Stages[len(p.Stages)-1]
		st.Modules = append(st.Modules, u.members...)
		if best := argmaxF(u.work); u.work[k] < u.work[best] {
			p.Moved = append(p.Moved, TorchMove{Module: u.root, From: best, To: k, Share: u.work[k] / sum(u.work)})
		}
	}
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
	for m := range members {
		if r := unitOf(m); r != m {
			if p.Joined == nil {
				p.Joined = map[string]string{}
			}
			p.Joined[m] = r
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

// contiguousStages assigns each unit (in forward order) a device so that
// each device's units form one run, maximising the work kept where the
// placement put it; ties keep fewer stages, then lower devices.
// Above maxDPDevices devices per replica the table would be too large:
// each unit goes to its majority device unless that device's run is over,
// then it stays on the current one.
func contiguousStages(order []*tunit, devices int) []int {
	if devices > maxDPDevices {
		return greedyStages(order)
	}
	n, full := len(order), 1<<devices
	// best[i][mask*devices+k]: the most work kept by units i.. given the
	// devices used so far (mask) and the current device k (in mask).
	const none = -1.0
	best := make([][]float64, n+1)
	for i := range best {
		best[i] = make([]float64, full*devices)
	}
	for i := n - 1; i >= 0; i-- {
		w := order[i].work
		for mask := 1; mask < full; mask++ {
			for k := 0; k < devices; k++ {
				if mask&(1<<k) == 0 {
					best[i][mask*devices+k] = none
					continue
				}
				v := w[k] + best[i+1][mask*devices+k]
				for j := 0; j < devices; j++ {
					if mask&(1<<j) == 0 {
						if x := w[j] + best[i+1][(mask|1<<j)*devices+j]; x > v {
							v = x
						}
					}
				}
				best[i][mask*devices+k] = v
			}
		}
	}
	out := make([]int, n)
	mask, k := 0, -1
	for i := 0; i < n; i++ {
		w := order[i].work
		pick, v := -1, none
		if k >= 0 {
			pick, v = k, w[k]+best[i+1][mask*devices+k]
		}
		for j := 0; j < devices; j++ {
			if mask&(1<<j) == 0 {
				if x := w[j] + best[i+1][(mask|1<<j)*devices+j]; x > v {
					pick, v = j, x
				}
			}
		}
		k = pick
		mask |= 1 << k
		out[i] = k
	}
	return out
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

// maxDPDevices bounds contiguousStages' dynamic program (its table has
// units x 2^devices x devices entries).
const maxDPDevices = 8

func greedyStages(order []*tunit) []int {
	out := make([]int, len(order))
	used := map[int]bool{}
	k := -1
	for i, u := range order {
		if j := argmaxF(u.work); j != k && !used[j] {
			k = j
			used[k] = true
		}
		out[i] = k
	}
	return out
}
