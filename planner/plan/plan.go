package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/decision"
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

// Resolve checks s against model m on pod p and fills in its degrees.
// Errors are one line naming the field: tp (every stage's, with stage-tp)
// must divide the heads (and the key/value heads) and a node's GPUs, pp x
// vp the layers, tp x pp x dp (dp x the sum of stage-tp) the GPUs, and dp
// x mbs the batch; with stage-tp, each stage's tensor groups must stay
// inside a node where the stages are laid out in order (groups).
func Resolve(m transformer.Spec, s Strategy, p Pod) (Plan, error) {
	if err := s.Check(); err != nil {
		return Plan{}, err
	}
	if err := m.Check(); err != nil {
		return Plan{}, fmt.Errorf("workload %s: %w", m, err)
	}
	if s.FP8Gather && (m.MoE() || m.Hybrid()) {
		return Plan{}, strategyError("fp8gather=on with %s: placer costs torchao's float8 all-gather for the dense Llama blocks' seven linears only", m)
	}
	written := asWritten(s) // errors name the strategy as written
	s = oneTensorDegree(s)
	pl := Plan{Strategy: s, TP: s.MaxTensor(), PP: s.PipelineDegree(), VP: s.VirtualStages(), CP: s.ContextDegree(), MBS: max(s.MicroBatchSize, 1)}
	if s.TensorStages != nil {
		pl.Strategy.TensorStages = slices.Clone(s.TensorStages)
	}
	pl.TPs = pl.Strategy.StageTensor()
	n := p.GPUs()
	replica, err := pl.resolveGrid(m, s, p, written)
	if err != nil {
		return Plan{}, err
	}
	if err := pl.resolveStages(m, s, written); err != nil {
		return Plan{}, err
	}
	pl.DP = n / replica
	if err := pl.resolveReplicas(s, n, replica, written); err != nil {
		return Plan{}, err
	}
	if err := pl.resolveBatch(m, s, written); err != nil {
		return Plan{}, err
	}
	if err := pl.resolveExperts(m, p, written); err != nil {
		return Plan{}, err
	}
	if err := pl.resolveSoftware(m, written); err != nil {
		return Plan{}, err
	}
	if err := pl.checkHybrid(m, written); err != nil {
		return Plan{}, err
	}
	if pl.RecomputeModules != 0 {
		if err := pl.checkModules(m, written); err != nil {
			return Plan{}, err
		}
	}
	if err := pl.resolveDeclared(&m, written); err != nil {
		return Plan{}, err
	}
	pl.writeBack()
	return pl, nil
}

// oneTensorDegree is s with stage-tp of one degree for every stage
// written as tp= (the same plan, written so).
func oneTensorDegree(s Strategy) Strategy {
	if ts := s.TensorStages; ts != nil && slices.Min(ts) == slices.Max(ts) {
		s.Tensor, s.TensorStages = ts[0], nil
		if s.Tensor == 1 {
			s.Tensor = 0
		}
	}
	return s
}

// resolveGrid checks each stage's tensor-parallel degree against the
// heads and a node, the context degree against the sequence, and the
// pipeline against the layers, and that a replica's GPUs (times the
// context degree) divide the pod's; it returns them.
func (pl *Plan) resolveGrid(m transformer.Spec, s Strategy, p Pod, written asWritten) (int, error) {
	n := p.GPUs()
	tpName := func(i int) string {
		if pl.Uniform() {
			return fmt.Sprintf("tp=%d", pl.TPs[i])
		}
		return fmt.Sprintf("stage %d's tp=%d", i, pl.TPs[i])
	}
	for i, T := range pl.TPs {
		if err := tensorFits(m, p, T, tpName(i)); err != nil {
			return 0, fmt.Errorf("strategy %s: %w", written, err)
		}
		if pl.Uniform() {
			break
		}
	}
	replica := pl.ReplicaGPUs()
	if C := pl.CP; C > 1 {
		switch {
		case contextFits(m, C) != nil:
			return 0, fmt.Errorf("strategy %s: %w", written, contextFits(m, C))
		case n%(replica*C) != 0:
			return 0, fmt.Errorf("strategy %s: tp=%d x cp=%d x pp=%d does not divide the %d GPUs", written, pl.TP, C, pl.PP, n)
		}
		replica *= C // the GPUs of one copy of the weights' data-parallel rank
	}
	eu, lu := s.endUnits() // the embedding and the loss counted as layers
	units := s.EmbeddingLayer || s.LossLayer
	switch {
	case pipelineFits(m, pl.PP, eu+lu) != nil:
		return 0, fmt.Errorf("strategy %s: %w", written, pipelineFits(m, pl.PP, eu+lu))
	case !units && s.FirstLayers == 0 && s.LastLayers == 0 && m.Layers%(pl.PP*pl.VP) != 0:
		return 0, fmt.Errorf("strategy %s: pp=%d x vp=%d does not divide the %d layers", written, pl.PP, pl.VP, m.Layers)
	case n%replica != 0 && pl.Uniform():
		return 0, fmt.Errorf("strategy %s: tp=%d x pp=%d does not divide the %d GPUs", written, pl.TP, pl.PP, n)
	case n%replica != 0:
		return 0, fmt.Errorf("strategy %s: a replica's %d GPUs (the sum of stage-tp) do not divide the %d GPUs", written, replica, n)
	}
	return replica, nil
}

// resolveStages sets the plan's layers per stage (the embedding and the
// loss counted as layers where s says so) and checks them against the
// model chunks and the layers recomputed.
func (pl *Plan) resolveStages(m transformer.Spec, s Strategy, written asWritten) error {
	eu, _ := s.endUnits()
	units := s.EmbeddingLayer || s.LossLayer
	stages, err := s.StageLayers(m.Layers)
	if err != nil {
		return fmt.Errorf("strategy %s: %w", written, err)
	}
	if u := stages[0] + eu; units && u%pl.VP != 0 {
		// Every stage holds as many units (its layers, the embedding or
		// the loss), split evenly over its model chunks (Megatron-Core's
		// rule).
		return fmt.Errorf("strategy %s: vp=%d does not divide a stage's %d units (its layers, the embedding and the loss counted as layers)", written, pl.VP, u)
	}
	for i, l := range stages {
		if units {
			break // a chunk may hold the embedding or the loss alone
		}
		if l < pl.VP {
			return fmt.Errorf("strategy %s: stage %d has %d layers, fewer than vp=%d model chunks", written, i, l, pl.VP)
		}
	}
	pl.Stages = stages
	if units {
		// The split follows from the layers: first= and last= (checked
		// against it) are not written back.
		pl.Strategy.FirstLayers, pl.Strategy.LastLayers = 0, 0
	}
	if k := s.RecomputeLayers; k > 0 {
		most := 0
		for _, l := range stages {
			most = max(most, (l+pl.VP-1)/pl.VP)
		}
		if k > most {
			return fmt.Errorf("strategy %s: recompute-layers=%d is more than the %d layers of a model chunk", written, k, most)
		}
	}
	return nil
}

// resolveReplicas checks the data-parallel degree pl.DP the other degrees
// leave of the pod's n GPUs (replica of them a replica's) against the dp
// written, and that stage-tp's tensor groups stay inside a node.
func (pl *Plan) resolveReplicas(s Strategy, n, replica int, written asWritten) error {
	if s.Replicas > 0 && s.Replicas != pl.DP {
		// A dp written is the plan's: never replaced by what the other
		// degrees leave (left out, it is that).
		factors := []string{fmt.Sprintf("tp=%d", pl.TP), fmt.Sprintf("pp=%d", pl.PP)}
		switch {
		case pl.CP > 1:
			factors = []string{fmt.Sprintf("tp=%d", pl.TP), fmt.Sprintf("cp=%d", pl.CP), fmt.Sprintf("pp=%d", pl.PP)}
		}
		factors = append(factors, fmt.Sprintf("dp=%d", s.Replicas))
		if !pl.Uniform() {
			factors = []string{fmt.Sprintf("dp=%d", s.Replicas), fmt.Sprintf("the %d GPUs of stage-tp", replica)}
		}
		return fmt.Errorf("strategy %s: %w", written, worldMismatch(factors, replica*s.Replicas, n, s.Replicas))
	}
	if !pl.Uniform() {
		// Stage i's D tensor groups follow the stages before it: its first
		// GPU is D x (TP_0 + ... + TP_{i-1}), which must be a multiple of
		// TP_i for its groups to stay inside a node.
		at := 0
		for i, T := range pl.TPs {
			if at%T != 0 {
				return fmt.Errorf("strategy %s: stage %d's tensor groups of %d would straddle nodes (its first GPU is number %d: the stages are laid out in order, dp=%d x the degrees before it)", written, i, T, at, pl.DP)
			}
			at += pl.DP * T
		}
	}
	return nil
}

// resolveBatch sets the micro-batches pl.NumMicro the batch makes over the
// replicas and checks them against mb=, the interleaved schedule, and
// the optimizer's sharding over the replicas.
func (pl *Plan) resolveBatch(m transformer.Spec, s Strategy, written asWritten) error {
	if err := batchFits(m, pl.DP, pl.MBS); err != nil {
		return fmt.Errorf("strategy %s: %w", written, err)
	}
	pl.NumMicro = m.Batch / (pl.DP * pl.MBS)
	if s.MicroBatches > 0 && s.MicroBatches != pl.NumMicro {
		return fmt.Errorf("strategy %s: mb=%d, but the batch of %d over dp=%d x mbs=%d is %d micro-batches", written, s.MicroBatches, m.Batch, pl.DP, pl.MBS, pl.NumMicro)
	}
	if pl.VP > 1 && pl.NumMicro%pl.PP != 0 {
		return fmt.Errorf("strategy %s: interleaved stages need the %d micro-batches to be a multiple of pp=%d", written, pl.NumMicro, pl.PP)
	}
	if s.DistOpt && pl.DP*pl.CP == 1 {
		return fmt.Errorf("strategy %s: distopt with dp=1: the distributed optimizer shards over data-parallel replicas", written)
	}
	if s.FSDP && pl.DP*pl.CP == 1 {
		return fmt.Errorf("strategy %s: fsdp with dp=1: FSDP shards over data-parallel replicas", written)
	}
	return nil
}

// writeBack writes the resolved degrees into the plan's strategy, as it
// is written back: 1F1B where a pipeline has several micro-batches and no
// schedule was written.
func (pl *Plan) writeBack() {
	if pl.Uniform() {
		pl.Strategy.Tensor = pl.TP
	}
	pl.Strategy.Pipeline, pl.Strategy.Replicas = pl.PP, pl.DP
	if pl.CP > 1 {
		pl.Strategy.Context = pl.CP
	}
	pl.Strategy.MicroBatchSize, pl.Strategy.MicroBatches = pl.MBS, pl.NumMicro
	if pl.VP > 1 {
		pl.Strategy.Virtual = pl.VP
	}
	if pl.NumMicro > 1 && pl.PP > 1 && pl.Strategy.Schedule == "" {
		pl.Strategy.Schedule = decision.OneFOneB
	}
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

// String writes the plan as ParseStrategy reads it, degrees
// first: "tp=8,pp=16,dp=48,vp=7,mbs=1,sp=on,distopt=on", with context
// parallelism "tp=8,cp=16,pp=16,dp=8,..." (the
// micro-batches and the 1F1B schedule follow from it), then the other
// keys of Keys in planGroups' order.
func (pl Plan) String() string {
	s := fmt.Sprintf("tp=%d,pp=%d,dp=%d", pl.TP, pl.PP, pl.DP)
	if !pl.Uniform() {
		s = fmt.Sprintf("stage-tp=%s,pp=%d,dp=%d", stageTP(pl.TPs), pl.PP, pl.DP)
	}
	if pl.CP > 1 {
		s = fmt.Sprintf("tp=%d,cp=%d,pp=%d,dp=%d", pl.TP, pl.CP, pl.PP, pl.DP)
	}
	if pl.VP > 1 {
		s += fmt.Sprintf(",vp=%d", pl.VP)
	}
	s += fmt.Sprintf(",mbs=%d", pl.MBS)
	var parts []string
	for _, g := range planGroups {
		parts = writeKeys(parts, g, func(k *Key) string {
			if k.planWrite != nil {
				return k.planWrite(pl)
			}
			return k.write(pl.Strategy)
		})
	}
	for _, kv := range parts {
		s += "," + kv
	}
	return s
}

// stageTP writes per-stage degrees as stage-tp reads them: "4:8:8:4".
func stageTP(d []int) string {
	parts := make([]string, len(d))
	for i, x := range d {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ":")
}

// resolveExperts fills in the experts' mesh of pl (model m on pod p) and
// checks it, and FP8 against the GPU: the errors are one line naming the
// strategy as written. A dense model has EP = ETP = EDP = 1 and refuses
// ep and etp. With experts: EP divides the experts, ETP a node's GPUs and
// the expert FFN, ETP x EP the T x C x D GPUs of a pipeline stage
// (Megatron-Core's expert mesh); tensor parallelism needs sequence
// parallelism (Megatron-Core refuses the MoE layer's tensor parallelism
// without it); one tensor-parallel degree for every stage. Multi-token
// prediction is refused with context parallelism (Megatron-Core's MTP
// does not support it: its multi_token_prediction guide).
func (pl *Plan) resolveExperts(m transformer.Spec, p Pod, written asWritten) error {
	s := pl.Strategy
	if err := fp8Fits(s, p); err != nil {
		return fmt.Errorf("strategy %s: %w", written, err)
	}
	if err := mtpFits(m, pl.CP); err != nil {
		return fmt.Errorf("strategy %s: %w", written, err)
	}
	if err := FineTuneFits(m, s); err != nil {
		return fmt.Errorf("strategy %s: %w", written, err)
	}
	if err := RecipeFits(m, s); err != nil {
		return fmt.Errorf("strategy %s: %w", written, err)
	}
	pl.EP, pl.ETP, pl.EDP = 1, pl.TP, 1
	if !m.MoE() {
		return expertKeysFit(m, s, written)
	}
	switch {
	case s.EPOverlap && s.ExpertDegree() <= 1:
		return fmt.Errorf("strategy %s: epoverlap=on without expert parallelism (ep=1): no all-to-all to overlap", written)
	case s.EPOverlap && pl.PP > 1 && pl.VP == 1:
		return fmt.Errorf("strategy %s: epoverlap=on with pp=%d and no virtual stages: Megatron-Core overlaps the all-to-alls on the interleaved schedule only (vp > 1)", written, pl.PP)
	}
	switch {
	case !pl.Uniform():
		return fmt.Errorf("strategy %s: stage-tp with experts: the experts' mesh is modelled with one tensor-parallel degree (use tp=)", written)
	case pl.TP > 1 && !pl.SequenceParallel:
		return fmt.Errorf("strategy %s: tp=%d with experts needs sp=on (Megatron-Core's MoE layers split the tokens over the tensor group)", written, pl.TP)
	}
	pl.EP = s.ExpertDegree()
	if s.ExpertTensor > 0 {
		pl.ETP = s.ExpertTensor
	}
	inner := pl.TP * pl.CP * pl.DP
	switch {
	case expertsFit(m, p, pl.EP, pl.ETP) != nil:
		return fmt.Errorf("strategy %s: %w", written, expertsFit(m, p, pl.EP, pl.ETP))
	case inner%(pl.EP*pl.ETP) != 0:
		return fmt.Errorf("strategy %s: ep=%d x etp=%d does not divide a pipeline stage's %d GPUs (tp x cp x dp, the experts' mesh)", written, pl.EP, pl.ETP, inner)
	}
	pl.EDP = inner / (pl.EP * pl.ETP)
	if s.DistOpt && pl.EDP == 1 && pl.DP*pl.CP == 1 {
		return fmt.Errorf("strategy %s: distopt with no replicas of the experts or the rest to shard over", written)
	}
	return nil
}

// checkModules checks the modules selective recomputation names
// (recompute-modules) against model m, one line naming the key: each
// must name a module of m's layers as Megatron-Core builds them with
// Transformer Engine (mla_up_proj needs latent attention, as
// Megatron-Core says; moe_act, moe and shared_experts experts, and
// shared experts for the last; mlp a dense block; layernorm a norm that
// is a module of its own: an MoE block's before its experts or latent
// attention's input norm, the other norms fused into the GEMM after
// them), and moe_act and layernorm not with fp8=delayed (Megatron-Core
// refuses them with delayed scaling).
func (pl *Plan) checkModules(m transformer.Spec, written asWritten) error {
	r := pl.RecomputeModules
	if r == 0 {
		return nil
	}
	var why string
	switch {
	case r.Has(RecomputeMLAUpProj) && !m.MLA():
		why = "mla_up_proj without latent attention (Megatron-Core refuses it)"
	case r&(RecomputeMoEAct|RecomputeMoE|RecomputeSharedExperts) != 0 && !m.MoE():
		why = "moe_act, moe and shared_experts recompute a model's experts: this one has none"
	case r.Has(RecomputeSharedExperts) && m.SharedExperts == 0:
		why = "shared_experts: the model has no shared experts"
	case r.Has(RecomputeMLP) && m.MoE() && m.DenseLayers == 0:
		why = "mlp recomputes a dense block's MLP: every block of this model is an MoE block (moe recomputes those)"
	case r.Has(RecomputeLayerNorm) && !m.MoE() && !m.MLA():
		why = "layernorm: Megatron-Core's Transformer Engine layers fuse this model's norms into the GEMMs after them (TELayerNormColumnParallelLinear), no norm of its own to recompute"
	case r&(RecomputeMoEAct|RecomputeLayerNorm) != 0 && pl.FP8 == FP8Delayed:
		why = "moe_act and layernorm with fp8=delayed: Megatron-Core refuses them with delayed scaling"
	default:
		return nil
	}
	return fmt.Errorf("strategy %s: recompute-modules=%s: %s", written, r, why)
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
		return pl.hybridDenseOn(m, s) // hybrid.go
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

// Titan is whether the plan runs on torchtitan (a torchtitan stack):
// its memory is FSDP2's and its selective recomputation torchtitan's
// per-op policy.
func (pl *Plan) Titan() bool { return strings.HasPrefix(pl.Software.Stack, "torchtitan") }
