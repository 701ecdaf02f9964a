package nn

import (
	"fmt"
	"math/rand/v2"
)

// Attention is content-based attention with Luong et al.'s "general"
// score (Luong, Pham & Manning 2015, eq. 8): for a query q (a decoder
// state) over a memory of n vectors m_j (encoder states),
//
//	score_j = q · (W m_j),  alpha = softmax(score),  context = Σ_j alpha_j m_j.
//
// The keys k_j = W m_j depend only on the memory, so they are computed once
// (Keys) for every query of a decoder: its steps and its samples.
type Attention[T Float] struct {
	Query, Mem int       // query and memory vector sizes
	W          *Param[T] // Query x Mem
}

// NewAttention returns an attention layer named name with Glorot-initialized
// weights.
func NewAttention[T Float](name string, query, mem int, r *rand.Rand) *Attention[T] {
	a := &Attention[T]{Query: query, Mem: mem, W: NewParam[T](name+".w", query, mem)}
	a.W.InitGlorot(r, mem, query, 1)
	return a
}

// Params lists the layer's parameters.
func (a *Attention[T]) Params() Params[T] { return Params[T]{a.W} }

// Keys returns the keys of the memory m (n x Mem): m W^T, n x Query,
// allocated from ar.
func (a *Attention[T]) Keys(ar *Arena[T], m []T, n int) []T {
	if len(m) < n*a.Mem {
		panic(fmt.Sprintf("nn: %s: memory of %d values, want %d x %d", a.W.Name, len(m), n, a.Mem))
	}
	k := ar.AllocRaw(n * a.Query)
	Gemm(false, true, n, a.Query, a.Mem, m, a.Mem, a.W.W, a.Mem, 0, k, a.Query)
	return k
}

// AttentionTrace is what a forward pass keeps for its backward pass.
type AttentionTrace[T Float] struct {
	Rows, N int
	Q       []T // rows x Query: the queries (the caller's slice)
	M, K    []T // n x Mem, n x Query: the memory and its keys
	Alpha   []T // rows x n: the attention weights
}

// Forward attends with each of rows queries q (rows x Query) over the
// memory m (n x Mem) with keys k from Keys, and writes the contexts to ctx
// (rows x Mem, overwritten). The trace's weights come from ar; q, m and k
// are kept by reference.
func (a *Attention[T]) Forward(ar *Arena[T], q []T, rows int, m, k []T, n int, ctx []T) *AttentionTrace[T] {
	tr := &AttentionTrace[T]{Rows: rows, N: n, Q: q, M: m, K: k, Alpha: ar.AllocRaw(rows * n)}
	Gemm(false, true, rows, n, a.Query, q, a.Query, k, a.Query, 0, tr.Alpha, n)
	ParallelFor(rows, Grain(rows, 8*n), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			SoftmaxRow(tr.Alpha[i*n:(i+1)*n], 1)
		}
	})
	Gemm(false, false, rows, a.Mem, n, tr.Alpha, n, m, a.Mem, 0, ctx, a.Mem)
	return tr
}

// Backward takes the gradient of the contexts dctx (rows x Mem), adds the
// weights' gradient, and adds the gradients of the queries to dq (rows x
// Query) and of the memory to dm (n x Mem), each skipped if nil. ar
// provides scratch.
func (a *Attention[T]) Backward(ar *Arena[T], tr *AttentionTrace[T], dctx, dq, dm []T) {
	rows, n := tr.Rows, tr.N
	mk := ar.Mark()
	defer ar.Release(mk)
	// dalpha = dctx m^T, then through the softmax: ds = alpha ⊙ (dalpha -
	// Σ alpha ⊙ dalpha), in place.
	ds := ar.AllocRaw(rows * n)
	Gemm(false, true, rows, n, a.Mem, dctx, a.Mem, tr.M, a.Mem, 0, ds, n)
	ParallelFor(rows, Grain(rows, 4*n), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			al, d := tr.Alpha[i*n:(i+1)*n], ds[i*n:(i+1)*n]
			var s T
			for j, v := range al {
				s += v * d[j]
			}
			for j, v := range al {
				d[j] = v * (d[j] - s)
			}
		}
	})
	if dq != nil {
		Gemm(false, false, rows, a.Query, n, ds, n, tr.K, a.Query, 1, dq, a.Query)
	}
	dk := ar.AllocRaw(n * a.Query)
	Gemm(true, false, n, a.Query, rows, ds, n, tr.Q, a.Query, 0, dk, a.Query)
	Gemm(true, false, a.Query, a.Mem, n, dk, a.Query, tr.M, a.Mem, 1, a.W.G, a.Mem)
	if dm != nil {
		Gemm(true, false, n, a.Mem, rows, tr.Alpha, n, dctx, a.Mem, 1, dm, a.Mem)
		Gemm(false, false, n, a.Mem, a.Query, dk, a.Query, a.W.W, a.Mem, 1, dm, a.Mem)
	}
}
