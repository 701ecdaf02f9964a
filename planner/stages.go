package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
)

// stageCost is one pipeline device's forward and backward per
// micro-batch (all its chunks), and what it holds (memory.StageOf's:
// its parameters, its dense layers before the experts and how many of
// them recompute, computed once a stage).
type stageCost struct {
	fwd, bwd phase
	memory.Stage
	// fwdSM and bwdSM are the SM-bound part of fwd's and bwd's time
	// (smBound's; 0 where no collective runs beside them: contended).
	fwdSM, bwdSM float64
	// ep is one of its MoE layers' parts as epOverlap pairs them, and
	// moeLayers how many it runs a micro-batch (0: no parts known).
	ep        epParts
	moeLayers float64
}

// epParts is one MoE layer's forward and backward for a micro-batch as
// Megatron-Core's combined 1F1B schedule splits them, seconds: attn,
// what the compute stream runs but the experts (attention, norms, the
// router, the permutation: the "attn" node); mlp, the experts, routed
// and shared (the "mlp" node, expertWork); comm, the exchanges on the
// layer's path (dispatchComm's and a2aBookkeeping's), half of them the
// dispatch and half the combine.
type epParts struct{ attnF, mlpF, commF, attnB, mlpB, commB float64 }

// assemble sets stage s's forward and backward per micro-batch from its
// kit k's phases (k of the stage's tensor-parallel degree): its MoE
// layers' and its dense layers', each with its share of the
// recomputation, the embedding on the first stage, the output layer and
// the multi-token-prediction modules on the last; and its parameters
// (memory.StageOf); the kernels mechanisms run on its compute stream
// beside them (addStageKernels: FSDP2's copies). lp is transformer.LayerParams(m) (computed once by the caller).
func (st *stageCost) assemble(k *stageKit, m *transformer.Spec, pl *plan.Plan, s int, lp float64) {
	layers := float64(pl.Stages[s]) // on this pipeline device, over its V chunks
	// Its dense layers (before the experts) and its MoE ones, each
	// with its share of the recomputation.
	_, pm := memoryTraitsOf(k.c.Points, &k.c.Shard)
	st.Stage = memory.StageOf(m, pl, s, lp, pm)
	dn := st.Dense
	dense, drec := float64(dn), float64(st.DenseRecomputed)
	kk := pl.Recomputed(s)
	mrec := min(max(kk-drec, 0), layers-dense)
	st.fwd = cost.Scale(k.layerFwd, layers-dense)
	st.bwd = cost.Scale(k.layerBwd, mrec).Plus(cost.Scale(k.layerBwdKeep, layers-dense-mrec))
	st.addBF16Layers(k, s, layers-dense, mrec) // a mechanism's layers in BF16 (cost.HighPrecisionLayers)
	if dn > 0 {
		st.fwd = st.fwd.Plus(cost.Scale(k.denseFwd, dense))
		st.bwd = st.bwd.Plus(cost.Scale(k.denseBwd, drec)).Plus(cost.Scale(k.denseBwdKeep, dense-drec))
	}
	if s == 0 {
		st.fwd, st.bwd = st.fwd.Plus(k.embedFwd), st.bwd.Plus(k.embedBwd)
	}
	if s == pl.PP-1 {
		st.fwd, st.bwd = st.fwd.Plus(k.outputFwd), st.bwd.Plus(k.outputBwd)
		if k.predicts {
			st.fwd, st.bwd = st.fwd.Plus(k.predFwd), st.bwd.Plus(k.predBwd)
		}
	}
	st.addStageKernels(k.c.Points, &k.c.Shard, s)
	if n := layers - dense; n > 0 && k.mlp[0] > 0 {
		// A backward's mean over the layers recomputed and those kept.
		b := cost.Scale(k.layerBwd, mrec/n).Plus(cost.Scale(k.layerBwdKeep, (n-mrec)/n))
		st.moeLayers = n
		st.ep = epParts{
			attnF: k.layerFwd.Busy - k.layerFwd.EPExposed - k.mlp[0], mlpF: k.mlp[0], commF: k.layerFwd.EPExposed,
			attnB: b.Busy - b.EPExposed - k.mlp[1], mlpB: k.mlp[1], commB: b.EPExposed,
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
		t := st.fwd.Busy + st.bwd.Busy
		sum += t
		if t > busiest {
			busiest, busiestTP, busiestCP = t, st.fwd.TPExposed+st.bwd.TPExposed, st.fwd.CPExposed+st.bwd.CPExposed
			busiestEP = st.fwd.EPExposed + st.bwd.EPExposed
			busiestHost = st.fwd.HostExposed + st.bwd.HostExposed
		}
	}
	M := float64(r.Plan.NumMicro)
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
		return (sum-busiest)/float64(pl.VP) + 2*float64(pl.PP-1)*first
	}
	return (sum-busiest)/float64(pl.VP) + 2*p2ps
}

// window is phase ph's time as a plan.Window: its SM-bound part sm
// (smBound's) and its idle part, the host's waits and the
// communication exposed in it.
func window(ph phase, sm float64) plan.Window { return cost.Window(ph, sm) }

// fwdWindow and bwdWindow are stage st's forward and backward per
// micro-batch as windows (window).
func (st *stageCost) fwdWindow() plan.Window { return window(st.fwd, st.fwdSM) }
func (st *stageCost) bwdWindow() plan.Window { return window(st.bwd, st.bwdSM) }

// memoryTraitsOf is memoryTraits of shard s, decided, asked of pts.
func memoryTraitsOf(pts *cost.Points, s *cost.Shard) (memory.Attention, memory.Prediction) {
	var at memory.Attention
	var pm memory.Prediction
	if a := pts.AttentionMemory.Of(s); a != nil {
		at = a
	}
	if q := pts.PredictionMemory.Of(s); q != nil {
		pm = q
	}
	return at, pm
}

// addStageKernels adds to stage st, stage i of shard s's plan, per
// micro-batch what each plug-in of pts that prices s runs on its
// compute stream beside its layers (cost.StageKernels: FSDP2's copies).
func (st *stageCost) addStageKernels(pts *cost.Points, s *cost.Shard, i int) {
	for k := range pts.StageKernels.On(s) {
		v := st.view(i, &s.Plan)
		fwd, bwd := k.StageKernels(s, &v)
		st.fwd, st.bwd = st.fwd.Plus(fwd), st.bwd.Plus(bwd)
	}
}

// pipelineSends is the point-to-point transfers of one micro-batch's
// activation between a plan's adjacent stages: the first boundary's
// time, whether every boundary's is the same, and their sum. The
// activation leaves stage i scattered over its tensor group (each rank
// sends its 1/T_i: Megatron's scatter-gather, or the rank's sequence
// shard with sp) and reaches stage i+1's: between groups of different
// degrees the smaller group's ranks each carry 1/min(T_i, T_i+1) of it,
// the larger's less, so the transfer is that share's. A receiving group
// without sp gathers the whole activation over NVSwitch, left out here
// as for equal degrees.
func pipelineSends(m *transformer.Spec, pl *plan.Plan, p *plan.Pod, tokens float64) (first float64, same bool, p2ps float64) {
	first = -1.0
	same = true
	for i := 0; i+1 < pl.PP; i++ {
		bytes := tokens * float64(m.Hidden) * bf16 / float64(min(pl.TPs[i], pl.TPs[i+1]))
		t := p.SendTime(pl.ShareNode(*p, i, i+1), bytes)
		if first < 0 {
			first = t
		}
		same = same && t == first
		p2ps += t
	}
	return first, same, p2ps
}

// addBF16Layers adds to stage st (stage s, layers of them, mrec of them
// recomputing) what its layers that run in BF16 (the kit's bf16) take
// over the plan's recipe: each a BF16 layer's forward and mean backward
// in place of the kit's.
func (st *stageCost) addBF16Layers(k *stageKit, s int, layers, mrec float64) {
	if k.bf16 == nil || layers <= 0 || k.bf16[s] <= 0 {
		return
	}
	n := float64(k.bf16[s])
	st.Stage.BF16Layers = k.bf16[s]
	r := mrec / layers
	bwd := func(ph *kitPhases) phase {
		return cost.Scale(ph.layerBwd, r).Plus(cost.Scale(ph.layerBwdKeep, 1-r))
	}
	st.fwd = st.fwd.Plus(cost.Scale(k.high.layerFwd, n)).Plus(cost.Scale(k.layerFwd, -n))
	st.bwd = st.bwd.Plus(cost.Scale(bwd(k.high), n)).Plus(cost.Scale(bwd(k.kitPhases), -n))
}

// view is stage st, stage i of plan pl, as the step-level extension
// points see it (cost.Stage).
func (st *stageCost) view(i int, pl *plan.Plan) cost.Stage {
	return cost.Stage{Index: i, Fwd: st.fwd, Bwd: st.bwd, FwdSM: st.fwdSM, BwdSM: st.bwdSM,
		Params: st.Params, Experts: st.Experts, Layers: st.Layers, Trained: st.trained(pl)}
}

// stageViews is stages as the step-level extension points see them
// (cost.Stage).
func stageViews(stages []stageCost, pl *plan.Plan) []cost.Stage {
	vs := make([]cost.Stage, len(stages))
	for i := range stages {
		vs[i] = stages[i].view(i, pl)
	}
	return vs
}

// trained is the parameters of stage st that get gradients and
// optimizer state on one GPU: its adapters' under LoRA, else all.
func (st *stageCost) trained(pl *plan.Plan) float64 {
	if pl.LoRA() {
		return st.Adapters
	}
	return st.Params
}
