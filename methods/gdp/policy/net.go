package policy

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/graphsage"
	"github.com/placer/placer/nn/transformerxl"
)

// net is the policy network, generic over the element type so that the
// float64 instantiation can be checked against finite differences.
type net[T nn.Float] struct {
	cfg   Config
	tasks []Task
	adims []int // action-space size per active task

	enc      *graphsage.Encoder[T]
	inProj   *nn.Linear[T]
	txl      []*transformerxl.Layer[T]
	attn     *transformerxl.Attention[T] // shared by all task heads
	ln       []*transformerxl.LayerNorm[T]
	emb      []*nn.Linear[T] // previous actions -> DModel, per task
	fc1, fc2 []*nn.Linear[T]
	cond     *transformerxl.Conditioner[T]
	val1     *nn.Linear[T]
	val2     *nn.Linear[T]
	params   nn.Params[T]

	// Modulation slots (indices into the conditioner's outputs).
	modIn   int
	modTXL  []int // first of four per layer
	modAttn int   // first of two
	modFC   []int // first of two per task
}

func (n *net[T]) sumActions() int {
	s := 0
	for _, a := range n.adims {
		s += a
	}
	return s
}

func (n *net[T]) condIn() int {
	return 2*n.cfg.SageDim + graphsage.NumGraphStats(n.featureConfig()) + n.cfg.MaxDevices
}

func (n *net[T]) featureConfig() graphsage.FeatureConfig {
	return graphsage.FeatureConfig{TypeBuckets: n.cfg.TypeBuckets, HintDim: n.cfg.HintDim}
}

// newNet builds and initializes the network for a filled, valid config.
func newNet[T nn.Float](cfg Config, seed uint64) *net[T] {
	r := rand.New(rand.NewPCG(seed, 0x706f6c696379)) // "policy"
	n := &net[T]{cfg: cfg}
	n.tasks, n.adims = cfg.tasks()
	d := cfg.DModel
	nf := graphsage.NumFeatures(n.featureConfig())
	n.enc = graphsage.NewEncoder[T]("sage", nf, cfg.SageDim, cfg.SageLayers, cfg.SageNeighbors, r)
	n.inProj = nn.NewLinear[T]("in", cfg.SageDim, d, true, r)
	var dims []int
	n.modIn = len(dims)
	dims = append(dims, cfg.SageDim)
	for l := range cfg.Layers {
		layer := transformerxl.NewLayer[T]("txl"+strconv.Itoa(l), d, cfg.Heads, cfg.HeadDim, cfg.Inner, r)
		n.txl = append(n.txl, layer)
		n.modTXL = append(n.modTXL, len(dims))
		dims = append(dims, layer.ModDims()...)
	}
	n.attn = transformerxl.NewAttention[T]("head.attn", d, cfg.Heads, cfg.HeadDim, r)
	n.modAttn = len(dims)
	dims = append(dims, n.attn.ModDims()...)
	for i, t := range n.tasks {
		name := "head." + t.String()
		n.ln = append(n.ln, transformerxl.NewLayerNorm[T](name+".ln", d))
		in := n.sumActions() // the placement head reads the previous iteration's actions
		if i > 0 {
			in = n.adims[i-1]
		}
		n.emb = append(n.emb, nn.NewLinear[T](name+".emb", in, d, false, r))
		n.fc1 = append(n.fc1, nn.NewLinear[T](name+".fc1", d, cfg.HeadHidden, true, r))
		n.fc2 = append(n.fc2, nn.NewLinear[T](name+".fc2", cfg.HeadHidden, n.adims[i], true, r))
		n.modFC = append(n.modFC, len(dims))
		dims = append(dims, d, cfg.HeadHidden)
	}
	n.cond = transformerxl.NewConditioner[T]("cond", n.condIn(), cfg.CondDim, dims, r)
	n.val1 = nn.NewLinear[T]("value.l1", cfg.CondDim, cfg.HeadHidden, true, r)
	n.val2 = nn.NewLinear[T]("value.l2", cfg.HeadHidden, 1, true, r)

	ps := n.enc.Params()
	ps = append(ps, n.inProj.Params()...)
	for _, l := range n.txl {
		ps = append(ps, l.Params()...)
	}
	ps = append(ps, n.attn.Params()...)
	for i := range n.tasks {
		ps = append(ps, n.ln[i].Params()...)
		ps = append(ps, n.emb[i].Params()...)
		ps = append(ps, n.fc1[i].Params()...)
		ps = append(ps, n.fc2[i].Params()...)
	}
	ps = append(ps, n.cond.Params()...)
	ps = append(ps, n.val1.Params()...)
	ps = append(ps, n.val2.Params()...)
	n.params = ps
	return n
}

// taskCache is one task head of one refinement iteration.
type taskCache[T nn.Float] struct {
	a      []T // actions conditioned on (N x aCols); nil = none
	aCols  int
	hprev  []T // H of the previous task (or the attention output)
	ln     *transformerxl.LNCache[T]
	h      []T
	attn   *transformerxl.AttnCache[T]
	r      []T // h + attention
	u      []T // relu hidden of the FC
	logits []T // N x adim
	probs  []T // N x adim (masked columns 0)
	lse    []T // N
	cols   int // valid columns (devices for placement)
}

// pass is one forward pass with everything its backward pass needs, and
// the loss gradients accumulated for it.
type pass[T nn.Float] struct {
	n       *net[T]
	in      *Input
	ar      *nn.Arena[T]
	N       int
	devices int

	x      []T
	hs     []T
	encC   *graphsage.EncoderCache[T]
	g      []T
	maxRow []int32
	mods   [][]T
	condC  *transformerxl.CondCache[T]
	xin    []T
	txlC   []*transformerxl.LayerCache[T]
	xtr    []T
	steps  [][]*taskCache[T]
	vh     []T // value hidden (relu)
	value  T

	dlogits [][]T // per task, final iteration; nil until a loss adds to it
	dvalue  float64

	// Inference passes keep no activations: consecutive stages alternate
	// between two arenas, each reset when its turn comes again.
	infer  bool
	stages [2]*nn.Arena[T]
	turn   int
}

// stage returns the arena for the next stage of the pass: the pass's own
// for training, otherwise the one of the two stage arenas that does not
// hold the previous stage's output, emptied.
func (p *pass[T]) stage() *nn.Arena[T] {
	if !p.infer {
		return p.ar
	}
	a := p.stages[p.turn]
	p.turn ^= 1
	a.Reset()
	return a
}

func (p *pass[T]) final() []*taskCache[T] { return p.steps[len(p.steps)-1] }

// forward runs the network on in, keeping what the backward pass needs.
func (n *net[T]) forward(in *Input, ar *nn.Arena[T]) *pass[T] {
	return n.run(&pass[T]{n: n, in: in, ar: ar})
}

// infer runs the network on in keeping only the outputs: the activations
// of each stage live in one of the two stage arenas, ar holds the rest.
func (n *net[T]) infer(in *Input, ar, s0, s1 *nn.Arena[T]) *pass[T] {
	return n.run(&pass[T]{n: n, in: in, ar: ar, infer: true, stages: [2]*nn.Arena[T]{s0, s1}})
}

func (n *net[T]) run(p *pass[T]) *pass[T] {
	cfg := &n.cfg
	in, ar := p.in, p.ar
	N, d := in.nodes.N, cfg.DModel
	p.N, p.devices = N, in.devices

	// Encoder.
	nf := graphsage.NumFeatures(n.featureConfig())
	p.x = ar.AllocRaw(N * nf)
	for i, v := range in.feats {
		p.x[i] = T(v)
	}
	if p.infer {
		p.hs = p.x
		for i, l := range n.enc.Layers {
			p.hs, _ = l.Forward(p.stage(), p.hs, N, in.nbrs[i], n.enc.K)
		}
	} else {
		p.hs, p.encC = n.enc.Forward(ar, p.x, N, in.nbrs)
	}

	// Graph embedding and superposition.
	sd := cfg.SageDim
	p.g = ar.Alloc(n.condIn())
	p.maxRow = make([]int32, sd)
	mean, mx := p.g[:sd], p.g[sd:2*sd]
	copy(mx, p.hs[:sd])
	for v := range N {
		row := p.hs[v*sd : (v+1)*sd]
		for j, val := range row {
			mean[j] += val
			if val > mx[j] {
				mx[j] = val
				p.maxRow[j] = int32(v)
			}
		}
	}
	for j := range mean {
		mean[j] /= T(N)
	}
	for i, s := range in.stats {
		p.g[2*sd+i] = T(s)
	}
	p.g[2*sd+len(in.stats)+in.devices-1] = 1
	p.mods, p.condC = n.cond.Forward(ar, p.g)

	// Value head.
	p.vh = ar.AllocRaw(cfg.HeadHidden)
	n.val1.Forward(p.condC.Hidden(), 1, n.val1.W.W, p.vh, false)
	nn.ReLU(p.vh)
	v := ar.AllocRaw(1)
	n.val2.Forward(p.vh, 1, n.val2.W.W, v, false)
	p.value = v[0]

	// Input projection and Transformer-XL.
	sa := p.stage()
	p.xin = sa.AllocRaw(N * d)
	n.inProj.Forward(p.hs, N, n.inProj.Modulated(sa, p.mods[n.modIn]), p.xin, false)
	x := p.xin
	for l, layer := range n.txl {
		sa := p.stage()
		y := sa.AllocRaw(N * d)
		c := layer.Forward(sa, x, N, cfg.SegmentLen, p.mods[n.modTXL[l]:n.modTXL[l]+4], y)
		if !p.infer {
			p.txlC = append(p.txlC, c)
		}
		x = y
	}
	p.xtr = x
	if p.infer { // every iteration starts from it: keep it out of the stages
		p.xtr = ar.AllocRaw(N * d)
		copy(p.xtr, x)
	}

	// Recurrent attention heads, refined T times.
	var prev []T // previous iteration's actions, N x sumActions
	if in.initial != nil {
		prev = ar.AllocRaw(len(in.initial))
		for i, v := range in.initial {
			prev[i] = T(v)
		}
	}
	sumA := n.sumActions()
	for it := range cfg.RefineSteps {
		var step []*taskCache[T]
		hprev := p.xtr
		for ti := range n.tasks {
			tc := &taskCache[T]{hprev: hprev, cols: n.adims[ti]}
			if n.tasks[ti] == Placement {
				tc.cols = in.devices
			}
			if ti == 0 {
				tc.a, tc.aCols = prev, sumA
			} else {
				tc.a, tc.aCols = step[ti-1].probs, n.adims[ti-1]
			}
			n.taskForward(p, ti, tc)
			step = append(step, tc)
			hprev = tc.h
		}
		p.steps = append(p.steps, step)
		if it == cfg.RefineSteps-1 {
			break
		}
		prev = ar.AllocRaw(N * sumA)
		off := 0
		for ti, tc := range step {
			a := n.adims[ti]
			nn.ParallelFor(N, nn.Grain(N, a), func(lo, hi int) {
				for v := lo; v < hi; v++ {
					copy(prev[v*sumA+off:v*sumA+off+a], tc.probs[v*a:(v+1)*a])
				}
			})
			off += a
		}
	}
	return p
}

// taskForward runs task head ti: H = LN(hprev + a E), R = H + MHA(H),
// logits = FC(R).
func (n *net[T]) taskForward(p *pass[T], ti int, tc *taskCache[T]) {
	ar, N, d := p.stage(), p.N, n.cfg.DModel
	pre := ar.AllocRaw(N * d)
	copy(pre, tc.hprev)
	if tc.a != nil {
		n.emb[ti].Forward(tc.a, N, n.emb[ti].W.W, pre, true)
	}
	tc.h = ar.AllocRaw(N * d)
	tc.ln = n.ln[ti].Forward(ar, pre, N, tc.h)
	tc.r = pre // reuse: pre is not needed by the backward pass
	tc.attn = n.attn.Forward(ar, tc.h, N, n.cfg.SegmentLen, p.mods[n.modAttn], p.mods[n.modAttn+1], tc.r)
	nn.Add(tc.r, tc.h)
	hh := n.cfg.HeadHidden
	tc.u = ar.AllocRaw(N * hh)
	m := n.modFC[ti]
	n.fc1[ti].Forward(tc.r, N, n.fc1[ti].Modulated(ar, p.mods[m]), tc.u, false)
	nn.ReLU(tc.u)
	a := n.adims[ti]
	// The distributions outlive the stage.
	tc.logits = p.ar.AllocRaw(N * a)
	n.fc2[ti].Forward(tc.u, N, n.fc2[ti].Modulated(ar, p.mods[m+1]), tc.logits, false)
	if b := p.in.bonus(ti, tc.cols); b > 0 {
		// A constant: the backward pass is unchanged.
		for v, act := range p.in.anchor[ti] {
			if act >= 0 {
				tc.logits[v*a+int(act)] += T(b)
			}
		}
	}
	tc.probs = p.ar.AllocRaw(N * a)
	tc.lse = p.ar.AllocRaw(N)
	cols := tc.cols
	nn.ParallelFor(N, nn.Grain(N, 8*a), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			l := tc.logits[v*a : v*a+cols]
			pr := tc.probs[v*a : (v+1)*a]
			mx := l[0]
			for _, x := range l {
				mx = max(mx, x)
			}
			var s T
			for j, x := range l {
				e := nn.Exp(x - mx)
				pr[j] = e
				s += e
			}
			inv := 1 / s
			for j := range l {
				pr[j] *= inv
			}
			clear(pr[cols:])
			for j := cols; j < a; j++ { // devices the cluster lacks
				tc.logits[v*a+j] = T(math.Inf(-1))
			}
			tc.lse[v] = mx + nn.Log(s)
		}
	})
}

// backward propagates the accumulated loss gradients (dlogits of the final
// iteration, dvalue) into the parameters' gradients.
func (n *net[T]) backward(p *pass[T]) {
	cfg := &n.cfg
	ar, N, d := p.ar, p.N, cfg.DModel
	total := 0
	for _, m := range p.mods {
		total += len(m)
	}
	dmodFlat := ar.Alloc(total)
	dmods := n.cond.Split(dmodFlat)

	// Task heads, last iteration first. Buffers that carry gradients
	// between steps are allocated first; each step's temporaries are
	// released when it is done (a stack discipline on the arena).
	T_ := len(p.steps)
	dprobs := make([][][]T, T_)
	for t := range dprobs {
		dprobs[t] = make([][]T, len(n.tasks))
		for ti := range n.tasks {
			if t < T_-1 || ti < len(n.tasks)-1 {
				dprobs[t][ti] = ar.Alloc(N * n.adims[ti])
			}
		}
	}
	dxtr := ar.Alloc(N * d)
	carry := [2][]T{ar.AllocRaw(N * d), ar.AllocRaw(N * d)}
	for t := T_ - 1; t >= 0; t-- {
		var dhnext []T
		for ti := len(n.tasks) - 1; ti >= 0; ti-- {
			tc := p.steps[t][ti]
			a := n.adims[ti]
			mark := ar.Mark()
			dlog := ar.Alloc(N * a)
			if t == T_-1 && p.dlogits != nil && p.dlogits[ti] != nil {
				copy(dlog, p.dlogits[ti])
			}
			if dp := dprobs[t][ti]; dp != nil {
				softmaxBackward(dlog, dp, tc.probs, N, a, tc.cols)
			}
			for v := range N { // masked devices have no gradient
				clear(dlog[v*a+tc.cols : (v+1)*a])
			}
			dpre := carry[ti%2]
			clear(dpre)
			n.taskBackward(p, ti, tc, dlog, dhnext, dmods, dpre)
			// dpre is the gradient of pre = hprev + a E.
			if tc.a != nil {
				da := ar.Alloc(N * tc.aCols)
				n.emb[ti].Backward(ar, tc.a, N, nil, n.emb[ti].W.W, dpre, da, nil)
				switch {
				case ti > 0:
					nn.Add(dprobs[t][ti-1], da)
				case t > 0:
					off := 0
					for tj := range n.tasks {
						aj := n.adims[tj]
						dst := dprobs[t-1][tj]
						for v := range N {
							row := da[v*tc.aCols+off : v*tc.aCols+off+aj]
							out := dst[v*aj : (v+1)*aj]
							for j, g := range row {
								out[j] += g
							}
						}
						off += aj
					}
				}
			}
			ar.Release(mark)
			if ti > 0 {
				dhnext = dpre
			} else {
				nn.Add(dxtr, dpre)
			}
		}
	}

	// Transformer-XL and input projection.
	dx := dxtr
	for l := len(n.txl) - 1; l >= 0; l-- {
		dIn := carry[l%2]
		if &dIn[0] == &dx[0] {
			dIn = carry[(l+1)%2]
		}
		clear(dIn)
		m := n.modTXL[l]
		mark := ar.Mark()
		n.txl[l].Backward(ar, p.txlC[l], dx, dIn, dmods[m:m+4])
		ar.Release(mark)
		dx = dIn
	}
	sd := cfg.SageDim
	dhs := ar.Alloc(N * sd)
	n.inProj.Backward(ar, p.hs, N, p.mods[n.modIn], n.inProj.Modulated(ar, p.mods[n.modIn]), dx, dhs, dmods[n.modIn])

	// Value head and conditioner.
	dz := ar.Alloc(cfg.CondDim)
	if p.dvalue != 0 {
		dv := ar.AllocRaw(1)
		dv[0] = T(p.dvalue)
		dvh := ar.Alloc(cfg.HeadHidden)
		n.val2.Backward(ar, p.vh, 1, nil, n.val2.W.W, dv, dvh, nil)
		nn.ReLUBackward(dvh, p.vh)
		n.val1.Backward(ar, p.condC.Hidden(), 1, nil, n.val1.W.W, dvh, dz, nil)
	}
	dg := ar.Alloc(len(p.g))
	n.cond.Backward(ar, p.condC, dmodFlat, dz, dg)
	inv := 1 / T(N)
	nn.ParallelFor(N, nn.Grain(N, sd), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			row := dhs[v*sd : (v+1)*sd]
			for j := range row {
				row[j] += dg[j] * inv
			}
		}
	})
	for j := range sd {
		dhs[int(p.maxRow[j])*sd+j] += dg[sd+j]
	}
	n.enc.Backward(ar, p.encC, dhs, nil)
}

// taskBackward back-propagates dlogits through task head ti (and dhnext,
// the gradient reaching its H from the next task) and adds the gradient
// of its pre-norm input to dpre.
func (n *net[T]) taskBackward(p *pass[T], ti int, tc *taskCache[T], dlog, dhnext []T, dmods [][]T, dpre []T) {
	ar, N, d := p.ar, p.N, n.cfg.DModel
	hh := n.cfg.HeadHidden
	m := n.modFC[ti]
	du := ar.Alloc(N * hh)
	n.fc2[ti].Backward(ar, tc.u, N, p.mods[m+1], n.fc2[ti].Modulated(ar, p.mods[m+1]), dlog, du, dmods[m+1])
	nn.ReLUBackward(du, tc.u)
	dr := ar.Alloc(N * d)
	n.fc1[ti].Backward(ar, tc.r, N, p.mods[m], n.fc1[ti].Modulated(ar, p.mods[m]), du, dr, dmods[m])
	dh := ar.AllocRaw(N * d)
	copy(dh, dr)
	if dhnext != nil {
		nn.Add(dh, dhnext)
	}
	n.attn.Backward(ar, tc.attn, dr, dh, dmods[n.modAttn], dmods[n.modAttn+1])
	n.ln[ti].Backward(tc.ln, dh, dpre)
}

// softmaxBackward adds to dlog the gradient through p = softmax(logits)
// of dp, over the first cols columns.
func softmaxBackward[T nn.Float](dlog, dp, probs []T, N, a, cols int) {
	nn.ParallelFor(N, nn.Grain(N, 4*a), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			pr := probs[v*a : v*a+cols]
			g := dp[v*a : v*a+cols]
			var s T
			for j, x := range pr {
				s += x * g[j]
			}
			out := dlog[v*a : v*a+cols]
			for j, x := range pr {
				out[j] += x * (g[j] - s)
			}
		}
	})
}
