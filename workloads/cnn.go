package workloads

import (
	"strconv"

	"github.com/placer/placer/graph"
)

// cnn carries the state shared by the convolutional builders.
type cnn struct {
	*net
	reg   []tid // regularization losses
	fused bool  // fused batch norm (AmoebaNet) or slim's non-fused one (Inception)
	// sumDecay collects bare L2 losses to be summed and scaled once
	// (AmoebaNet's weight_decay * add_n(l2_loss(w))) instead of slim's
	// per-weight scaled regularizer.
	sumDecay bool
}

// convBN is slim's conv2d with batch norm and ReLU: Conv2D of a
// [kh,kw,C,out] filter (L2-regularized), batch norm, Relu.
func (m *cnn) convBN(scope string, x tid, out, kh, kw, stride int64, same bool) tid {
	o := m.enter(scope)
	w := m.param("weights", kh, kw, m.shape(x)[3], out)
	m.regularize(w)
	y := m.conv2d(x, w, stride, same)
	if m.fused {
		y = m.fusedBatchNorm(y)
	} else {
		y = m.batchNorm(y)
	}
	y = m.unary("Relu", y)
	m.leave(o)
	return y
}

// convBias is a conv2d with bias and no normalization (logit layers).
func (m *cnn) convBias(scope string, x tid, out, k int64, same bool) tid {
	o := m.enter(scope)
	w := m.param("weights", k, k, m.shape(x)[3], out)
	m.regularize(w)
	y := m.biasAdd(m.conv2d(x, w, 1, same), m.param("biases", out))
	m.leave(o)
	return y
}

// regularize adds the L2 weight-decay loss of w (slim's l2_regularizer).
func (m *cnn) regularize(w tid) {
	if m.sumDecay {
		m.reg = append(m.reg, m.l2loss(w))
		return
	}
	o := m.enter("Regularizer/l2_regularizer")
	l := m.binary(kMul, m.scalar("scale"), m.l2loss(w))
	m.leave(o)
	m.reg = append(m.reg, l)
}

// classifier adds the sparse softmax cross-entropy of logits [B,classes]
// against labels, scaled by weight when weight != 1.
func (m *cnn) classifier(scope string, logits, labels tid, weighted bool) tid {
	o := m.enter(scope)
	l := m.reduce(kMean, m.xent(logits, labels), nil, false)
	if weighted {
		l = m.binary(kMul, l, m.scalar("weight"))
	}
	m.leave(o)
	return l
}

// BuildInception builds the training step of Inception-V3 (Szegedy et al.
// 2015; TF-slim's inception_v3 with its auxiliary head; GDP appendix
// 6.3.1): 94 convolutions each with slim's non-fused batch norm (moments,
// moving-average updates) and ReLU, the Mixed_5b..Mixed_7c blocks, dropout
// before the logits, L2 weight decay, RMSProp.
//
// Forward op scopes: InceptionV3/<block>/... (Conv2d_1a_3x3 ...
// Mixed_7c, AuxLogits, Logits), loss/....
func BuildInception(c Config) (*graph.Graph, error) {
	c, err := c.withDefaults(FamilyInception)
	if err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		name = "inception_b" + strconv.Itoa(c.Batch)
	}
	B, S, K := int64(c.Batch), int64(c.ImageSize), int64(c.Classes)
	m := &cnn{net: newNet(name, c.DType, B, 30000)}
	n := m.net
	o := n.enter("InceptionV3")
	x := n.input("images", n.dt, batchDim(0), B, S, S, 3)
	labels := n.input("labels", graph.I32, batchDim(0), B)

	block := func(s string, f func()) {
		o := n.enter(s)
		f()
		n.leave(o)
	}
	const valid, same = false, true
	x = m.convBN("Conv2d_1a_3x3", x, 32, 3, 3, 2, valid)
	x = m.convBN("Conv2d_2a_3x3", x, 32, 3, 3, 1, valid)
	x = m.convBN("Conv2d_2b_3x3", x, 64, 3, 3, 1, same)
	block("MaxPool_3a_3x3", func() { x = n.pool(kMaxPool, x, 3, 2, valid) })
	x = m.convBN("Conv2d_3b_1x1", x, 80, 1, 1, 1, valid)
	x = m.convBN("Conv2d_4a_3x3", x, 192, 3, 3, 1, valid)
	block("MaxPool_5a_3x3", func() { x = n.pool(kMaxPool, x, 3, 2, valid) })

	branch := func(i int, f func() tid) tid {
		o := n.enter("Branch_" + strconv.Itoa(i))
		y := f()
		n.leave(o)
		return y
	}
	mixed5 := func(s string, pool int64) {
		block(s, func() {
			in := x
			b0 := branch(0, func() tid { return m.convBN("Conv2d_0a_1x1", in, 64, 1, 1, 1, same) })
			b1 := branch(1, func() tid {
				y := m.convBN("Conv2d_0a_1x1", in, 48, 1, 1, 1, same)
				return m.convBN("Conv2d_0b_5x5", y, 64, 5, 5, 1, same)
			})
			b2 := branch(2, func() tid {
				y := m.convBN("Conv2d_0a_1x1", in, 64, 1, 1, 1, same)
				y = m.convBN("Conv2d_0b_3x3", y, 96, 3, 3, 1, same)
				return m.convBN("Conv2d_0c_3x3", y, 96, 3, 3, 1, same)
			})
			b3 := branch(3, func() tid {
				o := n.enter("AvgPool_0a_3x3")
				y := n.pool(kAvgPool, in, 3, 1, same)
				n.leave(o)
				return m.convBN("Conv2d_0b_1x1", y, pool, 1, 1, 1, same)
			})
			x = n.concat(3, b0, b1, b2, b3)
		})
	}
	mixed5("Mixed_5b", 32)
	mixed5("Mixed_5c", 64)
	mixed5("Mixed_5d", 64)
	block("Mixed_6a", func() {
		in := x
		b0 := branch(0, func() tid { return m.convBN("Conv2d_1a_1x1", in, 384, 3, 3, 2, valid) })
		b1 := branch(1, func() tid {
			y := m.convBN("Conv2d_0a_1x1", in, 64, 1, 1, 1, same)
			y = m.convBN("Conv2d_0b_3x3", y, 96, 3, 3, 1, same)
			return m.convBN("Conv2d_1a_1x1", y, 96, 3, 3, 2, valid)
		})
		b2 := branch(2, func() tid {
			o := n.enter("MaxPool_1a_3x3")
			y := n.pool(kMaxPool, in, 3, 2, valid)
			n.leave(o)
			return y
		})
		x = n.concat(3, b0, b1, b2)
	})
	mixed6 := func(s string, c7 int64) {
		block(s, func() {
			in := x
			b0 := branch(0, func() tid { return m.convBN("Conv2d_0a_1x1", in, 192, 1, 1, 1, same) })
			b1 := branch(1, func() tid {
				y := m.convBN("Conv2d_0a_1x1", in, c7, 1, 1, 1, same)
				y = m.convBN("Conv2d_0b_1x7", y, c7, 1, 7, 1, same)
				return m.convBN("Conv2d_0c_7x1", y, 192, 7, 1, 1, same)
			})
			b2 := branch(2, func() tid {
				y := m.convBN("Conv2d_0a_1x1", in, c7, 1, 1, 1, same)
				y = m.convBN("Conv2d_0b_7x1", y, c7, 7, 1, 1, same)
				y = m.convBN("Conv2d_0c_1x7", y, c7, 1, 7, 1, same)
				y = m.convBN("Conv2d_0d_7x1", y, c7, 7, 1, 1, same)
				return m.convBN("Conv2d_0e_1x7", y, 192, 1, 7, 1, same)
			})
			b3 := branch(3, func() tid {
				o := n.enter("AvgPool_0a_3x3")
				y := n.pool(kAvgPool, in, 3, 1, same)
				n.leave(o)
				return m.convBN("Conv2d_0b_1x1", y, 192, 1, 1, 1, same)
			})
			x = n.concat(3, b0, b1, b2, b3)
		})
	}
	mixed6("Mixed_6b", 128)
	mixed6("Mixed_6c", 160)
	mixed6("Mixed_6d", 160)
	mixed6("Mixed_6e", 192)
	aux := x
	block("Mixed_7a", func() {
		in := x
		b0 := branch(0, func() tid {
			y := m.convBN("Conv2d_0a_1x1", in, 192, 1, 1, 1, same)
			return m.convBN("Conv2d_1a_3x3", y, 320, 3, 3, 2, valid)
		})
		b1 := branch(1, func() tid {
			y := m.convBN("Conv2d_0a_1x1", in, 192, 1, 1, 1, same)
			y = m.convBN("Conv2d_0b_1x7", y, 192, 1, 7, 1, same)
			y = m.convBN("Conv2d_0c_7x1", y, 192, 7, 1, 1, same)
			return m.convBN("Conv2d_1a_3x3", y, 192, 3, 3, 2, valid)
		})
		b2 := branch(2, func() tid {
			o := n.enter("MaxPool_1a_3x3")
			y := n.pool(kMaxPool, in, 3, 2, valid)
			n.leave(o)
			return y
		})
		x = n.concat(3, b0, b1, b2)
	})
	mixed7 := func(s string) {
		block(s, func() {
			in := x
			b0 := branch(0, func() tid { return m.convBN("Conv2d_0a_1x1", in, 320, 1, 1, 1, same) })
			b1 := branch(1, func() tid {
				y := m.convBN("Conv2d_0a_1x1", in, 384, 1, 1, 1, same)
				return n.concat(3, m.convBN("Conv2d_0b_1x3", y, 384, 1, 3, 1, same), m.convBN("Conv2d_0b_3x1", y, 384, 3, 1, 1, same))
			})
			b2 := branch(2, func() tid {
				y := m.convBN("Conv2d_0a_1x1", in, 448, 1, 1, 1, same)
				y = m.convBN("Conv2d_0b_3x3", y, 384, 3, 3, 1, same)
				return n.concat(3, m.convBN("Conv2d_0c_1x3", y, 384, 1, 3, 1, same), m.convBN("Conv2d_0d_3x1", y, 384, 3, 1, 1, same))
			})
			b3 := branch(3, func() tid {
				o := n.enter("AvgPool_0a_3x3")
				y := n.pool(kAvgPool, in, 3, 1, same)
				n.leave(o)
				return m.convBN("Conv2d_0b_1x1", y, 192, 1, 1, 1, same)
			})
			x = n.concat(3, b0, b1, b2, b3)
		})
	}
	mixed7("Mixed_7b")
	mixed7("Mixed_7c")

	var auxLogits tid
	block("AuxLogits", func() {
		o := n.enter("AvgPool_1a_5x5")
		y := n.pool(kAvgPool, aux, 5, 3, valid)
		n.leave(o)
		y = m.convBN("Conv2d_1b_1x1", y, 128, 1, 1, 1, same)
		sp := n.shape(y)[1]
		y = m.convBN("Conv2d_2a_5x5", y, 768, sp, sp, 1, valid)
		y = m.convBias("Conv2d_2b_1x1", y, K, 1, same)
		auxLogits = n.reshape(y, B, K)
	})
	var logits tid
	block("Logits", func() {
		o := n.enter("AvgPool_1a_8x8")
		sp := n.shape(x)[1]
		y := n.pool(kAvgPool, x, sp, 1, valid)
		n.leave(o)
		o = n.enter("Dropout_1b")
		y = n.dropout(y, c.KeepProb)
		n.leave(o)
		y = m.convBias("Conv2d_1c_1x1", y, K, 1, same)
		logits = n.reshape(y, B, K)
	})
	n.leave(o)

	o = n.enter("loss")
	main := m.classifier("softmax_cross_entropy_loss", logits, labels, false)
	auxL := m.classifier("aux_loss", auxLogits, labels, true)
	loss := n.addN(append([]tid{main, auxL}, m.reg...)...)
	n.leave(o)
	n.minimize(loss, c.Optimizer, false)
	n.exponentialMovingAverage()
	return n.build()
}
