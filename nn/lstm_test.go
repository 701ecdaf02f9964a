package nn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

const (
	fdH    = 1e-6
	fdRTol = 1e-6
	fdATol = 1e-9
)

// perturb moves every weight of ps by up to ±scale, so that no gradient
// check runs at a symmetric point (zero biases) where errors could cancel.
func perturb(r *rand.Rand, ps nn.Params[float64], scale float64) {
	for _, p := range ps {
		for i := range p.W {
			p.W[i] += scale * (2*r.Float64() - 1)
		}
	}
}

// TestLSTMGradient checks backpropagation through time against central
// finite differences: the gradients of a loss on every step's hidden state
// and on the last cell state with respect to the input sequence, the
// initial state and every weight and bias, with and without an initial
// state.
func TestLSTMGradient(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		steps, batch, in, hid   int
		initial, lastCellInLoss bool
	}{
		{"batch3-initial", 5, 3, 4, 6, true, true},
		{"batch1-zero-state", 7, 1, 3, 5, false, true},
		{"one-step", 1, 2, 3, 4, true, false},
		{"hidden-only-loss", 6, 2, 2, 3, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(tc.steps*100+tc.batch)))
			l := nn.NewLSTM[float64]("lstm", tc.in, tc.hid, r)
			perturb(r, l.Params(), 0.3)
			rows := tc.steps * tc.batch
			x := nntest.Rand(r, rows*tc.in)
			var h0, c0 []float64
			if tc.initial {
				h0, c0 = nntest.Rand(r, tc.batch*tc.hid), nntest.Rand(r, tc.batch*tc.hid)
			}
			projH := nntest.Rand(r, rows*tc.hid)
			projC := nntest.Rand(r, tc.batch*tc.hid)
			if !tc.lastCellInLoss {
				clear(projC)
			}
			loss := func() float64 {
				var ar nn.Arena[float64]
				tr := l.Forward(&ar, x, tc.steps, tc.batch, h0, c0)
				_, cLast := tr.Last()
				return nntest.Dot(tr.H, projH) + nntest.Dot(cLast, projC)
			}
			var ar nn.Arena[float64]
			tr := l.Forward(&ar, x, tc.steps, tc.batch, h0, c0)
			dx := make([]float64, len(x))
			dh0, dc0 := make([]float64, tc.batch*tc.hid), make([]float64, tc.batch*tc.hid)
			l.Backward(&ar, tr, projH, projC, dx, dh0, dc0)
			ts := append(nntest.ParamTargets(l.Params()), nntest.Target{Name: "x", X: x, Grad: dx})
			if tc.initial {
				ts = append(ts, nntest.Target{Name: "h0", X: h0, Grad: dh0}, nntest.Target{Name: "c0", X: c0, Grad: dc0})
			} else {
				// No initial state means zeros: the gradients Backward
				// gives for it are those of an explicit zero state.
				hz, cz := make([]float64, len(dh0)), make([]float64, len(dc0))
				lossZ := func() float64 {
					var ar nn.Arena[float64]
					tr := l.Forward(&ar, x, tc.steps, tc.batch, hz, cz)
					_, cLast := tr.Last()
					return nntest.Dot(tr.H, projH) + nntest.Dot(cLast, projC)
				}
				if math.Abs(lossZ()-loss()) > 1e-12 {
					t.Fatalf("nil state %g, zero state %g", loss(), lossZ())
				}
				nntest.Check(t, lossZ, []nntest.Target{{Name: "h0", X: hz, Grad: dh0}, {Name: "c0", X: cz, Grad: dc0}}, 40, fdH, fdRTol, fdATol)
			}
			if n := nntest.Check(t, loss, ts, 40, fdH, fdRTol, fdATol); n < 40 {
				t.Fatalf("only %d entries compared", n)
			}
		})
	}
}

// TestLSTMHandValues: one step of a one-unit LSTM with hand-set weights.
// x = 1; Wx = (wi, wf, wg, wo), Wh = 0, biases (bi, bf, bg, bo), c0 = 2.
func TestLSTMHandValues(t *testing.T) {
	sig := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	for _, tc := range []struct {
		name       string
		wx, b      [4]float64
		wantC      float64
		wantH      float64
		wantH0Zero bool
	}{
		// All gates at sigmoid(0) = 1/2, g = tanh(0) = 0: c = c0/2 = 1,
		// h = tanh(1)/2.
		{"all-zero", [4]float64{}, [4]float64{}, 1, math.Tanh(1) / 2, false},
		// Output gate sigmoid(ln 3) = 3/4: c = 1, h = 3/4 tanh(1).
		{"output-gate", [4]float64{0, 0, 0, math.Log(3)}, [4]float64{}, 1, 0.75 * math.Tanh(1), false},
		// Forget gate shut (bias -40: f = 4e-18), input gate open
		// (bias 40), g = tanh(ln 2 via wx) = 3/5: c = 3/5, h = tanh(3/5)/2.
		{"forget-shut", [4]float64{0, 0, math.Log(2), 0}, [4]float64{40, -40, 0, 0}, 0.6, math.Tanh(0.6) / 2, false},
		// Default forget bias 1 (NewLSTM's): f = sigmoid(1), c = 2 f.
		{"forget-bias-1", [4]float64{}, [4]float64{0, 1, 0, 0}, 2 * sig(1), math.Tanh(2*sig(1)) / 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := nn.NewLSTM[float64]("hand", 1, 1, rand.New(rand.NewPCG(1, 1)))
			copy(l.Wx.W, tc.wx[:])
			copy(l.B.W, tc.b[:])
			l.Wh.W[0], l.Wh.W[1], l.Wh.W[2], l.Wh.W[3] = 0, 0, 0, 0
			var ar nn.Arena[float64]
			tr := l.Forward(&ar, []float64{1}, 1, 1, []float64{0.5}, []float64{2})
			h, c := tr.Last()
			if math.Abs(c[0]-tc.wantC) > 1e-12 || math.Abs(h[0]-tc.wantH) > 1e-12 {
				t.Errorf("c, h = %.15g, %.15g; want %.15g, %.15g", c[0], h[0], tc.wantC, tc.wantH)
			}
			// Step computes the same.
			hs, cs, scratch := []float64{0.5}, []float64{2}, make([]float64, 4)
			l.Step([]float64{1}, 1, hs, cs, scratch)
			if hs[0] != h[0] || cs[0] != c[0] {
				t.Errorf("Step: c, h = %g, %g; Forward %g, %g", cs[0], hs[0], c[0], h[0])
			}
		})
	}
}

// TestLSTMStepMatchesForward: stepping a batch through a sequence one step
// at a time (as a decoder samples) gives Forward's states, in float32.
func TestLSTMStepMatchesForward(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	steps, batch, in, hid := 9, 4, 7, 16
	l := nn.NewLSTM[float32]("s", in, hid, r)
	x := nn.Convert[float32](nntest.Rand(r, steps*batch*in))
	h0 := nn.Convert[float32](nntest.Rand(r, batch*hid))
	c0 := nn.Convert[float32](nntest.Rand(r, batch*hid))
	var ar nn.Arena[float32]
	tr := l.Forward(&ar, x, steps, batch, h0, c0)
	h, c := append([]float32(nil), h0...), append([]float32(nil), c0...)
	scratch := make([]float32, batch*4*hid)
	for s := range steps {
		l.Step(x[s*batch*in:(s+1)*batch*in], batch, h, c, scratch)
		want := tr.H[s*batch*hid : (s+1)*batch*hid]
		for i := range h {
			if math.Abs(float64(h[i]-want[i])) > 1e-5 {
				t.Fatalf("step %d, h[%d]: Step %g, Forward %g", s, i, h[i], want[i])
			}
		}
	}
}

// TestAttentionGradient checks the attention's gradients with respect to
// the queries, the memory (through the contexts and the keys) and the
// weights against central finite differences.
func TestAttentionGradient(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rows, n, q, mm int
	}{
		{"square", 4, 5, 6, 6},
		{"narrow-query", 7, 3, 2, 5},
		{"one-memory", 3, 1, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(21, uint64(tc.rows*10+tc.n)))
			a := nn.NewAttention[float64]("att", tc.q, tc.mm, r)
			perturb(r, a.Params(), 0.5)
			q := nntest.Rand(r, tc.rows*tc.q)
			m := nntest.Rand(r, tc.n*tc.mm)
			proj := nntest.Rand(r, tc.rows*tc.mm)
			loss := func() float64 {
				var ar nn.Arena[float64]
				ctx := make([]float64, tc.rows*tc.mm)
				a.Forward(&ar, q, tc.rows, m, a.Keys(&ar, m, tc.n), tc.n, ctx)
				return nntest.Dot(ctx, proj)
			}
			var ar nn.Arena[float64]
			ctx := make([]float64, tc.rows*tc.mm)
			tr := a.Forward(&ar, q, tc.rows, m, a.Keys(&ar, m, tc.n), tc.n, ctx)
			dq, dm := make([]float64, len(q)), make([]float64, len(m))
			a.Backward(&ar, tr, proj, dq, dm)
			ts := append(nntest.ParamTargets(a.Params()), nntest.Target{Name: "q", X: q, Grad: dq}, nntest.Target{Name: "m", X: m, Grad: dm})
			nntest.Check(t, loss, ts, 40, fdH, fdRTol, fdATol)
		})
	}
}

// TestAttentionHandValues: with W = 0 every score is 0 and the context is
// the memory's mean; with a query that scores one memory vector ln 3 above
// the other, the weights are 3/4 and 1/4.
func TestAttentionHandValues(t *testing.T) {
	a := nn.NewAttention[float64]("att", 1, 2, rand.New(rand.NewPCG(1, 1)))
	m := []float64{1, 0, 0, 2} // m_0 = (1, 0), m_1 = (0, 2)
	for _, tc := range []struct {
		name      string
		w         [2]float64
		q         float64
		wantAlpha [2]float64
		wantCtx   [2]float64
	}{
		{"zero-weights", [2]float64{0, 0}, 1, [2]float64{0.5, 0.5}, [2]float64{0.5, 1}},
		// k_0 = w·m_0 = ln 3, k_1 = w·m_1 = 0; q = 1.
		{"three-to-one", [2]float64{math.Log(3), 0}, 1, [2]float64{0.75, 0.25}, [2]float64{0.75, 0.5}},
		// k_0 = 0, k_1 = w·m_1 = 2 ln 2; q = 1/2: scores 0 and ln 2,
		// weights 1/3 and 2/3.
		{"query-scales", [2]float64{0, math.Log(2)}, 0.5, [2]float64{1.0 / 3, 2.0 / 3}, [2]float64{1.0 / 3, 4.0 / 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			copy(a.W.W, tc.w[:])
			var ar nn.Arena[float64]
			ctx := make([]float64, 2)
			tr := a.Forward(&ar, []float64{tc.q}, 1, m, a.Keys(&ar, m, 2), 2, ctx)
			for j := range 2 {
				if math.Abs(tr.Alpha[j]-tc.wantAlpha[j]) > 1e-12 || math.Abs(ctx[j]-tc.wantCtx[j]) > 1e-12 {
					t.Errorf("alpha %v, context %v; want %v, %v", tr.Alpha, ctx, tc.wantAlpha, tc.wantCtx)
				}
			}
		})
	}
}

func benchLSTM(b *testing.B, steps, batch, in, hid int, backward bool) {
	r := rand.New(rand.NewPCG(1, 2))
	l := nn.NewLSTM[float32]("bench", in, hid, r)
	x := nn.Convert[float32](nntest.Rand(r, steps*batch*in))
	dh := nn.Convert[float32](nntest.Rand(r, steps*batch*hid))
	dx := make([]float32, len(x))
	var ar nn.Arena[float32]
	flops := 2.0 * float64(steps*batch) * float64(in+hid) * float64(4*hid)
	if backward {
		flops *= 3
	}
	for b.Loop() {
		ar.Reset()
		tr := l.Forward(&ar, x, steps, batch, nil, nil)
		if backward {
			l.Backward(&ar, tr, dh, nil, dx, nil, nil)
		}
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// BenchmarkLSTM: hidden 256 over 256 steps (the size of the 2017 placer's
// controller over its group sequence), batch 1 (the encoder) and 16 (a
// decoder over K = 16 samples), forward alone and forward + backward.
func BenchmarkLSTM(b *testing.B) {
	b.Run("H256-T256-B1-forward", func(b *testing.B) { benchLSTM(b, 256, 1, 256, 256, false) })
	b.Run("H256-T256-B1-backward", func(b *testing.B) { benchLSTM(b, 256, 1, 256, 256, true) })
	b.Run("H256-T256-B16-forward", func(b *testing.B) { benchLSTM(b, 256, 16, 256, 256, false) })
	b.Run("H256-T256-B16-backward", func(b *testing.B) { benchLSTM(b, 256, 16, 256, 256, true) })
}

// BenchmarkAttention: 256 steps x 16 samples of queries over 256 encoder
// states of 256, forward and backward.
func BenchmarkAttention(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 3))
	rows, n, d := 256*16, 256, 256
	a := nn.NewAttention[float32]("bench", d, d, r)
	q := nn.Convert[float32](nntest.Rand(r, rows*d))
	m := nn.Convert[float32](nntest.Rand(r, n*d))
	dctx := nn.Convert[float32](nntest.Rand(r, rows*d))
	ctx, dq, dm := make([]float32, rows*d), make([]float32, rows*d), make([]float32, n*d)
	var ar nn.Arena[float32]
	for b.Loop() {
		ar.Reset()
		tr := a.Forward(&ar, q, rows, m, a.Keys(&ar, m, n), n, ctx)
		a.Backward(&ar, tr, dctx, dq, dm)
	}
}
