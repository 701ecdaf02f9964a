package eager

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// Op is one ATen op of an eager layer as the exporter records it.
type Op struct {
	// Type is the ATen op (mm, mul, _to_copy, ...), Class its cost class
	// (the exporter's _class), DType its output's.
	Type  string
	Class graph.Class
	DType graph.DType
	// FLOPs, Read and Written as the exporter counts them: one FLOP an
	// output element for elementwise ops, one an input element for
	// reductions, 2mnk for a GEMM; the bytes of every input and output.
	FLOPs, Read, Written float64
	Backward             bool
	// Launches is the kernels the host issues for it: 1, or 0 for an
	// allocation (new_empty, new_empty_strided: no kernel).
	Launches int
	// Comm marks a tensor-parallel collective of the loss (Coll of Read
	// bytes, an all-gather's gathered total): placer's, not in the
	// exporter's record, costed as placer costs collectives.
	Comm bool
	Coll roofline.Collective
	// TP is the tensor-parallel collective beside a GEMM (TPNone,
	// TPBefore ... : the roles of the fused stack's attention block),
	// Attn marks SDPA (the cost model prices it as the fused stack's
	// flash attention).
	TP   TPRole
	Attn bool
	// Keep and Until are how long its output is held in the step's
	// allocation trace (the cost model's): KeepNext (a temporary) and
	// KeepSaved until the op at index until of the same list has run
	// (0: the next op; a saved tensor the end of its part's backward).
	Keep  Keep
	Until int32
}

// TPRole is the tensor-parallel collective an op's GEMM has beside it.
type TPRole uint8

const (
	TPNone      TPRole = iota
	TPBefore           // the all-gather before a column-parallel GEMM (sp)
	TPAfter            // the reduce-scatter or all-reduce after a row-parallel one
	TPBwdAfter         // the backward's mirror of TPAfter (sp: an all-gather)
	TPBwdBefore        // the backward's mirror of TPBefore (a reduce-scatter or all-reduce)
)

type opList struct {
	ops []Op
	bwd bool
}

func (l *opList) add(typ string, cl graph.Class, dt graph.DType, flops, read, written float64) *Op {
	l.ops = append(l.ops, Op{Type: typ, Class: cl, DType: dt, FLOPs: flops, Read: read, Written: written, Backward: l.bwd, Launches: 1})
	return &l.ops[len(l.ops)-1]
}

// last is the index of the op added last.
func (l *opList) last() int32 { return int32(len(l.ops) - 1) }

const (
	ew  = graph.ClassElementwise
	red = graph.ClassReduction
	dmv = graph.ClassDataMovement
	gmm = graph.ClassMatMul
	emb = graph.ClassEmbedding
)
