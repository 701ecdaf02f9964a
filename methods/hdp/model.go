package hdp

import (
	"math"
	"math/rand/v2"

	"github.com/placer/placer/methods/internal/seq2seq"
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
// controller (seq2seq.Controller) over the groups, whose encoder reads the
// group embeddings (embed) and whose logits are TensorFlow's
// (placerLogits). Each sample has its own grouping, hence its own encoder
// input and attention memory: the encoder runs over the K samples as one
// batch.
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
	ctl *seq2seq.Controller[T]
}

func newModel[T nn.Float](d *graphData, devices int, cfg Config, seed uint64) *model[T] {
	cfg = cfg.filled(devices)
	r := rand.New(rand.NewPCG(seed, 0x686470)) // "hdp"
	gh := cfg.GroupHidden
	m := &model[T]{cfg: cfg, d: d, devices: devices,
		gType: nn.NewParam[T]("hdp.group.type", d.types, gh),
		gIn:   nn.NewLinear[T]("hdp.group.in", NumOpFeatures, gh, true, r),
		gOut:  nn.NewLinear[T]("hdp.group.out", gh, cfg.Groups, true, r),
		feats: nn.Convert[T](d.unitFeats)}
	m.ctl = seq2seq.New[T]("hdp", d.embedDim(cfg.Groups), cfg.Hidden, cfg.DeviceDim, devices, r)
	m.gType.InitGlorot(r, d.types, gh, 1)
	m.ctl.InitDevices(r)
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
func (m *model[T]) placerParams() nn.Params[T] { return m.ctl.Params() }

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
		seq2seq.AddTo(hid[i*gh:(i+1)*gh], m.gType.W[int(ty)*gh:(int(ty)+1)*gh])
	}
	nn.ReLU(hid)
	logits = ar.AllocRaw(u * g)
	m.gOut.Forward(hid, u, m.gOut.W.W, logits, false)
	if m.gLoc != nil {
		for i, c := range m.d.cluster {
			seq2seq.AddTo(logits[i*g:(i+1)*g], m.gLoc.W[int(c)*g:(int(c)+1)*g])
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
		entropy += seq2seq.RowEntropy(prob[i*g:(i+1)*g]) / float64(u)
	}
	groupings = make([][]int32, k)
	logp = make([]float64, k)
	for s := range k {
		gs := make([]int32, u)
		for i := range u {
			row := prob[i*g : (i+1)*g]
			a := seq2seq.Draw(row, rng.Float64())
			gs[i] = int32(a)
			logp[s] += math.Log(math.Max(float64(row[a]), 1e-30))
		}
		groupings[s] = gs
	}
	return groupings, logp, entropy
}

// placerLogits are the placer's logits (seq2seq.Logits): the output
// layer's scores z (one row of devices) divided by Temperature, then the
// tanh bound (TanhConstant), then, with nz on, the noise of sample s's
// decoder step t, whose scale is computed and kept in nz.place while
// sampling and read from it otherwise. The derivative of the logits by z
// (before the noise, which is a constant) goes to dz when dz is not nil.
type placerLogits[T nn.Float] struct {
	cfg *Config
	nz  *noise
	src rand.PCG
	r   *rand.Rand
}

// logits returns the placer's logits with the step's noise nz (nil: none).
func (m *model[T]) logits(nz *noise) *placerLogits[T] {
	l := &placerLogits[T]{cfg: &m.cfg, nz: nz}
	l.r = rand.New(&l.src)
	return l
}

// Apply implements seq2seq.Logits.
func (l *placerLogits[T]) Apply(z []T, s, t int, sampling bool, dz []T) {
	temp, c := l.cfg.Temperature, l.cfg.TanhConstant
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
	nz := l.nz
	if nz == nil || !nz.on {
		return
	}
	i := s*l.cfg.Groups + t
	if sampling {
		nz.place[i] = l.cfg.NoiseStd * rms(z)
	}
	addNoise(z, nz.place[i], &l.src, l.r, nz.seed^placeSalt, uint64(i))
}

// sample draws one placement of the groups (devs[s][group]) for each of
// the k samples whose group embeddings are x (embed's layout), one decoder
// step at a time; it returns them with each sample's log-probability and
// the mean entropy per group. With nz on, it draws from the noisy logits
// and sets nz.place.
func (m *model[T]) sample(ar *nn.Arena[T], rng *rand.Rand, x []T, k int, nz *noise) (devs [][]int, logp []float64, entropy float64) {
	n := m.cfg.Groups
	if nz != nil && nz.on {
		nz.place = make([]float64, k*n)
	}
	nk := float64(n * k)
	devs, logp = m.ctl.Sample(ar, rng, seq2seq.Input[T]{X: x, Steps: n}, k, m.logits(nz), func(row []T) {
		entropy += seq2seq.RowEntropy(row) / nk
	})
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
	in := seq2seq.Input[T]{X: x, Steps: m.cfg.Groups}
	return m.reinforceGrouper(ar, groupings, w, nz) + m.ctl.Reinforce(ar, in, devs, w, m.logits(nz), nil)
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
			seq2seq.AddTo(m.gLoc.G[int(c)*g:(int(c)+1)*g], prob[i*g:(i+1)*g])
		}
	}
	dhid := ar.Alloc(u * gh)
	m.gOut.Backward(ar, hid, u, nil, m.gOut.W.W, prob, dhid, nil)
	nn.ReLUBackward(dhid, hid)
	m.gIn.Backward(ar, m.feats, u, nil, m.gIn.W.W, dhid, nil, nil)
	for i, ty := range m.d.unitType {
		seq2seq.AddTo(m.gType.G[int(ty)*gh:(int(ty)+1)*gh], dhid[i*gh:(i+1)*gh])
	}
	return loss
}
