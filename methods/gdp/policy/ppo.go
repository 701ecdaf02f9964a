package policy

import (
	"fmt"
	"math"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/ppo"
)

// PPOModel is the policy as PPO trains it (ppo.Model) on one rollout: the
// input its decisions were sampled for, and the decisions.
type PPOModel struct {
	Policy    *Policy
	Input     *Input
	Decisions []decision.Decision
}

var _ ppo.Model = PPOModel{}

// Params are the policy's parameters.
func (m PPOModel) Params() []*Param { return m.Policy.Params() }

// Forward runs the policy on the rollout's input.
func (m PPOModel) Forward() (ppo.Pass, error) {
	out, err := m.Policy.Forward(m.Input)
	if err != nil {
		return nil, err
	}
	return m.Pass(out), nil
}

// Pass is out, a forward pass on the rollout's input, as PPO takes it.
func (m PPOModel) Pass(out *Output) ppo.Pass { return ppoPass{out, m.Decisions} }

type ppoPass struct {
	out *Output
	ds  []decision.Decision
}

func (p ppoPass) Release() { p.out.Release() }

func (p ppoPass) Loss(b ppo.Batch) (ppo.Loss, error) {
	r, err := PPOLoss(p.out, PPOBatch{
		Decisions: p.ds[b.Lo:b.Hi], Advantages: b.Advantages, OldLogProbs: b.OldLogProbs, OldNodeLogProbs: b.OldNodeLogProbs,
		Returns: b.Returns, ClipEps: b.ClipEps, EntropyCoef: b.EntropyCoef, ValueCoef: b.ValueCoef,
	})
	return ppo.Loss{Loss: r.Loss, Surrogate: r.Surrogate, Entropy: r.Entropy, ValueLoss: r.ValueLoss, ClipFrac: r.ClipFrac, ApproxKL: r.ApproxKL}, err
}

// PPOBatch is a minibatch of decisions sampled for the graph of one
// forward pass, with what PPO's clipped surrogate needs (GDP §6.1).
type PPOBatch struct {
	Decisions   []decision.Decision
	Advantages  []float64 // one per decision
	OldLogProbs []float64 // log-probability of each decision when it was sampled
	// OldNodeLogProbs, if set, holds per decision the log-probability of
	// every node's action when it was sampled (Output.NodeLogProbs). The
	// ratio is then clipped per node and task, and the surrogate averaged
	// over nodes: with thousands of nodes the joint ratio leaves the clip
	// range after any update, which would silence every sample.
	OldNodeLogProbs [][]float32
	// Returns are the value head's targets, one per decision; nil means
	// no value loss.
	Returns     []float64
	ClipEps     float64 // ratio clip epsilon; 0 means 0.2
	EntropyCoef float64 // weight of the entropy bonus (per node, see PPOResult.Entropy); 0 means none
	ValueCoef   float64 // weight of the value loss; 0 means none
}

// PPOResult reports a PPO loss evaluation.
type PPOResult struct {
	Loss      float64   // the minimized loss: -Surrogate - EntropyCoef*Entropy + ValueCoef*ValueLoss
	Surrogate float64   // mean clipped surrogate objective
	Entropy   float64   // Output.Entropy() / NumNodes: mean entropy per node (summed over tasks)
	ValueLoss float64   // mean squared error of the value against Returns
	ClipFrac  float64   // fraction of decisions whose ratio was clipped
	ApproxKL  float64   // mean of old - new log-probability
	LogProbs  []float64 // new log-probability of each decision
}

// maxLogRatio bounds |log(new/old)| before exponentiation: a joint
// log-probability over tens of thousands of nodes can move by more than
// exp can represent, and such a ratio is far outside any clip range.
const maxLogRatio = 30

// PPOLoss computes PPO's clipped-surrogate loss for batch b on the forward
// pass out,
//
//	L = -mean_k min(r_k A_k, clip(r_k, 1-eps, 1+eps) A_k)
//	    - EntropyCoef * H/N + ValueCoef * mean_k (V - R_k)^2,
//
// with r_k = exp(logp_k - old_k), adds dL/dθ to the gradients of every
// parameter (Backward) and returns the loss and its parts.
func PPOLoss(out *Output, b PPOBatch) (PPOResult, error) {
	if out.pass.infer {
		return PPOResult{}, errInference
	}
	out.p.gradMu.Lock()
	defer out.p.gradMu.Unlock()
	f := ppoLoss[float32]
	if b.OldNodeLogProbs != nil {
		f = ppoLossPerNode[float32]
	}
	res, err := f(out.pass, b)
	if err != nil {
		return PPOResult{}, err
	}
	backward(out.pass)
	return res, nil
}

// ppoLoss evaluates the loss and adds its gradient with respect to the
// outputs (logits, value) to p, without propagating it.
func ppoLoss[T nn.Float](p *pass[T], b PPOBatch) (PPOResult, error) {
	k := len(b.Decisions)
	if k == 0 {
		return PPOResult{}, fmt.Errorf("policy: PPO batch has no decisions")
	}
	if len(b.Advantages) != k || len(b.OldLogProbs) != k || (b.Returns != nil && len(b.Returns) != k) {
		return PPOResult{}, fmt.Errorf("policy: PPO batch has %d decisions, %d advantages, %d old log-probabilities and %d returns",
			k, len(b.Advantages), len(b.OldLogProbs), len(b.Returns))
	}
	eps := b.ClipEps
	if eps == 0 {
		eps = 0.2
	}
	res := PPOResult{LogProbs: make([]float64, k)}
	ws := make([]float64, k)
	for i := range b.Decisions {
		lp, err := logProb(p, &b.Decisions[i])
		if err != nil {
			return PPOResult{}, err
		}
		res.LogProbs[i] = lp
		lr := math.Max(-maxLogRatio, math.Min(maxLogRatio, lp-b.OldLogProbs[i]))
		r := math.Exp(lr)
		a := b.Advantages[i]
		s1 := r * a
		s2 := math.Max(1-eps, math.Min(1+eps, r)) * a
		if s1 <= s2 {
			res.Surrogate += s1
			ws[i] = -r * a / float64(k) // d(-s1/k)/d logp
		} else {
			res.Surrogate += s2
		}
		if r < 1-eps || r > 1+eps {
			res.ClipFrac++
		}
		res.ApproxKL += b.OldLogProbs[i] - lp
	}
	res.Surrogate /= float64(k)
	res.ClipFrac /= float64(k)
	res.ApproxKL /= float64(k)
	addEntropyAndValue(p, b, &res)
	if err := addLogProbGrads(p, b.Decisions, ws); err != nil {
		return PPOResult{}, err
	}
	if b.EntropyCoef != 0 {
		addEntropyGrad(p, -b.EntropyCoef/float64(p.N))
	}
	return res, nil
}

// NodeLogProbs returns the log-probability of each node's action in d,
// task-major: entry ti*NumNodes+v is task ti (in Placement, Scheduling,
// Fusion order, active tasks only) of node v.
func (o *Output) NodeLogProbs(d decision.Decision) ([]float32, error) {
	return nodeLogProbs(o.pass, d)
}

func nodeLogProbs[T nn.Float](p *pass[T], d decision.Decision) ([]float32, error) {
	acts, err := actions(p, &d)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(p.n.tasks)*p.N)
	for ti := range p.n.tasks {
		tc := p.final()[ti]
		a := p.n.adims[ti]
		for v, act := range acts[ti] {
			out[ti*p.N+v] = float32(float64(tc.logits[v*a+int(act)]) - float64(tc.lse[v]))
		}
	}
	return out, nil
}

// ppoLossPerNode is ppoLoss with the ratio taken per node and task:
//
//	L = -mean_k mean_(v,t) min(r_kvt A_k, clip(r_kvt) A_k) - entropy and value terms,
//
// with r_kvt = exp(log p(a_kvt) - old_kvt).
func ppoLossPerNode[T nn.Float](p *pass[T], b PPOBatch) (PPOResult, error) {
	k := len(b.Decisions)
	if k == 0 {
		return PPOResult{}, fmt.Errorf("policy: PPO batch has no decisions")
	}
	nt := len(p.n.tasks)
	if len(b.Advantages) != k || len(b.OldNodeLogProbs) != k || (b.Returns != nil && len(b.Returns) != k) {
		return PPOResult{}, fmt.Errorf("policy: PPO batch has %d decisions, %d advantages, %d per-node log-probabilities and %d returns",
			k, len(b.Advantages), len(b.OldNodeLogProbs), len(b.Returns))
	}
	eps := b.ClipEps
	if eps == 0 {
		eps = 0.2
	}
	p.ensureDLogits()
	res := PPOResult{LogProbs: make([]float64, k)}
	units := float64(k * p.N * nt)
	for i := range b.Decisions {
		if len(b.OldNodeLogProbs[i]) != nt*p.N {
			return PPOResult{}, fmt.Errorf("policy: decision %d has %d per-node log-probabilities, want %d", i, len(b.OldNodeLogProbs[i]), nt*p.N)
		}
		acts, err := actions(p, &b.Decisions[i])
		if err != nil {
			return PPOResult{}, err
		}
		adv := b.Advantages[i]
		for ti := range p.n.tasks {
			tc := p.final()[ti]
			a := p.n.adims[ti]
			g := p.dlogits[ti]
			old := b.OldNodeLogProbs[i][ti*p.N : (ti+1)*p.N]
			for v, act := range acts[ti] {
				lp := float64(tc.logits[v*a+int(act)]) - float64(tc.lse[v])
				res.LogProbs[i] += lp
				lr := math.Max(-maxLogRatio, math.Min(maxLogRatio, lp-float64(old[v])))
				r := math.Exp(lr)
				s1, s2 := r*adv, math.Max(1-eps, math.Min(1+eps, r))*adv
				if s1 <= s2 {
					res.Surrogate += s1
					// d(-s1/units)/dlogit_j = -(r A / units) ([j == act] - p_j)
					w := T(-r * adv / units)
					for j := range tc.cols {
						g[v*a+j] -= w * tc.probs[v*a+j]
					}
					g[v*a+int(act)] += w
				} else {
					res.Surrogate += s2
				}
				if r < 1-eps || r > 1+eps {
					res.ClipFrac++
				}
				res.ApproxKL += float64(old[v]) - lp
			}
		}
	}
	res.Surrogate /= units
	res.ClipFrac /= units
	res.ApproxKL /= float64(k * p.N)
	addEntropyAndValue(p, b, &res)
	if b.EntropyCoef != 0 {
		addEntropyGrad(p, -b.EntropyCoef/float64(p.N))
	}
	return res, nil
}

// addEntropyAndValue completes a PPO loss: the entropy bonus's share of
// the loss and the value head's squared error (with its gradient), both
// common to the joint and the per-node surrogate.
func addEntropyAndValue[T nn.Float](p *pass[T], b PPOBatch, res *PPOResult) {
	k := float64(len(b.Decisions))
	res.Entropy = entropy(p) / float64(p.N)
	res.Loss = -res.Surrogate - b.EntropyCoef*res.Entropy
	if b.Returns == nil {
		return
	}
	v := float64(p.value)
	dv := 0.0
	for _, r := range b.Returns {
		res.ValueLoss += (v - r) * (v - r)
		dv += 2 * (v - r)
	}
	res.ValueLoss /= k
	res.Loss += b.ValueCoef * res.ValueLoss
	p.dvalue += b.ValueCoef * dv / k
}
