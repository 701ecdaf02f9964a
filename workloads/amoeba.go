package workloads

import (
	"strconv"

	"github.com/placer/placer/graph"
)

// AmoebaNet-A's cells (Real et al. 2018, the tensorflow/tpu amoeba_net
// model_specs): combination i applies ops[2i] to hidden state
// hidden[2i] and ops[2i+1] to hidden[2i+1] and adds them; hidden states
// 0 and 1 are the skip (previous-previous cell) and direct (previous cell)
// inputs; the cell output concatenates the states no combination uses.
var (
	amoebaNormalOps    = []string{"avg_pool_3x3", "max_pool_3x3", "separable_3x3_2", "none", "none", "avg_pool_3x3", "separable_3x3_2", "separable_5x5_2", "avg_pool_3x3", "separable_3x3_2"}
	amoebaNormalHidden = []int{0, 0, 1, 1, 0, 1, 0, 2, 5, 0}
	amoebaNormalUsed   = []bool{true, false, true, false, false, true, false}
	amoebaReduceOps    = []string{"separable_3x3_2", "avg_pool_3x3", "max_pool_3x3", "separable_7x7_2", "max_pool_3x3", "max_pool_3x3", "separable_3x3_2", "1x7_7x1", "avg_pool_3x3", "separable_7x7_2"}
	amoebaReduceHidden = []int{1, 0, 0, 2, 1, 0, 4, 0, 1, 0}
	amoebaReduceUsed   = []bool{true, true, true, true, false, false, false}
)

// reluConvBN is ReLU, a k1 x k2 convolution and fused batch norm.
func (m *cnn) reluConvBN(scope string, x tid, out, k1, k2, stride int64) tid {
	o := m.enter(scope)
	y := m.unary("Relu", x)
	w := m.param("weights", k1, k2, m.shape(y)[3], out)
	m.regularize(w)
	y = m.fusedBatchNorm(m.conv2d(y, w, stride, true))
	m.leave(o)
	return y
}

// sepConv is ReLU, a separable convolution (depthwise k x k then
// pointwise 1x1) and fused batch norm.
func (m *cnn) sepConv(scope string, x tid, out, k, stride int64) tid {
	o := m.enter(scope)
	y := m.unary("Relu", x)
	dw := m.param("depthwise_weights", k, k, m.shape(y)[3], 1)
	pw := m.param("pointwise_weights", 1, 1, m.shape(y)[3], out)
	m.regularize(dw)
	m.regularize(pw)
	y = m.conv2d(m.depthwise(y, dw, stride), pw, 1, true)
	y = m.fusedBatchNorm(y)
	m.leave(o)
	return y
}

// amoebaOp applies one cell operation.
func (m *cnn) amoebaOp(scope, op string, x tid, filters, stride int64) tid {
	o := m.enter(scope)
	defer m.leave(o)
	switch op {
	case "separable_3x3_2", "separable_5x5_2", "separable_7x7_2":
		k := int64(op[10] - '0')
		y := m.sepConv("separable_1", x, filters, k, stride)
		return m.sepConv("separable_2", y, filters, k, 1)
	case "avg_pool_3x3", "max_pool_3x3":
		kd := kAvgPool
		if op[0] == 'm' {
			kd = kMaxPool
		}
		y := m.pool(kd, x, 3, stride, true)
		if m.shape(y)[3] != filters {
			y = m.reluConvBN("1x1", y, filters, 1, 1, 1)
		}
		return y
	case "1x7_7x1":
		y := m.reluConvBN("1x7", x, filters, 1, 7, stride)
		return m.reluConvBN("7x1", y, filters, 7, 1, 1)
	default: // none
		if stride > 1 || m.shape(x)[3] != filters {
			return m.reluConvBN("1x1", x, filters, 1, 1, stride)
		}
		return x
	}
}

// factorizedReduction halves the spatial size of x with two offset
// strided 1x1 paths (NASNet's factorized reduction).
func (m *cnn) factorizedReduction(x tid, filters int64) tid {
	o := m.enter("factorized_reduction")
	defer m.leave(o)
	y := m.unary("Relu", x)
	p1 := m.pool(kAvgPool, y, 1, 2, false)
	w1 := m.param("path1_conv/weights", 1, 1, m.shape(y)[3], filters/2)
	m.regularize(w1)
	p1 = m.conv2d(p1, w1, 1, true)
	s := m.shape(y)
	p2 := m.stridedSlice(m.pad(y, []int64{s[0], s[1] + 1, s[2] + 1, s[3]}), s)
	p2 = m.pool(kAvgPool, p2, 1, 2, false)
	w2 := m.param("path2_conv/weights", 1, 1, m.shape(y)[3], filters-filters/2)
	m.regularize(w2)
	p2 = m.conv2d(p2, w2, 1, true)
	return m.fusedBatchNorm(m.concat(3, p1, p2))
}

// amoebaCell builds one normal or reduction cell from the direct input
// prev and the skip input prevPrev.
func (m *cnn) amoebaCell(scope string, prev, prevPrev tid, filters int64, reduction bool) tid {
	o := m.enter(scope)
	defer m.leave(o)
	ops, hid, used := amoebaNormalOps, amoebaNormalHidden, amoebaNormalUsed
	stride := int64(1)
	if reduction {
		ops, hid, used = amoebaReduceOps, amoebaReduceHidden, amoebaReduceUsed
		stride = 2
	}
	// Cell base: bring both inputs to filters channels and one spatial size.
	var h0 tid
	if m.shape(prevPrev)[1] != m.shape(prev)[1] {
		h0 = m.factorizedReduction(prevPrev, filters)
	} else if m.shape(prevPrev)[3] != filters {
		h0 = m.reluConvBN("prev_1x1", prevPrev, filters, 1, 1, 1)
	} else {
		h0 = prevPrev
	}
	h1 := m.reluConvBN("beginning", prev, filters, 1, 1, 1)
	hidden := []tid{h0, h1}
	for i := 0; i < len(ops)/2; i++ {
		co := m.enter("comb_iter_" + strconv.Itoa(i))
		var parts [2]tid
		for j := 0; j < 2; j++ {
			src := hid[2*i+j]
			st := int64(1)
			if src < 2 {
				st = stride
			}
			side := "left"
			if j == 1 {
				side = "right"
			}
			parts[j] = m.amoebaOp(side, ops[2*i+j], hidden[src], filters, st)
		}
		hidden = append(hidden, m.binary(kAdd, parts[0], parts[1]))
		m.leave(co)
	}
	var outs []tid
	for i, h := range hidden {
		if !used[i] {
			if reduction && i < 2 {
				continue
			}
			outs = append(outs, h)
		}
	}
	return m.concat(3, outs...)
}

// BuildAmoebaNet builds the training step of AmoebaNet-A (Real et al.
// 2018; the tensorflow/tpu amoeba_net model; GDP appendix 6.3.2): a 3x3
// stem convolution, two stem reduction cells, three stacks of Cells normal
// cells separated by reduction cells (filters doubling at each
// reduction), ReLU, global average pooling, dropout and a dense softmax;
// every cell takes a direct input from the previous cell and a skip input
// from the cell before it. Fused batch norm, L2 weight decay, RMSProp.
//
// Forward op scopes: stem/..., cell_<k>/... (k counts the stem cells,
// normal and reduction cells in order), head/..., loss/....
func BuildAmoebaNet(c Config) (*graph.Graph, error) {
	c, err := c.withDefaults(FamilyAmoebaNet)
	if err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		name = "amoebanet_n" + strconv.Itoa(c.Cells) + "_f" + strconv.Itoa(c.Filters)
	}
	B, S, K, F := int64(c.Batch), int64(c.ImageSize), int64(c.Classes), int64(c.Filters)
	m := &cnn{net: newNet(name, c.DType, B, 12000), fused: true, sumDecay: true}
	n := m.net
	n.tf113 = true

	o := n.enter("stem")
	x := n.input("images", n.dt, batchDim(0), B, S, S, 3)
	labels := n.input("labels", graph.I32, batchDim(0), B)
	w := n.param("conv0/weights", 3, 3, 3, 32)
	m.regularize(w)
	x = n.fusedBatchNorm(n.conv2d(x, w, 2, false))
	n.leave(o)

	cell := 0
	prev, prevPrev := x, x
	next := func(filters int64, reduction bool) {
		y := m.amoebaCell("cell_"+strconv.Itoa(cell), prev, prevPrev, filters, reduction)
		prevPrev, prev = prev, y
		cell++
	}
	next(F/4, true)
	next(F/2, true)
	filters := F
	for stack := 0; stack < 3; stack++ {
		if stack > 0 {
			filters *= 2
			next(filters, true)
		}
		for i := 0; i < c.Cells; i++ {
			next(filters, false)
		}
	}

	o = n.enter("head")
	y := n.unary("Relu", prev)
	sp := n.shape(y)[1]
	y = n.reshape(n.pool(kAvgPool, y, sp, 1, false), B, n.shape(y)[3])
	y = n.dropout(y, c.KeepProb)
	logits := n.dense(y, K, true)
	n.leave(o)
	o = n.enter("loss")
	loss := m.classifier("cross_entropy", logits, labels, false)
	o2 := n.enter("weight_decay")
	wd := n.binary(kMul, n.addN(m.reg...), n.scalar("mul/y"))
	n.leave(o2)
	loss = n.binary(kAdd, loss, wd)
	n.leave(o)
	n.minimize(loss, c.Optimizer, false)
	return n.build()
}
