package export

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// Realizer turns any decision for a graph exported from PyTorch into the
// decision its torch plan executes (DESIGN §10: what PyTorch runs bounds
// the decision). PyTorch eager runs a module's ops on one device, one
// stream, in program order; across GPUs it runs contiguous module-level
// stages. Realize cuts the decision's placement into the plan's stages
// (NewTorchPlan's cut: units in forward order, contiguous, as much work
// kept where the placement put it as any such cut can), puts every op of
// a unit on its stage's device, orders every device's ops by program order
// (the graph's op order) and drops fusion; the strategy (replicas,
// micro-batches, schedule, sharding) is kept, since the plan runs it as
// it is. Realizing a realized decision changes nothing (the cut of a
// placement whose every unit is on one device keeps all the work: no
// other contiguous cut does).
//
// A Realizer is read-only after NewRealizer and safe for concurrent use.
type Realizer struct {
	g    *graph.Graph
	meta *TorchMeta
	// units in forward order (the order NewTorchPlan cuts).
	units []*tunit
	// unit is each op's unit (index into units), -1 for the root's ops.
	unit []int
	// phase is each op's phase; weight its work in the cut (FLOPs + 1 for
	// forward and backward ops, 1 for parameter, buffer and optimizer ops
	// of a unit, 0 for the rest).
	phase  []string
	weight []float64
	// joined maps a joined module to its unit's root.
	joined map[string]string
	// container says which units run no module call of their own on a
	// stage of their own (Cut): units with other units' modules inside
	// them, and units the forward never calls (parameters only: T5's
	// shared embedding, called as the encoder's and decoder's).
	container []bool
	// Stages, when positive, asks for exactly that many stages (fewer
	// when the replica has fewer devices or the graph fewer units); 0 =
	// as many as the cut keeps.
	Stages int

	scratch sync.Pool // *cutScratch
}

// Meta is the exporter's meta file the realizer cuts by.
func (r *Realizer) Meta() *TorchMeta { return r.meta }

// NewRealizer prepares the realization of decisions for g, whose meta
// file (tools/dev/torchexport's) is meta.
func NewRealizer(g *graph.Graph, meta *TorchMeta) (*Realizer, error) {
	if len(meta.Ops) != g.NumOps() {
		return nil, fmt.Errorf("export: meta file has %d ops, graph %s has %d", len(meta.Ops), g.Name(), g.NumOps())
	}
	r := &Realizer{g: g, meta: meta, unit: make([]int, g.NumOps()), phase: make([]string, g.NumOps()), weight: make([]float64, g.NumOps())}
	r.joined = joinedModules(g, meta)
	unitOf := func(path string) string {
		for {
			p, ok := r.joined[path]
			if !ok {
				return path
			}
			path = p
		}
	}
	byRoot := map[string]*tunit{}
	rootOf := make([]string, g.NumOps())
	members := map[string]bool{}
	for i, m := range meta.Ops {
		r.phase[i] = m.Phase
		if m.Module == "" {
			continue
		}
		root := unitOf(m.Module)
		if root == "" {
			continue
		}
		op := g.Op(i)
		switch m.Phase {
		case "forward", "backward":
			r.weight[i] = op.FLOPs + 1
		case "parameter", "buffer", "optimizer":
			r.weight[i] = 1
		default:
			continue
		}
		rootOf[i] = root
		u := byRoot[root]
		if u == nil {
			u = &tunit{root: root, first: math.MaxInt}
			byRoot[root] = u
		}
		if m.Phase == "forward" {
			u.first = min(u.first, i)
		}
		if !members[m.Module] {
			members[m.Module] = true
			u.members = append(u.members, m.Module)
		}
	}
	for _, u := range byRoot {
		sort.Slice(u.members, func(a, b int) bool {
			if (u.members[a] == u.root) != (u.members[b] == u.root) {
				return u.members[a] == u.root
			}
			return u.members[a] < u.members[b]
		})
		r.units = append(r.units, u)
	}
	sort.Slice(r.units, func(a, b int) bool {
		if r.units[a].first != r.units[b].first {
			return r.units[a].first < r.units[b].first
		}
		return r.units[a].root < r.units[b].root
	})
	if len(r.units) == 0 {
		return nil, fmt.Errorf("export: torch-plan: graph %s has no module with parameters or forward ops (is its meta file from tools/dev/torchexport?)", g.Name())
	}
	index := map[string]int{}
	for k, u := range r.units {
		index[u.root] = k
	}
	r.container = make([]bool, len(r.units))
	for k, u := range r.units {
		if u.first == math.MaxInt {
			r.container[k] = true
			continue
		}
		for _, v := range r.units {
			if strings.HasPrefix(v.root, u.root+".") {
				r.container[k] = true
				break
			}
		}
	}
	for i := range r.unit {
		r.unit[i] = -1
		if rootOf[i] != "" {
			r.unit[i] = index[rootOf[i]]
		}
	}
	return r, nil
}

// cutScratch is one cut's buffers.
type cutScratch struct {
	best   []float64 // (units+1) x 2^devices x devices
	merged []float64 // runs of units x devices
	start  []int     // each run's first unit
}

// Cut assigns each unit (in forward order, Units) a device of a replica
// of devices devices: contiguous runs, each device at most once, the most
// work kept where dev put it (ties: fewer stages, then lower devices).
// work is each unit's work per device, units x devices.
//
// A stage whose units are all containers (modules with other units inside
// them, whose own ops are glue such as GPT-2's position ids) or never
// called (a module whose parameters only are read, under other names: T5's
// shared embedding) is not one the runner can run: it calls no module of
// its own. Such a run of units joins the next stage (the last stage's,
// the one before), so a cut never ends with one.
func (r *Realizer) Cut(dev []int, devices int) (stageDev []int, work []float64, err error) {
	stageDev, work, err = r.cut(dev, devices)
	if err != nil {
		return nil, nil, err
	}
	r.absorbContainers(stageDev)
	return stageDev, work, nil
}

// absorbContainers gives every run of stageDev made of container units
// alone the device of the run after it (of the run before it, for the
// last run), a run that then holds containers alone joining on.
func (r *Realizer) absorbContainers(stageDev []int) {
	type run struct{ start, end int }
	var runs []run
	for i := 0; i < len(stageDev); {
		j := i
		for j < len(stageDev) && stageDev[j] == stageDev[i] {
			j++
		}
		runs = append(runs, run{i, j})
		i = j
	}
	only := func(u run) bool {
		for k := u.start; k < u.end; k++ {
			if !r.container[k] {
				return false
			}
		}
		return true
	}
	set := func(u run, d int) {
		for k := u.start; k < u.end; k++ {
			stageDev[k] = d
		}
	}
	// The last runs first: containers alone at the end join the run
	// before them, until that run holds a unit of its own.
	for len(runs) > 1 && only(runs[len(runs)-1]) {
		last, prev := runs[len(runs)-1], runs[len(runs)-2]
		set(last, stageDev[prev.start])
		runs = runs[:len(runs)-1]
		runs[len(runs)-1].end = last.end
	}
	// Then right to left: each run of containers alone takes the device
	// of the run after it, which by now holds a unit of its own.
	for i := len(runs) - 2; i >= 0; i-- {
		if only(runs[i]) {
			set(runs[i], stageDev[runs[i+1].start])
			runs[i].end = runs[i+1].end
			runs = append(runs[:i+1], runs[i+2:]...)
		}
	}
}

func (r *Realizer) cut(dev []int, devices int) (stageDev []int, work []float64, err error) {
	if err := check(r.g, dev); err != nil {
		return nil, nil, err
	}
	for i, k := range dev {
		if k >= devices {
			return nil, nil, fmt.Errorf("export: op %d (%s): device %d out of range [0, %d)", i, r.g.Op(i).Name, k, devices)
		}
	}
	n := len(r.units)
	stages := r.Stages
	if stages > 0 {
		stages = min(stages, devices, n)
	}
	work = make([]float64, n*devices)
	for i, u := range r.unit {
		if u >= 0 {
			work[u*devices+dev[i]] += r.weight[i]
		}
	}
	if devices > maxDPDevices {
		return greedyCut(work, n, devices), work, nil
	}
	sc, _ := r.scratch.Get().(*cutScratch)
	if sc == nil {
		sc = &cutScratch{}
	}
	defer r.scratch.Put(sc)
	if stages > 0 {
		return contiguousCut(work, n, devices, stages, &sc.best), work, nil
	}
	// Consecutive units whose work is all on one device, the same, share
	// a device in some best cut (moving the boundary between them to
	// either side keeps the runs contiguous and loses nothing, since the
	// one on its device keeps its work): the program cuts their runs as
	// one unit. A placement that is nearly a pipeline (a search's move
	// away from a realized one) has few such runs.
	pure := func(i int) int {
		k := -1
		for j, w := range work[i*devices : (i+1)*devices] {
			if w != 0 {
				if k >= 0 {
					return -1
				}
				k = j
			}
		}
		return k
	}
	start := sc.start[:0]
	sc.merged = sc.merged[:0]
	for i := 0; i < n; i++ {
		if k := pure(i); i > 0 && k >= 0 && k == pure(i-1) {
			sc.merged[(len(start)-1)*devices+k] += work[i*devices+k]
			continue
		}
		start = append(start, i)
		sc.merged = append(sc.merged, work[i*devices:(i+1)*devices]...)
	}
	sc.start = start
	m := len(start)
	if m == n {
		return contiguousCut(work, n, devices, 0, &sc.best), work, nil
	}
	cut := contiguousCut(sc.merged, m, devices, 0, &sc.best)
	out := make([]int, n)
	for g := range m {
		end := n
		if g+1 < m {
			end = start[g+1]
		}
		for i := start[g]; i < end; i++ {
			out[i] = cut[g]
		}
	}
	return out, work, nil
}

// Units are the plan's units in forward order: each unit's root module.
func (r *Realizer) Units() []string {
	out := make([]string, len(r.units))
	for k, u := range r.units {
		out[k] = u.root
	}
	return out
}

// Realize returns the decision the torch plan of d executes (see
// Realizer): d's placement cut into contiguous stages of units, on a
// replica of devices devices (the cluster's GPUs / d's replicas).
//
// Each op of a unit runs on its unit's stage, except the forward and
// backward ops of a module called again after a later stage (a reused
// block): as the runner does, an op never runs on a stage before one its
// forward inputs came from, so such a call runs on the latest stage of
// its forward inputs, and reads the module's parameters there (the plan
// lists them in Shared). An op of the root module (the loss, glue between
// modules) runs on the latest stage of its forward inputs (of any input,
// for a backward op without forward inputs; the first stage when none);
// the root's inputs and parameters, available on every rank, are costed
// on their first consumer's device; the ops of a co-location group (a
// module's parameters and their in-place updates) run where its first
// op does. Priorities are program order (the
// graph's op order), fusion none, transfer priorities none.
func (r *Realizer) Realize(d decision.Decision, devices int) (decision.Decision, error) {
	_, dev, err := r.fixedCut(d.Device, devices)
	if err != nil {
		return decision.Decision{}, err
	}
	return decision.Decision{Device: dev, Priority: ProgramOrder(r.g), Strategy: d.Strategy}, nil
}

// maxRecuts bounds fixedCut's rounds.
const maxRecuts = 8

// fixedCut is the cut of placement dev and the realized placement: the
// cut's, re-cut until the cut of the realized placement is the cut
// itself, so that realizing a realized decision changes nothing. Only a
// reused module moves ops off its unit's stage (a later call on a later
// stage); when its later calls outweigh its first, the realized
// placement's cut differs, and one more round settles it.
func (r *Realizer) fixedCut(dev []int, devices int) (stageDev, placed []int, err error) {
	stageDev, _, err = r.Cut(dev, devices)
	if err != nil {
		return nil, nil, err
	}
	for range maxRecuts {
		var moved bool
		placed, moved = r.place(stageDev, r.stageIndex(stageDev, devices))
		if !moved {
			return stageDev, placed, nil
		}
		again, _, err := r.Cut(placed, devices)
		if err != nil {
			return nil, nil, err
		}
		if slices.Equal(again, stageDev) {
			return stageDev, placed, nil
		}
		stageDev = again
	}
	return stageDev, placed, nil
}

// stageIndex is each unit's stage number (the runs of stageDev, in order).
func (r *Realizer) stageIndex(stageDev []int, devices int) []int {
	stage := make([]int, len(stageDev))
	s := 0
	for k := range stageDev {
		if k > 0 && stageDev[k] != stageDev[k-1] {
			s++
		}
		stage[k] = s
	}
	return stage
}

// place gives every op its device: see Realize. stageDev and stage are
// each unit's device and stage number. moved says whether an op of a unit
// runs on another stage than its unit's (a reused module's later call).
func (r *Realizer) place(stageDev, stage []int) (dev []int, moved bool) {
	g, n := r.g, r.g.NumOps()
	last := stage[len(stage)-1]
	devOf := make([]int, last+1)
	for k, s := range stage {
		devOf[s] = stageDev[k]
	}
	opStage := make([]int, n)
	for i := range opStage {
		opStage[i] = -1
	}
	// The latest stage of op i's inputs produced by ops in phases keep
	// (already placed), -1 when none.
	latest := func(i int, keep func(string) bool) int {
		s := -1
		for _, t := range g.Inputs(i) {
			p := g.Tensor(int(t)).Producer
			if opStage[p] >= 0 && keep(r.phase[p]) {
				s = max(s, opStage[p])
			}
		}
		return s
	}
	isForward := func(ph string) bool { return ph == "forward" }
	anyPhase := func(string) bool { return true }
	// 1. A unit's state ops on its stage.
	for i, u := range r.unit {
		if u >= 0 && r.phase[i] != "forward" && r.phase[i] != "backward" {
			opStage[i] = stage[u]
		}
	}
	// 2. Forward and backward ops in program order.
	for i, u := range r.unit {
		ph := r.phase[i]
		if ph != "forward" && ph != "backward" {
			continue
		}
		s := latest(i, isForward)
		if u >= 0 {
			moved = moved || s > stage[u]
			s = max(s, stage[u])
		} else if s < 0 && ph == "backward" {
			s = latest(i, anyPhase)
		}
		opStage[i] = max(s, 0)
	}
	// 3. The root's inputs, parameters and buffers: on their first
	// consumer's stage.
	for i, u := range r.unit {
		if u >= 0 || opStage[i] >= 0 {
			continue
		}
		if ph := r.phase[i]; ph != "input" && ph != "parameter" && ph != "buffer" {
			continue
		}
		first := math.MaxInt
		for _, t := range g.Outputs(i) {
			for _, c := range g.Tensor(int(t)).Consumers {
				if opStage[c] >= 0 && int(c) < first {
					first = int(c)
				}
			}
		}
		opStage[i] = 0
		if first < math.MaxInt {
			opStage[i] = opStage[first]
		}
	}
	// 4. The rest (the root's optimizer ops): the latest stage of their
	// inputs.
	for i := range opStage {
		if opStage[i] < 0 {
			opStage[i] = max(latest(i, anyPhase), 0)
		}
	}
	// 5. A co-location group (a module's parameters and their in-place
	// optimizer updates) lives where its first op does.
	first := make([]int, g.NumColocationGroups())
	for k := range first {
		first[k] = -1
	}
	for i := range opStage {
		if k := g.Colocation(i); k >= 0 {
			if first[k] < 0 {
				first[k] = i
			}
			opStage[i] = opStage[first[k]]
		}
	}
	dev = make([]int, n)
	for i, s := range opStage {
		dev[i] = devOf[s]
	}
	return dev, moved
}

// ProgramOrder is the priority of each op of g by program order: the op
// earlier in the graph's order runs first among ready ops (PyTorch eager:
// one stream, ops in the order the program issues them).
func ProgramOrder(g *graph.Graph) []int {
	n := g.NumOps()
	p := make([]int, n)
	for i := range p {
		p[i] = n - i
	}
	return p
}

// Shared lists the parameters read on more than one stage of the
// realized placement dev (tied or reused parameters: the runner keeps
// them on every such stage and all-reduces their gradients between
// those stages), in parameter order.
func (r *Realizer) Shared(dev []int, stageOfDev map[int]int) []TorchShared {
	var out []TorchShared
	for i, m := range r.meta.Ops {
		if m.Phase != "parameter" {
			continue
		}
		seen := map[int]bool{stageOfDev[dev[i]]: true}
		for _, t := range r.g.Outputs(i) {
			for _, c := range r.g.Tensor(int(t)).Consumers {
				if r.phase[c] == "forward" {
					seen[stageOfDev[dev[c]]] = true
				}
			}
		}
		if len(seen) < 2 {
			continue
		}
		name := m.Param
		if name == "" {
			name = strings.TrimPrefix(m.Name, "param:")
		}
		st := make([]int, 0, len(seen))
		for s := range seen {
			st = append(st, s)
		}
		sort.Ints(st)
		out = append(out, TorchShared{Param: name, Stages: st})
	}
	return out
}

// contiguousCut is the dynamic program of contiguousStages over a work
// table (n units x devices); stages > 0 asks for exactly that many runs.
// best is reused between calls.
func contiguousCut(work []float64, n, devices, stages int, best *[]float64) []int {
	full := 1 << devices
	width := full * devices
	if cap(*best) < (n+1)*width {
		*best = make([]float64, (n+1)*width)
	}
	b := (*best)[:(n+1)*width]
	const none = -1.0
	forbid := math.Inf(-1)
	// The end: any set of devices used, or exactly stages of them.
	for mask := 0; mask < full; mask++ {
		for k := 0; k < devices; k++ {
			v := 0.0
			if mask&(1<<k) == 0 {
				v = none
			} else if stages > 0 && bits.OnesCount(uint(mask)) != stages {
				v = forbid
			}
			b[n*width+mask*devices+k] = v
		}
	}
	for i := n - 1; i >= 0; i-- {
		w := work[i*devices : (i+1)*devices]
		row, next := b[i*width:(i+1)*width], b[(i+1)*width:(i+2)*width]
		for mask := 1; mask < full; mask++ {
			// The best with a new device opened for unit i does not
			// depend on the current device.
			open := math.Inf(-1)
			for j := 0; j < devices; j++ {
				if mask&(1<<j) == 0 {
					open = max(open, w[j]+next[(mask|1<<j)*devices+j])
				}
			}
			for k := 0; k < devices; k++ {
				if mask&(1<<k) == 0 {
					row[mask*devices+k] = none
					continue
				}
				row[mask*devices+k] = max(w[k]+next[mask*devices+k], open)
			}
		}
	}
	out := make([]int, n)
	mask, k := 0, -1
	for i := 0; i < n; i++ {
		w := work[i*devices : (i+1)*devices]
		next := b[(i+1)*width : (i+2)*width]
		pick, v := -1, math.Inf(-1)
		if k >= 0 {
			pick, v = k, w[k]+next[mask*devices+k]
		}
		for j := 0; j < devices; j++ {
			if mask&(1<<j) == 0 {
				if x := w[j] + next[(mask|1<<j)*devices+j]; x > v || pick < 0 {
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

// greedyCut is greedyStages over a work table: each unit goes to its
// majority device unless that device's run is over, then it stays on the
// current one.
func greedyCut(work []float64, n, devices int) []int {
	out := make([]int, n)
	used := map[int]bool{}
	k := -1
	for i := 0; i < n; i++ {
		if j := argmaxF(work[i*devices : (i+1)*devices]); j != k && !used[j] {
			k = j
			used[k] = true
		}
		out[i] = k
	}
	return out
}

// Decision reads plan p (a torch plan of r's graph) back into the
// decision it executes: each unit on its stage's device, the ops placed
// as Realize places them, program order, no fusion, the plan's strategy.
// For a plan NewTorchPlan wrote from a placement, it is Realize's
// decision of that placement.
func (r *Realizer) Decision(p *TorchPlan) (decision.Decision, error) {
	stageOf := map[string]int{}
	for _, st := range p.Stages {
		if st.Device < 0 || st.Device >= p.Devices {
			return decision.Decision{}, fmt.Errorf("export: torch-plan: stage %d: device %d out of range [0, %d)", st.Stage, st.Device, p.Devices)
		}
		for _, m := range st.Modules {
			// A module's k-th call ("m#k"): its first call's stage is the
			// module's; the later calls' follow their inputs (place).
			name, call, found := strings.Cut(m, "#")
			if found {
				if k, err := strconv.Atoi(call); err != nil || k < 0 {
					return decision.Decision{}, fmt.Errorf("export: torch-plan: stage %d: module %q: want NAME or NAME#CALL with CALL a number from 0", st.Stage, m)
				} else if k > 0 {
					continue
				}
			}
			stageOf[name] = st.Stage
		}
	}
	stageDev := make([]int, len(r.units))
	stage := make([]int, len(r.units))
	for k, u := range r.units {
		s, ok := stageOf[u.root]
		if !ok || s < 0 || s >= len(p.Stages) {
			return decision.Decision{}, fmt.Errorf("export: torch-plan: module %s is in no stage of the plan", u.root)
		}
		if k > 0 && s < stage[k-1] {
			return decision.Decision{}, fmt.Errorf("export: torch-plan: module %s is on stage %d, after a module of stage %d: stages must be contiguous in forward order", u.root, s, stage[k-1])
		}
		stage[k], stageDev[k] = s, p.Stages[s].Device
	}
	s := decision.Strategy{Replicas: p.Replicas, MicroBatches: p.MicroBatches, Shard: decision.Shard(p.Shard), BucketBytes: p.BucketBytes}
	if s.M() > 1 {
		s.Schedule = decision.Schedule(p.Schedule)
	}
	if s.Replicas == 1 {
		s.Replicas = 0
	}
	if s.MicroBatches == 1 {
		s.MicroBatches = 0
	}
	dev, _ := r.place(stageDev, r.stageIndex(stageDev, p.Devices))
	return decision.Decision{Device: dev, Priority: ProgramOrder(r.g), Strategy: s}, nil
}
