package hdp

import (
	"math"
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// Config sizes the controller. The zero value of each field is its
// default.
type Config struct {
	// Groups is the grouper's number of groups, the placer's sequence
	// length; 0 = min(256, 20 x devices), the default of TensorFlow's
	// hierarchical controller (the paper's 256 is that rule's cap).
	Groups      int `json:"groups"`
	GroupHidden int `json:"group_hidden"` // the grouper's hidden units; 0 = 64 (HDP's)
	Hidden      int `json:"hidden"`       // LSTM units of the placer's encoder and decoder; 0 = 128
	DeviceDim   int `json:"device_dim"`   // device embedding fed to the next decoder step; 0 = 16
	// Temperature divides the placer's logits; 0 = 1 (TensorFlow's
	// hierarchical controller's temperature).
	Temperature float64 `json:"temperature"`
	// TanhConstant C bounds the placer's logits to C tanh(logits /
	// Temperature), as TensorFlow's tanh_constant: with C = 1 and two
	// devices no group goes to one device with probability above 0.88,
	// so the placer cannot collapse onto one placement. 0 = 1
	// (TensorFlow's default); negative = no bound.
	TanhConstant float64 `json:"tanh_constant"`
	// NoiseStd is TensorFlow's logits_std_noise: for the first NoiseSteps
	// steps, Gaussian noise of NoiseStd times the logits' root mean
	// square is added to the grouper's logits (one scale and one draw per
	// step, shared by its K samples) and to the placer's (one scale and
	// draw per sample and decoder step), and the samples and their
	// log-probabilities are those of the noisy logits. 0 = 0.5
	// (TensorFlow's); negative = none.
	NoiseStd float64 `json:"logits_std_noise"`
	// NoiseSteps is the number of steps with logit noise (TensorFlow's
	// stop_noise_step); 0 = 750.
	NoiseSteps int `json:"stop_noise_step"`
	// GroupScale multiplies the grouper's output layer at initialization
	// (0 = 1): larger values start it from sharper, less uniform
	// groupings of similar ops, as TensorFlow's grouper on raw
	// (unnormalized) features does.
	GroupScale float64 `json:"group_init_scale"`
	// Locality, when positive, seeds the grouper toward low-cut groups:
	// each unit's cluster (its rl17 co-location group contracted by
	// heavy-edge matching to about Groups clusters, see SetClusters) is
	// a one-hot input wired straight to the group logits by a trainable
	// Groups x Groups matrix, initialized to Locality times the identity,
	// so that a unit starts in its cluster's group with a margin of
	// Locality logits. 0 = DefaultLocality; negative = none (HDP's
	// grouper as published).
	Locality float64 `json:"locality"`
}

// DefaultLocality is Config.Locality's default: a unit starts in its
// cluster's group with probability e^10 / (e^10 + 39) = 0.998 of 40
// groups.
const DefaultLocality = 10

// filled returns c with its defaults for a problem with devices devices.
func (c Config) filled(devices int) Config {
	if c.Groups <= 0 {
		c.Groups = min(256, 20*devices)
	}
	if c.GroupHidden <= 0 {
		c.GroupHidden = 64
	}
	if c.Hidden <= 0 {
		c.Hidden = 128
	}
	if c.DeviceDim <= 0 {
		c.DeviceDim = 16
	}
	if c.Temperature <= 0 {
		c.Temperature = 1
	}
	if c.TanhConstant == 0 {
		c.TanhConstant = 1
	}
	if c.TanhConstant < 0 {
		c.TanhConstant = -1
	}
	if c.NoiseStd == 0 {
		c.NoiseStd = 0.5
	}
	if c.NoiseStd < 0 {
		c.NoiseStd = -1
	}
	if c.NoiseSteps <= 0 {
		c.NoiseSteps = 750
	}
	if c.GroupScale <= 0 {
		c.GroupScale = 1
	}
	if c.Locality == 0 {
		c.Locality = DefaultLocality
	}
	if c.Locality < 0 {
		c.Locality = -1
	}
	return c
}

// model is HDP's two networks. The grouper is feed-forward, per unit (a
// co-location group or an op):
//
//	h = relu(E[type] + f W1 + b1),  p(group) = softmax(h W2 + b2)
//
// with E the op-type embedding and f the unit's numeric features
// (NumOpFeatures). The placer is rl17's attentional sequence-to-sequence
// controller over the groups: an LSTM encoder over the group embeddings
// (embed), an LSTM decoder started from the encoder's final state whose
// input at step t is the embedding of the device chosen at step t-1 with
// the encoder's output at step t, and an output layer over the decoder
// state and its Luong attention context. Each sample has its own grouping,
// hence its own encoder pass and attention memory: the encoder runs over
// the K samples as one batch.
type model[T nn.Float] struct {
	cfg     Config
	d       *graphData
	devices int
	// grouper
	gType *nn.Param[T]  // types x GroupHidden
	gIn   *nn.Linear[T] // NumOpFeatures -> GroupHidden
	gOut  *nn.Linear[T] // GroupHidden -> Groups
	gLoc  *nn.Param[T]  // Groups x Groups: cluster -> group logits (nil without Locality)
	feats []T
	// placer
	enc    *nn.LSTM[T]  // embedDim -> Hidden
	dec    *nn.LSTM[T]  // DeviceDim + Hidden -> Hidden
	devEmb *nn.Param[T] // (devices + 1) x DeviceDim; row devices is the start
	att    *nn.Attention[T]
	out    *nn.Linear[T] // 2 Hidden -> devices
}

func newModel[T nn.Float](d *graphData, devices int, cfg Config, seed uint64) *model[T] {
	cfg = cfg.filled(devices)
	r := rand.New(rand.NewPCG(seed, 0x686470)) // "hdp"
	h, gh := cfg.Hidden, cfg.GroupHidden
	m := &model[T]{cfg: cfg, d: d, devices: devices,
		gType:  nn.NewParam[T]("hdp.group.type", d.types, gh),
		gIn:    nn.NewLinear[T]("hdp.group.in", NumOpFeatures, gh, true, r),
		gOut:   nn.NewLinear[T]("hdp.group.out", gh, cfg.Groups, true, r),
		feats:  nn.Convert[T](d.unitFeats),
		enc:    nn.NewLSTM[T]("hdp.enc", d.embedDim(cfg.Groups), h, r),
		dec:    nn.NewLSTM[T]("hdp.dec", cfg.DeviceDim+h, h, r),
		devEmb: nn.NewParam[T]("hdp.device", devices+1, cfg.DeviceDim),
		att:    nn.NewAttention[T]("hdp.att", h, h, r),
		out:    nn.NewLinear[T]("hdp.out", 2*h, devices, true, r)}
	m.gType.InitGlorot(r, d.types, gh, 1)
	m.devEmb.InitGlorot(r, devices+1, cfg.DeviceDim, 1)
	if cfg.Locality > 0 {
		if len(d.cluster) != d.units() {
			panic("hdp: Locality without the units' clusters")
		}
		m.gLoc = nn.NewParam[T]("hdp.group.locality", cfg.Groups, cfg.Groups)
		for i := range cfg.Groups {
			m.gLoc.W[i*cfg.Groups+i] = T(cfg.Locality)
		}
	}
	if cfg.GroupScale != 1 {
		for _, p := range m.gOut.Params() {
			for i := range p.W {
				p.W[i] *= T(cfg.GroupScale)
			}
		}
	}
	return m
}

func (m *model[T]) params() nn.Params[T] {
	return append(m.grouperParams(), m.placerParams()...)
}

// grouperParams are the grouper's parameters (the first of params).
func (m *model[T]) grouperParams() nn.Params[T] {
	ps := nn.Params[T]{m.gType}
	ps = append(ps, m.gIn.Params()...)
	ps = append(ps, m.gOut.Params()...)
	if m.gLoc != nil {
		ps = append(ps, m.gLoc)
	}
	return ps
}

// placerParams are the placer's parameters (the rest of params).
func (m *model[T]) placerParams() nn.Params[T] {
	ps := nn.Params[T]{}
	ps = append(ps, m.enc.Params()...)
	ps = append(ps, m.dec.Params()...)
	ps = append(ps, m.devEmb)
	ps = append(ps, m.att.Params()...)
	return append(ps, m.out.Params()...)
}

// noise is one step's logit noise (Config.NoiseStd): the seed its
// Gaussian draws derive from, and the scales that sampling computed from
// the logits and that reinforce reuses, so that the noise is a constant
// of the step, as the samples are. The zero value, or nil, is no noise.
type noise struct {
	on    bool
	seed  uint64
	group float64   // the grouper's scale: NoiseStd x the root mean square of its logits
	place []float64 // the placer's, per sample s and decoder step t (s*Groups + t)
}

// placeSalt keeps the placer's noise streams apart from the grouper's.
const placeSalt = 0x706c616365

// rms is the root mean square of x.
func rms[T nn.Float](x []T) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(max(len(x), 1)))
}

// addNoise adds scale times standard normal draws of stream (seed,
// stream) to row, reseeding src, which r draws from.
func addNoise[T nn.Float](row []T, scale float64, src *rand.PCG, r *rand.Rand, seed, stream uint64) {
	src.Seed(seed, stream)
	for j := range row {
		row[j] += T(scale * r.NormFloat64())
	}
}

// grouperForward returns the grouper's hidden layer (units x GroupHidden)
// and its logits (units x Groups), from ar.
func (m *model[T]) grouperForward(ar *nn.Arena[T]) (hid, logits []T) {
	u, gh, g := m.d.units(), m.cfg.GroupHidden, m.cfg.Groups
	hid = ar.AllocRaw(u * gh)
	m.gIn.Forward(m.feats, u, m.gIn.W.W, hid, false)
	for i, ty := range m.d.unitType {
		addTo(hid[i*gh:(i+1)*gh], m.gType.W[int(ty)*gh:(int(ty)+1)*gh])
	}
	nn.ReLU(hid)
	logits = ar.AllocRaw(u * g)
	m.gOut.Forward(hid, u, m.gOut.W.W, logits, false)
	if m.gLoc != nil {
		for i, c := range m.d.cluster {
			addTo(logits[i*g:(i+1)*g], m.gLoc.W[int(c)*g:(int(c)+1)*g])
		}
	}
	return hid, logits
}

// softmaxRows replaces each row of g scores of x by its softmax.
func softmaxRows[T nn.Float](x []T, g int) {
	u := len(x) / g
	nn.ParallelFor(u, nn.Grain(u, 8*g), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			nn.SoftmaxRow(x[i*g:(i+1)*g], 1)
		}
	})
}

// addGroupNoise adds the step's noise to the grouper's logits (units x
// g): one draw per logit, shared by the step's K samples, from one stream
// per unit, so that sampling and the update see the same noise.
func addGroupNoise[T nn.Float](logits []T, g int, nz *noise) {
	u := len(logits) / g
	nn.ParallelFor(u, nn.Grain(u, 16*g), func(lo, hi int) {
		var src rand.PCG
		r := rand.New(&src)
		for i := lo; i < hi; i++ {
			addNoise(logits[i*g:(i+1)*g], nz.group, &src, r, nz.seed, uint64(i))
		}
	})
}

// group draws k groupings (groupings[s][unit]) from the grouper and
// returns them with each one's log-probability and the grouper's mean
// entropy per unit. With nz on, it draws from the noisy logits (one
// noise for the step's k samples) and sets nz.group.
func (m *model[T]) group(ar *nn.Arena[T], rng *rand.Rand, k int, nz *noise) (groupings [][]int32, logp []float64, entropy float64) {
	mk := ar.Mark()
	defer ar.Release(mk)
	u, g := m.d.units(), m.cfg.Groups
	_, prob := m.grouperForward(ar)
	if nz != nil && nz.on {
		nz.group = m.cfg.NoiseStd * rms(prob)
		addGroupNoise(prob, g, nz)
	}
	softmaxRows(prob, g)
	for i := range u {
		entropy += rowEntropy(prob[i*g:(i+1)*g]) / float64(u)
	}
	groupings = make([][]int32, k)
	logp = make([]float64, k)
	for s := range k {
		gs := make([]int32, u)
		for i := range u {
			row := prob[i*g : (i+1)*g]
			a := draw(row, rng.Float64())
			gs[i] = int32(a)
			logp[s] += math.Log(math.Max(float64(row[a]), 1e-30))
		}
		groupings[s] = gs
	}
	return groupings, logp, entropy
}

// draw returns the index that the uniform x in [0, 1) picks from the
// probabilities row (its last index when rounding leaves x over).
func draw[T nn.Float](row []T, x float64) int {
	for j, p := range row {
		x -= float64(p)
		if x < 0 {
			return j
		}
	}
	return len(row) - 1
}

// rowEntropy is the entropy of the probabilities row, in nats.
func rowEntropy[T nn.Float](row []T) float64 {
	e := 0.0
	for _, p := range row {
		if p > 0 {
			e -= float64(p) * math.Log(float64(p))
		}
	}
	return e
}

// placerLogits turns the output layer's scores z (one row of devices) into
// the placer's logits: Temperature, then the tanh bound (TanhConstant),
// then, with nz on, the noise of sample s's decoder step t, whose scale is
// computed and kept in nz.place when set is true and read from it
// otherwise. It returns the derivative of the logits by z (before the
// noise, which is a constant) in dz when dz is not nil.
func (m *model[T]) placerLogits(z []T, nz *noise, s, t int, set bool, src *rand.PCG, r *rand.Rand, dz []T) {
	temp, c := m.cfg.Temperature, m.cfg.TanhConstant
	for j, v := range z {
		x := float64(v) / temp
		if c > 0 {
			th := math.Tanh(x)
			z[j] = T(c * th)
			if dz != nil {
				dz[j] = T(c / temp * (1 - th*th))
			}
		} else {
			z[j] = T(x)
			if dz != nil {
				dz[j] = T(1 / temp)
			}
		}
	}
	if nz == nil || !nz.on {
		return
	}
	i := s*m.cfg.Groups + t
	if set {
		nz.place[i] = m.cfg.NoiseStd * rms(z)
	}
	addNoise(z, nz.place[i], src, r, nz.seed^placeSalt, uint64(i))
}

// encoded is the encoder's forward pass over k samples' group embeddings.
type encoded[T nn.Float] struct {
	k    int
	tr   *nn.LSTMTrace[T]
	mem  []T   // k x Groups x Hidden: each sample's encoder outputs, sample-major
	keys [][]T // per sample, its attention keys (Groups x Hidden)
}

func (m *model[T]) encode(ar *nn.Arena[T], x []T, k int) *encoded[T] {
	n, h := m.cfg.Groups, m.cfg.Hidden
	e := &encoded[T]{k: k, tr: m.enc.Forward(ar, x, n, k, nil, nil), mem: ar.AllocRaw(k * n * h)}
	for t := range n {
		for s := range k {
			copy(e.mem[(s*n+t)*h:(s*n+t+1)*h], e.tr.H[(t*k+s)*h:(t*k+s+1)*h])
		}
	}
	for s := range k {
		e.keys = append(e.keys, m.att.Keys(ar, e.memOf(s, n, h), n))
	}
	return e
}

func (e *encoded[T]) memOf(s, n, h int) []T { return e.mem[s*n*h : (s+1)*n*h] }

// decoderInput writes step t's decoder inputs for the k samples whose
// previous devices are prev (the start embedding where prev is -1).
func (m *model[T]) decoderInput(x []T, e *encoded[T], t int, prev []int) {
	dd, h, k := m.cfg.DeviceDim, m.cfg.Hidden, e.k
	in := dd + h
	for s, p := range prev {
		if p < 0 {
			p = m.devices
		}
		copy(x[s*in:s*in+dd], m.devEmb.W[p*dd:(p+1)*dd])
		copy(x[s*in+dd:(s+1)*in], e.tr.H[(t*k+s)*h:(t*k+s+1)*h])
	}
}

// sample draws one placement of the groups (devs[s][group]) for each of
// the k samples whose group embeddings are x (embed's layout), one decoder
// step at a time; it returns them with each sample's log-probability and
// the mean entropy per group. With nz on, it draws from the noisy logits
// and sets nz.place.
func (m *model[T]) sample(ar *nn.Arena[T], rng *rand.Rand, x []T, k int, nz *noise) (devs [][]int, logp []float64, entropy float64) {
	mk := ar.Mark()
	defer ar.Release(mk)
	n, h, d := m.cfg.Groups, m.cfg.Hidden, m.devices
	in := m.cfg.DeviceDim + h
	e := m.encode(ar, x, k)
	hLast, cLast := e.tr.Last()
	hs, cs := ar.AllocRaw(k*h), ar.AllocRaw(k*h)
	copy(hs, hLast)
	copy(cs, cLast)
	xd := ar.AllocRaw(k * in)
	scratch := ar.AllocRaw(k * 4 * h)
	ctx := ar.AllocRaw(k * h)
	o := ar.AllocRaw(k * 2 * h)
	logits := ar.AllocRaw(k * d)
	prev := make([]int, k)
	for i := range prev {
		prev[i] = -1
	}
	devs = make([][]int, k)
	for s := range devs {
		devs[s] = make([]int, n)
	}
	logp = make([]float64, k)
	if nz != nil && nz.on {
		nz.place = make([]float64, k*n)
	}
	var src rand.PCG
	nr := rand.New(&src)
	for t := range n {
		m.decoderInput(xd, e, t, prev)
		m.dec.Step(xd, k, hs, cs, scratch)
		for s := range k {
			am := ar.Mark()
			m.att.Forward(ar, hs[s*h:(s+1)*h], 1, e.memOf(s, n, h), e.keys[s], n, ctx[s*h:(s+1)*h])
			ar.Release(am)
			copy(o[s*2*h:s*2*h+h], hs[s*h:(s+1)*h])
			copy(o[s*2*h+h:(s+1)*2*h], ctx[s*h:(s+1)*h])
		}
		m.out.Forward(o, k, m.out.W.W, logits, false)
		for s := range k {
			row := logits[s*d : (s+1)*d]
			m.placerLogits(row, nz, s, t, true, &src, nr, nil)
			nn.SoftmaxRow(row, 1)
			a := draw(row, rng.Float64())
			entropy += rowEntropy(row) / float64(n*k)
			devs[s][t] = a
			logp[s] += math.Log(math.Max(float64(row[a]), 1e-30))
			prev[s] = a
		}
	}
	return devs, logp, entropy
}

// reinforce adds to the parameters' gradients the gradient of
//
//	L = -Σ_s w[s] (log p(groupings[s]) + log p(devs[s] | groupings[s]))
//
// (joint REINFORCE with w[s] = (R_s - b) / K descends L) and returns L.
// x holds the samples' group embeddings (embed of groupings); they are
// constants of the grouping, as in HDP, so the grouper learns through its
// log-probability only. The decoder is teacher-forced on the sampled
// devices. nz is the step's noise as sampling left it (nil: none): the
// log-probabilities are those of the noisy logits, the noise a constant.
func (m *model[T]) reinforce(ar *nn.Arena[T], x []T, groupings [][]int32, devs [][]int, w []float64, nz *noise) float64 {
	mk := ar.Mark()
	defer ar.Release(mk)
	return m.reinforceGrouper(ar, groupings, w, nz) + m.reinforcePlacer(ar, x, devs, w, nz)
}

func (m *model[T]) reinforceGrouper(ar *nn.Arena[T], groupings [][]int32, w []float64, nz *noise) float64 {
	u, g, gh := m.d.units(), m.cfg.Groups, m.cfg.GroupHidden
	hid, prob := m.grouperForward(ar)
	if nz != nil && nz.on {
		addGroupNoise(prob, g, nz)
	}
	softmaxRows(prob, g)
	loss, wsum := 0.0, 0.0
	for s, gs := range groupings {
		wsum += w[s]
		for i, a := range gs {
			loss -= w[s] * math.Log(math.Max(float64(prob[i*g+int(a)]), 1e-300))
		}
	}
	// dL/dlogits = Σ_s w[s] (softmax - onehot(groupings[s])), in place.
	for i := range prob {
		prob[i] *= T(wsum)
	}
	for s, gs := range groupings {
		for i, a := range gs {
			prob[i*g+int(a)] -= T(w[s])
		}
	}
	if m.gLoc != nil {
		for i, c := range m.d.cluster {
			addTo(m.gLoc.G[int(c)*g:(int(c)+1)*g], prob[i*g:(i+1)*g])
		}
	}
	dhid := ar.Alloc(u * gh)
	m.gOut.Backward(ar, hid, u, nil, m.gOut.W.W, prob, dhid, nil)
	nn.ReLUBackward(dhid, hid)
	m.gIn.Backward(ar, m.feats, u, nil, m.gIn.W.W, dhid, nil, nil)
	for i, ty := range m.d.unitType {
		addTo(m.gType.G[int(ty)*gh:(int(ty)+1)*gh], dhid[i*gh:(i+1)*gh])
	}
	return loss
}

func (m *model[T]) reinforcePlacer(ar *nn.Arena[T], x []T, devs [][]int, w []float64, nz *noise) float64 {
	n, h, d, dd := m.cfg.Groups, m.cfg.Hidden, m.devices, m.cfg.DeviceDim
	k := len(devs)
	in := dd + h
	rows := n * k
	e := m.encode(ar, x, k)
	h0, c0 := e.tr.Last()
	xd := ar.AllocRaw(rows * in)
	prev := make([]int, k)
	for t := range n {
		for s := range k {
			prev[s] = -1
			if t > 0 {
				prev[s] = devs[s][t-1]
			}
		}
		m.decoderInput(xd[t*k*in:(t+1)*k*in], e, t, prev)
	}
	dtr := m.dec.Forward(ar, xd, n, k, h0, c0)
	// Attention per sample over its own memory, on sample-major copies of
	// its queries.
	q := ar.AllocRaw(rows * h)
	for t := range n {
		for s := range k {
			copy(q[(s*n+t)*h:(s*n+t+1)*h], dtr.H[(t*k+s)*h:(t*k+s+1)*h])
		}
	}
	ctx := ar.AllocRaw(rows * h)
	atr := make([]*nn.AttentionTrace[T], k)
	for s := range k {
		atr[s] = m.att.Forward(ar, q[s*n*h:(s+1)*n*h], n, e.memOf(s, n, h), e.keys[s], n, ctx[s*n*h:(s+1)*n*h])
	}
	o := ar.AllocRaw(rows * 2 * h)
	for t := range n {
		for s := range k {
			r := t*k + s
			copy(o[r*2*h:r*2*h+h], dtr.H[r*h:(r+1)*h])
			copy(o[r*2*h+h:(r+1)*2*h], ctx[(s*n+t)*h:(s*n+t+1)*h])
		}
	}
	logits := ar.AllocRaw(rows * d)
	m.out.Forward(o, rows, m.out.W.W, logits, false)
	loss := 0.0
	var src rand.PCG
	nr := rand.New(&src)
	dz := make([]T, d)
	for t := range n {
		for s := range k {
			row := logits[(t*k+s)*d : (t*k+s+1)*d]
			m.placerLogits(row, nz, s, t, false, &src, nr, dz)
			nn.SoftmaxRow(row, 1)
			a := devs[s][t]
			loss -= w[s] * math.Log(math.Max(float64(row[a]), 1e-300))
			row[a]--
			for j := range row {
				row[j] *= T(w[s]) * dz[j]
			}
		}
	}
	do := ar.Alloc(rows * 2 * h)
	m.out.Backward(ar, o, rows, nil, m.out.W.W, logits, do, nil)
	dhd := ar.AllocRaw(rows * h)  // step-major
	dctx := ar.AllocRaw(rows * h) // sample-major
	for t := range n {
		for s := range k {
			r := t*k + s
			copy(dhd[r*h:(r+1)*h], do[r*2*h:r*2*h+h])
			copy(dctx[(s*n+t)*h:(s*n+t+1)*h], do[r*2*h+h:(r+1)*2*h])
		}
	}
	dq := ar.Alloc(rows * h)   // sample-major
	dmem := ar.Alloc(rows * h) // sample-major
	for s := range k {
		m.att.Backward(ar, atr[s], dctx[s*n*h:(s+1)*n*h], dq[s*n*h:(s+1)*n*h], dmem[s*n*h:(s+1)*n*h])
	}
	denc := ar.AllocRaw(rows * h) // step-major gradient of the encoder's outputs
	for t := range n {
		for s := range k {
			r := t*k + s
			addTo(dhd[r*h:(r+1)*h], dq[(s*n+t)*h:(s*n+t+1)*h])
			copy(denc[r*h:(r+1)*h], dmem[(s*n+t)*h:(s*n+t+1)*h])
		}
	}
	dx := ar.Alloc(rows * in)
	dh0, dc0 := ar.Alloc(k*h), ar.Alloc(k*h)
	m.dec.Backward(ar, dtr, dhd, nil, dx, dh0, dc0)
	for t := range n {
		for s := range k {
			r := dx[(t*k+s)*in : (t*k+s+1)*in]
			p := m.devices
			if t > 0 {
				p = devs[s][t-1]
			}
			addTo(m.devEmb.G[p*dd:(p+1)*dd], r[:dd])
			addTo(denc[(t*k+s)*h:(t*k+s+1)*h], r[dd:])
		}
	}
	// The decoder's initial state is the encoder's last, per sample.
	addTo(denc[(n-1)*k*h:n*k*h], dh0)
	m.enc.Backward(ar, e.tr, denc, dc0, nil, nil, nil)
	return loss
}

// addTo adds src to dst element-wise (nn.Add without its parallel split,
// for the short rows of the per-unit and per-sample loops).
func addTo[T nn.Float](dst, src []T) {
	for i, v := range src[:len(dst)] {
		dst[i] += v
	}
}
