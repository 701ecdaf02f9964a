package classical

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/optimize"
)

// PipeDream is PipeDream's planner (Narayanan et al., SOSP'19, §3.1): a
// dynamic program over contiguous splits of the model's layers into
// stages, each stage replicated, that minimises the slowest stage's time
// per micro-batch, its compute, its transfers and its replicas'
// all-reduce of its weights, amortized per micro-batch as the paper
// amortizes it per minibatch, subject to each stage fitting a GPU.
//
// placer's strategy format (decision.Strategy) replicates a whole
// placement: R replicas of an S-stage pipeline, R x S = N GPUs, as the
// synchronous PipeDream-Flush and PipeDream-2BW (Narayanan et al.,
// ICML'21, SC'21) run it. The SOSP'19 optimizer's per-stage replication
// (stage i on m_i GPUs) cannot be written in it, so this planner keeps R
// uniform over the stages: for every R dividing N (and at most the
// batch) and every micro-batch count M = 1, 2, 4, ... it runs the dynamic
// program at micro-batch ceil(B / (R M)) for the 1F1B schedule
// (PipeDream-Flush), then evaluates each proposal with the problem's
// evaluator, best estimate first, and keeps the best: the dynamic program
// proposes, the evaluator decides.
//
// The layers are runs of forward ops in topological order that break at
// module boundaries (the part of an op's name before its last '/': the
// PyTorch exporter's module paths, TensorFlow's name scopes), merged by
// time into at most MaxLayers; backward ops, parameters and optimizer
// steps go with their layer as gpipe places them (assignPipeline), so the
// program costs each split exactly as its placement will be laid out. Op
// times at a micro-batch come from the problem's cost model applied to
// the graph at that batch (graph.AtBatch) where the model can cost another
// graph's ops (roofline), else from scaling each op's time by its
// batch-dependent share. A graph without batch information has no
// micro-batches or replicas: the method does not apply (ErrNoBatch).
type PipeDream struct {
	// MaxMicroBatches bounds M (0 = 32).
	MaxMicroBatches int
	// MaxLayers bounds the layers the dynamic program splits (0 = 256).
	MaxLayers int
}

var _ optimize.Optimizer = PipeDream{}

// Name returns "pipedream".
func (PipeDream) Name() string { return "pipedream" }

// Optimize plans every replication and micro-batch count and evaluates
// the plans, best estimate first, keeping the best.
func (o PipeDream) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	g := p.Graph
	if g.Batch() == 0 {
		return nil, ErrNoBatch
	}
	tr := optimize.NewTracker(o.Name(), p, s, 0)
	if !p.EffectiveTasks().Placement {
		// The placement is the problem's to keep: no stages.
		if _, err := tr.Evaluate(ctx, p.Complete(p.Start())); err != nil && err != optimize.ErrStopped {
			return nil, err
		}
		return tr.Result(ctx, p.Complete(p.Start()))
	}
	pl, err := newPDPlanner(ctx, p, cmp.Or(o.MaxLayers, 256))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name(), err)
	}
	plans, err := pl.plans(cmp.Or(o.MaxMicroBatches, 32))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name(), err)
	}
	first := p.Complete(pl.decision(plans[0]))
	var failed error
	for _, pn := range plans {
		if ctx.Err() != nil {
			break
		}
		if _, err := tr.Evaluate(ctx, p.Complete(pl.decision(pn))); err != nil {
			if errors.Is(err, optimize.ErrStopped) {
				break
			}
			// A plan the evaluator refuses (a co-location group that
			// joins two stages makes no pipeline) is skipped.
			failed = cmp.Or(failed, err)
			continue
		}
		tr.Step()
	}
	if _, _, ok := tr.Best(); !ok && failed != nil {
		return nil, fmt.Errorf("%s: %w", o.Name(), failed)
	}
	return tr.Result(ctx, first)
}

// pdPlan is one proposal: R replicas of a pipeline of len(Cuts)+1 stages
// (stage k holds layers Cuts[k-1] to Cuts[k]-1), M micro-batches.
type pdPlan struct {
	R, M int
	Cuts []int
	// Objective is the dynamic program's (the slowest stage's amortized
	// time per micro-batch), Estimate the step time it implies (see
	// pdEstimate); Fits is false when no split fits the GPUs' memory and
	// the plan ignores memory.
	Objective, Estimate float64
	Fits                bool
}

// pdUnit is one layer's costs at one micro-batch size.
type pdUnit struct {
	// Time is the layer's forward and backward time per micro-batch,
	// Update its once-per-step time (optimizer steps), seconds.
	Time, Update float64
	// Send is the time the tensors crossing the cut after this layer take,
	// per micro-batch, activations forward and gradients back (PipeDream's
	// 2 C_i): the latency a micro-batch meets there.
	Send float64
	// State is its parameter state (weights, gradients, optimizer slots),
	// Grad the gradient bytes its replicas all-reduce, Act the activation
	// bytes it holds per micro-batch in flight.
	State, Grad, Act int64
}

// pdProblem is one run of the dynamic program: the layers at one
// micro-batch size, M micro-batches, at most Stages stages, the GPU memory
// (Limit, 0 = none) and the all-reduce time of a stage's gradient bytes
// over its replicas (nil = one replica).
type pdProblem struct {
	Units []pdUnit
	// Egress is the time per micro-batch the stage of layers i..j-1 sends
	// out over its GPU's links, at i*(L+1)+j: the activations that later
	// stages read and the gradients that earlier ones do (nil = none).
	Egress    []float64
	M, Stages int
	Limit     int64
	AllReduce func(bytes int64) float64
}

// pdSums are prefix sums of a problem's layers.
type pdSums struct {
	time, update     []float64
	state, grad, act []int64
	p                *pdProblem
}

func newPDSums(p *pdProblem) *pdSums {
	L := len(p.Units)
	s := &pdSums{p: p, time: make([]float64, L+1), update: make([]float64, L+1),
		state: make([]int64, L+1), grad: make([]int64, L+1), act: make([]int64, L+1)}
	for i, u := range p.Units {
		s.time[i+1] = s.time[i] + u.Time
		s.update[i+1] = s.update[i] + u.Update
		s.state[i+1] = s.state[i] + u.State
		s.grad[i+1] = s.grad[i] + u.Grad
		s.act[i+1] = s.act[i] + u.Act
	}
	return s
}

// compute is the time per micro-batch of the stage of layers i..j-1: its
// forward and backward.
func (s *pdSums) compute(i, j int) float64 { return s.time[j] - s.time[i] }

// comm is the time per micro-batch the stage of layers i..j-1 keeps its
// links busy (Egress).
func (s *pdSums) comm(i, j int) float64 {
	if s.p.Egress == nil {
		return 0
	}
	return s.p.Egress[i*(len(s.p.Units)+1)+j]
}

// pace is the time per micro-batch the stage of layers i..j-1 holds a
// pipeline to: its compute, or its sends where they take longer (they
// overlap the compute, on the GPU's copy engines, as PipeDream counts
// them: a stage of their own).
func (s *pdSums) pace(i, j int) float64 { return s.compute(i, j) + s.comm(i, j) }

// once is what the stage of layers i..j-1 runs once per step: its update
// and its replicas' all-reduce of its gradients.
func (s *pdSums) once(i, j int) float64 {
	u := s.update[j] - s.update[i]
	if s.p.AllReduce != nil {
		u += s.p.AllReduce(s.grad[j] - s.grad[i])
	}
	return u
}

// cost is the dynamic program's objective for the stage of layers i..j-1:
// its pace, plus what it runs once per step amortized over the step's M
// micro-batches.
func (s *pdSums) cost(i, j int) float64 {
	return s.pace(i, j) + s.once(i, j)/float64(s.p.M)
}

// fits reports whether the stage of layers i..j-1 with k stages from it to
// the last (itself included) fits a GPU: under 1F1B it holds min(k, M)
// micro-batches' activations besides its parameter state.
func (s *pdSums) fits(i, j, k int) bool {
	if s.p.Limit <= 0 {
		return true
	}
	return s.state[j]-s.state[i]+int64(min(k, s.p.M))*(s.act[j]-s.act[i]) <= s.p.Limit
}

// pdSolve runs the dynamic program: best[k] is the least objective of a
// split of the layers into exactly k non-empty contiguous stages (k = 1 ..
// Stages; +Inf when none fits), cuts[k] that split's stage starts after
// the first. The objective of a split is its slowest stage's cost. The
// program runs over suffixes, so that a stage knows how many stages follow
// it (its micro-batches in flight) whatever the number of stages:
// f[k][i] = min over j of max(cost(i, j), f[k-1][j]).
func pdSolve(p *pdProblem) (best []float64, cuts [][]int) {
	L := len(p.Units)
	S := min(p.Stages, L)
	s := newPDSums(p)
	cost := make([]float64, (L+1)*(L+1)) // cost of layers i..j-1 at i*(L+1)+j
	for i := 0; i < L; i++ {
		for j := i + 1; j <= L; j++ {
			cost[i*(L+1)+j] = s.cost(i, j)
		}
	}
	inf := math.Inf(1)
	f := make([][]float64, S+1)
	next := make([][]int, S+1)
	for k := range f {
		f[k] = make([]float64, L+1)
		next[k] = make([]int, L+1)
		for i := range f[k] {
			f[k][i] = inf
		}
	}
	f[0][L] = 0
	for k := 1; k <= S; k++ {
		for i := L - k; i >= 0; i-- {
			for j := i + 1; j <= L-k+1; j++ {
				if f[k-1][j] == inf || !s.fits(i, j, k) {
					continue
				}
				if c := max(cost[i*(L+1)+j], f[k-1][j]); c < f[k][i] {
					f[k][i], next[k][i] = c, j
				}
			}
		}
	}
	best = make([]float64, p.Stages+1)
	cuts = make([][]int, p.Stages+1)
	for k := range best {
		best[k] = inf
	}
	for k := 1; k <= S; k++ {
		best[k] = f[k][0]
		if best[k] == inf {
			continue
		}
		i := 0
		for r := k; r > 1; r-- {
			i = next[r][i]
			cuts[k] = append(cuts[k], i)
		}
	}
	return best, cuts
}

// pdStages lists the stages of a split of L layers at cuts as [from, to)
// pairs.
func pdStages(cuts []int, L int) [][2]int {
	out := make([][2]int, 0, len(cuts)+1)
	from := 0
	for _, c := range append(slices.Clone(cuts), L) {
		out = append(out, [2]int{from, c})
		from = c
	}
	return out
}

// pdEstimate is the step time a split implies under 1F1B, as the strategy
// evaluator composes one: the first micro-batch through every stage and
// across every cut, the other M-1 at the slowest stage's pace, then the
// slowest update and all-reduce, which wait for the last backward.
func pdEstimate(p *pdProblem, cuts []int) float64 {
	s := newPDSums(p)
	sum, slowest, once := 0.0, 0.0, 0.0
	for _, r := range pdStages(cuts, len(p.Units)) {
		sum += s.compute(r[0], r[1])
		if r[1] < len(p.Units) {
			sum += p.Units[r[1]-1].Send
		}
		slowest = max(slowest, s.pace(r[0], r[1]))
		once = max(once, s.once(r[0], r[1]))
	}
	return sum + float64(p.M-1)*slowest + once
}

// batchTimer is a cost model that can cost an op of another graph (the
// graph at a micro-batch): roofline.Model.
type batchTimer interface {
	TimeOf(op *graph.Op) float64
}

// allReducer is a cost model that times collectives: roofline.Model.
type allReducer interface {
	AllReduceTime(group []int, bytes int64) (float64, error)
}

// pdPlanner holds a graph's layers and their costs per micro-batch size.
type pdPlanner struct {
	p     *optimize.Problem
	unit  []int // op -> layer
	L     int
	ratio float64 // activation bytes held per byte an op produces
	limit int64
	byB   map[int]pdCosts
}

// pdCosts are the layers' costs at one micro-batch size.
type pdCosts struct {
	units  []pdUnit
	egress []float64
}

func newPDPlanner(ctx context.Context, p *optimize.Problem, maxLayers int) (*pdPlanner, error) {
	g := p.Graph
	pl := &pdPlanner{p: p, limit: memoryLimit(p), byB: map[int]pdCosts{}}
	pl.unit, pl.L = pdLayers(g, p.Cost.OpTime, max(maxLayers, 1), 4*p.Devices())
	assignPipeline(g, pl.unit, pl.L)
	if pl.limit > 0 {
		var err error
		if pl.ratio, err = activationRatio(ctx, p); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// pdLayers groups the forward ops (in topological order) into layers:
// runs that break only where the module (the name before its last '/')
// changes, or anywhere when that gives fewer than minLayers runs, merged
// so that a layer closes at the first break once it holds 1/maxLayers of
// the forward time. unit holds each forward op's layer, -1 for the
// others.
func pdLayers(g *graph.Graph, opTime func(int) float64, maxLayers, minLayers int) (unit []int, layers int) {
	var fwd []int
	total := 0.0
	for _, v := range g.Topo() {
		if g.Op(int(v)).Phase() == graph.PhaseForward {
			fwd = append(fwd, int(v))
			total += opTime(int(v))
		}
	}
	unit = make([]int, g.NumOps())
	for i := range unit {
		unit[i] = -1
	}
	if len(fwd) == 0 {
		return unit, 1
	}
	module := func(i int) string {
		name := g.Op(i).Name
		if k := strings.LastIndexByte(name, '/'); k >= 0 {
			return name[:k]
		}
		return name
	}
	brk := make([]bool, len(fwd)) // a layer may start at fwd[k]
	runs := 1
	for k := 1; k < len(fwd); k++ {
		if module(fwd[k]) != module(fwd[k-1]) {
			brk[k] = true
			runs++
		}
	}
	if runs < minLayers {
		for k := range brk {
			brk[k] = true
		}
	}
	weight := func(i int) float64 { return opTime(i) }
	if total <= 0 {
		weight, total = func(int) float64 { return 1 }, float64(len(fwd))
	}
	target := total / float64(maxLayers)
	acc := 0.0
	for k, i := range fwd {
		if k > 0 && brk[k] && acc >= target && layers < maxLayers-1 {
			layers++
			acc = 0
		}
		unit[i] = layers
		acc += weight(i)
	}
	return unit, layers + 1
}

// activationRatio is the activation memory an op holds per byte it
// produces, as memoryEstimate reads it off one evaluation of the whole
// graph on one device: the peak less the parameters, over every op's
// output bytes.
func activationRatio(ctx context.Context, p *optimize.Problem) (float64, error) {
	g := p.Graph
	r, err := p.Evaluator.Evaluate(context.WithoutCancel(ctx), decision.Decision{Device: decision.Single(g)})
	if err != nil {
		return 0, err
	}
	var params, out int64
	for i := range g.NumOps() {
		params += g.Op(i).ParamBytes
	}
	for t := range g.NumTensors() {
		out += g.Tensor(t).Bytes
	}
	if out == 0 {
		return 0, nil
	}
	return float64(max(0, r.PeakMemory[0]-params)) / float64(out), nil
}

// costs returns the layers' costs at micro-batch b.
func (pl *pdPlanner) costs(b int) (pdCosts, error) {
	if c, ok := pl.byB[b]; ok {
		return c, nil
	}
	p, g := pl.p, pl.p.Graph
	gb, err := graph.AtBatch(g, b)
	if err != nil {
		return pdCosts{}, err
	}
	L := pl.L
	u := make([]pdUnit, L)
	bt, exact := p.Cost.(batchTimer)
	fb := float64(b) / float64(g.Batch())
	for i := range g.NumOps() {
		var t float64
		if exact {
			t = bt.TimeOf(gb.Op(i))
		} else {
			f := pdFixedShare(g.Op(i))
			t = p.Cost.OpTime(i) * (f + (1-f)*fb)
		}
		l := &u[pl.unit[i]]
		if g.Op(i).Phase() == graph.PhaseUpdate {
			l.Update += t
		} else {
			l.Time += t
		}
		l.State += g.Op(i).ParamBytes
	}
	// A tensor read on later layers leaves a stage of layers i..j-1 that
	// holds its producer's layer a and not its last reader's h (i <= a <
	// j <= h); one read on earlier layers, one that does not hold its
	// first reader's l (l < i <= a < j): activations and parameters
	// forward, gradients back, whatever their phase. fwdAt[a*L1+h] and
	// bwdAt[a*L1+l] collect their times, the cut arrays their crossings.
	L1 := L + 1
	fwdAt := make([]float64, L*L1)
	bwdAt := make([]float64, L*L1)
	fwdCut := make([]float64, L1)
	bwdCut := make([]float64, L1)
	for t := range gb.NumTensors() {
		ts := gb.Tensor(t)
		a := pl.unit[ts.Producer]
		prod := g.Op(ts.Producer)
		if ts.BatchDim == graph.NoBatch && prod.FLOPs > prod.FixedFLOPs {
			u[a].Grad += ts.Bytes // a weight's gradient (strategy.Gradients)
		}
		if !prod.Alias {
			u[a].Act += int64(pl.ratio * float64(ts.Bytes))
		}
		lo, hi := a, a
		for _, c := range ts.Consumers {
			lo, hi = min(lo, pl.unit[c]), max(hi, pl.unit[c])
		}
		if lo == hi || p.Devices() < 2 {
			continue
		}
		x := 0.0
		if ts.HasTransferTime {
			x = ts.TransferTime
		} else {
			x = p.Cost.TransferTime(0, 1, ts.Bytes)
		}
		if hi > a {
			fwdAt[a*L1+hi] += x
			fwdCut[a] += x
			fwdCut[hi] -= x
		}
		if lo < a {
			bwdAt[a*L1+lo] += x
			bwdCut[lo] += x
			bwdCut[a] -= x
		}
	}
	sf, sb := 0.0, 0.0
	for j := 0; j < L; j++ {
		sf += fwdCut[j]
		sb += bwdCut[j]
		u[j].Send = max(sf, 0) + max(sb, 0)
	}
	// fwdAt[a*L1+j] becomes the time of a's tensors read at j or later,
	// bwdAt[a*L1+i] that of a's tensors read before i.
	for a := range L {
		row := fwdAt[a*L1 : (a+1)*L1]
		for h := L - 1; h >= 0; h-- {
			row[h] += row[h+1]
		}
		row = bwdAt[a*L1 : (a+1)*L1]
		prev := 0.0
		for l := 0; l <= L; l++ {
			prev, row[l] = prev+row[l], prev
		}
	}
	egress := make([]float64, L1*L1)
	for j := 1; j <= L; j++ {
		acc := 0.0
		for i := j - 1; i >= 0; i-- {
			acc += fwdAt[i*L1+j]
			egress[i*L1+j] = acc
		}
	}
	for i := 0; i < L; i++ {
		acc := 0.0
		for j := i + 1; j <= L; j++ {
			acc += bwdAt[(j-1)*L1+i]
			egress[i*L1+j] += acc
		}
	}
	c := pdCosts{units: u, egress: egress}
	pl.byB[b] = c
	return c, nil
}

// pdFixedShare is the part of op's time that does not scale with the
// batch (graph.AtBatch's rule for measured times).
func pdFixedShare(op *graph.Op) float64 {
	if op.FLOPs > 0 {
		return op.FixedFLOPs / op.FLOPs
	}
	if all := op.BytesRead + op.BytesWritten; all > 0 {
		return float64(op.FixedBytesRead+op.FixedBytesWritten) / float64(all)
	}
	return 1
}

// allReduce is the time R replicas of a stage take to all-reduce bytes of
// gradients in DDP's buckets (decision.DefaultBucketBytes), among the GPUs
// of stage 0 of each replica.
func (pl *pdPlanner) allReduce(R int) func(int64) float64 {
	if R <= 1 {
		return nil
	}
	S := pl.p.Devices() / R
	group := make([]int, R)
	for r := range group {
		group[r] = r * S
	}
	one := func(bytes int64) float64 {
		if bytes <= 0 {
			return 0
		}
		if ar, ok := pl.p.Cost.(allReducer); ok {
			if t, err := ar.AllReduceTime(group, bytes); err == nil {
				return t
			}
		}
		// A ring: 2(R-1) steps of bytes/R each over the link.
		return float64(2*(R-1)) * pl.p.Cost.TransferTime(group[0], group[1], (bytes+int64(R)-1)/int64(R))
	}
	const bucket = decision.DefaultBucketBytes
	full := one(bucket)
	return func(bytes int64) float64 {
		return float64(bytes/bucket)*full + one(bytes%bucket)
	}
}

// plans runs the dynamic program for every R dividing the GPUs (R at most
// the batch) and M = 1, 2, 4, ... up to maxM (R M at most the batch), and
// returns pdChoose's plans for each (R, M), sorted by fit, then estimate.
func (pl *pdPlanner) plans(maxM int) ([]pdPlan, error) {
	N, B := pl.p.Devices(), pl.p.Graph.Batch()
	var out []pdPlan
	for R := 1; R <= min(N, B); R++ {
		if N%R != 0 {
			continue
		}
		ar := pl.allReduce(R)
		for M := 1; M <= maxM && R*M <= B; M *= 2 {
			b := (B + R*M - 1) / (R * M)
			c, err := pl.costs(b)
			if err != nil {
				return nil, err
			}
			prob := &pdProblem{Units: c.units, Egress: c.egress, M: M, Stages: N / R, Limit: pl.limit, AllReduce: ar}
			ps := pdChoose(prob)
			if len(ps) == 0 {
				prob.Limit = 0
				ps = pdChoose(prob)
				for k := range ps {
					ps[k].Fits = false
				}
			}
			for _, pn := range ps {
				pn.R = R
				out = append(out, pn)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pipeline of %d layers on %d GPUs", pl.L, N)
	}
	slices.SortStableFunc(out, func(a, b pdPlan) int {
		if a.Fits != b.Fits {
			if a.Fits {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Estimate, b.Estimate)
	})
	return out, nil
}

// pdChoose solves p and proposes the number of stages whose split has
// the least estimate and, when that is fewer, the most stages that fit
// (every GPU of a replica busy: the estimate does not see what the
// evaluator's simulation of one micro-batch does, branches of the graph
// running side by side on different stages); none when no split fits.
func pdChoose(p *pdProblem) []pdPlan {
	best, cuts := pdSolve(p)
	var out []pdPlan
	most := 0
	for k := 1; k < len(best); k++ {
		if math.IsInf(best[k], 1) {
			continue
		}
		most = k
		e := pdEstimate(p, cuts[k])
		if len(out) == 0 || e < out[0].Estimate {
			out = []pdPlan{{M: p.M, Cuts: cuts[k], Objective: best[k], Estimate: e, Fits: true}}
		}
	}
	if len(out) > 0 && most > len(out[0].Cuts)+1 {
		out = append(out, pdPlan{M: p.M, Cuts: cuts[most], Objective: best[most], Estimate: pdEstimate(p, cuts[most]), Fits: true})
	}
	return out
}

// decision is plan pn's decision: layer l's ops on the device of its
// stage, the replicas, micro-batches and 1F1B.
func (pl *pdPlanner) decision(pn pdPlan) decision.Decision {
	stage := make([]int, pl.L)
	for k, r := range pdStages(pn.Cuts, pl.L) {
		for l := r[0]; l < r[1]; l++ {
			stage[l] = k
		}
	}
	d := pl.p.Start()
	d.Device = make([]int, len(pl.unit))
	for i, l := range pl.unit {
		d.Device[i] = stage[l]
	}
	d.Transfer = nil
	d.Strategy = decision.Strategy{}
	if pn.R > 1 {
		d.Strategy.Replicas = pn.R
	}
	if pn.M > 1 {
		d.Strategy.MicroBatches, d.Strategy.Schedule = pn.M, decision.OneFOneB
	}
	return d
}
