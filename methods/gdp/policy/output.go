package policy

import (
	"fmt"
	"math/rand/v2"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/nn"
)

// Output is the result of one forward pass: for every node and active
// task a distribution over actions, and the value estimate. Decisions
// drawn from it, their log-probabilities and the entropy refer to these
// distributions; loss gradients added to it flow into the policy's
// parameters on Backward.
type Output struct {
	p      *Policy
	in     *Input
	ar     *nn.Arena[float32]
	stages [2]*nn.Arena[float32] // Infer only
	pass   *pass[float32]
}

// errInference is the error of a backward pass on an Infer output.
var errInference = fmt.Errorf("policy: an Infer output has no backward pass (use Forward)")

// Input returns the input of the pass.
func (o *Output) Input() *Input { return o.in }

// Value is the value head's estimate of the reward.
func (o *Output) Value() float64 { return float64(o.pass.value) }

// Probs returns task t's action probabilities as a NumNodes x cols
// row-major matrix (cols = MaxDevices, PriorityLevels or FusionLevels;
// devices beyond the cluster have probability 0), or nil if the task is
// inactive. The slice belongs to the Output.
func (o *Output) Probs(t Task) (probs []float32, cols int) {
	for ti, tt := range o.pass.n.tasks {
		if tt == t {
			return o.pass.final()[ti].probs, o.pass.n.adims[ti]
		}
	}
	return nil, 0
}

// Logits returns task t's logits as a NumNodes x cols row-major matrix
// (-Inf for devices beyond the cluster), or nil if the task is inactive.
// Row v is node v of Output.Input().Nodes(): op i's row is Nodes().UnitOf[i].
// The slice belongs to the Output.
func (o *Output) Logits(t Task) (logits []float32, cols int) {
	for ti, tt := range o.pass.n.tasks {
		if tt == t {
			return o.pass.final()[ti].logits, o.pass.n.adims[ti]
		}
	}
	return nil, 0
}

// Sample draws k decisions from the distributions, independently per node
// and task, using r. Every op of a node gets the node's actions.
// Decision.Fusion is the sampled fusion level minus one (level 0 = -1 =
// never initiates a fusion); Priority is the sampled level. Fields of
// inactive tasks are nil.
func (o *Output) Sample(r *rand.Rand, k int) []decision.Decision {
	return sample(o.pass, r, k)
}

// Argmax returns the most probable decision.
func (o *Output) Argmax() decision.Decision { return sample(o.pass, nil, 1)[0] }

// LogProb returns the log-probability of decision d under the
// distributions: the sum over nodes and active tasks of the log-probability
// of the node's action (the action of its first op).
func (o *Output) LogProb(d decision.Decision) (float64, error) { return logProb(o.pass, &d) }

// Entropy returns the entropy of the joint distribution: the sum over
// nodes and active tasks of each categorical distribution's entropy.
func (o *Output) Entropy() float64 { return entropy(o.pass) }

// AddLogProbGrad adds w times the gradient of LogProb(d) to the loss
// gradient that Backward propagates.
func (o *Output) AddLogProbGrad(d decision.Decision, w float64) error {
	return addLogProbGrads(o.pass, []decision.Decision{d}, []float64{w})
}

// AddEntropyGrad adds w times the gradient of Entropy().
func (o *Output) AddEntropyGrad(w float64) { addEntropyGrad(o.pass, w) }

// AddValueGrad adds w times the gradient of Value().
func (o *Output) AddValueGrad(w float64) { o.pass.dvalue += w }

// Backward propagates the loss gradients added so far into the gradients
// of the policy's parameters (adding to them) and clears them. It fails on
// an Output of Infer.
func (o *Output) Backward() error {
	if o.pass.infer {
		return errInference
	}
	o.p.gradMu.Lock()
	defer o.p.gradMu.Unlock()
	backward(o.pass)
	return nil
}

// Release returns the pass's memory to the policy for reuse; the Output
// and every slice obtained from it must not be used afterwards.
func (o *Output) Release() {
	if o.ar != nil {
		o.p.putArena(o.ar)
		for _, a := range o.stages {
			if a != nil {
				o.p.putArena(a)
			}
		}
		o.ar, o.stages, o.pass = nil, [2]*nn.Arena[float32]{}, nil
	}
}

func backward[T nn.Float](p *pass[T]) {
	mark := p.ar.Mark()
	p.n.backward(p)
	p.ar.Release(mark)
	for _, d := range p.dlogits {
		clear(d)
	}
	p.dvalue = 0
}

// sample draws k decisions (r == nil: the argmax, once).
func sample[T nn.Float](p *pass[T], r *rand.Rand, k int) []decision.Decision {
	nd := p.in.nodes
	out := make([]decision.Decision, k)
	choice := make([]int, nd.N)
	for s := range out {
		for ti, t := range p.n.tasks {
			tc := p.final()[ti]
			a := p.n.adims[ti]
			for v := range nd.N {
				pr := tc.probs[v*a : v*a+tc.cols]
				best := 0
				if r == nil {
					for j, x := range pr {
						if x > pr[best] {
							best = j
						}
					}
				} else {
					u := r.Float64()
					acc := 0.0
					best = -1
					for j, x := range pr {
						acc += float64(x)
						if u < acc {
							best = j
							break
						}
					}
					if best < 0 { // rounding: the last action with mass
						for j := len(pr) - 1; j >= 0; j-- {
							if pr[j] > 0 {
								best = j
								break
							}
						}
					}
				}
				choice[v] = best
			}
			field := make([]int, nd.NumOps)
			shift := 0
			if t == Fusion {
				shift = -1
			}
			for op, v := range nd.UnitOf {
				field[op] = choice[v] + shift
			}
			switch t {
			case Placement:
				out[s].Device = field
			case Scheduling:
				out[s].Priority = field
			case Fusion:
				out[s].Fusion = field
			}
		}
	}
	return out
}

// actions returns, per active task, node v's action in d.
func actions[T nn.Float](p *pass[T], d *decision.Decision) ([][]int32, error) {
	in := p.in
	acts := make([][]int32, len(p.n.tasks))
	for ti, t := range p.n.tasks {
		acts[ti] = make([]int32, in.nodes.N)
		for v := range in.nodes.N {
			a, ok, err := in.action(d, t, v)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("policy: decision has no %s field, but the policy decides %s", fieldName(t), t)
			}
			acts[ti][v] = int32(a)
		}
	}
	return acts, nil
}

func fieldName(t Task) string {
	switch t {
	case Scheduling:
		return "Priority"
	case Fusion:
		return "Fusion"
	}
	return "Device"
}

func logProb[T nn.Float](p *pass[T], d *decision.Decision) (float64, error) {
	acts, err := actions(p, d)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for ti := range p.n.tasks {
		tc := p.final()[ti]
		a := p.n.adims[ti]
		for v, act := range acts[ti] {
			s += float64(tc.logits[v*a+int(act)]) - float64(tc.lse[v])
		}
	}
	return s, nil
}

func entropy[T nn.Float](p *pass[T]) float64 {
	s := 0.0
	for ti := range p.n.tasks {
		tc := p.final()[ti]
		a := p.n.adims[ti]
		for v := range p.N {
			lse := float64(tc.lse[v])
			for j := range tc.cols {
				pr := float64(tc.probs[v*a+j])
				if pr > 0 {
					s -= pr * (float64(tc.logits[v*a+j]) - lse)
				}
			}
		}
	}
	return s
}

func (p *pass[T]) ensureDLogits() {
	if p.dlogits == nil {
		p.dlogits = make([][]T, len(p.n.tasks))
	}
	for ti := range p.n.tasks {
		if p.dlogits[ti] == nil {
			p.dlogits[ti] = make([]T, p.N*p.n.adims[ti])
		}
	}
}

// addLogProbGrads adds sum_k w_k d LogProb(d_k) / d logits.
func addLogProbGrads[T nn.Float](p *pass[T], ds []decision.Decision, ws []float64) error {
	all := make([][][]int32, len(ds))
	for k := range ds {
		acts, err := actions(p, &ds[k])
		if err != nil {
			return err
		}
		all[k] = acts
	}
	p.ensureDLogits()
	wsum := 0.0
	for _, w := range ws {
		wsum += w
	}
	for ti := range p.n.tasks {
		tc := p.final()[ti]
		a := p.n.adims[ti]
		g := p.dlogits[ti]
		for v := range p.N {
			for j := range tc.cols {
				g[v*a+j] -= T(wsum) * tc.probs[v*a+j]
			}
		}
		for k, acts := range all {
			w := T(ws[k])
			for v, act := range acts[ti] {
				g[v*a+int(act)] += w
			}
		}
	}
	return nil
}

// addEntropyGrad adds w dH/dlogits: dH_v/dl_j = -p_j (log p_j + H_v).
func addEntropyGrad[T nn.Float](p *pass[T], w float64) {
	p.ensureDLogits()
	for ti := range p.n.tasks {
		tc := p.final()[ti]
		a := p.n.adims[ti]
		g := p.dlogits[ti]
		for v := range p.N {
			lse := float64(tc.lse[v])
			h := 0.0
			for j := range tc.cols {
				if pr := float64(tc.probs[v*a+j]); pr > 0 {
					h -= pr * (float64(tc.logits[v*a+j]) - lse)
				}
			}
			for j := range tc.cols {
				pr := float64(tc.probs[v*a+j])
				if pr > 0 {
					lp := float64(tc.logits[v*a+j]) - lse
					g[v*a+j] += T(-w * pr * (lp + h))
				}
			}
		}
	}
}
