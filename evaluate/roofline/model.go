package roofline

import (
	"fmt"

	"github.com/placer/placer/evaluate/roofline/convlayout"
	"github.com/placer/placer/graph"
)

// Options are the simulator's modes. The zero value is the default model.
type Options struct {
	// SyncTransfers selects REGAL's transfer model: a transfer blocks both
	// the sending and the receiving device (it is scheduled on the
	// sender's queue like an op and waits until the receiver is idle).
	// Default false: transfers run on the links' copy engines and overlap
	// compute.
	SyncTransfers bool

	// MaxFusion caps the number of ops in one fused kernel. Zero means 64.
	MaxFusion int

	// IgnoreMemory disables the out-of-memory check (peaks are still
	// reported).
	IgnoreMemory bool

	// Host, when set, models the CPU side: each device's host thread
	// dispatches its kernels in order and may run ahead of the GPU
	// (host.go). Nil (the default): kernels cost GPU time only.
	Host *Host

	// TF32 says which f32 ops run on TF32 tensor cores (the user's --tf32).
	// Nil (the default): the graph's recorded settings (graph.Execution's
	// tf32_matmul and tf32_cudnn) where it has them, else the hardware's
	// AllowTF32 for matmuls and convolutions alike (ResolveTF32).
	TF32 *TF32

	// MemoryFormat is the step's activations' memory format (the user's
	// --memory-format): in NCHW an FP16 or BF16 convolution also pays
	// cuDNN's layout transposes (convlayout.TransposeBytes). Unsaid (the
	// default): none.
	MemoryFormat convlayout.Format
}

func (o Options) maxFusion() int32 {
	if o.MaxFusion <= 0 {
		return 64
	}
	return int32(o.MaxFusion)
}

// Model is a graph compiled for a cluster: the per-op costs and flat
// arrays the simulator walks. It is read-only after NewModel and safe for
// concurrent use by many Simulators.
//
// Inside the Model (and the Simulator) ops are numbered in topological
// order and tensors by producer, so that an op's topological index is its
// number, an op's outputs are a range of tensors, and the simulation,
// which runs roughly in topological order, walks memory forward. The
// numbering is translated at the edges: decisions on the way in, the
// Recorder's op and tensor numbers on the way out.
type Model struct {
	G       *graph.Graph
	Cluster *Cluster
	Opts    Options

	n, nt, d int

	// Per graph op, in the graph's numbering (for the API and the bound).
	opTime    []float64 // unfused duration, launch included (or the measured time)
	opCompute []float64 // flops / attainable peak (no launch), or the measured time
	fusible   []bool

	// Per op, in topological numbering.
	orig     []int32  // op -> graph op
	identity bool     // the graph's numbering is the topological one
	cost     []opCost // the op's compute time and memory traffic
	param    []int64
	temp     []int64     // read only for ops flagged hasTemp
	flags    []uint8     // fuseCons, fuseProd, ctrlIn, ctrlOut, hasTemp; the class above
	indeg    []int32     // input tensors + control predecessors: the dependencies of an unfused op
	fuseInit []fuseState // the fusion state of a lone op: size 1, its distinct predecessors and successors
	inStart  []int32     // op -> range in in
	in       []inEdge    // input tensors of each op and their producers
	outStart []int32     // op -> its outputs, the tensors outStart[op]..outStart[op+1]-1
	sources  []int32     // ops without dependencies, in order
	// The candidate fusions: for each op that may fuse into a producer
	// (fuseCons), in order, the producer of each of its inputs that may
	// absorb it (fuseProd), in input order, as often as it feeds the op (a
	// repeated try can succeed where the first failed, once the op's group
	// has grown: TestFusionTriesEveryInput); fpStart[op] is where the op's
	// begin.
	fpairs  []fusePair
	fpStart []int32
	// distinct predecessors and successors (tensor and control edges), and
	// control edges alone
	predStart, preds, succStart, succs []int32
	cinStart, cin, coutStart, cout     []int32
	colocOps                           []int32 // graph ops that belong to a co-location group

	classRate   [8]float64 // seconds per byte of memory traffic by class (1 / (bw * eff_mem)); 0 for measured ops
	classLaunch [8]float64 // launch overhead by class; 0 for measured ops
	// hw is the hardware the ops are costed on: the cluster's, with
	// --host its kernel floor as the launch (Cluster.hostHardware).
	hw *Hardware

	// Options.Host: each op's dispatch time on its host thread, by op
	// (topological numbering), and their sum; nil without a host model.
	disp      []float64
	dispTotal float64
	// Under CUDA graphs (host.go): each op's captured region (-1: none),
	// the number of regions and the CPU time of one graph launch; nil
	// when nothing is captured.
	region      []int8
	regions     int
	graphLaunch float64
	// With a host model: each op's launches on its stream's queue
	// (Host.launchSlots) and the queue's depth (0: unbounded).
	slots      []int8
	queueDepth int
	// With a host model and the graph's GradScaler: the graph op from
	// which on the ops are the update (Execution.OptimizerFrom), where
	// each device's host waits for its GPU (hostSyncFrom,
	// Simulator.charge); -1 for none.
	syncFrom int32

	tf32 TF32 // which f32 ops run on TF32 tensor cores (ResolveTF32)

	// Per tensor, numbered by producer.
	tBytes    []int64   // size: what a transfer moves and a received copy holds
	views     bool      // some tensor is a view
	view      []uint64  // bit t: tensor t is the output of an alias op (a view), which holds no memory of its own on its producer's device
	tXfer     []float64 // measured transfer time, or -1
	anyXfer   bool      // some tensor has a measured transfer time
	tOrig     []int32   // tensor -> graph tensor
	consStart []int32   // tensor -> range in cons
	cons      []int32   // consumers of each tensor

	launch     float64
	lbNoFusion float64
	lbFusion   float64

	r modelViews // raw views of the arrays above, for the event loop
}

// modelViews are raw views (raw.go) of the Model's per-op and per-tensor
// arrays, set once by NewModel.
type modelViews struct {
	cost              raw[opCost]
	flags             raw[uint8]
	temp, tBytes      raw[int64]
	view              raw[uint64]
	in                raw[inEdge]
	inStart, outStart raw[int32]
	fpairs            raw[fusePair]
	fpStart           raw[int32]
	consStart, cons   raw[int32]
	predStart, preds  raw[int32]
	cinStart, cin     raw[int32]
}

// Op flags.
const (
	fuseCons   uint8 = 1 << iota // may be fused into a producer (elementwise, reduction, data movement)
	fuseProd                     // may absorb a fusible consumer
	ctrlIn                       // has control predecessors
	ctrlOut                      // has control successors
	hasTemp                      // has temp bytes
	classShift = 5               // the op's class is flags >> classShift
	measured   = 7               // the class of an op with a measured time
)

// opCost is what an op costs: its compute time (or measured time) and its
// memory traffic (bytes read + written). A fused kernel adds its members'
// compute and external traffic; an op alone takes aloneTime. (Its alone
// duration and allocation are not stored beside them: recomputed where
// an op starts alone, from this record and the outputs the op's end reads
// anyway, they cost a few instructions, where storing them doubled the
// array that the run streams through the caches.)
type opCost struct {
	compute float64
	bytes   int64
}

// fusePair is a candidate fusion: consumer c may join producer p's kernel
// when the decision puts them on the same device and fusion allows it.
type fusePair struct{ c, p int32 }

// inEdge is one input of an op: the tensor and its producer.
type inEdge struct{ t, p int32 }

// NewModel compiles graph g for cluster c.
func NewModel(g *graph.Graph, c *Cluster, opts Options) (*Model, error) {
	if g == nil || c == nil {
		return nil, fmt.Errorf("roofline: nil graph or cluster")
	}
	if opts.MaxFusion < 0 {
		return nil, fmt.Errorf("roofline: MaxFusion %d is negative", opts.MaxFusion)
	}
	n, nt := g.NumOps(), g.NumTensors()
	h := c.hostHardware(opts.Host != nil)
	m := &Model{
		G: g, Cluster: c, Opts: opts, n: n, nt: nt, d: c.Devices,
		opTime: make([]float64, n), opCompute: make([]float64, n), fusible: make([]bool, n),
		orig: g.Topo(), identity: true,
		cost: make([]opCost, n), param: make([]int64, n), temp: make([]int64, n),
		flags: make([]uint8, n), indeg: make([]int32, n), fuseInit: make([]fuseState, n),
		inStart: make([]int32, n+1), outStart: make([]int32, n+1),
		tBytes: make([]int64, 0, nt), view: make([]uint64, (nt+63)/64), tXfer: make([]float64, 0, nt), tOrig: make([]int32, 0, nt),
		consStart: make([]int32, 1, nt+1), cons: make([]int32, 0, g.NumEdges()),
		launch: h.Launch, hw: h,
		tf32: ResolveTF32(g, h, opts.TF32),
	}
	if len(h.MemEff) > measured {
		return nil, fmt.Errorf("roofline: %d op classes, at most %d are supported", len(h.MemEff), measured)
	}
	for k := range h.MemEff {
		m.classRate[k] = 1 / (h.MemBandwidth * h.MemEff[k])
		m.classLaunch[k] = h.Launch
	}
	// The per-edge lists are sized exactly (a pass to count them), not grown
	// by appending: on a 2,000,000-op chain growing them allocated 236 MB
	// for the 64 needed.
	uses := 0
	for i := range n {
		uses += len(g.Inputs(i))
	}
	m.in = make([]inEdge, 0, uses)
	pos := make([]int32, n) // graph op -> op
	for v, i := range m.orig {
		pos[i] = int32(v)
		if int(i) != v {
			m.identity = false
		}
	}
	tpos := m.indexTensors(pos)
	m.indexOps(pos, tpos)
	m.indexFusePairs()
	m.predStart, m.preds = m.csr(g.Preds, pos)
	m.succStart, m.succs = m.csr(g.Succs, pos)
	m.cinStart, m.cin = m.csr(g.ControlPreds, pos)
	m.coutStart, m.cout = m.csr(g.ControlSuccs, pos)
	for i := 0; i < n; i++ {
		if g.Colocation(i) >= 0 {
			m.colocOps = append(m.colocOps, int32(i))
		}
	}
	if opts.Host != nil {
		var err error
		if m.disp, m.dispTotal, err = opts.Host.dispatchTimes(g, m.orig); err != nil {
			return nil, err
		}
		m.region, m.regions, m.graphLaunch = opts.Host.captured(g, m.orig)
		if m.queueDepth = opts.Host.queueDepth(); m.queueDepth > 0 {
			m.slots = opts.Host.launchSlots(g, m.orig)
		}
		m.dispTotal += float64(m.regions) * m.graphLaunch
	}
	m.syncFrom = hostSyncFrom(g, opts.Host != nil)
	m.lbNoFusion, m.lbFusion = m.lowerBounds()
	m.r = modelViews{
		cost: rawOf(m.cost), flags: rawOf(m.flags), temp: rawOf(m.temp), tBytes: rawOf(m.tBytes), view: rawOf(m.view),
		in: rawOf(m.in), inStart: rawOf(m.inStart), outStart: rawOf(m.outStart), consStart: rawOf(m.consStart), cons: rawOf(m.cons),
		fpairs: rawOf(m.fpairs), fpStart: rawOf(m.fpStart),
		predStart: rawOf(m.predStart), preds: rawOf(m.preds), cinStart: rawOf(m.cinStart), cin: rawOf(m.cin),
	}
	return m, nil
}

// indexTensors lays out the graph's tensors in the order of their
// producers (m.orig): each tensor's bytes, whether it is a view, its
// given transfer time and its consumers (as ops), and each op's first
// output (outStart). pos maps a graph op to its op; it returns the map
// from a graph tensor to its tensor.
func (m *Model) indexTensors(pos []int32) []int32 {
	g := m.G
	tpos := make([]int32, m.nt) // graph tensor -> tensor
	for v, i := range m.orig {
		for _, t := range g.Outputs(int(i)) {
			tpos[t] = int32(len(m.tOrig))
			ts := g.Tensor(int(t))
			m.tOrig = append(m.tOrig, t)
			m.tBytes = append(m.tBytes, ts.Bytes)
			if g.Op(ts.Producer).Alias {
				k := len(m.tBytes) - 1
				m.view[k>>6] |= 1 << (k & 63)
				m.views = true
			}
			xfer := -1.0
			if ts.HasTransferTime {
				xfer, m.anyXfer = ts.TransferTime, true
			}
			m.tXfer = append(m.tXfer, xfer)
			for _, c := range ts.Consumers {
				m.cons = append(m.cons, pos[c])
			}
			m.consStart = append(m.consStart, int32(len(m.cons)))
		}
		m.outStart[v+1] = int32(len(m.tOrig))
	}
	return tpos
}

// indexOps fills each op's cost, time, flags (fusible as a producer or a
// consumer, its class, control edges, temporaries), memory, in-degree and
// input edges, in topological order; pos and tpos map graph ops and
// tensors to the model's.
func (m *Model) indexOps(pos, tpos []int32) {
	g, h := m.G, m.hw
	for v, i := range m.orig {
		op := g.Op(int(i))
		memRate := m.classRate[op.Class]
		bytes := op.BytesRead + op.BytesWritten
		cost := op
		if m.cudnnDepthwise(int(i), op) { // a convolution of the roofline
			c := *op
			c.DepthwiseTaps = 0
			cost = &c
		}
		dur, compute := opDuration(h, cost, memRate, m.tf32)
		if x := m.transposeBytes(op); x > 0 { // kernels of their own: their time adds
			t := float64(x) * memRate
			dur, compute, bytes = dur+t, compute+t, bytes+x
		}
		var fl uint8
		if !op.HasTime {
			switch op.Class {
			case graph.ClassElementwise, graph.ClassReduction, graph.ClassDataMovement:
				fl |= fuseCons | fuseProd
			case graph.ClassMatMul, graph.ClassConv:
				fl |= fuseProd
			}
		}
		m.opTime[i], m.opCompute[i], m.fusible[i] = dur, compute, fl != 0
		if op.HasTime {
			fl |= measured << classShift
		} else {
			fl |= uint8(op.Class) << classShift
		}
		if len(g.ControlPreds(int(i))) > 0 {
			fl |= ctrlIn
		}
		if len(g.ControlSuccs(int(i))) > 0 {
			fl |= ctrlOut
		}
		if op.TempBytes != 0 {
			fl |= hasTemp
		}
		m.flags[v] = fl
		m.cost[v] = opCost{compute: compute, bytes: bytes}
		m.param[v] = op.ParamBytes
		m.temp[v] = op.TempBytes
		m.indeg[v] = int32(len(g.Inputs(int(i))) + len(g.ControlPreds(int(i))))
		if m.indeg[v] == 0 {
			m.sources = append(m.sources, int32(v))
		}
		m.fuseInit[v] = fuseState{size: 1, extIn: int32(len(g.Preds(int(i)))), extOut: int32(len(g.Succs(int(i))))}
		for _, t := range g.Inputs(int(i)) {
			m.in = append(m.in, inEdge{t: tpos[t], p: pos[g.Tensor(int(t)).Producer]})
		}
		m.inStart[v+1] = int32(len(m.in))
	}
}

// indexFusePairs lists, per op that can fuse as a consumer, its inputs'
// producers that can fuse as producers (the pairs fusion may merge),
// sized exactly by a first pass.
func (m *Model) indexFusePairs() {
	m.fpStart = make([]int32, m.n+1)
	pairs := 0
	for v := range int32(m.n) {
		if m.flags[v]&fuseCons != 0 {
			for _, e := range m.in[m.inStart[v]:m.inStart[v+1]] {
				if m.flags[e.p]&fuseProd != 0 {
					pairs++
				}
			}
		}
	}
	m.fpairs = make([]fusePair, 0, pairs)
	for v := range int32(m.n) {
		if m.flags[v]&fuseCons != 0 {
			for _, e := range m.in[m.inStart[v]:m.inStart[v+1]] {
				if m.flags[e.p]&fuseProd != 0 {
					m.fpairs = append(m.fpairs, fusePair{v, e.p})
				}
			}
		}
		m.fpStart[v+1] = int32(len(m.fpairs))
	}
}

// opDuration is op's unfused duration on hardware h (launch + the
// roofline of its compute, f32 matmuls and convolutions on TF32 tensor
// cores as tf says, and its memory traffic at memRate seconds per byte),
// or its measured time, and its compute time alone (an op of serial
// steps at least Steps x the hardware's step latency; a dense
// convolution at the hardware's DenseConvEff where it has one; a depthwise
// convolution its elements at the hardware's measured rate; a grouped or
// dense one its nearest measured shape's; PyTorch's fused attention at
// the hardware's measured rate for its kernel and precision, attnRate;
// the measured time for a measured op).
func opDuration(h *Hardware, op *graph.Op, memRate float64, tf TF32) (dur, compute float64) {
	if op.HasTime {
		return op.Time, op.Time
	}
	if op.FLOPs > 0 {
		eff := h.ComputeEff[op.Class]
		if h.DenseConvEff > 0 && op.Class == graph.ClassConv && op.DenseConv != (graph.ConvShape{}) {
			eff = h.DenseConvEff // an implicit GEMM (Hardware.DenseConvEff)
		}
		compute = op.FLOPs / (h.Peak(op.Class, op.DType, tf) * eff)
		if s := h.ComputeSlowdown; s > 0 {
			compute *= s
		}
	}
	if r := attnRate(h, op); r > 0 && op.FLOPs > 0 {
		compute = op.FLOPs / r // Hardware.MemEffAttnF32, FlashAttn
		if s := h.ComputeSlowdown; s > 0 {
			compute *= s
		}
	}
	if dw := h.Depthwise; op.DepthwiseTaps > 0 && dw[0] > 0 && (h.DepthwiseMaxTaps == 0 || op.DepthwiseTaps <= h.DepthwiseMaxTaps) {
		if op.Backward {
			dw = h.DepthwiseBwd
		}
		elems := 1.0
		for _, d := range op.Shape {
			elems *= float64(d)
		}
		compute = elems * (dw[0] + dw[1]*float64(op.DepthwiseTaps))
	}
	if op.GroupedFLOPs > 0 && h.Grouped != "" {
		if t, ok := GroupedTime(GroupedTables[h.Grouped], groupedPrecision(op, tf), op.Backward, op.GroupedFLOPs); ok {
			compute = t
		}
	}
	if op.DenseConv != (graph.ConvShape{}) && h.DenseConv != "" {
		if t, ok := DenseTime(DenseTables[h.DenseConv], groupedPrecision(op, tf), op.Backward, op.DenseConv, op.FLOPs); ok {
			compute = t
		}
	}
	if op.Steps > 0 {
		step := h.SerialStep
		if op.Backward {
			step = h.SerialStepBwd
		}
		compute = max(compute, float64(op.Steps)*step)
	}
	return h.Launch + max(compute, float64(op.BytesRead+op.BytesWritten)*memRate), compute
}

// attnRate is the measured rate of op on h when it is PyTorch's
// memory-efficient attention on FP32 inputs (Hardware.MemEffAttnF32) or
// its flash attention on FP16/BF16 ones (Hardware.FlashAttn), else 0.
func attnRate(h *Hardware, op *graph.Op) float64 {
	half := op.DType == graph.BF16 || op.DType == graph.F16
	switch {
	case op.DType == graph.F32 && op.Type == "_scaled_dot_product_efficient_attention":
		return h.MemEffAttnF32
	case op.DType == graph.F32 && op.Type == "_scaled_dot_product_efficient_attention_backward":
		return h.MemEffAttnF32Bwd
	case half && op.Type == "_scaled_dot_product_flash_attention":
		return h.FlashAttn
	case half && op.Type == "_scaled_dot_product_flash_attention_backward":
		return h.FlashAttnBwd
	}
	return 0
}

// TimeOf is the unfused duration op would take on one device of the
// cluster (what OpTime gives the model's own ops), for an op of another
// graph: a planner costs a micro-batch's ops (graph.AtBatch) with it
// without compiling a model at that batch.
func (m *Model) TimeOf(op *graph.Op) float64 {
	h := m.hw
	rate := 0.0
	if int(op.Class) < len(h.MemEff) && h.MemBandwidth > 0 && h.MemEff[op.Class] > 0 {
		rate = 1 / (h.MemBandwidth * h.MemEff[op.Class])
	}
	dur, _ := opDuration(h, op, rate, m.tf32)
	return dur
}

// TF32 is which f32 ops the model runs on TF32 tensor cores
// (ResolveTF32 of its graph, hardware and Options.TF32).
func (m *Model) TF32() TF32 { return m.tf32 }

// AllReduceTime is how long an all-reduce of bytes takes over group
// (cluster devices), the faster of a ring and a tree
// (Cluster.CollectiveTime).
func (m *Model) AllReduceTime(group []int, bytes int64) (float64, error) {
	t, _, err := m.Cluster.CollectiveTime(AllReduce, group, bytes)
	return t, err
}

// memOf is the memory tensor t holds on its producer's device: its size,
// or nothing for a view (the output of an alias op). One bit per tensor
// says which (10 KB for 80,000 tensors, always in cache), in place of a
// second per-tensor size array.
func (m *Model) memOf(t int) int64 {
	b := *m.r.tBytes.at(t)
	if m.views { // the same answer all run long: predicted
		b &^= -int64(*m.r.view.at(t >> 6) >> (uint(t) & 63) & 1)
	}
	return b
}

// aloneTime is the duration of op v run alone: launch + max(compute,
// traffic / rate), or its measured time (whose class has no launch and no
// traffic rate, so the same expression gives it exactly).
func (m *Model) aloneTime(v int) float64 {
	c, cl := m.r.cost.at(v), *m.r.flags.at(v)>>classShift
	return m.classLaunch[cl] + max(c.compute, float64(c.bytes)*m.classRate[cl])
}

// csr renumbers the per-op lists of list into CSR arrays over the
// topological numbering.
func (m *Model) csr(list func(int) []int32, pos []int32) (start, vals []int32) {
	start = make([]int32, m.n+1)
	k := 0
	for i := range m.n {
		k += len(list(i))
	}
	vals = make([]int32, 0, k)
	for v, i := range m.orig {
		for _, w := range list(int(i)) {
			vals = append(vals, pos[w])
		}
		start[v+1] = int32(len(vals))
	}
	return start, vals
}

// consumers are the consumers of tensor t.
func (m *Model) consumers(t int32) []int32 { return m.cons[m.consStart[t]:m.consStart[t+1]] }

// OpTime returns op i's unfused duration on one device of the cluster.
func (m *Model) OpTime(i int) float64 { return m.opTime[i] }

// OpTimes returns every op's unfused duration (a fresh slice).
func (m *Model) OpTimes() []float64 { return append([]float64(nil), m.opTime...) }

// DispatchTimes returns each graph op's dispatch time on its host thread
// (Options.Host; a fused kernel is dispatched at its root's), in the
// graph's numbering (a fresh slice), or nil without a host model. Under
// the graph's CUDA graphs a captured op takes none, and the region's one
// launch (GraphLaunch) is not in the slice; under torch.compile a
// compiled op takes its launch (host.go).
func (m *Model) DispatchTimes() []float64 {
	if m.disp == nil {
		return nil
	}
	out := make([]float64, m.n)
	for v, i := range m.orig {
		out[i] = m.disp[v]
	}
	return out
}

// Devices is the number of devices of the cluster.
func (m *Model) Devices() int { return m.d }

// Capacity is the memory capacity of one device of the cluster, bytes.
func (m *Model) Capacity() int64 { return m.Cluster.Hardware.Memory }

// IgnoresMemory reports whether the model skips the out-of-memory check
// (Options.IgnoreMemory).
func (m *Model) IgnoresMemory() bool { return m.Opts.IgnoreMemory }

// TransferTime is the time a transfer of bytes from device s to device d
// occupies its link channel (see Cluster.TransferTime).
func (m *Model) TransferTime(s, d int, bytes int64) float64 {
	return m.Cluster.TransferTime(s, d, bytes)
}

// Channels is the number of link channels of the cluster.
func (m *Model) Channels() int { return m.Cluster.Channels }

// Channel is the link channel a transfer from device s to device d
// occupies (transfers on one channel run one at a time).
func (m *Model) Channel(s, d int) int { return int(m.Cluster.Channel[s*m.d+d]) }

// Fusible reports whether op i may take part in a fused kernel, as the
// consumer (elementwise, reductions, data movement) or as the producer.
func (m *Model) Fusible(i int) (consumer, producer bool) {
	fl := m.flags[m.pos(i)]
	return fl&fuseCons != 0, fl&fuseProd != 0
}

// pos is the topological number of graph op i.
func (m *Model) pos(i int) int32 { return int32(m.G.TopoIndex(i)) }

// LowerBound is the limit every result is held against:
// max(critical path with every op at its best time and no transfers,
// total op time / devices). With fusion, an op that may be fused is held
// to its compute time alone (a fused kernel saves its launch and its
// internal memory traffic), so the bound stays valid for every decision.
func (m *Model) LowerBound(fusion bool) float64 {
	if fusion {
		return m.lbFusion
	}
	return m.lbNoFusion
}

func (m *Model) lowerBounds() (noFusion, fusion float64) {
	best := make([]float64, m.n)
	total, totalF := 0.0, 0.0
	for i := 0; i < m.n; i++ {
		total += m.opTime[i]
		best[i] = m.opTime[i]
		if m.fusible[i] {
			best[i] = m.opCompute[i]
		}
		totalF += best[i]
	}
	d := float64(m.d)
	// With a host model an unfused kernel also waits for its dispatch,
	// and each device's host dispatches its kernels one after another:
	// the devices' hosts together spend dispTotal. (A fused kernel is
	// dispatched once: the bound with fusion leaves the host out.)
	noFusion = max(m.G.LongestPath(m.opTime), total/d, m.dispTotal/d)
	fusion = max(m.G.LongestPath(best), totalF/d)
	return noFusion, fusion
}
