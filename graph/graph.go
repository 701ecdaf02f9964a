package graph

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/placer/placer/internal/heap"
)

// Graph is a validated, read-only computation graph. Build one with a
// Builder or read one with Read; do not modify the slices it returns.
type Graph struct {
	name    string
	batch   int        // examples per step; 0 = no batch information
	exec    *Execution // how the framework runs the step; nil = not said
	ops     []Op
	tensors []Tensor
	control []Edge

	index nameIndex // op name -> index

	// CSR adjacency, all int32 to keep them compact.
	outStart, outs   []int32 // op -> tensors it produces
	inStart, ins     []int32 // op -> tensors it consumes
	predStart, preds []int32 // op -> distinct predecessor ops (data and control)
	succStart, succs []int32 // op -> distinct successor ops (data and control)
	cinStart, cins   []int32 // op -> control predecessors
	coutStart, couts []int32 // op -> control successors

	topo    []int32 // ops in topological order (ties by index)
	topoPos []int32 // op -> position in topo

	coloc      []int32 // op -> co-location group id, -1 = none
	colocNames []string
}

// Name is the graph's name.
func (g *Graph) Name() string { return g.name }

// Batch is the number of examples (the batch size) of the step the graph
// computes, or 0 when the graph has no batch information: then no tensor
// says which of its dimensions is the batch, and AtBatch refuses it.
func (g *Graph) Batch() int { return g.batch }

// NumOps is the number of ops.
func (g *Graph) NumOps() int { return len(g.ops) }

// NumTensors is the number of tensors.
func (g *Graph) NumTensors() int { return len(g.tensors) }

// Ops returns all ops, indexed by op id. Read-only.
func (g *Graph) Ops() []Op { return g.ops }

// Op returns op i. Read-only.
func (g *Graph) Op(i int) *Op { return &g.ops[i] }

// Tensors returns all tensors, indexed by tensor id. Read-only.
func (g *Graph) Tensors() []Tensor { return g.tensors }

// Tensor returns tensor t. Read-only.
func (g *Graph) Tensor(t int) *Tensor { return &g.tensors[t] }

// Control returns the control edges. Read-only.
func (g *Graph) Control() []Edge { return g.control }

// Lookup returns the index of the op named name.
func (g *Graph) Lookup(name string) (int, bool) {
	return g.index.lookup(g.ops, name)
}

// Outputs returns the tensors op i produces.
func (g *Graph) Outputs(i int) []int32 { return g.outs[g.outStart[i]:g.outStart[i+1]] }

// Inputs returns the tensors op i consumes.
func (g *Graph) Inputs(i int) []int32 { return g.ins[g.inStart[i]:g.inStart[i+1]] }

// Preds returns the distinct ops op i depends on, through tensors or control edges.
func (g *Graph) Preds(i int) []int32 { return g.preds[g.predStart[i]:g.predStart[i+1]] }

// Succs returns the distinct ops that depend on op i, through tensors or control edges.
func (g *Graph) Succs(i int) []int32 { return g.succs[g.succStart[i]:g.succStart[i+1]] }

// ControlPreds returns the ops with a control edge into op i.
func (g *Graph) ControlPreds(i int) []int32 { return g.cins[g.cinStart[i]:g.cinStart[i+1]] }

// ControlSuccs returns the ops with a control edge out of op i.
func (g *Graph) ControlSuccs(i int) []int32 { return g.couts[g.coutStart[i]:g.coutStart[i+1]] }

// Topo returns the ops in topological order; among ops whose predecessors
// are all placed, the lowest index comes first.
func (g *Graph) Topo() []int32 { return g.topo }

// TopoIndex returns op i's position in Topo.
func (g *Graph) TopoIndex(i int) int { return int(g.topoPos[i]) }

// Colocation returns op i's co-location group id, or -1.
func (g *Graph) Colocation(i int) int { return int(g.coloc[i]) }

// NumColocationGroups is the number of distinct co-location groups.
func (g *Graph) NumColocationGroups() int { return len(g.colocNames) }

// ColocationName returns the name of co-location group id.
func (g *Graph) ColocationName(id int) string { return g.colocNames[id] }

// NumEdges is the number of distinct op -> op dependencies (data and control).
func (g *Graph) NumEdges() int { return len(g.succs) }

// Builder assembles a Graph. The zero value is not usable; call NewBuilder.
type Builder struct {
	g    Graph
	errs []error
}

// NewBuilder starts a graph called name.
func NewBuilder(name string) *Builder {
	return &Builder{g: Graph{name: name}}
}

// AddOp adds an op and returns its index. A duplicate name is reported by Build.
func (b *Builder) AddOp(op Op) int {
	i := len(b.g.ops)
	b.g.ops = append(b.g.ops, op)
	if b.g.index.add(b.g.ops, i) {
		b.errs = append(b.errs, &Error{Op: op.Name, Msg: "duplicate op name"})
	}
	return i
}

// Op returns op i for adjustment before Build (all but its name, which
// Lookup goes by).
func (b *Builder) Op(i int) *Op { return &b.g.ops[i] }

// Lookup returns the index of the op named name, added so far.
func (b *Builder) Lookup(name string) (int, bool) {
	return b.g.index.lookup(b.g.ops, name)
}

// SetBatch says that the graph computes a step of batch examples (0 = no
// batch information, the default). With a batch, each tensor's BatchDim
// and each op's Fixed* parts say what scales with it.
func (b *Builder) SetBatch(batch int) { b.g.batch = batch }

// AddTensor adds a tensor of the given size produced by producer and
// consumed by consumers, without a batch dimension, and returns its index.
func (b *Builder) AddTensor(producer int, bytes int64, consumers ...int) int {
	return b.AddTensorFull(Tensor{Producer: producer, Bytes: bytes, Consumers: append([]int(nil), consumers...), BatchDim: NoBatch})
}

// Tensor returns tensor t for adjustment before Build.
func (b *Builder) Tensor(t int) *Tensor { return &b.g.tensors[t] }

// AddTensorFull adds a fully specified tensor and returns its index.
func (b *Builder) AddTensorFull(t Tensor) int {
	b.g.tensors = append(b.g.tensors, t)
	return len(b.g.tensors) - 1
}

// Consume adds op c as a consumer of tensor t.
func (b *Builder) Consume(t, c int) {
	b.g.tensors[t].Consumers = append(b.g.tensors[t].Consumers, c)
}

// AddControl adds a control edge from -> to.
func (b *Builder) AddControl(from, to int) {
	b.g.control = append(b.g.control, Edge{From: from, To: to})
}

// Build validates the graph and returns it. The Builder must not be used
// afterwards.
func (b *Builder) Build() (*Graph, error) {
	if len(b.errs) > 0 {
		return nil, b.errs[0]
	}
	g := new(Graph)
	*g = b.g
	b.g = Graph{}
	if err := g.validate(); err != nil {
		return nil, err
	}
	if g.batch == 0 {
		for t := range g.tensors {
			g.tensors[t].BatchDim = NoBatch
		}
	}
	g.buildAdjacency()
	if err := g.buildTopo(); err != nil {
		return nil, err
	}
	g.buildColocation()
	g.deriveKernels()
	return g, nil
}

// Error is a problem with one op, tensor or edge of a graph.
type Error struct {
	Op     string // op name, if the problem is an op's
	Tensor int    // tensor index, if the problem is a tensor's; -1 otherwise
	Field  string // the offending field, if any
	Msg    string
}

func (e *Error) Error() string {
	parts := []string{"graph"}
	switch {
	case e.Op != "":
		parts = append(parts, fmt.Sprintf("op %q", e.Op))
	case e.Tensor >= 0:
		parts = append(parts, fmt.Sprintf("tensor %d", e.Tensor))
	}
	if e.Field != "" {
		parts = append(parts, e.Field)
	}
	return strings.Join(append(parts, e.Msg), ": ")
}

// CycleError reports a dependency cycle; Ops names the ops on it in order.
type CycleError struct {
	Ops []string
}

func (e *CycleError) Error() string {
	ops := e.Ops
	const max = 8
	suffix := ""
	if len(ops) > max {
		suffix = fmt.Sprintf(" ... (%d ops)", len(ops))
		ops = ops[:max]
	}
	return fmt.Sprintf("graph: cycle: %s -> %s%s", strings.Join(ops, " -> "), e.Ops[0], suffix)
}

// ErrEmpty is returned for a graph with no ops.
var ErrEmpty = errors.New("graph: no ops")

// BadNumber says what is wrong with a size or time x ("is NaN", "is
// infinite", "is negative"), or "" when it is a finite non-negative number.
// Importers use it so that their errors read like the graph's own.
func BadNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "is NaN"
	case math.IsInf(x, 0):
		return "is infinite"
	case x < 0:
		return "is negative"
	}
	return ""
}

// The ranges a graph's numbers must lie in (docs/inputs.md), so that no
// sum or product downstream (peak memory, bytes moved over up to 64
// devices, step times) can overflow int64 or reach Inf: every byte count
// at most MaxBytes, all of a graph's byte counts together at most
// MaxTotalBytes (x 64 devices < 2^63), op and transfer times at most
// MaxTime, FLOPs at most MaxFLOPs, at most MaxOps ops and tensors.
const (
	MaxBytes      = int64(1) << 50 // 1 PiB
	MaxTotalBytes = int64(1) << 56 // 64 PiB
	MaxTime       = 1e10           // seconds (2^53 us, the most a CostGraphDef holds exactly, is 9.0e9 s)
	MaxFLOPs      = 1e21
	MaxOps        = 1 << 26
	MaxNameLen    = 4096
	MaxBatch      = 1 << 30 // examples per step
	MaxLaunches   = 1 << 20 // GPU launches of one op (graph.Op.Launches)
)

// badName says what is wrong with a graph name ("" when nothing):
// too long, or holding a control character (a newline would split a
// report's lines).
func badName(s string) string {
	if len(s) > MaxNameLen {
		return fmt.Sprintf("longer than %d bytes", MaxNameLen)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Sprintf("holds the control character %q", r)
		}
	}
	return ""
}

func (g *Graph) validate() error {
	if len(g.ops) == 0 {
		return ErrEmpty
	}
	if s := badName(g.name); s != "" {
		return &Error{Tensor: -1, Field: "name", Msg: "graph name " + s}
	}
	if g.batch < 0 || g.batch > MaxBatch {
		return &Error{Tensor: -1, Field: "batch", Msg: fmt.Sprintf("%d is not a batch size (want 1 to %d, or 0 for none)", g.batch, MaxBatch)}
	}
	if err := g.validateExec(); err != nil {
		return err
	}
	if len(g.ops) > MaxOps || len(g.tensors) > MaxOps || len(g.control) > MaxOps {
		return &Error{Tensor: -1, Msg: fmt.Sprintf("%d ops, %d tensors, %d control edges: at most %d of each", len(g.ops), len(g.tensors), len(g.control), MaxOps)}
	}
	n := len(g.ops)
	var total int64 // all byte counts together; each <= MaxBytes, so no overflow before the check
	addTotal := func(b int64) bool {
		total += b
		return total <= MaxTotalBytes
	}
	for i := range g.ops {
		op := &g.ops[i]
		if op.Name == "" {
			return &Error{Op: fmt.Sprintf("#%d", i), Tensor: -1, Field: "name", Msg: "empty"}
		}
		if len(op.Name) > MaxNameLen {
			return &Error{Op: fmt.Sprintf("#%d", i), Tensor: -1, Field: "name", Msg: fmt.Sprintf("longer than %d bytes", MaxNameLen)}
		}
		if int(op.Class) >= NumClasses {
			return &Error{Op: op.Name, Tensor: -1, Field: "class", Msg: "out of range"}
		}
		if int(op.DType) >= NumDTypes {
			return &Error{Op: op.Name, Tensor: -1, Field: "dtype", Msg: "out of range"}
		}
		for _, f := range []struct {
			name string
			v    float64
		}{
			{"flops", op.FLOPs}, {"bytes_read", float64(op.BytesRead)}, {"bytes_written", float64(op.BytesWritten)},
			{"param_bytes", float64(op.ParamBytes)}, {"temp_bytes", float64(op.TempBytes)}, {"time_s", op.Time},
			{"dispatch_s", op.Dispatch},
		} {
			if s := BadNumber(f.v); s != "" {
				return &Error{Op: op.Name, Tensor: -1, Field: f.name, Msg: s}
			}
		}
		if op.FLOPs > MaxFLOPs {
			return &Error{Op: op.Name, Tensor: -1, Field: "flops", Msg: fmt.Sprintf("%g is above the largest allowed, %g", op.FLOPs, MaxFLOPs)}
		}
		if op.Time > MaxTime {
			return &Error{Op: op.Name, Tensor: -1, Field: "time_s", Msg: fmt.Sprintf("%g s is above the largest allowed, %g s", op.Time, MaxTime)}
		}
		if op.Dispatch > MaxTime {
			return &Error{Op: op.Name, Tensor: -1, Field: "dispatch_s", Msg: fmt.Sprintf("%g s is above the largest allowed, %g s", op.Dispatch, MaxTime)}
		}
		if op.Launches < 0 || op.Launches > MaxLaunches {
			return &Error{Op: op.Name, Tensor: -1, Field: "launches", Msg: fmt.Sprintf("%d is outside 0 to %d", op.Launches, MaxLaunches)}
		}
		for _, f := range []struct {
			name string
			v    int64
		}{{"bytes_read", op.BytesRead}, {"bytes_written", op.BytesWritten}, {"param_bytes", op.ParamBytes}, {"temp_bytes", op.TempBytes}} {
			if f.v > MaxBytes {
				return &Error{Op: op.Name, Tensor: -1, Field: f.name, Msg: fmt.Sprintf("%d is above the largest allowed, %d (1 PiB)", f.v, MaxBytes)}
			}
			if !addTotal(f.v) {
				return &Error{Op: op.Name, Tensor: -1, Field: f.name, Msg: fmt.Sprintf("the graph's byte counts add up to more than %d (64 PiB)", MaxTotalBytes)}
			}
		}
		for _, d := range op.Shape {
			if d > 1<<40 {
				return &Error{Op: op.Name, Tensor: -1, Field: "shape", Msg: fmt.Sprintf("dimension %d is above 2^40", d)}
			}
		}
		for _, d := range op.Shape {
			if d < 0 {
				return &Error{Op: op.Name, Tensor: -1, Field: "shape", Msg: fmt.Sprintf("negative dimension %d", d)}
			}
		}
		if op.FixedFLOPs != 0 || op.FixedBytesRead != 0 || op.FixedBytesWritten != 0 || op.FixedTempBytes != 0 {
			if err := g.validateFixed(op); err != nil {
				return err
			}
		}
	}
	for t := range g.tensors {
		ts := &g.tensors[t]
		if ts.Producer < 0 || ts.Producer >= n {
			return &Error{Tensor: t, Field: "producer", Msg: fmt.Sprintf("op %d does not exist", ts.Producer)}
		}
		if ts.Bytes < 0 {
			return &Error{Tensor: t, Field: "bytes", Msg: "is negative"}
		}
		if ts.Bytes > MaxBytes {
			return &Error{Tensor: t, Field: "bytes", Msg: fmt.Sprintf("%d is above the largest allowed, %d (1 PiB)", ts.Bytes, MaxBytes)}
		}
		if g.batch > 0 && (ts.BatchDim < NoBatch || ts.BatchDim > MaxBatchDim) {
			return &Error{Tensor: t, Field: "batch_dim", Msg: fmt.Sprintf("%d is not a dimension (want 0 to %d, or -1 for none)", ts.BatchDim, MaxBatchDim)}
		}
		if !addTotal(ts.Bytes) {
			return &Error{Tensor: t, Field: "bytes", Msg: fmt.Sprintf("the graph's byte counts add up to more than %d (64 PiB)", MaxTotalBytes)}
		}
		if s := BadNumber(ts.TransferTime); s != "" {
			return &Error{Tensor: t, Field: "transfer_s", Msg: s}
		}
		if ts.TransferTime > MaxTime {
			return &Error{Tensor: t, Field: "transfer_s", Msg: fmt.Sprintf("%g s is above the largest allowed, %g s", ts.TransferTime, MaxTime)}
		}
		for j, c := range ts.Consumers {
			if c < 0 || c >= n {
				return &Error{Tensor: t, Field: "consumers", Msg: fmt.Sprintf("op %d does not exist", c)}
			}
			if c == ts.Producer {
				return &Error{Op: g.ops[c].Name, Tensor: t, Msg: "consumes its own output"}
			}
			for _, c2 := range ts.Consumers[:j] {
				if c2 == c {
					return &Error{Op: g.ops[c].Name, Tensor: t, Msg: fmt.Sprintf("listed twice as a consumer of tensor %d", t)}
				}
			}
		}
	}
	for _, e := range g.control {
		if e.From < 0 || e.From >= n || e.To < 0 || e.To >= n {
			return &Error{Tensor: -1, Field: "control", Msg: fmt.Sprintf("edge %d -> %d names an op that does not exist", e.From, e.To)}
		}
		if e.From == e.To {
			return &Error{Op: g.ops[e.From].Name, Tensor: -1, Field: "control", Msg: "edge to itself"}
		}
	}
	return nil
}

// validateFixed checks an op's fixed (batch-independent) parts: only in a
// graph with a batch, finite, non-negative and at most their totals.
func (g *Graph) validateFixed(op *Op) error {
	for _, f := range []struct {
		name, of     string
		fixed, total float64
	}{
		{"fixed_flops", "flops", op.FixedFLOPs, op.FLOPs},
		{"fixed_bytes_read", "bytes_read", float64(op.FixedBytesRead), float64(op.BytesRead)},
		{"fixed_bytes_written", "bytes_written", float64(op.FixedBytesWritten), float64(op.BytesWritten)},
		{"fixed_temp_bytes", "temp_bytes", float64(op.FixedTempBytes), float64(op.TempBytes)},
	} {
		if f.fixed == 0 {
			continue
		}
		if g.batch == 0 {
			return &Error{Op: op.Name, Tensor: -1, Field: f.name, Msg: "set, but the graph has no batch (no batch information: nothing scales)"}
		}
		if s := BadNumber(f.fixed); s != "" {
			return &Error{Op: op.Name, Tensor: -1, Field: f.name, Msg: s}
		}
		if f.fixed > f.total {
			return &Error{Op: op.Name, Tensor: -1, Field: f.name, Msg: fmt.Sprintf("%g is more than %s, %g", f.fixed, f.of, f.total)}
		}
	}
	return nil
}

// csr turns per-node lists given as (node, value) pairs into CSR arrays.
func csr(n int, pairs [][2]int32) (start, vals []int32) {
	start = make([]int32, n+1)
	for _, p := range pairs {
		start[p[0]+1]++
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	vals = make([]int32, len(pairs))
	pos := append([]int32(nil), start[:n]...)
	for _, p := range pairs {
		vals[pos[p[0]]] = p[1]
		pos[p[0]]++
	}
	return start, vals
}

func (g *Graph) buildAdjacency() {
	n := len(g.ops)
	uses := 0
	for t := range g.tensors {
		uses += len(g.tensors[t].Consumers)
	}
	// Sized exactly: on a 2,000,000-op graph, growing them by appending
	// allocated 320 MB for the 69 needed.
	outs := make([][2]int32, 0, len(g.tensors))
	ins := make([][2]int32, 0, uses)
	cin := make([][2]int32, 0, len(g.control))
	cout := make([][2]int32, 0, len(g.control))
	for t := range g.tensors {
		ts := &g.tensors[t]
		outs = append(outs, [2]int32{int32(ts.Producer), int32(t)})
		for _, c := range ts.Consumers {
			ins = append(ins, [2]int32{int32(c), int32(t)})
		}
	}
	for _, e := range g.control {
		cout = append(cout, [2]int32{int32(e.From), int32(e.To)})
		cin = append(cin, [2]int32{int32(e.To), int32(e.From)})
	}
	g.outStart, g.outs = csr(n, outs)
	g.inStart, g.ins = csr(n, ins)
	g.cinStart, g.cins = csr(n, cin)
	g.coutStart, g.couts = csr(n, cout)

	// Distinct predecessors and successors, deduplicated with a stamp array.
	stamp := make([]int32, n)
	for i := range stamp {
		stamp[i] = -1
	}
	preds := make([][2]int32, 0, uses+len(g.control)) // at most
	succs := make([][2]int32, 0, uses+len(g.control))
	for c := 0; c < n; c++ {
		for _, t := range g.Inputs(c) {
			p := int32(g.tensors[t].Producer)
			if stamp[p] != int32(c) {
				stamp[p] = int32(c)
				preds = append(preds, [2]int32{int32(c), p})
				succs = append(succs, [2]int32{p, int32(c)})
			}
		}
		for _, p := range g.ControlPreds(c) {
			if stamp[p] != int32(c) {
				stamp[p] = int32(c)
				preds = append(preds, [2]int32{int32(c), p})
				succs = append(succs, [2]int32{p, int32(c)})
			}
		}
	}
	g.predStart, g.preds = csr(n, preds)
	g.succStart, g.succs = csr(n, succs)
}

// buildTopo computes a topological order with Kahn's algorithm (a min-heap
// on op index breaks ties, so the order is the file order where possible)
// and reports a cycle with the ops on it.
func (g *Graph) buildTopo() error {
	n := len(g.ops)
	indeg := make([]int32, n)
	for i := 0; i < n; i++ {
		indeg[i] = int32(len(g.Preds(i)))
	}
	h := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			heap.Push(&h, int32(i))
		}
	}
	g.topo = make([]int32, 0, n)
	for len(h) > 0 {
		v := heap.Pop(&h)
		g.topo = append(g.topo, v)
		for _, s := range g.Succs(int(v)) {
			indeg[s]--
			if indeg[s] == 0 {
				heap.Push(&h, s)
			}
		}
	}
	if len(g.topo) != n {
		return findCycle(g, indeg)
	}
	g.topoPos = make([]int32, n)
	for pos, v := range g.topo {
		g.topoPos[v] = int32(pos)
	}
	return nil
}

// findCycle walks g's predecessors among the ops Kahn's algorithm could not
// place (indeg > 0) until an op repeats.
func findCycle(g *Graph, indeg []int32) error {
	start := -1
	for i, d := range indeg {
		if d > 0 {
			start = i
			break
		}
	}
	seen := map[int]int{}
	var path []int
	v := start
	for {
		if at, ok := seen[v]; ok {
			cyc := path[at:]
			// path follows predecessors; report in dependency order,
			// starting at the op with the lowest index.
			order := make([]int, len(cyc))
			low := 0
			for i := range cyc {
				order[i] = cyc[len(cyc)-1-i]
				if order[i] < order[low] {
					low = i
				}
			}
			names := make([]string, len(cyc))
			for i := range order {
				names[i] = g.ops[order[(low+i)%len(order)]].Name
			}
			return &CycleError{Ops: names}
		}
		seen[v] = len(path)
		path = append(path, v)
		next := -1
		for _, p := range g.Preds(v) {
			if indeg[p] > 0 {
				next = int(p)
				break
			}
		}
		if next < 0 { // cannot happen: an unplaced op has an unplaced predecessor
			return &CycleError{Ops: []string{g.ops[v].Name}}
		}
		v = next
	}
}

func (g *Graph) buildColocation() {
	g.coloc = make([]int32, len(g.ops))
	ids := map[string]int32{}
	for i := range g.ops {
		name := g.ops[i].Colocation
		if name == "" {
			g.coloc[i] = -1
			continue
		}
		id, ok := ids[name]
		if !ok {
			id = int32(len(g.colocNames))
			ids[name] = id
			g.colocNames = append(g.colocNames, name)
		}
		g.coloc[i] = id
	}
}

// TensorProducer returns the producer of tensor t added so far (for builders that
// track tensors and need the op behind one).
func (b *Builder) TensorProducer(t int) int { return b.g.tensors[t].Producer }
