// The Simulator: its state, NewSimulator, and Run, the entry point that
// resets the state, places and fuses, runs the event loop (loop.go) and
// fills the result (result.go).

package roofline

import (
	"errors"
	"fmt"
	"math"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
)

// Recorder receives the timeline of one simulation (for traces and
// tests). Times are in seconds. A nil Recorder costs nothing.
type Recorder interface {
	// Kernel: device dev ran the ops ops (one kernel; several when fused).
	Kernel(dev int, ops []int32, start, end float64)
	// Transfer: tensor went from src to dst over channel ch.
	Transfer(ch, src, dst, tensor int, bytes int64, start, end float64)
	// Memory: device dev holds bytes from time t on.
	Memory(dev int, t float64, bytes int64)
}

// Simulator evaluates decisions against one Model. It owns all its
// buffers and reuses them, so an evaluation allocates nothing once the
// buffers have grown. A Simulator is not safe for concurrent use; make one
// per goroutine (Evaluator does).
//
// Ops and tensors are numbered as in the Model (topologically, tensors by
// producer). A run does little before its event loop: it places the ops,
// forms the fused groups, and leaves the state of each fused kernel to be
// computed when the kernel is first signalled, close to when it runs, so
// that what a kernel touches is still in cache when it starts and ends. An
// op that runs alone needs no such state: the Model's is its own.
//
// Its methods stand in three layers, each a type over the one before:
//   - simState: the buffers of a run, the event ring (events.go), the
//     resources' queues (queue.go), memory accounting (memory.go) and the
//     read-ahead that warms them (readahead.go);
//   - fusing: a decision's placement and fused groups (fuse.go);
//   - Simulator: the run (Run, sim.go), its event loop (loop.go), the
//     kernels' costs and launches (kernel.go), transfers (transfer.go)
//     and the result (result.go).
type Simulator struct {
	fusing
}

// fusing places a decision's ops and forms its fused groups over a
// run's state.
type fusing struct {
	simState
}

// simState is a run's buffers, events, queues and memory.
type simState struct {
	m   *Model
	rec Recorder

	ops []opState // per op
	// Per fused kernel, in the order initUnit set them up (roughly the
	// order they run in), rather than indexed by root op: the fused
	// kernels are a minority of the ops, and kept dense they are written
	// and read back in sequence instead of being spread over n slots
	// that warm would have to load.
	units []unitState
	uslot []int32     // per op: the index in units of the fused kernel it roots
	fs    []fuseState // per op: the fusion state of the group it roots
	tref  []int32     // per tensor: pending local consumers and outbound sends of the local copy; notMat for a tensor that stays on chip
	xbase []int32     // per tensor: its first transfer (a tensor's transfers are consecutive in xs)
	xs    []xfer      // transfers of this run (task ids n+x)
	// What each fused kernel does when it ends, written by initUnit (see
	// there) and read by finishUnit: its external inputs, and its stored
	// outputs and members with control successors. Arenas, filled from
	// the start in each run.
	planIn, planOut []int32

	prio, fusion []int   // the decision's, in topological numbering
	pbuf, fbuf   []int   // their buffers, for a graph not numbered topologically
	order        []int32 // fusion order, sources
	bucket       []int32
	kernels      int
	finished     int

	// resources: devices 0..d-1, channels d..d+ch-1
	rs     []resource
	hold   []int32 // sync mode: transfer a device holds, waiting for its receiver
	dirty  []int32 // resources that may have to start something
	ev     []event // the busy resources' events: a ring, ev[evHead] first, sorted
	evHead int
	evN    int // events in the ring
	mem    []int64
	peak   []int64
	busy   []float64
	hostT  []float64 // Options.Host: per device, when its host thread has dispatched the kernels so far; nil without
	// synced[dv]: device dv's host has waited for its GPU at the update
	// (Model.syncFrom, GradScaler); nil without such a wait
	synced []bool
	// launched[dv*regions+r]: device dv's host has launched captured
	// region r's CUDA graph (host.go); nil when nothing is captured
	launched []bool
	// queue[dv*depth+j%depth]: when the kernel of device dv's j-th launch
	// ends, for the last depth launches (launchQueue); queued[dv]: the
	// device's launches so far. Nil without a bounded queue.
	queue   []float64
	queued  []int64
	lastRec []int64
	members []int32 // scratch for the recorder
	res     evaluate.Result

	r simViews // raw views of the per-op and per-tensor buffers above

	nIn, nOut     int32 // used lengths of planIn and planOut
	pfEnd, pfNext int32 // warm: ops below pfEnd are warmed; signalling pfNext or above warms more
	sink          int64 // warm's loads end here, so that the compiler keeps them
}

// simViews are raw views (raw.go) of the Simulator's fixed-size buffers,
// set once by NewSimulator.
type simViews struct {
	ops             raw[opState]
	units           raw[unitState]
	fs              raw[fuseState]
	uslot, tref     raw[int32]
	planIn, planOut raw[int32]
}

// opState is the per-op state the event loop touches for every op.
type opState struct {
	unit    int32 // root op of the op's fused group (itself when unfused)
	dev     int32 // device from the decision
	pending int32 // for a unit root: dependencies not yet satisfied (notReady: not computed yet)
	next    int32 // next member of the op's group (a circular list)
}

// unitState is the state of a fused kernel.
type unitState struct {
	dur   float64 // duration
	alloc int64   // bytes allocated at start: temps and materialized outputs
	temp  int64   // temp bytes, freed at the end
	prio  int32   // highest priority of its ops
	topo  int32   // lowest topological index of its ops
	pin   int32   // its external inputs: s.planIn[pin] of them from pin+1 on
	pout  int32   // its outputs: s.planOut[pout] entries from pout+1 on
}

// fuseState is the state of a fused group, valid at its root.
type fuseState struct {
	size          int32
	extIn, extOut int32 // distinct edges entering / leaving the group
}

const (
	notReady = math.MinInt32 // pending of a fused kernel not set up yet
	notMat   = -1            // tref of a tensor that never reaches device memory
)

// NewSimulator returns a simulator for m. rec may be nil.
func NewSimulator(m *Model, rec Recorder) *Simulator {
	n, nt, d := m.n, m.nt, m.d
	r := d + m.Cluster.Channels
	s := &Simulator{fusing{simState{
		m: m, rec: rec,
		ops: make([]opState, n), units: make([]unitState, 0, n/2), uslot: make([]int32, n), fs: make([]fuseState, n),
		tref: make([]int32, nt), xbase: make([]int32, nt),
		// Room for one transfer per tensor (every transfer of two devices)
		// from the start: grown from nothing by the first run, on a
		// 2,000,000-op chain xs left 130 MB of garbage at the peak.
		xs:     make([]xfer, 0, nt),
		planIn: make([]int32, n+len(m.in)+1), planOut: make([]int32, n+5*nt+len(m.cons)+2*n+1),
		rs: make([]resource, r), hold: make([]int32, d), dirty: make([]int32, 0, r), ev: make([]event, ringSize(r+1)),
		mem: make([]int64, d), peak: make([]int64, d), busy: make([]float64, d), lastRec: make([]int64, d),
	}}}
	if m.disp != nil {
		s.hostT = make([]float64, d)
	}
	if m.regions > 0 {
		s.launched = make([]bool, d*m.regions)
	}
	if m.syncFrom >= 0 {
		s.synced = make([]bool, d)
	}
	if m.slots != nil {
		s.queue, s.queued = make([]float64, d*m.queueDepth), make([]int64, d)
	}
	s.r = simViews{
		ops: rawOf(s.ops), units: rawOf(s.units[:cap(s.units)]), fs: rawOf(s.fs), uslot: rawOf(s.uslot),
		tref: rawOf(s.tref), planIn: rawOf(s.planIn), planOut: rawOf(s.planOut),
	}
	return s
}

// ErrDeadlock means the simulation could not finish every op; it cannot
// happen for a valid graph and decision and indicates a bug.
var ErrDeadlock = errors.New("roofline: simulation deadlocked")

// ErrStrategy is the simulator's error for a decision with replicas,
// micro-batches or sharding: it simulates one replica's step (the
// strategy evaluator composes replicas and pipelines around it).
var ErrStrategy = errors.New("roofline: the simulator runs one replica and one micro-batch")

// Run simulates decision dec and returns the result. The returned Result's
// slices belong to the Simulator and are overwritten by the next Run: copy
// them (Result.Clone) to keep them.
func (s *Simulator) Run(dec decision.Decision) (*evaluate.Result, error) {
	m := s.m
	if dec.ValidateShape(m.G, m.d) != nil {
		return nil, dec.Validate(m.G, m.d) // placeAndFuse checks the devices
	}
	if !dec.Strategy.IsZero() {
		return nil, fmt.Errorf("%w (strategy %s)", ErrStrategy, dec.Strategy)
	}
	s.reset(dec.Priority == nil && (!m.Opts.SyncTransfers || dec.Transfer == nil), dec.Transfer == nil)
	s.prio, s.pbuf = s.renumber(dec.Priority, s.pbuf)
	s.fusion, s.fbuf = s.renumber(dec.Fusion, s.fbuf)
	if !s.placeAndFuse(dec.Device) {
		return nil, dec.Validate(m.G, m.d) // a device that does not exist
	}
	for k := 0; k < m.d; k++ {
		s.peak[k] = s.mem[k]
		s.lastRec[k] = s.mem[k]
		if s.rec != nil {
			s.rec.Memory(k, 0, s.mem[k])
		}
	}
	s.queueSources()
	if err := s.loop(dec.Transfer); err != nil {
		return nil, err
	}
	s.fillResult(dec.Device)
	return &s.res, nil
}

// renumber returns the per-op values x in topological numbering, in buf
// unless the graph is numbered topologically.
func (s *Simulator) renumber(x, buf []int) (out, newBuf []int) {
	if x == nil || s.m.identity {
		return x, buf
	}
	if cap(buf) < len(x) {
		buf = make([]int, len(x))
	}
	buf = buf[:len(x)]
	for v, i := range s.m.orig {
		buf[v] = x[i]
	}
	return buf, buf
}

// reset empties the resources and the per-run counters.
func (s *Simulator) reset(fifoDev, fifoCh bool) {
	d := s.m.d
	for k := range s.rs {
		r := &s.rs[k]
		r.head, r.n, r.running, r.dirty = 0, 0, -1, false
		r.fifo = fifoCh
		if k < d {
			r.fifo = fifoDev
		}
	}
	for k := 0; k < d; k++ {
		s.hold[k], s.mem[k], s.busy[k] = -1, 0, 0
	}
	clear(s.hostT)
	clear(s.launched)
	clear(s.synced)
	clear(s.queue)
	clear(s.queued)
	s.dirty, s.xs, s.units = s.dirty[:0], s.xs[:0], s.units[:0]
	s.evHead, s.evN = 0, 0
	s.nIn, s.nOut = 0, 0
	s.kernels, s.finished = 0, 0
	s.pfEnd, s.pfNext = 0, 0
	s.res.BytesMoved, s.res.Transfers = 0, 0
	if cap(s.res.LinkBytes) < d*d {
		s.res.LinkBytes = make([]int64, d*d)
	}
	s.res.LinkBytes = s.res.LinkBytes[:d*d]
	clear(s.res.LinkBytes)
}

// b2i is 1 for true, 0 for false (compiled without a branch).
func b2i(b bool) int32 {
	var i int32
	if b {
		i = 1
	}
	return i
}
