package planner

import (
	"math"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// stageKit is what the stages of one tensor-parallel degree share: the
// coster of that degree (its tensor group, its kernels' shards) and one
// layer's, the embedding's and the output layer's forward and backward.
type stageKit struct {
	c coster
	*kitPhases
	// high is the kit's phases with the plan's layers in BF16
	// (plan.Plan.InBF16) and bf16 how many of each stage's layers run
	// so, where a registered cost.HighPrecisionLayers prices the kit's
	// shard (nil: none).
	high *kitPhases
	bf16 []int
}

// appendKit appends to kits the stage kit of tensor-parallel degree T
// of plan pl of m on p (its phases cache's, costed once), with its BF16
// layers' phases and counts where a registered
// cost.HighPrecisionLayers prices it (the plug-in asked of a copy of
// the kit's shard); the kit is made in place, where the caller keeps
// its kits.
func appendKit(kits []stageKit, pts *cost.Points, m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64, cache PhaseCache) []stageKit {
	kits = append(kits, stageKit{c: newCosterOf(pts, m, pl, p, T, tokens)})
	k := &kits[len(kits)-1]
	k.kitPhases = k.c.phases(cache)
	if pl.Declared == "" {
		return kits // layers in BF16 are a keyed mechanism's (TestHighPrecisionKeyed)
	}
	t := shardPool.Get().(*cost.Shard)
	*t = k.c.Shard
	if hp := pts.HighPrecisionLayers.Of(t); hp != nil {
		k.bf16 = make([]int, pl.PP)
		for s := range k.bf16 {
			k.bf16[s] = hp.HighPrecisionLayers(t, s)
		}
		bf := newCosterOf(pts, m, pl.InBF16(), p, T, tokens)
		k.high = bf.phases(cache)
	}
	*t = cost.Shard{}
	shardPool.Put(t)
	return kits
}

// kitPhases are a stageKit's phases, each a forward or a backward of
// one micro-batch: a layer's (its backward recomputing as the plan says,
// and layerBwdKeep keeping its activations), the embedding's and the
// output layer's; in a model with experts and dense layers before them,
// a dense layer's; with multi-token prediction, its modules'
// (cost.PredictionModules).
// alone is one block's forward and backward kernels alone (the coster's
// layer without communication: Result's LayerForward and
// LayerBackward), set (hasAlone) the first time a plan's middle stage
// is of the kit's degree.
type kitPhases struct {
	layerFwd, layerBwd, layerBwdKeep phase
	embedFwd, embedBwd               phase
	outputFwd, outputBwd             phase
	denseFwd, denseBwd, denseBwdKeep phase
	predFwd, predBwd                 phase
	predicts                         bool // a family's PredictionModules priced predFwd and predBwd
	// mlp is one MoE layer's experts, forward and backward, seconds
	// (expertWork's: epOverlap's "mlp" node; 0 without experts).
	mlp      [2]float64
	alone    [2]float64
	hasAlone bool
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
	outProj   bool   // the output layer in MXFP8 (fp8-output-proj: a search's lever)
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
	case plan.FP8Rowwise:
		return 6
	case plan.FP8RowwiseGWHP:
		return 7
	}
	return 0
}

// PhaseCache keeps the phases of a model on a pod across evaluations
// (planner/search's: one PhaseCache{} a search): a plan's layers
// cost the same for every pipeline depth, replica count and split that
// shares its degree, micro-batch size, sequence parallelism and
// recomputation.
type PhaseCache map[costKey]*kitPhases

// phases is the phases of c's kit (stageKit's): cache's for c's
// costKey, else costed here and kept in cache (nil: none).
func (c *coster) phases(cache PhaseCache) *kitPhases {
	pl := &c.Plan
	block := pl.Recompute == plan.FullRecompute && pl.RecomputeLayers > 0
	key := costKey{T: pl.TP, C: pl.CP, MBS: pl.MBS, sp: pl.SequenceParallel, ov: pl.TPOverlap, rc: pl.Recompute, mods: pl.RecomputeModules, blockRec: block,
		EP: pl.EP, ETP: pl.ETP, imbalance: math.Float64bits(pl.Imbalance), fp8: fp8Code(pl.FP8), gradBF16: pl.GradBF16, run: pl.Run,
		slowdown: math.Float64bits(c.H.ComputeSlowdown), outProj: pl.FP8OutputProj}
	if ph := cache[key]; ph != nil {
		return ph
	}
	ph := &kitPhases{}
	ph.layerFwd, ph.layerBwd = c.layer()
	if c.M.MoE() && !c.M.Hybrid() {
		w := c.expertWork()
		ph.mlp = [2]float64{w.fwd.Busy, w.bwd.Busy}
	}
	ph.layerBwdKeep = ph.layerBwd // a layer's backward when it keeps its activations (block recomputation's other layers)
	if block {
		keep := *c
		keep.Plan.Recompute = plan.NoRecompute
		_, ph.layerBwdKeep = keep.layer()
	}
	h := &c.Pod.Kernels.Host
	lc := c.layerCosts()
	ph.embedFwd, ph.embedBwd = lc.Embedding(c.blocks())
	ph.outputFwd, ph.outputBwd = lc.Output(c.blocks())
	ph.embedFwd, ph.embedBwd, ph.outputFwd, ph.outputBwd = expose(c.Points, h, ph.embedFwd, false), expose(c.Points, h, ph.embedBwd, true), expose(c.Points, h, ph.outputFwd, false), expose(c.Points, h, ph.outputBwd, true)
	if c.M.MoE() && c.M.DenseLayers > 0 {
		// A model with experts' dense layers before them.
		ph.denseFwd, ph.denseBwd = lc.Dense(c.blocks())
		ph.denseBwdKeep = ph.denseBwd
		if block {
			keep := *c
			keep.Plan.Recompute = plan.NoRecompute
			_, ph.denseBwdKeep = lc.Dense(keep.blocks())
		}
	}
	if c.M.Hybrid() && c.M.MoE() {
		var keep *coster
		if block {
			k := *c
			k.Plan.Recompute = plan.NoRecompute
			keep = &k
		}
		c.hybridKit(ph, keep) // below
	}
	if p := c.Points.PredictionModules.Of(&c.Shard); p != nil {
		// The modules predicting further tokens (a family's:
		// cost.PredictionModules), with a block like the model's last
		// that keeps its activations.
		keep := *c
		keep.Plan.Recompute = plan.NoRecompute
		bf, bb := keep.block(c.M.MoE())
		ph.predicts = true
		ph.predFwd, ph.predBwd = p.Modules(&c.Shard, cost.Ends{EmbedFwd: ph.embedFwd, EmbedBwd: ph.embedBwd,
			OutputFwd: ph.outputFwd, OutputBwd: ph.outputBwd, BlockFwd: bf, BlockBwd: bb})
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
		alone.NoComm, alone.NoHost = true, true
		f, b := alone.layer()
		k.alone, k.hasAlone = [2]float64{f.Busy, b.Busy}, true
	}
	return k.alone[0], k.alone[1]
}

// kitIndex is the index in kits of the kit of tensor-parallel degree T
// (-1: none), the kits looked at in place (a stageKit is large to copy).
func kitIndex(kits []stageKit, T int) int {
	for i := range kits {
		if kits[i].c.Plan.TP == T {
			return i
		}
	}
	return -1
}

// hybridKit sets kit ph's layers of a hybrid with blocks of experts as
// a stage's costs read them (stageCost.assemble, Plan.DenseOn): its
// layers one block of experts (moeBlock's), its dense layers the mean
// of its other blocks; each also as it runs keeping its activations
// (keep: block recomputation's other layers).
func (c *coster) hybridKit(ph *kitPhases, keep *coster) {
	experts := func(c *coster) (fwd, bwd phase) {
		f, b, r := c.moeBlock()
		return c.Join(part{}, part{Fwd: f, Bwd: b, Rec: r}, true)
	}
	others := func(c *coster) (fwd, bwd phase) {
		return c.Join(c.hybridMean(float64(c.M.Layers-c.M.MoELayers())), part{}, false)
	}
	ph.layerFwd, ph.layerBwd = experts(c)
	ph.denseFwd, ph.denseBwd = others(c)
	ph.layerBwdKeep, ph.denseBwdKeep = ph.layerBwd, ph.denseBwd
	if keep != nil {
		_, ph.layerBwdKeep = experts(keep)
		_, ph.denseBwdKeep = others(keep)
	}
}
