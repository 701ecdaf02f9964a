package workloads

import (
	"fmt"

	"github.com/placer/placer/graph"
)

// Optimizer names the parameter update rule of a training step.
type Optimizer string

// The optimizers. Each variable gets one update op (ApplyAdam,
// ApplyRMSProp, ApplyGradientDescent) that holds the variable's resident
// bytes: weights + gradient + Slots() optimizer slots.
const (
	Adam    Optimizer = "adam"    // ApplyAdam, slots m and v
	RMSProp Optimizer = "rmsprop" // ApplyRMSProp, slots rms and momentum
	SGD     Optimizer = "sgd"     // ApplyGradientDescent, no slots
)

// Slots is the number of per-parameter state tensors the optimizer keeps.
func (o Optimizer) Slots() int {
	switch o {
	case Adam, RMSProp:
		return 2
	}
	return 0
}

func (o Optimizer) valid() error {
	switch o {
	case Adam, RMSProp, SGD:
		return nil
	}
	return fmt.Errorf("workloads: unknown optimizer %q (want adam, rmsprop or sgd)", string(o))
}

// variable is one trainable or state variable.
type variable struct {
	name      string
	group     string // colocation group
	shape     []int64
	ref       tid // VariableV2 output
	read      tid // read Identity output (trainable only)
	grad      tid // aggregated gradient, -1 if none
	trainable bool
}

// newVariable adds a VariableV2 op and its read Identity in the current
// scope; both join the co-location group "loc:@<name>".
func (n *net) newVariable(base string, trainable bool, shape []int64) int {
	vop := n.addOp(opSpec{base: base, typ: "VariableV2", cls: graph.ClassDataMovement, dt: n.dt, shape: shape})
	name := n.b.Op(int(vop)).Name
	group := "loc:@" + name
	n.b.Op(int(vop)).Colocation = group
	ref := n.out(vop, shape, n.dt, noBatch)
	old := n.scope
	n.scope = name
	rop := n.addOp(opSpec{base: "read", typ: "Identity", cls: graph.ClassDataMovement, dt: n.dt, shape: shape, coloc: group}, ref)
	read := n.out(rop, shape, n.dt, noBatch)
	n.scope = old
	n.vars = append(n.vars, variable{name: name, group: group, shape: shape, ref: ref, read: read, grad: -1, trainable: trainable})
	v := len(n.vars) - 1
	if trainable {
		n.record(kVarRead, rop, nil, []tid{read}, attrs{variable: v})
	}
	return v
}

// param adds a trainable variable and returns its read tensor.
func (n *net) param(base string, shape ...int64) tid {
	return n.vars[n.newVariable(base, true, shape)].read
}

// movingAverage updates state variable v toward value (TensorFlow's
// assign_moving_average, colocated with the variable). The AssignSub op
// holds the variable's bytes as ParamBytes.
func (n *net) movingAverage(v int, value tid) {
	vr := &n.vars[v]
	old := n.enter("AssignMovingAvg")
	d := n.scalar("decay")
	sub := n.binary(kSub, vr.read, value)
	mul := n.binary(kMul, sub, d)
	for _, t := range []tid{d, sub, mul} {
		n.b.Op(int(n.ts[t].op)).Colocation = vr.group
	}
	n.leave(old)
	p := numel(vr.shape) * n.dt.Size()
	n.addOp(opSpec{base: "AssignMovingAvg", typ: "AssignSub", cls: graph.ClassElementwise, dt: n.dt, shape: vr.shape,
		flops: float64(numel(vr.shape)), rd: 2 * p, wr: p, coloc: vr.group, param: p}, vr.ref, mul)
}

// stateVariable adds a non-trainable variable (batch-norm moving
// statistics) and returns its index.
func (n *net) stateVariable(base string, shape ...int64) int {
	return n.newVariable(base, false, shape)
}

// optimizerFlops is the arithmetic per parameter of each update rule.
var optimizerFlops = map[Optimizer]float64{Adam: 12, RMSProp: 10, SGD: 2}

// minimize emits the backward pass of loss and the optimizer's update ops.
func (n *net) minimize(loss tid, o Optimizer, clip bool) {
	n.backward(loss)
	var vs []int
	for i := range n.vars {
		if n.vars[i].trainable && n.vars[i].grad >= 0 {
			vs = append(vs, i)
		}
	}
	if len(vs) == 0 {
		return
	}
	if clip {
		n.clipByGlobalNorm(vs)
	}
	prefix, typ := "GradientDescent", "ApplyGradientDescent"
	slotNames := []string(nil)
	switch o {
	case Adam:
		prefix, typ, slotNames = "Adam", "ApplyAdam", []string{"Adam", "Adam_1"}
	case RMSProp:
		prefix, typ, slotNames = "RMSProp", "ApplyRMSProp", []string{"RMSProp", "RMSProp_1"}
	}
	hyper := []tid{n.sharedConst(prefix+"/learning_rate", n.dt)}
	first := n.vars[vs[0]].group
	var powerVars []int // Adam's beta power variables
	switch o {
	case Adam:
		for _, h := range []string{"beta1", "beta2", "epsilon"} {
			hyper = append(hyper, n.sharedConst(prefix+"/"+h, n.dt))
		}
		for _, p := range []string{"beta1_power", "beta2_power"} {
			old := n.scope
			n.scope = ""
			pv := n.newVariable(p, false, []int64{})
			n.scope = old
			for _, t := range []tid{n.vars[pv].ref, n.vars[pv].read} {
				n.b.Op(int(n.ts[t].op)).Colocation = first
			}
			hyper = append(hyper, n.vars[pv].read)
			powerVars = append(powerVars, pv)
		}
	case RMSProp:
		for _, h := range []string{"decay", "momentum", "epsilon"} {
			hyper = append(hyper, n.sharedConst(prefix+"/"+h, n.dt))
		}
	}
	slots := int64(o.Slots())
	updates := make([]int32, 0, len(vs))
	for _, v := range vs {
		vr := &n.vars[v]
		e := numel(vr.shape)
		p := e * n.dt.Size()
		ins := []tid{vr.ref}
		old := n.scope
		n.scope = ""
		for _, s := range slotNames {
			sop := n.addOp(opSpec{base: vr.name + "/" + s, typ: "VariableV2", cls: graph.ClassDataMovement, dt: n.dt, shape: vr.shape, coloc: vr.group})
			ins = append(ins, n.out(sop, vr.shape, n.dt, noBatch))
		}
		n.scope = prefix + "/update_" + vr.name
		ins = append(ins, hyper...)
		ins = append(ins, vr.grad)
		u := n.addOp(opSpec{base: typ, typ: typ, cls: graph.ClassElementwise, dt: n.dt, shape: vr.shape,
			flops: optimizerFlops[o] * float64(e), rd: (2 + slots) * p, wr: (1 + slots) * p, param: (2 + slots) * p, coloc: vr.group}, ins...)
		n.scope = old
		updates = append(updates, u)
	}
	old := n.scope
	n.scope = prefix
	var final []int32
	for i, pv := range powerVars {
		m := n.binary(kMul, n.vars[pv].read, hyper[1+i])
		mop := n.ts[m].op
		n.b.Op(int(mop)).Colocation = first
		for _, u := range updates {
			n.b.AddControl(int(u), int(mop))
		}
		a := n.addOp(opSpec{base: "Assign", typ: "Assign", cls: graph.ClassDataMovement, dt: n.dt, shape: []int64{}, coloc: first}, n.vars[pv].ref, m)
		final = append(final, a)
	}
	n.scope = ""
	noop := n.addOp(opSpec{base: prefix, typ: "NoOp", cls: graph.ClassDataMovement, dt: n.dt})
	for _, u := range append(updates, final...) {
		n.b.AddControl(int(u), int(noop))
	}
	n.scope = old
}

// clipByGlobalNorm rescales the gradients of vs by
// clip_norm / max(global_norm, clip_norm) (tf.clip_by_global_norm).
func (n *net) clipByGlobalNorm(vs []int) {
	old := n.scope
	n.scope = "clip_by_global_norm"
	ls := make([]tid, len(vs))
	for i, v := range vs {
		ls[i] = n.l2loss(n.vars[v].grad)
	}
	st := n.pack(0, ls...)
	sum := n.reduce(kSum, st, nil, false)
	gn := n.unary("Sqrt", n.binary(kMul, sum, n.scalar("Const")))
	inv := n.binary(kDiv, n.scalar("truediv/x"), gn)
	mn := n.binary(kSub, inv, n.scalar("Minimum/y")) // Minimum: one flop per element like Sub
	n.b.Op(int(n.ts[mn].op)).Type = "Minimum"
	scale := n.binary(kMul, n.scalar("mul/x"), mn)
	for _, v := range vs {
		g := n.binary(kMul, n.vars[v].grad, scale)
		n.vars[v].grad = n.identity(g)
	}
	n.scope = old
}

// exponentialMovingAverage keeps a shadow copy of every variable
// (trainable and state) updated as shadow -= (1-decay)*(shadow-value)
// (tf.train.ExponentialMovingAverage with num_updates, as the Inception
// trainer uses). Each shadow is colocated with its variable; its AssignSub
// holds the shadow's bytes as ParamBytes.
func (n *net) exponentialMovingAverage() {
	old := n.scope
	n.scope = "ExponentialMovingAverage"
	step := n.placeholder("num_updates", graph.I32)
	s := n.cast(step, n.dt)
	dec := n.binary(kDiv, n.binary(kAdd, s, n.scalar("add/y")), n.binary(kAdd, s, n.scalar("add_1/y")))
	dec = n.binary(kSub, dec, n.scalar("Minimum/y"))
	n.b.Op(int(n.ts[dec].op)).Type = "Minimum"
	nv := len(n.vars)
	for i := 0; i < nv; i++ {
		v := n.vars[i]
		if len(v.shape) == 0 {
			continue // optimizer scalars
		}
		n.scope = ""
		sop := n.addOp(opSpec{base: v.name + "/ExponentialMovingAverage", typ: "VariableV2", cls: graph.ClassDataMovement, dt: n.dt, shape: v.shape, coloc: v.group})
		sh := n.out(sop, v.shape, n.dt, noBatch)
		n.scope = "ExponentialMovingAverage/AssignMovingAvg_" + v.name
		d := n.binary(kSub, n.scalar("sub/x"), dec)
		sub := n.binary(kSub, sh, v.read)
		mul := n.binary(kMul, sub, d)
		for _, t := range []tid{d, sub, mul} {
			n.b.Op(int(n.ts[t].op)).Colocation = v.group
			n.b.Op(int(n.ts[t].op)).Backward = false
		}
		p := numel(v.shape) * n.dt.Size()
		n.addOp(opSpec{base: "AssignMovingAvg", typ: "AssignSub", cls: graph.ClassElementwise, dt: n.dt, shape: v.shape,
			flops: float64(numel(v.shape)), rd: 2 * p, wr: p, coloc: v.group, param: p}, sh, mul)
	}
	n.scope = old
}
