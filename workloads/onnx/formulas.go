package onnx

import (
	"fmt"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/workloads/onnx/onnxpb"
)

// cost is what a formula says about one node.
type cost struct {
	class  graph.Class
	flops  float64
	view   bool // outputs are views of the first input (graph.Op.Alias)
	gather bool // reads the rows it picks, not its whole first input
	err    string
}

// formula computes a node's cost from its inputs' and outputs' values (nil
// for an omitted optional input) and its attributes.
type formula func(ins, outs []*value, at map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost

// attrs indexes a node's attributes by name.
func attrs(n *onnxpb.NodeProto) map[string]*onnxpb.AttributeProto {
	m := make(map[string]*onnxpb.AttributeProto, len(n.GetAttribute()))
	for _, a := range n.GetAttribute() {
		m[a.GetName()] = a
	}
	return m
}

func attrInt(at map[string]*onnxpb.AttributeProto, name string, def int64) int64 {
	if a, ok := at[name]; ok {
		return a.GetI()
	}
	return def
}

// perElement is an op costing k FLOPs per output element.
func perElement(class graph.Class, k float64) formula {
	return func(_, outs []*value, _ map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost {
		return cost{class: class, flops: k * float64(numel(outs[0]))}
	}
}

// perInput is an op costing k FLOPs per element of its first input (a
// reduction).
func perInput(k float64) formula {
	return func(ins, outs []*value, _ map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost {
		if len(ins) == 0 || ins[0] == nil {
			return cost{err: "has no input"}
		}
		return cost{class: graph.ClassReduction, flops: k * float64(numel(ins[0]))}
	}
}

func fixed(class graph.Class, view bool) formula {
	return func(_, _ []*value, _ map[string]*onnxpb.AttributeProto, _ func(*value) int64) cost {
		return cost{class: class, view: view}
	}
}

// need checks that input k is present with at least rank dimensions.
func need(ins []*value, k, rank int) string {
	if k >= len(ins) || ins[k] == nil {
		return fmt.Sprintf("input %d is missing", k)
	}
	if len(ins[k].shape) < rank {
		return fmt.Sprintf("input %d has rank %d, want at least %d", k, len(ins[k].shape), rank)
	}
	return ""
}

// matmul: out [..., M, N] = A [..., M, K] x B [..., K, N]: 2·|out|·K.
func matmul(ins, outs []*value, _ map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost {
	if msg := need(ins, 0, 1); msg != "" {
		return cost{err: msg}
	}
	if msg := need(ins, 1, 1); msg != "" {
		return cost{err: msg}
	}
	a := ins[0].shape
	k := a[len(a)-1]
	return cost{class: graph.ClassMatMul, flops: 2 * float64(numel(outs[0])) * float64(k)}
}

// gemm: Y (M, N) = alpha·A'·B' + beta·C: 2·M·N·K, plus M·N for C.
func gemm(ins, outs []*value, at map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost {
	if msg := need(ins, 0, 2); msg != "" {
		return cost{err: msg}
	}
	if msg := need(ins, 1, 2); msg != "" {
		return cost{err: msg}
	}
	k := ins[0].shape[1]
	if attrInt(at, "transA", 0) != 0 {
		k = ins[0].shape[0]
	}
	mn := float64(numel(outs[0]))
	f := 2 * mn * float64(k)
	if len(ins) > 2 && ins[2] != nil {
		f += mn
	}
	return cost{class: graph.ClassMatMul, flops: f}
}

// conv: Y [N, Cout, ...] from W [Cout, Cin/group, k...]: 2·|Y|·(Cin/group)·Πk,
// plus |Y| for the bias.
func conv(ins, outs []*value, _ map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost {
	if msg := need(ins, 1, 2); msg != "" {
		return cost{err: msg}
	}
	w := ins[1].shape
	per := float64(1)
	for _, d := range w[1:] {
		per *= float64(d)
	}
	y := float64(numel(outs[0]))
	f := 2 * y * per
	if len(ins) > 2 && ins[2] != nil {
		f += y
	}
	return cost{class: graph.ClassConv, flops: f}
}

// convTranspose: X [N, Cin, ...], W [Cin, Cout/group, k...]: every input
// element is multiplied into (Cout/group)·Πk outputs: 2·|X|·(Cout/group)·Πk.
func convTranspose(ins, outs []*value, _ map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost {
	if msg := need(ins, 0, 1); msg != "" {
		return cost{err: msg}
	}
	if msg := need(ins, 1, 2); msg != "" {
		return cost{err: msg}
	}
	per := float64(1)
	for _, d := range ins[1].shape[1:] {
		per *= float64(d)
	}
	f := 2 * float64(numel(ins[0])) * per
	if len(ins) > 2 && ins[2] != nil {
		f += float64(numel(outs[0]))
	}
	return cost{class: graph.ClassConv, flops: f}
}

// pool: each output element reads its window: |Y|·Πkernel_shape.
func pool(ins, outs []*value, at map[string]*onnxpb.AttributeProto, numel func(*value) int64) cost {
	k := float64(1)
	if a, ok := at["kernel_shape"]; ok {
		for _, d := range a.GetInts() {
			if d < 0 {
				return cost{err: "kernel_shape is negative"}
			}
			k *= float64(d)
		}
	}
	return cost{class: graph.ClassReduction, flops: k * float64(numel(outs[0]))}
}

// gather: embedding rows; no arithmetic.
func gather(_, _ []*value, _ map[string]*onnxpb.AttributeProto, _ func(*value) int64) cost {
	return cost{class: graph.ClassEmbedding, gather: true}
}

// formulas maps ONNX op types to their cost. FLOP counts per element:
// docs/importers.md ("ONNX") gives the table.
var formulas = map[string]formula{
	"MatMul":        matmul,
	"Gemm":          gemm,
	"Conv":          conv,
	"ConvTranspose": convTranspose,

	// (x - mean) / sqrt(var + eps) · scale + bias with the statistics given:
	// 4 per element.
	"BatchNormalization": perElement(graph.ClassElementwise, 4),
	// mean (1), subtract (1), square and sum (2), normalize (1), scale (1),
	// shift (1): 7 per element.
	"LayerNormalization":    perElement(graph.ClassReduction, 7),
	"InstanceNormalization": perElement(graph.ClassReduction, 7),
	// max (1), subtract (1), exp (1), sum (1), divide (1): 5 per element.
	"Softmax":    perElement(graph.ClassReduction, 5),
	"LogSoftmax": perElement(graph.ClassReduction, 5),

	"ReduceMean": perInput(1), "ReduceSum": perInput(1), "ReduceMax": perInput(1), "ReduceMin": perInput(1),
	"ReduceProd": perInput(1), "ReduceL1": perInput(2), "ReduceL2": perInput(2), "ReduceSumSquare": perInput(2),
	"ReduceLogSumExp": perInput(3), "ArgMax": perInput(1), "ArgMin": perInput(1),
	"GlobalAveragePool": perInput(1), "GlobalMaxPool": perInput(1),
	"MaxPool": pool, "AveragePool": pool, "LpPool": pool,

	"Gather": gather, "GatherElements": gather, "GatherND": gather,

	"Concat": fixed(graph.ClassDataMovement, false), "Split": fixed(graph.ClassDataMovement, false),
	"Slice": fixed(graph.ClassDataMovement, false), "Pad": fixed(graph.ClassDataMovement, false),
	"Tile": fixed(graph.ClassDataMovement, false), "Expand": fixed(graph.ClassDataMovement, false),
	"Shape": fixed(graph.ClassDataMovement, false), "Size": fixed(graph.ClassDataMovement, false),
	"Constant": fixed(graph.ClassDataMovement, false), "ConstantOfShape": fixed(graph.ClassDataMovement, false),
	"Range": fixed(graph.ClassDataMovement, false), "Resize": fixed(graph.ClassDataMovement, false),
	"ScatterND": fixed(graph.ClassEmbedding, false), "ScatterElements": fixed(graph.ClassEmbedding, false),
	"Trilu": fixed(graph.ClassDataMovement, false), "CumSum": perElement(graph.ClassReduction, 1),

	// Views: no memory of their own, no traffic.
	"Reshape": fixed(graph.ClassDataMovement, true), "Transpose": fixed(graph.ClassDataMovement, true),
	"Squeeze": fixed(graph.ClassDataMovement, true), "Unsqueeze": fixed(graph.ClassDataMovement, true),
	"Flatten": fixed(graph.ClassDataMovement, true), "Identity": fixed(graph.ClassDataMovement, true),
	"Dropout": fixed(graph.ClassDataMovement, true),

	// Elementwise: 1 per output element.
	"Add": perElement(graph.ClassElementwise, 1), "Sub": perElement(graph.ClassElementwise, 1),
	"Mul": perElement(graph.ClassElementwise, 1), "Div": perElement(graph.ClassElementwise, 1),
	"Pow": perElement(graph.ClassElementwise, 1), "Sqrt": perElement(graph.ClassElementwise, 1),
	"Reciprocal": perElement(graph.ClassElementwise, 1), "Exp": perElement(graph.ClassElementwise, 1),
	"Log": perElement(graph.ClassElementwise, 1), "Neg": perElement(graph.ClassElementwise, 1),
	"Abs": perElement(graph.ClassElementwise, 1), "Relu": perElement(graph.ClassElementwise, 1),
	"LeakyRelu": perElement(graph.ClassElementwise, 1), "PRelu": perElement(graph.ClassElementwise, 1),
	"Elu": perElement(graph.ClassElementwise, 1), "Selu": perElement(graph.ClassElementwise, 1),
	"Sigmoid": perElement(graph.ClassElementwise, 1), "HardSigmoid": perElement(graph.ClassElementwise, 1),
	"HardSwish": perElement(graph.ClassElementwise, 1), "Tanh": perElement(graph.ClassElementwise, 1),
	"Erf": perElement(graph.ClassElementwise, 1), "Gelu": perElement(graph.ClassElementwise, 1),
	"Softplus": perElement(graph.ClassElementwise, 1), "Sin": perElement(graph.ClassElementwise, 1),
	"Cos": perElement(graph.ClassElementwise, 1), "Floor": perElement(graph.ClassElementwise, 1),
	"Ceil": perElement(graph.ClassElementwise, 1), "Round": perElement(graph.ClassElementwise, 1),
	"Sign": perElement(graph.ClassElementwise, 1), "Clip": perElement(graph.ClassElementwise, 1),
	"Max": perElement(graph.ClassElementwise, 1), "Min": perElement(graph.ClassElementwise, 1),
	"Mean": perElement(graph.ClassElementwise, 1), "Sum": perElement(graph.ClassElementwise, 1),
	"Where": perElement(graph.ClassElementwise, 1), "Equal": perElement(graph.ClassElementwise, 1),
	"Less": perElement(graph.ClassElementwise, 1), "LessOrEqual": perElement(graph.ClassElementwise, 1),
	"Greater": perElement(graph.ClassElementwise, 1), "GreaterOrEqual": perElement(graph.ClassElementwise, 1),
	"Not": perElement(graph.ClassElementwise, 1), "And": perElement(graph.ClassElementwise, 1),
	"Or": perElement(graph.ClassElementwise, 1), "Xor": perElement(graph.ClassElementwise, 1),
	"IsNaN": perElement(graph.ClassElementwise, 1), "IsInf": perElement(graph.ClassElementwise, 1),
	"Mod": perElement(graph.ClassElementwise, 1),
	// A conversion moves bytes; no arithmetic.
	"Cast": perElement(graph.ClassElementwise, 0), "CastLike": perElement(graph.ClassElementwise, 0),
}
