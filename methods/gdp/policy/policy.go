package policy

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/placer/placer/nn"
)

// Param is one weight matrix of the policy and its accumulated gradient.
type Param = nn.Param[float32]

// Policy is the GO/GDP policy network: weights, hyperparameters and
// feature normalization. Forward passes may run concurrently; gradient
// accumulation (Output.Backward, PPOLoss) is serialized internally, and
// weights must not change while a forward or backward pass runs.
type Policy struct {
	cfg  Config
	seed uint64
	net  *net[float32]

	gradMu sync.Mutex

	arenaMu sync.Mutex
	arenas  []*nn.Arena[float32] // released, ready for reuse
	out     int                  // handed out and not released
}

// New returns a policy with hyperparameters cfg (nil = defaults) and
// weights initialized from seed. The seed also fixes the neighbour
// samples of every Input the policy prepares.
func New(cfg *Config, seed uint64) (*Policy, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	c.fill()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &Policy{cfg: c, seed: seed, net: newNet[float32](c, seed)}, nil
}

// Config returns the policy's hyperparameters, defaults filled in.
func (p *Policy) Config() Config { return p.cfg }

// Seed returns the seed the policy was created with.
func (p *Policy) Seed() uint64 { return p.seed }

// Params lists every trainable parameter in a fixed order, for an
// optimizer: update W from G, then call ZeroGrad.
func (p *Policy) Params() []*Param { return p.net.params }

// NumParams is the total number of weights.
func (p *Policy) NumParams() int { return p.net.params.Count() }

// ZeroGrad clears every parameter's gradient.
func (p *Policy) ZeroGrad() { p.net.params.ZeroGrad() }

// Forward runs the network on in and returns the per-node action
// distributions of the final refinement iteration and the value. The
// Output holds the activations its backward pass needs; call Release when
// done with it so the next pass can reuse the memory.
func (p *Policy) Forward(in *Input) (*Output, error) {
	if err := p.check(in); err != nil {
		return nil, err
	}
	ar := p.getArena()
	return &Output{p: p, in: in, ar: ar, pass: p.net.forward(in, ar)}, nil
}

// Infer runs the network on in like Forward but keeps only the outputs,
// not the activations a backward pass needs: it takes about a third of
// Forward's memory, for rollouts and zero-shot placement. The Output
// supports everything but Backward and PPOLoss.
func (p *Policy) Infer(in *Input) (*Output, error) {
	if err := p.check(in); err != nil {
		return nil, err
	}
	o := &Output{p: p, in: in, ar: p.getArena(), stages: [2]*nn.Arena[float32]{p.getArena(), p.getArena()}}
	o.pass = p.net.infer(in, o.ar, o.stages[0], o.stages[1])
	return o, nil
}

func (p *Policy) check(in *Input) error {
	if in == nil {
		return fmt.Errorf("policy: nil input")
	}
	if in.sumA != p.net.sumActions() || len(in.nbrs) != p.cfg.SageLayers {
		return fmt.Errorf("policy: input was prepared by a policy with another configuration")
	}
	return nil
}

func (p *Policy) getArena() *nn.Arena[float32] {
	p.arenaMu.Lock()
	defer p.arenaMu.Unlock()
	p.out++
	if k := len(p.arenas); k > 0 {
		a := p.arenas[k-1]
		p.arenas = p.arenas[:k-1]
		return a
	}
	if p.out > 4 {
		// Outputs that were dropped without Release still hold their
		// arenas, which live outside the Go heap and so do not prompt a
		// collection: collect now, which unmaps the unreachable ones.
		runtime.GC()
	}
	return new(nn.Arena[float32])
}

func (p *Policy) putArena(a *nn.Arena[float32]) {
	a.Reset()
	p.arenaMu.Lock()
	p.out--
	p.arenas = append(p.arenas, a)
	p.arenaMu.Unlock()
}
