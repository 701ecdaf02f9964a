package plan

import (
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// Plan is a strategy resolved against a model and a pod: every degree
// filled in (DP from the GPUs left, the micro-batch size 1 unless named,
// M from the batch).
type Plan struct {
	Strategy
	// TP is the tensor-parallel degree: every stage's, or with a
	// per-stage degree (stage-tp) the largest of TPs; PP the pipeline
	// stages, DP the data-parallel degree, VP the model chunks per stage.
	TP, PP, DP, VP int
	// CP is the context-parallel degree: each micro-batch's sequences
	// split over CP GPUs of the same weights (1: none).
	CP int
	// MBS is the micro-batch size, NumMicro the micro-batches per replica
	// per step.
	MBS, NumMicro int
	// Stages are the layers of each pipeline stage (Strategy's
	// StageLayers: L/P each unless first= or last= say otherwise).
	Stages []int
	// TPs are each stage's tensor-parallel degree (T for every stage
	// unless stage-tp says otherwise).
	TPs []int
	// EP, ETP and EDP are the experts' mesh in a model with experts
	// (expert-parallel, expert-tensor-parallel and expert-data-parallel
	// degrees, ETP x EP x EDP = T x C x D); 1 in a dense one.
	EP, ETP, EDP int
	// Run is the software settings in effect (Strategy.Software over its
	// stack: Software.Settings).
	Run Settings
}

// Uniform reports whether every stage has the same tensor-parallel
// degree.
func (pl Plan) Uniform() bool { return pl.TensorStages == nil }

// ReplicaGPUs is one model replica's GPUs: the sum of the stages'
// tensor-parallel degrees (T x P when they are one).
func (pl Plan) ReplicaGPUs() int {
	n := 0
	for _, t := range pl.TPs {
		n += t
	}
	return n
}

// Groups are where stage i's parallel groups sit, with Megatron-LM's
// rank order (tensor fastest, then data, then pipeline: rank = t + T (d +
// D p)): a tensor group is T consecutive GPUs of one node; a
// data-parallel group strides T. With a tensor-parallel degree per stage
// the stages are laid out in the same order, stage i's D tensor groups
// of T_i GPUs after the stages before it (Resolve keeps each group inside
// a node): a stage of T_i = 4 puts two replicas' groups on a node, so its
// data-parallel group has 8/T_i GPUs per node, as a uniform plan of T_i's
// does. With context parallelism (uniform plans only) the context
// ranks come between the tensor and the data-parallel ones, as
// Megatron-Core orders them (tp-cp-dp-pp: rank = t + T (c + C (d + D
// p))): a context group strides T, inside a node where T x C is at most
// a node's GPUs (CPCrossesNodes); the C x D GPUs of a stage holding the
// same weights reduce their gradients together, a group striding T as
// the data-parallel one does without context parallelism.
func (pl Plan) Groups(p Pod, i int) (tp, dp Group) {
	T := pl.TPs[i]
	tp = Group{PerNode: T, Nodes: 1}
	inNode := max(1, p.PerNode/T) // data-parallel ranks per node
	ranks := pl.DP * pl.CP
	if ranks <= inNode {
		dp = Group{PerNode: ranks, Nodes: 1}
	} else {
		dp = Group{PerNode: inNode, Nodes: (ranks + inNode - 1) / inNode}
	}
	return tp, dp
}

// CPCrossesNodes reports whether a context group's ring crosses nodes:
// its C ranks stride T, so they share a node only when T x C is at most
// a node's GPUs (Llama 3's TP 8 puts every context peer in another node).
func (pl Plan) CPCrossesNodes(p Pod) bool { return pl.TP*pl.CP > p.PerNode }

// ShareNode reports whether a point-to-point transfer between stages i
// and j runs inside a node: both stages' blocks of D x T GPUs are
// smaller than a node (neighbouring stages stride D x C x T).
func (pl Plan) ShareNode(p Pod, i, j int) bool {
	return pl.DP*pl.CP*max(pl.TPs[i], pl.TPs[j]) < p.PerNode
}

// ExpertGroups are where the experts' groups sit in a pipeline stage, in
// Megatron-Core's expert rank order (expert-tensor fastest, then expert,
// then expert-data: rank = e + ETP (x + EP d)): an expert-tensor group
// is ETP consecutive GPUs, an expert-parallel group EP GPUs striding ETP,
// an expert-data-parallel group EDP GPUs striding ETP x EP.
func (pl Plan) ExpertGroups(p Pod) (etp, ep, edp Group) {
	stride := func(n, by int) Group {
		inNode := max(1, p.PerNode/by)
		if n <= inNode {
			return Group{PerNode: n, Nodes: 1}
		}
		return Group{PerNode: inNode, Nodes: (n + inNode - 1) / inNode}
	}
	return Group{PerNode: pl.ETP, Nodes: 1}, stride(pl.EP, pl.ETP), stride(pl.EDP, pl.ETP*pl.EP)
}

// LoadImbalance is the most loaded expert-parallel rank's tokens over the
// mean (at least 1).
func (pl Plan) LoadImbalance() float64 { return max(pl.Imbalance, 1) }

// LoadFactor is the tokens the most loaded expert-parallel rank receives
// over the even share: the capacity factor with capacity routing (every
// expert padded or cut to it: moe_pad_expert_input_to_capacity), else
// the imbalance.
func (pl *Plan) LoadFactor() float64 {
	if pl.Run.Capacity > 0 {
		return pl.Run.Capacity
	}
	return pl.LoadImbalance()
}

// GradBytes is the bytes of a gradient element: FP32 main gradients, or
// BF16 with grads=bf16 (Strategy.GradBF16).
func (pl *Plan) GradBytes() float64 {
	if pl.GradBF16 {
		return 2
	}
	return 4
}

// Titan is whether the plan runs on torchtitan (a torchtitan stack):
// its memory is FSDP2's and its selective recomputation torchtitan's
// per-op policy.
func (pl *Plan) Titan() bool { return strings.HasPrefix(pl.Software.Stack, "torchtitan") }

// NCCLBuffers is NCCL's buffers on one GPU of plan pl: one set for each
// of its communicators (tensor, context, data, pipeline neighbours,
// expert and expert-data parallel) of more than one rank.
func NCCLBuffers(pl *Plan) int64 {
	var groups int64
	for _, n := range []int{pl.TP, pl.CP, pl.DP * pl.CP, pl.PP, pl.EP, pl.EDP} {
		if n > 1 {
			groups++
		}
	}
	return groups * NCCLBuffersPerGroup
}

// InBF16 is pl with its transformer layers outside the low-precision
// recipe, as Megatron-Core builds and runs a layer it keeps in BF16
// (fp8_utils.py get_fp8_context, fp4_utils.py get_fp4_context: no
// quantized_model_init around its build, no autocast around its
// forward): BF16 GEMMs (no FP8 recipe), BF16 weights (no FP8 or NVFP4
// primary weights, so no transpose cache to drop), BF16 attention (no
// fp8-dpa). The MLP activation's FP8 input store is Megatron-Core's own
// cast, not Transformer Engine's autocast: kept. What the framework
// costs a stage's BF16 layers as (cost.HighPrecisionLayers).
func (pl Plan) InBF16() Plan {
	pl.FP8 = ""
	pl.FP8Params, pl.NoTransposeCache, pl.FP8DPA = false, false, false
	return pl
}

// Recomputed is how many layers of stage s recompute their forward in the
// backward: with full recomputation every one, or RecomputeLayers of each
// of its V model chunks (block recomputation); none otherwise.
func (pl Plan) Recomputed(s int) float64 {
	if pl.Recompute != FullRecompute {
		return 0
	}
	l := pl.Stages[s]
	if pl.RecomputeLayers > 0 {
		l = min(l, pl.RecomputeLayers*pl.VP)
	}
	return float64(l)
}

// ChunkLayers is how many layers model chunk v of stage s holds: its
// layers split over the V chunks as evenly as they go, the smaller
// chunks first; with the embedding or the loss counted as layers
// (EmbeddingLayer, LossLayer) each chunk holds a stage's units over V,
// the first chunk of the first stage one layer fewer for the embedding
// and the last chunk of the last stage one fewer for the loss
// (Megatron-Core's get_num_layers_to_build).
func (pl *Plan) ChunkLayers(s, v int) int {
	l := pl.Stages[s]
	if pl.EmbeddingLayer || pl.LossLayer {
		e, lu := pl.endUnits()
		n := (pl.Stages[0] + e) / pl.VP
		if s == 0 && v == 0 {
			n -= e
		}
		if s == pl.PP-1 && v == pl.VP-1 {
			n -= lu
		}
		return n
	}
	size := l / pl.VP
	if v >= pl.VP-l%pl.VP {
		size++
	}
	return size
}

// DenseOn is how many of stage s's layers are the dense blocks before
// the experts (a model with experts' first DenseLayers; 0 in a dense
// model, whose every layer is its one kind), and how many of those
// recompute their forward in the backward. The layers run in Megatron's
// order: model chunk v of every stage before chunk v+1 of any (its
// interleaved layout: chunk v of stage s holds layers after chunk v of
// stages 0..s-1), a stage's layers split over its V chunks as evenly as
// they go, the smaller chunks first (Megatron-Core's DeepSeek-V3 layout
// "Et|(tt|)*30mL" gives stage 0 chunks of 1 and 2 layers); block
// recomputation recomputes the first RecomputeLayers of each chunk, full
// recomputation every layer. With the embedding or the loss counted as
// layers the chunks are ChunkLayers'.
func (pl *Plan) DenseOn(m *transformer.Spec, s int) (dense, recomputed int) {
	if m.Hybrid() && m.MoE() {
		return pl.hybridDenseOn(m, s)
	}
	if !m.MoE() || m.DenseLayers == 0 {
		return 0, 0
	}
	k := 0 // layers of a chunk that recompute
	if pl.Recompute == FullRecompute {
		k = m.Layers
		if pl.RecomputeLayers > 0 {
			k = pl.RecomputeLayers
		}
	}
	units := pl.EmbeddingLayer || pl.LossLayer
	start := 0
	for v := 0; v < pl.VP; v++ {
		for i, l := range pl.Stages {
			if start >= m.DenseLayers {
				return dense, recomputed
			}
			var size int
			if units {
				size = pl.ChunkLayers(i, v)
			} else { // ChunkLayers', kept in the loop (the search's hot path)
				size = l / pl.VP
				if v >= pl.VP-l%pl.VP {
					size++
				}
			}
			if i == s {
				d := min(size, m.DenseLayers-start)
				dense += d
				recomputed += min(d, k)
			}
			start += size
		}
	}
	return dense, recomputed
}

// StagePattern is the layers of hybrid m's pattern pipeline stage s
// holds: Megatron-Core's MambaStack gives pipeline rank s the layers
// after those of the ranks before it, in order (NVIDIA/Megatron-LM
// core_v0.16.1, 55ac7082, megatron/core/ssm/mamba_block.py:
// _select_layers_for_pipeline_parallel, its first and last stages'
// counts as get_transformer_layer_offset's; no virtual stages with
// experts: checkHybridExperts), so the pattern's E layers may fall
// unevenly.
func (pl *Plan) StagePattern(m *transformer.Spec, s int) string {
	first := 0
	for _, n := range pl.Stages[:s] {
		first += n
	}
	return m.Pattern[first : first+pl.Stages[s]]
}

// hybridDenseOn is DenseOn of a hybrid with blocks of experts: stage
// s's layers other than blocks of experts (StagePattern's), priced as
// the mean of the pattern's other blocks beside its blocks of experts
// (planner's hybridKit), and how many of them recompute: every layer
// under full recomputation, the stage's first RecomputeLayers under
// block recomputation.
func (pl *Plan) hybridDenseOn(m *transformer.Spec, s int) (dense, recomputed int) {
	k := 0
	if pl.Recompute == FullRecompute {
		k = pl.Stages[s]
		if pl.RecomputeLayers > 0 {
			k = pl.RecomputeLayers
		}
	}
	for i, r := range pl.StagePattern(m, s) {
		if r != transformer.KindExperts {
			dense++
			if i < k {
				recomputed++
			}
		}
	}
	return dense, recomputed
}
