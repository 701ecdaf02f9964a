package plans

import (
	"cmp"
	"fmt"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
)

// NewTransformerPlan writes model m under strategy s on gpus GPUs as a
// TransformerPlanFormat plan. s must be resolved (every degree named, as
// planner/plan.Resolve leaves it: tensor, pipeline, replicas,
// micro-batch size and micro-batches with T x P x R = gpus and
// R x mbs x M = the batch). Interleaved virtual stages are not run by
// tools/dev/torchplan and are refused, as are context parallelism and
// grads=bf16 and epoverlap=on. A model with
// experts gets its experts and their mesh (EP, ETP, expert-DP); tools/dev/torchplan
// runs them with data and expert parallelism only (tp=1, pp=1), routed
// experts only (no shared experts, no multi-head latent attention, no
// multi-token prediction), so the others are refused.
func NewTransformerPlan(m transformer.Spec, s plan.Strategy, gpus int) (export.TransformerPlan, error) {
	T, err := oneTensor(s, "torch plan", "tools/dev/torchplan runs one tensor-parallel degree")
	if err != nil {
		return export.TransformerPlan{}, err
	}
	P, R := s.PipelineDegree(), s.ReplicaCount()
	switch {
	case s.ContextDegree() > 1:
		return export.TransformerPlan{}, fmt.Errorf("torch plan: cp=%d: tools/dev/torchplan does not split sequences (context parallelism runs in Megatron-LM: --to megatron)", s.ContextDegree())
	case T*P*R != gpus:
		return export.TransformerPlan{}, fmt.Errorf("torch plan: tp=%d x pp=%d x dp=%d is not the %d GPUs", T, P, R, gpus)
	case s.MicroBatchSize < 1 || R*s.MicroBatchSize*s.MicroBatchCount() != m.Batch:
		return export.TransformerPlan{}, fmt.Errorf("torch plan: dp=%d x mbs=%d x mb=%d is not the batch of %d", R, s.MicroBatchSize, s.MicroBatchCount(), m.Batch)
	case s.VirtualStages() > 1:
		return export.TransformerPlan{}, fmt.Errorf("torch plan: vp=%d: tools/dev/torchplan runs one model chunk per stage (no interleaving)", s.VirtualStages())
	case s.EPOverlap:
		return export.TransformerPlan{}, fmt.Errorf("torch plan: epoverlap=on: tools/dev/torchplan runs each micro-batch's all-to-alls in turn (--to megatron writes --overlap-moe-expert-parallel-comm)")
	case s.GradBF16:
		return export.TransformerPlan{}, fmt.Errorf("torch plan: grads=bf16: tools/dev/torchplan reduces gradients in the parameters' dtype (--to megatron writes --grad-reduce-in-bf16)")
	case m.Hybrid() || m.Mixed():
		return export.TransformerPlan{}, fmt.Errorf("torch plan: pattern=%s, mixers=%s: tools/dev/torchplan builds GPT and Llama blocks, not Mamba-2 or Gated DeltaNet layers", m.Pattern, m.Mixers)
	case m.Act != "" || m.NormsPerBlock() > 2 || m.GlobalEvery > 0 || m.Chunk > 0:
		return export.TransformerPlan{}, fmt.Errorf("torch plan: act=%s, norms=%d, global_every=%d, chunk=%d: tools/dev/torchplan builds GPT and Llama blocks (GeLU or SwiGLU, two norms, no windows or chunks), not Gemma's, Nemotron's or Llama 4's", cmp.Or(m.Act, "the family's"), m.NormsPerBlock(), m.GlobalEvery, m.Chunk)
	}
	var ep, etp, edp int
	if m.MoE() {
		ep, etp = s.ExpertDegree(), T
		if s.ExpertTensor > 0 {
			etp = s.ExpertTensor
		}
		switch {
		case m.SharedExperts > 0 || m.MLA() || m.MTP > 0 || m.Head > 0 && m.Head != m.Hidden/m.Heads:
			return export.TransformerPlan{}, fmt.Errorf("torch plan: %s: tools/dev/torchplan runs routed experts in a GPT or Llama block only (no shared experts, latent attention, multi-token prediction or head_dim of its own)", m)
		case T > 1 || P > 1 || etp > 1:
			return export.TransformerPlan{}, fmt.Errorf("torch plan: tp=%d, pp=%d, etp=%d with experts: tools/dev/torchplan runs a model with experts in data and expert parallelism only (tp=1, pp=1)", T, P, etp)
		case m.Experts%ep != 0 || R%ep != 0:
			return export.TransformerPlan{}, fmt.Errorf("torch plan: ep=%d does not divide the %d experts and dp=%d", ep, m.Experts, R)
		}
		edp = T * R / (ep * etp)
	} else if s.Experts > 1 || s.ExpertTensor > 1 {
		return export.TransformerPlan{}, fmt.Errorf("torch plan: ep=%d, etp=%d on a model without experts", s.Experts, s.ExpertTensor)
	}
	if err := unwritten("torch plan", s, torchPlanKeys); err != nil {
		return export.TransformerPlan{}, err
	}
	counts, err := s.StageLayers(m.Layers)
	if err != nil {
		return export.TransformerPlan{}, fmt.Errorf("torch plan: %w", err)
	}
	spec := export.TransformerSpec{Layers: m.Layers, Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads, FFN: m.FFN,
		Seq: m.Seq, Vocab: m.Vocab, Batch: m.Batch, Tied: m.Tied, Norm: "layernorm", Activation: "gelu"}
	if m.SwiGLU() {
		spec.Norm, spec.Activation = "rmsnorm", "swiglu"
	}
	if m.MoE() {
		spec.Experts, spec.TopK, spec.ExpertFFN, spec.DenseLayers = m.Experts, m.TopK, m.ExpertFFN, m.DenseLayers
	}
	tp := export.TransformerPlan{Format: export.TransformerPlanFormat, Version: export.TransformerPlanVersion, Graph: m.String(), Transformer: spec, GPUs: gpus,
		Tensor: T, Pipeline: P, Replicas: R, MicroBatchSize: s.MicroBatchSize, MicroBatches: s.MicroBatchCount(),
		Schedule: s.Sched(), SequenceParallel: s.SequenceParallel, Recompute: s.Recompute,
		DistributedOpt: s.DistOpt, FSDP: s.FSDP, RecomputeLayers: s.RecomputeLayers, ExpertParallel: ep, ExpertTensor: etp, ExpertData: edp}
	if s.RecomputeModules != 0 {
		tp.RecomputeModules = s.RecomputeModules.Names()
	}
	next := 0
	for p, n := range counts {
		st := export.TransformerStage{Stage: p, Embedding: p == 0, Output: p == P-1}
		for l := next; l < next+n; l++ {
			st.Layers = append(st.Layers, l)
		}
		next += n
		tp.Stages = append(tp.Stages, st)
	}
	return tp, nil
}
