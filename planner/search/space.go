package search

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/planner/plan"
)

// Space bounds what Search enumerates; its zero value is the whole space.
type Space struct {
	// MaxMBS is the largest micro-batch size tried (0 = 8).
	MaxMBS int
	// MaxVirtual is the most model chunks per device tried (0 = 8).
	MaxVirtual int
	// MBS and Context, when above 0, are the micro-batch size and the
	// context-parallel degree a --strategy keeps (SpaceOf): the only ones
	// tried, whatever the powers of two up to MaxMBS and the long
	// sequences ContextDegrees keeps to (0: those).
	MBS, Context int
	// Keep, when not nil, keeps only the plans it returns true for (a
	// published configuration's stated degrees, with its unstated knobs
	// searched).
	Keep func(plan.Plan) bool
	// Prefilter, when not nil, skips a strategy before it is resolved:
	// it must return false only for strategies whose plans Keep refuses
	// (a cheaper necessary condition of Keep; nil: none).
	Prefilter func(plan.Strategy) bool
	// Top is how many of the fastest fitting plans to keep besides the
	// best (Result.Top; 0 = none).
	Top int
	// AllowTight keeps the plans whose memory is "tight" (planner.Result.Verdict:
	// within their regime's measured error of the usable memory); false
	// sets them aside (Result.Tight counts them).
	AllowTight bool
	// Imbalance, FP8 and GradBF16 are every plan's (Strategy's: the
	// experts' load imbalance, the FP8 recipe, the gradients' precision):
	// settings of the run, not searched.
	Imbalance float64
	FP8       string
	GradBF16  bool
	// FP8Gather is every FSDP plan's float8 all-gather
	// (Strategy.FP8Gather: a setting of the run; the plans without FSDP
	// run without it).
	FP8Gather bool
	// FineTune is every plan's fine-tuning (Strategy.FineTune: LoRA,
	// packing; a setting of the run, not searched).
	FineTune plan.FineTune
	// Software is every plan's software stack (Strategy.Software: a
	// setting of the run, not searched).
	Software plan.Software
	// MemoryRecipe is every plan's memory recipe (Strategy.MemoryRecipe:
	// FP8 weights and activations, offload, CUDA graphs' buffers, the
	// allocator; a setting of the run, not searched).
	MemoryRecipe plan.MemoryRecipe
	// FSDP adds FSDP (Strategy.FSDP) to the sharding tried beside none
	// and the distributed optimizer (false: not tried).
	FSDP bool
	// RecomputeModules, when set, adds selective recomputation of these
	// modules (Strategy.RecomputeModules) to the recomputations tried.
	RecomputeModules plan.RecomputeModules
	// EmbeddingLayer and LossLayer count the embedding and the loss as
	// layers in every plan's pipeline split (Strategy's): the one split
	// they give replaces the splits tried, and plans without a pipeline
	// are not tried.
	EmbeddingLayer, LossLayer bool
	// For is the framework the plans are for (Target): Search enumerates
	// only plans it runs. The zero value: every plan.
	For Target
	// Levers are the recipe switches (Levers' keys) Search turns on
	// where they change whether a plan fits or how fast it runs
	// (tryLevers); nil: every plan runs the recipe above as it is.
	// WithLevers sets them for a framework.
	Levers []string
	// named are the keys SpaceOf's --strategy named (their names):
	// the levers they fix stay as written (WithLevers).
	named map[string]bool
}

// Target is a framework whose plans Search proposes (Space.For): what
// its export writes, as constraints on the space Search enumerates
// (workloads/export/plans' SearchTarget builds each framework's). The zero
// value constrains nothing.
type Target struct {
	// Name is the framework's (--for NAME); "" for none.
	Name string
	// OneTensor: one tensor-parallel degree for every stage (no end
	// stages of their own degree, stage-tp).
	OneTensor bool
	// EndChunks: an end stage whose layers first= or last= set splits
	// them into V equal model chunks, as the stages between do
	// (Megatron-Core's --decoder-first/last-pipeline-num-layers with
	// virtual stages: first and last multiples of V).
	EndChunks bool
	// LayerChunks: every stage's layers split into V equal model chunks,
	// with the embedding or the loss counted as layers too (torchtitan's
	// module_fqns_per_model_part, whole layers a chunk).
	LayerChunks bool
	// UnitSplits adds to the splits tried those with the embedding, the
	// loss, or both counted as layers (Strategy's EmbeddingLayer and
	// LossLayer: Megatron-Core's --account-for-embedding/loss-in-
	// pipeline-split), with the virtual stages dividing a stage's units:
	// the uneven splits with virtual stages that end chunks of their own
	// share cannot be (Llama 3 405B's 126 layers over 16 stages: 128
	// units, 8 a stage).
	UnitSplits bool
	// FSDP adds FSDP to the sharding tried (Space.FSDP), the framework's
	// data parallelism beside others (torchtitan's).
	FSDP bool
	// Refuses, when not nil, is the framework's exporter's verdict on a
	// resolved plan, before it is evaluated: nil where it writes it, else
	// why not (Search sets the plan aside and counts it: Result.Refused).
	Refuses func(plan.Plan) error
}

// searchRecompute is a recomputation Search tries: the kind, and with
// selective recomputation its modules (0: the core attention).
type searchRecompute struct {
	rc   plan.Recompute
	mods plan.RecomputeModules
}

// recomputes are the recomputations Search tries: none, selective,
// selective of sp's modules where it names others, and full.
func (sp Space) recomputes() []searchRecompute {
	if sp.RecomputeModules != 0 && sp.RecomputeModules != plan.RecomputeCoreAttn {
		return []searchRecompute{{plan.NoRecompute, 0}, {plan.SelectiveRecompute, 0}, {plan.SelectiveRecompute, sp.RecomputeModules}, {plan.FullRecompute, 0}}
	}
	return []searchRecompute{{plan.NoRecompute, 0}, {plan.SelectiveRecompute, 0}, {plan.FullRecompute, 0}}
}

// SpaceOf is the search space of a partial plan (placer search
// --strategy at cluster scale): what it names is kept as given and the
// rest searched. Its degrees (tp, stage-tp, cp, pp, dp, vp, mbs, mb, ep,
// etp), switches (sp, tpoverlap, distopt or shard, fsdp, epoverlap),
// recomputation (recompute, recompute-layers), stage layers (first,
// last) fix the plans Keep lets through (schedule=1f1b is the search's
// own; gpipe is refused); the run's settings
// (fp8, grads, imbalance, the fine-tuning's peft, lora-rank,
// lora-alpha, lora-targets, pack and pack-len) are every plan's, as
// Space's fields say, and
// fsdp=on adds FSDP to the sharding tried (in a model with experts too),
// recompute-modules adds selective recomputation of those modules to the
// recomputations tried (and keeps it: the plans recompute them), and
// embedding-layer and loss-layer count the embedding and the loss as
// layers in every plan's split. "" is the whole space. The errors are
// ParseStrategy's.
func SpaceOf(text string) (Space, error) {
	s, err := plan.ParseStrategy(text)
	if err != nil {
		return Space{}, err
	}
	pairs, err := plan.SplitStrategy(text)
	if err != nil {
		return Space{}, err
	}
	sp := Space{FP8: s.FP8, GradBF16: s.GradBF16, FP8Gather: s.FP8Gather, Imbalance: s.Imbalance, FSDP: s.FSDP, Software: s.Software, FineTune: s.FineTune,
		RecomputeModules: s.RecomputeModules, EmbeddingLayer: s.EmbeddingLayer, LossLayer: s.LossLayer, MemoryRecipe: s.MemoryRecipe}
	sp.named = map[string]bool{}
	var keep []func(plan.Plan) bool
	for _, kv := range pairs {
		sp.named[plan.KeyName(kv.Key)] = true
		switch plan.KeyName(kv.Key) {
		case "tp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.Uniform() && pl.TP == s.TensorDegree() })
		case "stage-tp":
			keep = append(keep, func(pl plan.Plan) bool { return slices.Equal(pl.TPs, s.TensorStages) })
		case "cp":
			sp.Context = s.ContextDegree()
			keep = append(keep, func(pl plan.Plan) bool { return pl.CP == s.ContextDegree() })
		case "pp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.PP == s.PipelineDegree() })
		case "dp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.DP == s.ReplicaCount() })
		case "vp":
			sp.MaxVirtual = max(8, s.VirtualStages())
			keep = append(keep, func(pl plan.Plan) bool { return pl.VP == s.VirtualStages() })
		case "mbs":
			sp.MaxMBS, sp.MBS = max(8, s.MicroBatchSize), s.MicroBatchSize
			keep = append(keep, func(pl plan.Plan) bool { return pl.MBS == max(s.MicroBatchSize, 1) })
		case "mb":
			keep = append(keep, func(pl plan.Plan) bool { return pl.NumMicro == max(s.MicroBatches, 1) })
		case "schedule":
			if s.Schedule != decision.OneFOneB {
				return Space{}, fmt.Errorf("strategy %q: schedule=%s: the search runs 1F1B, Megatron-Core's schedule (placer eval scores a GPipe plan)", text, s.Schedule)
			}
		case "sp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.SequenceParallel == s.SequenceParallel })
		case "tpoverlap":
			keep = append(keep, func(pl plan.Plan) bool { return pl.TPOverlap == s.TPOverlap })
		case "distopt", "shard":
			keep = append(keep, func(pl plan.Plan) bool { return pl.DistOpt == s.DistOpt })
		case "fsdp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.FSDP == s.FSDP })
		case "recompute":
			keep = append(keep, func(pl plan.Plan) bool { return pl.Recompute == s.Recompute })
		case "recompute-layers":
			keep = append(keep, func(pl plan.Plan) bool { return pl.RecomputeLayers == s.RecomputeLayers })
		case "first":
			keep = append(keep, func(pl plan.Plan) bool {
				if pl.EmbeddingLayer || pl.LossLayer {
					return pl.Stages[0] == s.FirstLayers // the split the units give, not written back
				}
				return pl.FirstLayers == s.FirstLayers
			})
		case "last":
			keep = append(keep, func(pl plan.Plan) bool {
				if pl.EmbeddingLayer || pl.LossLayer {
					return pl.Stages[pl.PP-1] == s.LastLayers
				}
				return pl.LastLayers == s.LastLayers
			})
		case "recompute-modules":
			keep = append(keep, func(pl plan.Plan) bool {
				return pl.Recompute == s.Recompute && pl.RecomputeModules == s.RecomputeModules
			})
		case "embedding-layer":
			keep = append(keep, func(pl plan.Plan) bool { return pl.EmbeddingLayer == s.EmbeddingLayer })
		case "loss-layer":
			keep = append(keep, func(pl plan.Plan) bool { return pl.LossLayer == s.LossLayer })
		case "ep":
			keep = append(keep, func(pl plan.Plan) bool { return pl.EP == s.ExpertDegree() })
		case "etp":
			keep = append(keep, func(pl plan.Plan) bool { return pl.ETP == s.ExpertTensor })
		case "epoverlap":
			keep = append(keep, func(pl plan.Plan) bool { return pl.EPOverlap == s.EPOverlap })
		}
	}
	if len(keep) > 0 {
		sp.Keep = func(pl plan.Plan) bool {
			for _, k := range keep {
				if !k(pl) {
					return false
				}
			}
			return true
		}
	}
	return sp, nil
}

// WithLevers is sp with the levers target's framework writes
// (LeversFor) that sp's --strategy (SpaceOf) did not fix.
func (sp Space) WithLevers(target string) Space {
	sp.Levers = LeversFor(target, func(k string) bool { return sp.named[k] })
	return sp
}

// Switches are the levers plan s has turned on against sp's own recipe
// (what the --strategy wrote), as key=value in Levers' order: what the
// search chose for the user.
func (sp Space) Switches(s plan.Strategy) []string {
	var out []string
	if s.FP8Params && !sp.MemoryRecipe.FP8Params {
		out = append(out, LeverFP8Params+"=on")
	}
	if s.FP8Activation && !sp.MemoryRecipe.FP8Activation {
		out = append(out, LeverFP8Activation+"=on")
	}
	if n := s.OffloadLayers; n != sp.MemoryRecipe.OffloadLayers {
		out = append(out, LeverOffload+"="+strconv.Itoa(n))
	}
	if c := s.Software.CPComm; c != sp.Software.CPComm {
		out = append(out, LeverCPComm+"="+c)
	}
	if s.FP8OutputProj && !sp.MemoryRecipe.FP8OutputProj {
		out = append(out, LeverOutputProj+"=on")
	}
	if g := s.Software.Graphs; g != sp.Software.Graphs {
		out = append(out, LeverGraphs+"="+g)
		if s.GraphPool != sp.MemoryRecipe.GraphPool {
			out = append(out, "graph-pool="+s.GraphPool)
		}
	}
	return out
}
