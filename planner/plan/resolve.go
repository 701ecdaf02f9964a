package plan

import (
	"fmt"
	"slices"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
)

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

// resolveSoftware sets pl.Run from the plan's software and checks it
// against model m, each error one line naming the strategy as written:
// on a model without experts a written MoE setting (dispatcher,
// permute-fusion, router-fusion, grouped-gemm, routing) is refused, as
// ep= is, since it could only be a mistake; a named stack's MoE settings
// are ignored there (a stack names every setting of its release, and a
// dense model runs none of them). CUDA graphs over a whole dropless MoE
// layer are refused (Megatron-Core core_v0.16.0 transformer_config.py:
// "moe cuda graph is only supported with drop-padding MoE": the
// dispatcher's token counts are a host synchronization a graph cannot
// hold) but under HybridEP's static budget (rank-capacity=F,
// checkRankCapacity: no such synchronization), graphs with full recomputation likewise ("full recompute is only
// supported with full iteration CUDA graph"), and the all-gather
// dispatcher with epoverlap=on ("overlap_moe_expert_parallel_comm is
// supported with alltoall/flex token dispatcher").
func (pl *Plan) resolveSoftware(m transformer.Spec, written asWritten) error {
	sw := pl.Software
	pl.Run = sw.Settings()
	if pl.Run.GraphSync > 0 && pl.Run.Graphs != GraphsFull {
		return fmt.Errorf("strategy %s: graph-sync=%d without cuda-graphs=full: the host's wait before a replay is of a graph of whole steps", written, pl.Run.GraphSync)
	}
	if pl.Titan() && pl.TPOverlap {
		// torchtitan's async tensor parallelism takes effect only
		// compiled (its config: "enable_async_tensor_parallel" needs
		// compile): the layers are compiled, fused.
		if sw.Compile == Off {
			return fmt.Errorf("strategy %s: tpoverlap=on with compile=off: torchtitan's async tensor parallelism runs only compiled", written)
		}
		pl.Run.Eager = false
	}
	if base := sw; sw.CPRotate != "" {
		// The rotater is torch's: a stack that runs Transformer Engine's
		// ring has none to choose.
		base.CPRotate = ""
		if r := base.Settings().CPRing; r != CPRingAllGather && r != CPRingAllToAll {
			return fmt.Errorf("strategy %s: cp-rotate=%s: the stack runs Transformer Engine's context-parallel ring, not torch's context_parallel (stack=torchtitan-0.2 runs it)", written, sw.CPRotate)
		}
	}
	if base := sw; sw.CPComm != "" {
		// The exchange is Transformer Engine's: a stack that runs
		// torch's context_parallel has none to choose.
		base.CPComm = ""
		if r := base.Settings().CPRing; r == CPRingAllGather || r == CPRingAllToAll {
			return fmt.Errorf("strategy %s: cp-comm-type=%s: the stack runs torch's context_parallel, not Transformer Engine's context parallelism (cp-rotate picks its rotater)", written, sw.CPComm)
		}
	}
	if sw.CPComm == CPCommA2A && pl.CP > 1 {
		// Transformer Engine's a2a splits each TP rank's heads over
		// the CP ranks (AttnFuncWithCPAndQKVOA2A.forward: "cp_comm_type='a2a'
		// requires num_heads % cp_size == 0 for Q, K, V").
		for _, T := range pl.TPs {
			for _, h := range []struct {
				n    int
				what string
			}{{m.Heads, "attention heads"}, {m.KVHeads, "key/value heads"}} {
				if h.n%(T*pl.CP) != 0 {
					return fmt.Errorf("strategy %s: cp-comm-type=a2a: tp=%d x cp=%d does not divide the %d %s (each CP rank attends to heads/(tp x cp) of them)", written, T, pl.CP, h.n, h.what)
				}
			}
		}
	}
	if !m.MoE() {
		if sw.moeKeys() {
			return fmt.Errorf("strategy %s: dispatcher, permute-fusion, router-fusion, grouped-gemm, routing or rank-capacity on a model without experts", written)
		}
		return nil
	}
	if err := pl.checkRankCapacity(written); err != nil {
		return err
	}
	switch {
	case pl.Run.Graphs == GraphsFull && pl.Run.Capacity == 0 && pl.Run.RankCapacity == 0:
		return fmt.Errorf("strategy %s: cuda-graphs=full with dropless routing: a dropless MoE layer syncs its token counts to the host and cannot be graphed (Megatron-Core; use cuda-graphs=dense, routing=capacity:F, or dispatcher=hybridep with rank-capacity=F)", written)
	case pl.Run.Graphs != GraphsOff && pl.Recompute == FullRecompute:
		return fmt.Errorf("strategy %s: cuda-graphs=%s with recompute=full: Megatron-Core graphs layers only without full recomputation", written, pl.Run.Graphs)
	case pl.Run.Dispatcher == DispatcherAllGather && pl.EPOverlap:
		return fmt.Errorf("strategy %s: epoverlap=on with dispatcher=allgather: Megatron-Core overlaps the alltoall and flex dispatchers' exchanges only", written)
	}
	return nil
}
