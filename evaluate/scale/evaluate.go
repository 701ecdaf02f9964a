package scale

import (
	"fmt"
	"math"

	"github.com/placer/placer/evaluate/scale/memory"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// Result is a plan's predicted training step.
type Result struct {
	Plan plan.Plan `json:"-"`
	// Step is the step's time in seconds; TFLOPs the model TFLOP/s per
	// GPU (Megatron's count: transformer.ModelFLOPs over the step and
	// the GPUs) and MFU their fraction of the GPU's dense BF16 peak (0,
	// left out: none, a CPU pod's processes, Pod.CPU).
	Step   float64 `json:"step_s"`
	TFLOPs float64 `json:"tflops_per_gpu"`
	MFU    float64 `json:"mfu,omitempty"`
	// Memory is the peak bytes of the most loaded GPU (weights,
	// gradients, optimizer state, activations in flight); Fits whether
	// it is within the GPU's memory.
	Memory int64 `json:"memory_bytes"`
	Fits   bool  `json:"fits"`
	// Verdict is "fits", "tight" or "over" (VerdictFits ...): Memory
	// against Usable within MemoryError, the plan's regime's measured
	// error of the peak (0 where none is measured: "fits" or "over"
	// alone), which MemoryErrorSource names. Fits is Verdict != "over".
	Verdict           string  `json:"verdict"`
	MemoryError       float64 `json:"memory_error,omitempty"`
	MemoryErrorSource string  `json:"memory_error_source,omitempty"`
	// Where the step goes, seconds: the pipeline's busy time on its most
	// loaded device (Compute, tensor-parallel communication included),
	// the bubble (fill and drain, stage imbalance, their point-to-point
	// transfers), exposed data-parallel communication, the tied
	// embedding's gradient all-reduce, and the optimizer step.
	Compute   float64 `json:"compute_s"`
	Bubble    float64 `json:"bubble_s"`
	DPExposed float64 `json:"dp_exposed_s"`
	Embedding float64 `json:"embedding_allreduce_s"`
	Optimizer float64 `json:"optimizer_s"`
	// TPExposed is the tensor-parallel communication not hidden behind
	// GEMMs, per step on the most loaded device (part of Compute).
	TPExposed float64 `json:"tp_exposed_s"`
	// CPExposed is the context-parallel key/value exchange not hidden
	// behind the attention blocks, per step on the most loaded device
	// (part of Compute; 0 without context parallelism).
	CPExposed float64 `json:"cp_exposed_s,omitempty"`
	// EPExposed is the experts' communication (the token all-to-alls
	// and the expert-tensor-parallel collectives, not overlapped), per
	// step on the most loaded device (part of Compute; 0 without
	// experts).
	EPExposed float64 `json:"ep_exposed_s,omitempty"`
	// HostExposed is the time the most loaded device's GPU waits on its
	// host (Host: kernels issued slower than they run, and the
	// dispatcher's synchronizations), per step (part of Compute).
	HostExposed float64 `json:"host_exposed_s,omitempty"`
	// HostStages is each pipeline device's host against its GPU, per
	// micro-batch (Evaluate fills it; the search does not).
	HostStages []StageHost `json:"host_stages,omitempty"`
	// MemoryByKind splits Memory: weights, gradients, optimizer state and
	// activations, bytes.
	Weights     int64 `json:"weights_bytes"`
	Grads       int64 `json:"grads_bytes"`
	OptState    int64 `json:"optimizer_state_bytes"`
	Activations int64 `json:"activations_bytes"`
	// MemoryParts is Memory by named part, and beside them the parts
	// held outside the allocator (Outside); Capacity is the GPU's
	// memory and Usable what the allocator may hold of it at the pod's
	// margin: Fits is Memory <= Usable.
	MemoryParts []plan.MemoryPart `json:"memory_parts,omitempty"`
	Capacity    int64             `json:"capacity_bytes,omitempty"`
	Usable      int64             `json:"usable_bytes,omitempty"`
	// MemoryMargin is the share of Capacity kept free (Pod.MemoryMargin).
	MemoryMargin float64 `json:"memory_margin,omitempty"`
	// Allocator is what PyTorch's caching allocator reserves for Memory's
	// tensors, simulated on each stage's allocation trace (WithAllocator
	// fills it; Evaluate and the search do not).
	Allocator *memory.AllocatorPeak `json:"allocator,omitempty"`
	// Sources says which figures a profile measured or composed and
	// which the roofline modelled (nil: no profile, all modelled).
	Sources *Sources `json:"sources,omitempty"`
	// LayerForward and LayerBackward are one transformer block's kernels
	// on one GPU for one micro-batch (its tensor-parallel shard, its
	// recomputation included, no communication): what one GPU measures
	// running the block alone (tools/layerbench).
	LayerForward  float64 `json:"layer_forward_s"`
	LayerBackward float64 `json:"layer_backward_s"`
	// LayerCosting says how a dense layer was costed where an eager
	// stack costs it from its ATen ops (EagerCosting; "": placer's fused
	// kernels).
	LayerCosting string `json:"layer_costing,omitempty"`
}

// Evaluate predicts one training step of model m under strategy s on pod
// p. The errors are Resolve's.
func Evaluate(m transformer.Spec, s plan.Strategy, p plan.Pod) (Result, error) {
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		return Result{}, err
	}
	r := EvaluateCached(m, pl, &p, nil, true)
	r.LayerCosting = EagerCosting(m, pl)
	if p.Profile != nil {
		mid := pl.P / 2
		c := newCoster(m, pl, &p, pl.TPs[mid], float64(pl.MBS)*float64(m.Seq)/float64(pl.C))
		r.Sources = sources(&c.pl, &c, &p, memory.StageOf(&m, &pl, mid, float64(m.LayerParams())).Params)
	}
	return r, nil
}

// stageCost is one pipeline device's forward and backward per
// micro-batch (all its chunks), and what it holds (memory.StageOf's:
// its parameters, its dense layers before the experts and how many of
// them recompute, computed once a stage).
type stageCost struct {
	fwd, bwd phase
	memory.Stage
}

// stageKit is what the stages of one tensor-parallel degree share: the
// coster of that degree (its tensor group, its kernels' shards) and one
// layer's, the embedding's and the output layer's forward and backward.
type stageKit struct {
	c coster
	*kitPhases
}

// kitPhases are a stageKit's phases: a layer's forward, its backward
// (recomputing as the plan says, and keeping its activations), the
// embedding's and the output layer's; in a model with experts and dense
// layers before them, a dense layer's (df, db, dbKeep); with
// multi-token prediction, its modules' (tf, tb: mtp). alone is one
// block's forward and backward kernels alone (the coster's layer
// without communication: Result's LayerForward and LayerBackward), set
// (hasAlone) the first time a plan's middle stage is of the kit's
// degree.
type kitPhases struct {
	lf, lb, lbKeep, ef, eb, of, ob, df, db, dbKeep, tf, tb phase
	alone                                                  [2]float64
	hasAlone                                               bool
}

// costKey is what a stageKit's phases depend on besides the model and
// the pod.
type costKey struct {
	T, C, MBS int
	sp, ov    bool
	rc        plan.Recompute
	mods      plan.RecomputeModules // selective recomputation's modules
	blockRec  bool
	EP, ETP   int
	imbalance uint64 // its bits (keys of plain words hash fastest)
	fp8       uint8  // fp8Code's
	gradBF16  bool   // the embedding's gradient accumulation
	run       plan.Settings
	slowdown  uint64 // the compute's clock (Hardware.ComputeSlowdown's bits)
}

// fp8Code numbers the FP8 recipes for costKey (0: BF16).
func fp8Code(recipe string) uint8 {
	switch recipe {
	case plan.FP8Current:
		return 1
	case plan.FP8Delayed:
		return 2
	case plan.FP8Blockwise:
		return 3
	case plan.FP8MX:
		return 4
	case plan.FP4NV:
		return 5
	}
	return 0
}

// PhaseCache keeps the phases of a model on a pod across evaluations
// (evaluate/scale/search's: one PhaseCache{} a search): a plan's layers
// cost the same for every pipeline depth, replica count and split that
// shares its degree, micro-batch size, sequence parallelism and
// recomputation.
type PhaseCache map[costKey]*kitPhases

func evaluate(m transformer.Spec, pl plan.Plan, p plan.Pod) Result {
	return EvaluateCached(m, pl, &p, nil, false)
}

// EvaluateCached is the evaluation of resolved plan pl (plan.Resolve) of
// m on p with the phases kept in cache (nil: none); hosts says to fill
// Result.HostStages. Under a power limit the step's
// compute is priced at the clock its average power allows (balanced).
func EvaluateCached(m transformer.Spec, pl plan.Plan, p *plan.Pod, cache PhaseCache, hosts bool) Result {
	return balanced(p, func(q *plan.Pod) Result { return evaluateAt(m, pl, q, cache, hosts) })
}

// evaluateAt is EvaluateCached at the pod's ComputeSlowdown as it is.
func evaluateAt(m transformer.Spec, pl plan.Plan, p *plan.Pod, cache PhaseCache, hosts bool) Result {
	tokens := float64(pl.MBS) * float64(m.Seq) / float64(pl.C)
	// One coster per distinct tensor-parallel degree (one for a uniform
	// plan, at most three for end stages of their own).
	// A plan has at most three (the end stages' and the middle's); kept
	// on the stack, as the stages of a pipeline of up to 32 are.
	var kitBuf [3]stageKit
	kits := kitBuf[:0]
	for _, T := range pl.TPs {
		if kitIndex(kits, T) < 0 {
			kits = append(kits, stageKit{c: newCoster(m, pl, p, T, tokens)})
			k := &kits[len(kits)-1]
			k.kitPhases = k.c.phases(cache)
		}
	}
	// A pipeline of up to 128 stages keeps its costs on the stack.
	var stageBuf [128]stageCost
	stages := stageBuf[:0]
	if pl.P > len(stageBuf) {
		stages = make([]stageCost, 0, pl.P)
	}
	stages = stages[:pl.P]
	lp := float64(m.LayerParams())
	for s := range stages {
		stages[s].assemble(&kits[kitIndex(kits, pl.TPs[s])], &m, &pl, s, lp)
	}
	if pl.EPOverlap {
		for s := range stages {
			epOverlap(&stages[s], pl, p, s)
		}
	}
	r := Result{Plan: pl}
	if hosts {
		r.HostStages = stageHosts(stages, &p.Kernels.Host)
	}
	busiest, sum := r.busiest(stages)
	if pl.P > 1 {
		r.Bubble = bubble(&m, &pl, p, tokens, busiest, sum)
	}
	r.DPExposed = dpExposed(&m, &pl, p, stages)
	r.Embedding = embeddingAllReduce(&m, &pl, p)
	r.Optimizer = optimizerStep(&m, &pl, p, stages)
	r.Step = r.Compute + r.Bubble + r.DPExposed + r.Embedding + r.Optimizer
	gpus := float64(p.GPUs())
	r.TFLOPs = stepFLOPs(&m, &pl) / r.Step / gpus / 1e12
	// A CPU pod has no measured peak to take a fraction of (Pod.CPU):
	// no MFU.
	if peak := p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16); peak > 0 && !p.CPU() {
		r.MFU = stepFLOPs(&m, &pl) / r.Step / gpus / peak
	}
	r.setMemory(&m, &pl, p, stages)
	// One block alone: an interior stage's (the middle one's).
	r.LayerForward, r.LayerBackward = kits[kitIndex(kits, pl.TPs[pl.P/2])].blockAlone()
	return r
}

// phases is the phases of c's kit (stageKit's): cache's for c's
// costKey, else costed here and kept in cache (nil: none).
func (c *coster) phases(cache PhaseCache) *kitPhases {
	pl := &c.pl
	block := pl.Recompute == plan.FullRecompute && pl.RecomputeLayers > 0
	key := costKey{T: pl.T, C: pl.C, MBS: pl.MBS, sp: pl.SequenceParallel, ov: pl.TPOverlap, rc: pl.Recompute, mods: pl.RecomputeModules, blockRec: block,
		EP: pl.EP, ETP: pl.ETP, imbalance: math.Float64bits(pl.Imbalance), fp8: fp8Code(pl.FP8), gradBF16: pl.GradBF16, run: pl.Run,
		slowdown: math.Float64bits(c.h.ComputeSlowdown)}
	if ph := cache[key]; ph != nil {
		return ph
	}
	ph := &kitPhases{}
	ph.lf, ph.lb = c.layer()
	ph.lbKeep = ph.lb // a layer's backward when it keeps its activations (block recomputation's other layers)
	if block {
		keep := *c
		keep.pl.Recompute = plan.NoRecompute
		_, ph.lbKeep = keep.layer()
	}
	h := &c.pod.Kernels.Host
	lc := c.layerCosts()
	ph.ef, ph.eb = lc.Embedding(*c)
	ph.of, ph.ob = lc.Output(*c)
	ph.ef, ph.eb, ph.of, ph.ob = expose(h, ph.ef, false), expose(h, ph.eb, true), expose(h, ph.of, false), expose(h, ph.ob, true)
	if c.m.MoE() && c.m.DenseLayers > 0 {
		// A model with experts' dense layers before them.
		ph.df, ph.db = lc.Dense(*c)
		ph.dbKeep = ph.db
		if block {
			keep := *c
			keep.pl.Recompute = plan.NoRecompute
			_, ph.dbKeep = lc.Dense(keep)
		}
	}
	if c.m.MTP > 0 {
		ph.tf, ph.tb = c.mtp(ph.ef, ph.eb, ph.of, ph.ob)
	}
	if cache != nil {
		cache[key] = ph
	}
	return ph
}

// blockAlone is one block's forward and backward kernels alone (the
// kit's coster's layer without communication: Result's LayerForward and
// LayerBackward). Without communication a block depends on nothing
// outside costKey, so the kit's phases keep it for every plan of the
// cache that shares them.
func (k *stageKit) blockAlone() (fwd, bwd float64) {
	if !k.hasAlone {
		alone := k.c
		alone.noComm, alone.noHost = true, true
		f, b := alone.layer()
		k.alone, k.hasAlone = [2]float64{f.busy, b.busy}, true
	}
	return k.alone[0], k.alone[1]
}

// assemble sets stage s's forward and backward per micro-batch from its
// kit k's phases (k of the stage's tensor-parallel degree): its MoE
// layers' and its dense layers', each with its share of the
// recomputation, the embedding on the first stage, the output layer and
// the multi-token-prediction modules on the last; and its parameters
// (memory.StageOf). lp is m.LayerParams() (computed once by the caller).
func (st *stageCost) assemble(k *stageKit, m *transformer.Spec, pl *plan.Plan, s int, lp float64) {
	layers := float64(pl.Stages[s]) // on this pipeline device, over its V chunks
	// Its dense layers (before the experts) and its MoE ones, each
	// with its share of the recomputation.
	st.Stage = memory.StageOf(m, pl, s, lp)
	dn := st.Dense
	dense, drec := float64(dn), float64(st.DenseRecomputed)
	kk := pl.Recomputed(s)
	mrec := min(max(kk-drec, 0), layers-dense)
	st.fwd = scalePhase(k.lf, layers-dense)
	st.bwd = scalePhase(k.lb, mrec).plus(scalePhase(k.lbKeep, layers-dense-mrec))
	if dn > 0 {
		st.fwd = st.fwd.plus(scalePhase(k.df, dense))
		st.bwd = st.bwd.plus(scalePhase(k.db, drec)).plus(scalePhase(k.dbKeep, dense-drec))
	}
	if s == 0 {
		st.fwd, st.bwd = st.fwd.plus(k.ef), st.bwd.plus(k.eb)
	}
	if s == pl.P-1 {
		st.fwd, st.bwd = st.fwd.plus(k.of), st.bwd.plus(k.ob)
		if m.MTP > 0 {
			st.fwd, st.bwd = st.fwd.plus(k.tf), st.bwd.plus(k.tb)
		}
	}
}

// busiest sets r's Compute and the tensor-, context- and
// expert-parallel communication exposed in it from the schedule: M
// micro-batches through P devices of V chunks each (1F1B, interleaved
// when V > 1): the most loaded device is busy M times its
// per-micro-batch time. It returns that device's per-micro-batch time
// and the sum of every device's (bubble's).
func (r *Result) busiest(stages []stageCost) (busiest, sum float64) {
	var busiestTP, busiestCP, busiestEP, busiestHost float64
	for _, st := range stages {
		t := st.fwd.busy + st.bwd.busy
		sum += t
		if t > busiest {
			busiest, busiestTP, busiestCP = t, st.fwd.tpExposed+st.bwd.tpExposed, st.fwd.cpExposed+st.bwd.cpExposed
			busiestEP = st.fwd.epExposed + st.bwd.epExposed
			busiestHost = st.fwd.hostExposed + st.bwd.hostExposed
		}
	}
	M := float64(r.Plan.M)
	r.Compute = M * busiest
	r.TPExposed = M * busiestTP
	r.CPExposed = M * busiestCP
	r.EPExposed = M * busiestEP
	r.HostExposed = M * busiestHost
	return busiest, sum
}

// bubble is the pipeline's fill and drain (P > 1): the devices other
// than the busiest (busiest of sum, busiest's) add their time divided
// by V (Narayanan et al., SC'21: bubble (P-1)/(V M)), and one
// point-to-point transfer per boundary each way (pipelineSends).
func bubble(m *transformer.Spec, pl *plan.Plan, p *plan.Pod, tokens, busiest, sum float64) float64 {
	first, same, p2ps := pipelineSends(m, pl, p, tokens)
	if same {
		return (sum-busiest)/float64(pl.V) + 2*float64(pl.P-1)*first
	}
	return (sum-busiest)/float64(pl.V) + 2*p2ps
}

// kitIndex is the index in kits of the kit of tensor-parallel degree T
// (-1: none), the kits looked at in place (a stageKit is large to copy).
func kitIndex(kits []stageKit, T int) int {
	for i := range kits {
		if kits[i].c.pl.T == T {
			return i
		}
	}
	return -1
}

// String is a plan's one-line summary.
func (r Result) String() string {
	return fmt.Sprintf("%s: %.3f s, %.1f TFLOP/s per GPU, MFU %.1f%%, %.1f GB per GPU", r.Plan, r.Step, r.TFLOPs, 100*r.MFU, float64(r.Memory)/1e9)
}
