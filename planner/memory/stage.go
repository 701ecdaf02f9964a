package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/plan/adapters"
)

// Stage is what one pipeline stage holds on one of its GPUs
// (StageOf's), parameters: Params in all (its blocks' shards, the
// embedding's on the first stage, the output layer's on the last);
// Experts the experts' share of them and Layers the transformer
// blocks' (FP8 copies are kept of them), both 0 where the plan does not
// need them apart; Adapters LoRA's adapters, not in Params (0 without
// LoRA). Dense is its dense layers before the experts and
// DenseRecomputed how many of them recompute (Plan.DenseOn's).
type Stage struct {
	Params          float64
	Experts, Layers float64
	Adapters        float64
	Dense           int
	DenseRecomputed int
	// BF16Layers is how many of its layers run outside the plan's
	// low-precision recipe, BF16 GEMMs and weights (Step.BF16Layers;
	// counted as plan.Plan.InBF16 counts a layer: highCounters).
	BF16Layers int
}

// stageLayerParams is stage s's experts' parameters on one of its GPUs
// (its MoE layers' local experts, 1/ETP of each) and its blocks' (the
// experts included, its dense layers' before the experts, the
// prediction modules' pm on the last stage (nil: none); the embedding
// and output layer not). dn is the stage's dense layers (DenseOn's).
func stageLayerParams(m *transformer.Spec, pl *plan.Plan, s, dn int, pm Prediction) (experts, layers float64) {
	if m.Hybrid() && m.MoE() {
		return hybridStageParams(m, pl, s)
	}
	l := float64(pl.Stages[s])
	T := float64(pl.TPs[s])
	if !m.MoE() {
		layers = l * (float64(transformer.LayerParams(*m)) / T)
	} else {
		dense := float64(dn)
		experts = (l - dense) * float64(m.Experts/pl.EP) * float64(transformer.ExpertParams(*m)) / float64(pl.ETP)
		layers = experts + (l-dense)*moeDenseParams(m, pl.TPs[s])
		if dn > 0 {
			layers += dense * (float64(transformer.DenseLayerParams(*m)) / T)
		}
	}
	if s == pl.PP-1 && pm != nil {
		// Each module: a block like the last, and its own parameters
		// beside it (Prediction.ModuleParams).
		x := pm.ModuleCount(*m)
		block := float64(transformer.DenseLayerParams(*m)) / T
		if m.MoE() {
			e := float64(m.Experts/pl.EP) * float64(transformer.ExpertParams(*m)) / float64(pl.ETP)
			experts += x * e
			block = e + moeDenseParams(m, pl.TPs[s])
		}
		layers += x * pm.ModuleParams(*m, T, block)
	}
	return experts, layers
}

// hybridStageParams is stageLayerParams' for a hybrid with blocks of
// experts (transformer.KindExperts, E: Nemotron 3), counted on the
// layers stage s holds (plan.Plan.StagePattern's: the E layers may fall
// unevenly, and each stage holds its own). A block of experts keeps its local experts (Experts/EP
// of them, 1/ETP of each) and, over the tensor group, its norm, router
// (replicated) and shared expert (a 1/T shard, as moeDenseParams'); a
// Mamba-2, attention or MLP block 1/T of its parameters
// (transformer.HybridBlockParams).
func hybridStageParams(m *transformer.Spec, pl *plan.Plan, s int) (experts, layers float64) {
	T := float64(pl.TPs[s])
	local := float64(m.Experts/pl.EP) * float64(transformer.ExpertParams(*m)) / float64(pl.ETP)
	for _, k := range pl.StagePattern(m, s) {
		if k != transformer.KindExperts {
			layers += float64(transformer.HybridBlockParams(*m, k)) / T
			continue
		}
		experts += local
		layers += local + float64(int64(m.Hidden)+int64(m.SharedExperts)*transformer.ExpertParams(*m))/T + float64(transformer.RouterParams(*m))
	}
	return experts, layers
}

// moeDenseParams is one MoE block's parameters besides its routed
// experts on one GPU of a tensor group of T: the attention's and the
// shared experts' shards, the router (replicated over the group).
func moeDenseParams(m *transformer.Spec, T int) float64 {
	return float64(transformer.AttentionParams(*m)+int64(m.SharedExperts)*transformer.ExpertParams(*m))/float64(T) + float64(transformer.RouterParams(*m))
}

// stageParamsOf is stage s's parameters on one of its GPUs: its
// layers' shards, and the embedding's on the first stage, the output
// layer's (and a tied embedding's copy) on the last; layers is the
// stage's blocks' parameters (stageLayerParams', read in a model with
// experts or prediction modules pm only), lp transformer.LayerParams(m).
func stageParamsOf(m *transformer.Spec, pl *plan.Plan, s int, lp, layers float64, pm Prediction) float64 {
	T := float64(pl.TPs[s])
	params := float64(pl.Stages[s]) * (lp / T)
	if m.MoE() || pm != nil {
		params = layers
	}
	if s == 0 {
		params += float64(transformer.EmbeddingParams(*m)) / T
	}
	if s == pl.PP-1 {
		params += float64(transformer.OutputParams(*m)) / T
		if (m.Tied || pm != nil) && pl.PP > 1 {
			params += float64(m.Vocab) * float64(m.Hidden) / T // the output layer's (or the prediction modules') copy of the embedding
		}
	}
	return params
}

// StageOf is stage s's parameters (stageParamsOf's), and where the
// plan needs them apart (a model with experts, FP8, FSDP, autocast's
// copies of the blocks' weights) its experts' and blocks'
// (stageLayerParams'), from its dense layers (Plan.DenseOn): the blocks'
// parameters computed once for both. lp is transformer.LayerParams(m) (computed
// once by the caller); pm the model's prediction modules (Step.Prediction;
// nil: none).
func StageOf(m *transformer.Spec, pl *plan.Plan, s int, lp float64, pm Prediction) Stage {
	var st Stage
	st.Dense, st.DenseRecomputed = pl.DenseOn(m, s)
	split := m.MoE() || pl.FP8 != "" || pl.FSDP || pl.Run.Eager && pl.Run.FP32Weights
	var experts, layers float64
	if split || pm != nil {
		experts, layers = stageLayerParams(m, pl, s, st.Dense, pm)
	}
	st.Params = stageParamsOf(m, pl, s, lp, layers, pm)
	if split {
		st.Experts, st.Layers = experts, layers
	}
	if pl.LoRA() {
		st.Adapters = adapters.Stage(pl.FineTune, m, pl.Stages[s], st.Dense, pl.TPs[s], pl.ETP)
	}
	return st
}

// stageMem is one GPU's memory of one pipeline stage by part, bytes
// (stageMemory's).
type stageMem struct{ weights, fp8, grads, opt, acts, logits float64 }

func (sm stageMem) total() float64 {
	return sm.weights + sm.fp8 + sm.grads + sm.opt + sm.acts + sm.logits
}

// stages is every stage's parameters (StageOf's) in stages, a buffer
// of the caller's (a pipeline of up to its capacity stays on its
// stack).
func (step *Step) stages(stages []Stage) []Stage {
	pl := &step.Plan
	if pl.PP > cap(stages) {
		stages = make([]Stage, 0, pl.PP)
	}
	stages = stages[:pl.PP]
	lp := float64(transformer.LayerParams(step.Model))
	for s := range stages {
		stages[s] = StageOf(&step.Model, pl, s, lp, step.Prediction)
		if step.BF16Layers != nil {
			stages[s].BF16Layers = step.BF16Layers(s)
		}
	}
	return stages
}
