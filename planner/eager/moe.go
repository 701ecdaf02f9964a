package eager

import (
	"math"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// Eager MoE layers (docs/stacks.md): the ATen ops of an MoE block's
// experts part as eager PyTorch issues them, in place of the fused
// kernels of moe() (Megatron-Core's grouped GEMMs and fused permutation).
// MoEOps writes one of two code bases' blocks:
//
// MoEHFLoop is transformers' Qwen3MoeSparseMoeBlock (5.24,
// models/qwen3_moe/modeling_qwen3_moe.py, with experts_implementation
// "eager": Qwen3MoeExperts' own forward): the router's linear, an FP32
// softmax, topk, the top-k weights renormalised (sum, div_) and cast back,
// a one_hot mask of every (token, choice) over experts+1 classes (aminmax,
// zeros, scatter_), the experts hit (sum, gt, nonzero), then one pass per
// expert hit: a compare with the sentinel read by the host (eq: a
// synchronisation), torch.where on its mask (nonzero, another), its
// tokens gathered (index), its gate-up and down GEMMs with SwiGLU between,
// its tokens' weights gathered and multiplied in, and index_add_ into the
// output. Autograd's backward runs the loop in reverse; each expert's
// weight slice gradient is written into a zero tensor of all the experts'
// weights (select_backward) and those summed (add): traffic that grows
// with the square of the experts.
//
// MoETitan is torchtitan v0.2.0's MoE (torchtitan/models/moe/moe.py and
// utils.py at tag v0.2.0, 29624e37): the router (linear, FP32 softmax,
// topk of the scores plus expert_bias, gather, route_norm's sum and div,
// route_scale's mul), histc of the choices (twice: the reorderer's
// own), argsort, the token copies gathered in expert order, the grouped
// experts (torch._grouped_mm for w1, w3 and w2, after
// indices_padding_wrapper's permutation: the rows padded to multiples of
// 8 per expert, index and index_put back; or, use_grouped_mm=False
// (MoEShape.Loop), a host sync and three matmuls per expert, each
// weight's slice gradient written whole as in transformers' loop), the scores multiplied in after
// the experts (Qwen3's score_before_experts=False) and scatter_add into
// the shared experts' output (or zeros).
//
// MoEHFGrouped is the same block as transformers 5.24 runs it by default
// (experts_implementation "grouped_mm": integrations/moe.py
// grouped_mm_experts_forward): the router as above, the copies sorted by
// expert (sort), gathered (index) with their weights, histc and cumsum
// of the counts, torch._grouped_mm for gate-up and down with SwiGLU
// between, the weights multiplied in, the inverse permutation (arange,
// index_put_), the copies gathered back and summed over the TopK; no
// host sync. Under autocast over FP32 weights its grouped GEMMs run in
// FP32 (_grouped_mm casts its input to the weights' dtype and is not
// autocast's): the exporter's record, kept.
//
// MoELlamaPy is the project's own plain PyTorch layer,
// placer_torch.profile.layers' Experts (what placer profile times): the
// router's linear, FP32 softmax and topk, the routing forced balanced by
// arange after them (remainder), argsort, the copies gathered
// (index_select), every local expert's SwiGLU as two bmm over [experts,
// copies an expert, hidden] (one kernel each, whatever the experts), the
// copies put back (zeros_like, index_copy), weighted (the FP32 top-k
// weights cast) and summed over the TopK.
//
// All four are held to the project's exporter on the real module
// (transformers', layers.py's) or eagerops.py's re-implementation
// (torchtitan's) by
// TestEagerMoEOpsMatchExporter, at routing forced balanced: each expert
// receives tokens x TopK / Experts of the copies (eagerops.py _route).

// MoEImpl is whose MoE block an eager stack runs.
type MoEImpl uint8

// The MoE blocks MoEOps writes.
const (
	MoEHFLoop    MoEImpl = iota // transformers' sparse MoE block, a loop over the experts
	MoETitan                    // torchtitan's MoE, torch._grouped_mm
	MoELlamaPy                  // placer_torch.profile.layers' Experts: batched GEMMs (bmm) over the local experts
	MoEHFGrouped                // transformers' sparse MoE block with experts_implementation "grouped_mm" (5.24's default)
)

// MoEShape is one GPU's share of an MoE block for one micro-batch:
// Tokens routed on it, Local experts among which they are balanced
// (Tokens x TopK / Local each), FP32Weights as Shape's, Impl whose
// block.
type MoEShape struct {
	Tokens int
	// Copies is the token copies the local experts receive (0: Tokens x
	// TopK, no expert parallelism): with expert parallelism the most
	// loaded rank's, its expert-tensor group's gathered.
	Copies      float64
	Local       int
	FP32Weights bool
	Impl        MoEImpl
	// Loop is torchtitan's use_grouped_mm=False: its experts in a loop.
	Loop bool
}

// MoEOps is the ops of m's MoE block (router, experts, combine; not
// the norm or the residual around it) at shape s, forward then backward,
// routing balanced.
func MoEOps(m transformer.Spec, s MoEShape) []Op {
	switch s.Impl {
	case MoETitan:
		return titanMoEOps(m, s)
	case MoELlamaPy:
		return llamaMoEOps(m, s)
	case MoEHFGrouped:
		return hfGroupedOps(m, s)
	}
	return hfMoEOps(m, s)
}

// sharedFwd and sharedBwd are shared experts of fs columns as a SwiGLU
// MLP of nn.Linear layers on N tokens (torchtitan's FeedForward: w1, w3,
// w2; BF16 weights), forward, and backward with their weights' layout
// and the input's gradient joined.
func (l *opList) sharedFwd(N, h, fs float64) {
	const b = 2.0
	bt := graph.BF16
	lin := func(i, o float64) { l.add("mm", gmm, bt, 2*N*i*o, N*i*b+i*o*b, N*o*b) }
	lin(h, fs)
	l.add("silu", ew, bt, N*fs, N*fs*b, N*fs*b)
	lin(h, fs)
	l.add("mul", ew, bt, N*fs, 2*N*fs*b, N*fs*b)
	lin(fs, h)
}

func (l *opList) sharedBwd(N, h, fs float64) {
	const b = 2.0
	bt := graph.BF16
	linB := func(i, o float64) {
		l.add("mm", gmm, bt, 2*N*i*o, N*o*b+N*i*b, i*o*b)
		l.add("mm", gmm, bt, 2*N*i*o, N*o*b+i*o*b, N*i*b)
		l.add("new_empty_strided", dmv, bt, 0, i*o*b, i*o*b).Launches = 0
		l.add("copy_", dmv, bt, 0, 2*i*o*b, i*o*b)
	}
	linB(fs, h)
	for range 2 {
		l.add("mul", ew, bt, N*fs, 2*N*fs*b, N*fs*b)
	}
	linB(h, fs)
	l.add("silu_backward", ew, bt, N*fs, 2*N*fs*b, N*fs*b)
	linB(h, fs)
	l.add("add", ew, bt, N*h, 2*N*h*b, N*h*b)
}

// routerScores is the router's scores as every eager MoE block here
// computes them on N tokens of width h over E experts: under autocast
// (castIn) the input and the router's weight cast to BF16, the logits'
// GEMM, their FP32 copy and its softmax. routerScoresBwd is its
// backward from the scores' gradient: the softmax's, its cast to the
// logits' BF16, the weight's and the input's GEMMs.
func (l *opList) routerScores(N, h, E float64, castIn bool) {
	const b = 2.0
	if castIn {
		l.add("_to_copy", dmv, graph.BF16, 0, N*h*4, N*h*b)
		l.add("_to_copy", dmv, graph.BF16, 0, E*h*4, E*h*b)
	}
	l.add("mm", gmm, graph.BF16, 2*N*h*E, N*h*b+E*h*b, N*E*b)
	l.add("_to_copy", dmv, graph.F32, 0, N*E*b, N*E*4)
	l.add("_softmax", red, graph.F32, 5*N*E, N*E*4, N*E*4)
}

func (l *opList) routerScoresBwd(N, h, E float64) {
	const b = 2.0
	l.add("_softmax_backward_data", red, graph.F32, 3*N*E, 2*N*E*4, N*E*4)
	l.add("_to_copy", dmv, graph.BF16, 0, N*E*4, N*E*b)
	l.add("mm", gmm, graph.BF16, 2*N*h*E, N*E*b+N*h*b, E*h*b)
	l.add("mm", gmm, graph.BF16, 2*N*h*E, N*E*b+E*h*b, N*h*b)
}

// hfMoE is the sizes hfMoEOps costs transformers' eager MoE block with:
// N tokens of hidden size h, E local experts of FFN size f, top-k, r
// token copies an expert; the weights and hidden states a bytes an
// element of dtype at (FP32 where ac: FP32 weights under autocast); the
// shared experts' FFN fs (0: none).
type hfMoE struct {
	N, h, E, k, f, r, a, fs float64
	at                      graph.DType
	ac                      bool
}

func hfMoEOps(m transformer.Spec, s MoEShape) []Op {
	N, h, E, k, f := float64(s.Tokens), float64(m.Hidden), float64(max(1, s.Local)), float64(m.TopK), float64(m.ExpertFFN)
	R := N * k
	if s.Copies > 0 {
		R = s.Copies
	}
	r := R / E // each expert's tokens
	ac := s.FP32Weights
	a, at := 2.0, graph.BF16 // the weights' and hidden states' element
	if ac {
		a, at = 4, graph.F32
	}
	x := hfMoE{N: N, h: h, E: E, k: k, f: f, r: r, a: a, at: at, ac: ac, fs: float64(m.SharedExperts) * f}
	const w = 2.0 // the top-k weights (cast to the BF16 logits' dtype)
	bt := graph.BF16
	var l opList
	add := l.add
	// Forward: the router.
	l.routerScores(N, h, E, ac)
	add("topk", red, graph.F32, N*E, N*E*4, N*k*(4+8))
	add("sum", red, graph.F32, N*k, N*k*4, N*4)
	add("clone", dmv, graph.F32, 0, N*k*4, N*k*4)
	add("div_", ew, graph.F32, N*k, N*k*4+N*4, N*k*4)
	add("_to_copy", dmv, bt, 0, N*k*4, N*k*w)
	l.hfExpertsFwd(x)
	// Shared experts (Qwen3-MoE and Mixtral have none; a model with them
	// gets torchtitan's FeedForward's ops, not held to the exporter).
	fs := x.fs
	if fs > 0 {
		l.sharedFwd(N, h, fs)
		add("add", ew, at, N*h, 2*N*h*a, N*h*a)
	}
	// Backward: the loop in reverse, then the router.
	l.bwd = true
	if fs > 0 {
		l.sharedBwd(N, h, fs)
	}
	l.hfExpertsBwd(x)
	l.hfRouterBwd(x)
	return l.ops
}

// hfExpertsFwd adds the experts' forward of transformers' MoE block: the
// output's zeros, one_hot's mask, the experts hit, then each expert's
// tokens gathered, its MLP and its weighted output added back.
func (l *opList) hfExpertsFwd(x hfMoE) {
	N, h, E, k, f, r, a, at, ac := x.N, x.h, x.E, x.k, x.f, x.r, x.a, x.at, x.ac
	const b, w = 2.0, 2.0 // BF16; the top-k weights (cast to the BF16 logits' dtype)
	bt, i64 := graph.BF16, graph.I64
	add := l.add
	add("zeros_like", dmv, at, 0, N*h*a, N*h*a)
	add("aminmax", ew, i64, 1, N*k*8, 16)
	add("zeros", dmv, i64, 0, 0, N*k*(E+1)*8)
	add("scatter_", ew, i64, N*k*(E+1), N*k*(E+1)*8+N*k*8, N*k*(E+1)*8)
	add("sum", red, i64, N*k*(E+1), N*k*(E+1)*8, (E+1)*8)
	add("gt", ew, graph.Bool, E+1, (E+1)*8, E+1)
	add("nonzero", ew, i64, E, E+1, E*8)
	for range int(E) {
		add("eq", ew, graph.Bool, 1, 8, 1)
		add("nonzero", ew, i64, 2*r, N*k*8, 2*r*8)
		add("index", emb, at, 0, r*h*a+r*8, r*h*a)
		if ac {
			add("_to_copy", dmv, bt, 0, r*h*4, r*h*b)
			add("_to_copy", dmv, bt, 0, 2*f*h*4, 2*f*h*b)
		}
		add("mm", gmm, bt, 2*r*h*2*f, r*h*b+2*f*h*b, r*2*f*b)
		add("silu", ew, bt, r*f, r*f*b, r*f*b)
		add("mul", ew, bt, r*f, 2*r*f*b, r*f*b)
		if ac {
			add("_to_copy", dmv, bt, 0, h*f*4, h*f*b)
		}
		add("mm", gmm, bt, 2*r*f*h, r*f*b+h*f*b, r*h*b)
		add("index", emb, bt, 0, 2*r*8+r*w, r*w)
		add("mul", ew, bt, r*h, r*h*b+r*w, r*h*b)
		if ac {
			add("_to_copy", dmv, graph.F32, 0, r*h*b, r*h*4)
		}
		add("index_add_", ew, at, N*h, N*h*a+r*8+r*h*a, N*h*a)
	}
}

// hfExpertsBwd adds the experts' backward: the forward's loop in reverse,
// each expert's weight gradients made the whole parameter's.
func (l *opList) hfExpertsBwd(x hfMoE) {
	N, h, E, k, f, r, a, at, ac := x.N, x.h, x.E, x.k, x.f, x.r, x.a, x.at, x.ac
	const b, w = 2.0, 2.0 // BF16; the top-k weights (cast to the BF16 logits' dtype)
	bt := graph.BF16
	add := l.add
	// wgrad is an expert's weight slice gradient of e elements made the
	// whole parameter's (select_backward into E x e zeros, cast to FP32
	// first under autocast), summed with the other experts' (first: none).
	wgrad := func(e float64, first bool, castIn float64) {
		if ac {
			add("_to_copy", dmv, graph.F32, 0, e*b, e*4)
			if castIn > 0 {
				add("_to_copy", dmv, graph.F32, 0, castIn*b, castIn*4)
			}
		}
		add("select_backward", ew, at, E*e, e*a, E*e*a)
		if !first {
			add("add", ew, at, E*e, 2*E*e*a, E*e*a)
		}
	}
	for i := range int(E) {
		first, last := i == 0, i == int(E)-1
		add("index_select", emb, at, 0, r*h*a+r*8, r*h*a)
		if ac {
			add("_to_copy", dmv, bt, 0, r*h*4, r*h*b)
		}
		add("mul", ew, bt, r*h, 2*r*h*b, r*h*b)
		add("mul", ew, bt, r*h, r*h*b+r*w, r*h*b)
		add("sum", red, bt, r*h, r*h*b, r*w)
		add("new_zeros", dmv, bt, 0, r*w, N*k*w)
		add("index_put", emb, bt, 0, N*k*w+2*r*8+r*w, N*k*w)
		if !first {
			add("add", ew, bt, N*k, 2*N*k*w, N*k*w)
		}
		add("mm", gmm, bt, 2*r*f*h, r*h*b+r*f*b, h*f*b)
		add("mm", gmm, bt, 2*r*f*h, r*h*b+h*f*b, r*f*b)
		wgrad(h*f, first, 0)
		if last {
			add("new_empty_strided", dmv, at, 0, E*h*f*a, E*h*f*a).Launches = 0
			add("copy_", dmv, at, 0, 2*E*h*f*a, E*h*f*a)
		}
		add("mul", ew, bt, r*f, 2*r*f*b, r*f*b)
		add("mul", ew, bt, r*f, 2*r*f*b, r*f*b)
		add("silu_backward", ew, bt, r*f, 2*r*f*b, r*f*b)
		add("cat", dmv, bt, 0, 2*r*f*b, 2*r*f*b)
		add("mm", gmm, bt, 2*r*2*f*h, r*2*f*b+r*h*b, 2*f*h*b)
		add("mm", gmm, bt, 2*r*2*f*h, r*2*f*b+2*f*h*b, r*h*b)
		wgrad(2*f*h, first, r*h)
		if last {
			add("new_empty_strided", dmv, at, 0, E*2*f*h*a, E*2*f*h*a).Launches = 0
			add("copy_", dmv, at, 0, 2*E*2*f*h*a, E*2*f*h*a)
		}
		add("new_zeros", dmv, at, 0, r*h*a, N*h*a)
		add("index_put", emb, at, 0, N*h*a+r*8+r*h*a, N*h*a)
		if !first {
			add("add", ew, at, N*h, 2*N*h*a, N*h*a)
		}
	}
}

// hfRouterBwd adds the router's backward: the top-k weights' cast and
// renormalisation, topk, softmax, the scores' GEMMs, and under autocast
// the FP32 weight's and input's gradients.
func (l *opList) hfRouterBwd(x hfMoE) {
	N, h, E, k, ac := x.N, x.h, x.E, x.k, x.ac
	const b, w = 2.0, 2.0 // BF16; the top-k weights (cast to the BF16 logits' dtype)
	add := l.add
	add("_to_copy", dmv, graph.F32, 0, N*k*w, N*k*4)
	for range 3 {
		add("div", ew, graph.F32, N*k, N*k*4+N*4, N*k*4)
	}
	add("neg", ew, graph.F32, N*k, N*k*4, N*k*4)
	add("mul", ew, graph.F32, N*k, 2*N*k*4, N*k*4)
	add("sum", red, graph.F32, N*k, N*k*4, N*4)
	add("add", ew, graph.F32, N*k, 2*N*k*4, N*k*4)
	add("new_zeros", dmv, graph.F32, 0, N*k*4, N*E*4)
	add("scatter", emb, graph.F32, 0, N*E*4+N*k*8+N*k*4, N*E*4)
	l.routerScoresBwd(N, h, E)
	if ac {
		add("_to_copy", dmv, graph.F32, 0, E*h*b, E*h*4)
		add("new_empty_strided", dmv, graph.F32, 0, E*h*4, E*h*4).Launches = 0
		add("copy_", dmv, graph.F32, 0, 2*E*h*4, E*h*4)
		add("_to_copy", dmv, graph.F32, 0, N*h*b, N*h*4)
	}
}

// titanRows is the rows torchtitan v0.2.0's grouped GEMMs are given for
// R token copies over E local experts (utils.py _permute: R + E x 8
// rounded up to 8) and the rows their groups cover (each expert's copies
// rounded up to 8, at least 8: generate_permute_indices' m_sizes).
func titanRows(R, E float64) (padded, covered float64) {
	const align = 8
	padded = math.Ceil((R+E*align)/align) * align
	covered = E * math.Max(align, math.Ceil(R/E/align)*align)
	return padded, covered
}

// titanMoE is the sizes titanMoEOps costs torchtitan's MoE block with:
// N tokens of hidden size h, E local experts of FFN size f, top-k; R
// token copies routed here, X those the local experts receive; P rows
// their grouped GEMMs are given and C rows the groups cover (titanRows).
type titanMoE struct{ N, h, E, k, f, R, X, P, C float64 }

// titanMoEOps is the ops of torchtitan v0.2.0's MoE block
// (torchtitan/models/moe/moe.py): the router, the experts grouped or in
// a loop (Loop), the shared experts and the combine, forward then
// backward.
func titanMoEOps(m transformer.Spec, s MoEShape) []Op {
	N, h, E, k, f := float64(s.Tokens), float64(m.Hidden), float64(max(1, s.Local)), float64(m.TopK), float64(m.ExpertFFN)
	R := N * k // the copies routed here
	X := R     // those the local experts receive
	if s.Copies > 0 {
		X = s.Copies
	}
	P, C := titanRows(X, E)
	x := titanMoE{N: N, h: h, E: E, k: k, f: f, R: R, X: X, P: P, C: C}
	const b = 2.0
	bt, f32, i64 := graph.BF16, graph.F32, graph.I64
	var l opList
	add := l.add
	fs := float64(m.SharedExperts) * f
	// Forward: the router (softmax scores, topk of the biased scores,
	// the scores gathered, route_norm, route_scale), the counts (histc
	// twice, the running count's add_), the reorderer's argsort.
	l.routerScores(N, h, E, false)
	add("add", ew, f32, N*E, N*E*4+E*4, N*E*4)
	add("topk", red, f32, N*E, N*E*4, N*k*12)
	add("gather", emb, f32, 0, N*k*12, N*k*4)
	add("sum", red, f32, N*k, N*k*4, N*4)
	add("add", ew, f32, N, N*4, N*4)
	add("div", ew, f32, N*k, N*k*4+N*4, N*k*4)
	add("mul", ew, f32, N*k, N*k*4, N*k*4)
	for range 2 {
		add("histc", ew, f32, E, R*4, E*4)
	}
	add("add_", ew, f32, E, 2*E*4, E*4)
	add("sort", red, i64, R, R*8, R*16)
	add("index", emb, f32, 0, R*12, R*4)
	add("floor_divide", ew, i64, R, R*8, R*8)
	add("gather", emb, bt, 0, R*h*(8+b), R*h*b)
	if s.Loop {
		l.titanLoopFwd(x)
	} else {
		l.titanGroupedFwd(x)
	}
	// The shared experts (or zeros), the scores multiplied in, the
	// copies scatter-added onto them.
	if fs > 0 {
		l.sharedFwd(N, h, fs)
	} else {
		add("zeros_like", dmv, bt, 0, N*h*b, N*h*b)
	}
	add("_to_copy", dmv, f32, 0, R*h*b, R*h*4)
	add("mul", ew, f32, R*h, R*h*4+R*4, R*h*4)
	add("_to_copy", dmv, bt, 0, R*h*4, R*h*b)
	add("scatter_add", emb, bt, 0, N*h*b+R*h*(8+b), N*h*b)

	// Backward.
	l.bwd = true
	add("gather", emb, bt, 0, R*h*(8+b), R*h*b)
	add("_to_copy", dmv, f32, 0, R*h*b, R*h*4)
	add("mul", ew, f32, R*h, 2*R*h*4, R*h*4)
	add("mul", ew, f32, R*h, R*h*4+R*4, R*h*4)
	add("sum", red, f32, R*h, R*h*4, R*4)
	add("_to_copy", dmv, bt, 0, R*h*4, R*h*b)
	if fs > 0 {
		l.sharedBwd(N, h, fs)
	}
	if s.Loop {
		l.titanLoopBwd(x)
	} else {
		l.titanGroupedBwd(x)
	}
	add("new_zeros", dmv, bt, 0, R*h*b, N*h*b)
	add("scatter_add", emb, bt, 0, N*h*b+R*h*(8+b), N*h*b)
	// The scores: the reorder's index, route_scale, route_norm, gather,
	// softmax.
	add("new_zeros", dmv, f32, 0, R*4, R*4)
	add("index_put", emb, f32, 0, R*16, R*4)
	add("mul", ew, f32, R, R*4, R*4)
	for range 3 {
		add("div", ew, f32, N*k, N*k*4+N*4, N*k*4)
	}
	add("neg", ew, f32, N*k, N*k*4, N*k*4)
	add("mul", ew, f32, N*k, 2*N*k*4, N*k*4)
	add("sum", red, f32, N*k, N*k*4, N*4)
	add("add", ew, f32, N*k, 2*N*k*4, N*k*4)
	add("new_zeros", dmv, f32, 0, N*k*4, N*E*4)
	add("scatter_add", emb, f32, 0, N*E*4+N*k*12, N*E*4)
	l.routerScoresBwd(N, h, E)
	// x's gradients joined: the router's and the gathered copies' (and
	// the shared experts').
	add("add", ew, bt, N*h, 2*N*h*b, N*h*b)
	if fs > 0 {
		add("add", ew, bt, N*h, 2*N*h*b, N*h*b)
	}
	l.weightLayout(E * h)
	return l.ops
}

// weightLayout adds the copy of a BF16 weight gradient of e elements
// into the parameter's layout (new_empty_strided, copy_).
func (l *opList) weightLayout(e float64) {
	const b = 2.0
	bt := graph.BF16
	l.add("new_empty_strided", dmv, bt, 0, e*b, e*b).Launches = 0
	l.add("copy_", dmv, bt, 0, 2*e*b, e*b)
}

// titanLoopFwd adds the experts' forward with use_grouped_mm=False:
// _run_experts_for_loop: the counts read by the host
// (.tolist(): a sync), each expert's w1, w3 and w2 a matmul on
// its copies, the outputs concatenated, the (empty) padding rows
// appended.
func (l *opList) titanLoopFwd(x titanMoE) {
	h, E, f, X := x.h, x.E, x.f, x.X
	const b = 2.0
	bt := graph.BF16
	add := l.add
	r := X / E
	for range int(E) {
		add("mm", gmm, bt, 2*r*h*f, r*h*b+f*h*b, r*f*b)
		add("silu", ew, bt, r*f, r*f*b, r*f*b)
		add("mm", gmm, bt, 2*r*h*f, r*h*b+f*h*b, r*f*b)
		add("mul", ew, bt, r*f, 2*r*f*b, r*f*b)
		add("mm", gmm, bt, 2*r*f*h, r*f*b+h*f*b, r*h*b)
	}
	add("cat", dmv, bt, 0, X*h*b, X*h*b)
	add("new_zeros", dmv, bt, 0, X*h*b, 0)
	add("cat", dmv, bt, 0, X*h*b, X*h*b)
}

// titanGroupedFwd adds the experts' forward with grouped GEMMs:
// generate_permute_indices' arithmetic on the counts, its fill.
func (l *opList) titanGroupedFwd(x titanMoE) {
	h, E, f, X, P, C := x.h, x.E, x.f, x.X, x.P, x.C
	const b = 2.0
	bt, f32, i64 := graph.BF16, graph.F32, graph.I64
	add := l.add
	for _, t := range []string{"cumsum", "sub", "sum", "clamp_min", "add", "sub", "floor_divide", "mul"} {
		rd := E * 4
		if t == "sub" && len(l.ops) > 0 && l.ops[len(l.ops)-1].Type == "cumsum" {
			rd = 2 * E * 4
		}
		cl := ew
		if t == "cumsum" || t == "sum" {
			cl = red
		}
		add(t, cl, f32, E, rd, E*4)
	}
	add("_to_copy", dmv, graph.I32, 0, E*4, E*4)
	add("cumsum", red, i64, E, E*4, E*8)
	add("sub", ew, i64, E, E*8+E*4, E*8)
	add("full", dmv, graph.I32, 0, 0, P*4)
	// The padded permutation (a zero row appended, the rows gathered),
	// the grouped GEMMs (their FLOPs over the rows the groups cover), the
	// rows put back and the pad row dropped.
	add("new_zeros", dmv, bt, 0, X*h*b, h*b)
	add("cat", dmv, bt, 0, (X+1)*h*b, (X+1)*h*b)
	add("index", emb, bt, 0, P*h*b+P*4, P*h*b)
	add("cumsum", red, graph.I32, E, E*4, E*4)
	up := func() { add("_grouped_mm", gmm, bt, 2*C*h*f, P*h*b+E*f*h*b+E*4, P*f*b) }
	up()
	add("silu", ew, bt, P*f, P*f*b, P*f*b)
	up()
	add("mul", ew, bt, P*f, 2*P*f*b, P*f*b)
	add("_grouped_mm", gmm, bt, 2*C*f*h, P*f*b+E*h*f*b+E*4, P*h*b)
	add("new_empty", dmv, bt, 0, P*h*b, (X+1)*h*b).Launches = 0
	add("index_put_", ew, bt, (X+1)*h, (X+1)*h*b+P*4+P*h*b, (X+1)*h*b)
}

// titanLoopBwd adds the experts' backward with use_grouped_mm=False:
// Each expert's backward (the last first): w2's, the mul's, w3's,
// silu's, w1's, its copies' two gradients joined; each weight's
// slice gradient written into zeros of all the experts'
// (select_backward) and summed with the others'.
func (l *opList) titanLoopBwd(x titanMoE) {
	h, E, f, X := x.h, x.E, x.f, x.X
	const b = 2.0
	bt := graph.BF16
	add := l.add
	r := X / E
	for i := range int(E) {
		wg := func(e float64) {
			add("select_backward", ew, bt, E*e, e*b, E*e*b)
			if i > 0 {
				add("add", ew, bt, E*e, 2*E*e*b, E*e*b)
			}
			if i == int(E)-1 {
				l.weightLayout(E * e)
			}
		}
		add("mm", gmm, bt, 2*r*f*h, r*h*b+r*f*b, h*f*b)
		add("mm", gmm, bt, 2*r*f*h, r*h*b+h*f*b, r*f*b)
		wg(h * f)
		for range 2 {
			add("mul", ew, bt, r*f, 2*r*f*b, r*f*b)
		}
		add("mm", gmm, bt, 2*r*h*f, r*f*b+r*h*b, f*h*b)
		add("mm", gmm, bt, 2*r*h*f, r*f*b+f*h*b, r*h*b)
		wg(h * f)
		add("silu_backward", ew, bt, r*f, 2*r*f*b, r*f*b)
		add("mm", gmm, bt, 2*r*h*f, r*f*b+r*h*b, f*h*b)
		add("mm", gmm, bt, 2*r*h*f, r*f*b+f*h*b, r*h*b)
		add("add", ew, bt, r*h, 2*r*h*b, r*h*b)
		wg(h * f)
	}
	add("cat", dmv, bt, 0, X*h*b, X*h*b)
	add("slice_backward", ew, bt, X*h, X*h*b, X*h*b)
}

// titanGroupedBwd adds the experts' backward with grouped GEMMs: the
// padded rows' gradient, each grouped GEMM's backward and its weights'
// layout, the rows put back.
func (l *opList) titanGroupedBwd(x titanMoE) {
	h, E, f, X, P, C := x.h, x.E, x.f, x.X, x.P, x.C
	const b = 2.0
	bt := graph.BF16
	add := l.add
	add("slice_backward", ew, bt, (X+1)*h, X*h*b, (X+1)*h*b)
	add("index", emb, bt, 0, P*h*b+P*4, P*h*b)
	// gmmB is a grouped GEMM's backward of i inputs and o outputs per
	// expert: the weights' gradient, the input's, the layout.
	gmmB := func(i, o float64) {
		add("_grouped_mm", gmm, bt, 2*C*i*o, P*o*b+P*i*b+E*4, E*i*o*b)
		add("_grouped_mm", gmm, bt, 2*C*i*o, P*o*b+E*i*o*b+E*4, P*i*b)
	}
	gmmB(f, h)
	l.weightLayout(E * h * f)
	for range 2 {
		add("mul", ew, bt, P*f, 2*P*f*b, P*f*b)
	}
	gmmB(h, f)
	l.weightLayout(E * h * f)
	add("silu_backward", ew, bt, P*f, 2*P*f*b, P*f*b)
	gmmB(h, f)
	add("add", ew, bt, P*h, 2*P*h*b, P*h*b)
	l.weightLayout(E * h * f)
	add("new_zeros", dmv, bt, 0, P*h*b, (X+1)*h*b)
	add("index_put", emb, bt, 0, (X+1)*h*b+P*4+P*h*b, (X+1)*h*b)
}

// eagerMoESyncs is the host's synchronisations in one forward of an
// eager MoE block over local experts: transformers' loop reads two
// values an expert hit (the sentinel compare's branch, torch.where's
// nonzero) and one for the experts hit (nonzero); torchtitan's grouped
// path none without expert parallelism and one with it (the splits'
// .tolist() before all_to_all_single, distributed/expert_parallel.py),
// its for-loop (loop) one more (the counts' .tolist()); layers.py's forced
// balance and transformers' grouped_mm none.
func MoESyncs(impl MoEImpl, local, ep int, loop bool) float64 {
	n := 0.0
	switch {
	case impl == MoEHFLoop:
		n = 2*float64(local) + 1
	case impl == MoETitan:
		if ep > 1 {
			n++
		}
		if loop {
			n++
		}
	}
	return n
}

func llamaMoEOps(m transformer.Spec, s MoEShape) []Op {
	N, h, L, k, f := float64(s.Tokens), float64(m.Hidden), float64(max(1, s.Local)), float64(m.TopK), float64(m.ExpertFFN)
	E := float64(max(1, m.Experts))
	R := N * k // the copies routed here
	X := R     // those the local experts receive
	if s.Copies > 0 {
		X = s.Copies
	}
	ac := s.FP32Weights
	a, at := 2.0, graph.BF16
	if ac {
		a, at = 4, graph.F32
	}
	const b = 2.0
	bt, f32, i64 := graph.BF16, graph.F32, graph.I64
	var l opList
	add := l.add
	l.routerScores(N, h, E, ac)
	add("topk", red, f32, N*E, N*E*4, R*12)
	add("arange", dmv, i64, 0, 0, R*8)
	add("remainder", ew, i64, R, R*8, R*8)
	add("sort", red, i64, R, R*8, R*16)
	add("floor_divide", ew, i64, R, R*8, R*8)
	add("index_select", emb, at, 0, R*h*a+R*8, R*h*a)
	if ac {
		add("_to_copy", dmv, bt, 0, X*h*4, X*h*b)
		add("_to_copy", dmv, bt, 0, L*h*2*f*4, L*h*2*f*b)
	}
	add("bmm", gmm, bt, 2*X*h*2*f, X*h*b+L*h*2*f*b, X*2*f*b)
	add("silu", ew, bt, X*f, X*f*b, X*f*b)
	add("mul", ew, bt, X*f, 2*X*f*b, X*f*b)
	if ac {
		add("_to_copy", dmv, bt, 0, L*f*h*4, L*f*h*b)
	}
	add("bmm", gmm, bt, 2*X*f*h, X*f*b+L*f*h*b, X*h*b)
	add("zeros_like", dmv, bt, 0, R*h*b, R*h*b)
	add("index_copy", ew, bt, R*h, 2*R*h*b+R*8, R*h*b)
	add("_to_copy", dmv, bt, 0, R*4, R*b)
	add("mul", ew, bt, R*h, R*h*b+R*b, R*h*b)
	add("sum", red, at, R*h, R*h*b, N*h*a) // FP32 under autocast
	fs := float64(m.SharedExperts) * f
	if fs > 0 { // not held to the exporter
		l.sharedFwd(N, h, fs)
		add("add", ew, at, N*h, 2*N*h*a, N*h*a)
	}

	l.bwd = true
	if fs > 0 {
		l.sharedBwd(N, h, fs)
	}
	if ac {
		add("_to_copy", dmv, bt, 0, R*h*4, R*h*b)
	}
	add("mul", ew, bt, R*h, 2*R*h*b, R*h*b)
	add("mul", ew, bt, R*h, R*h*b+R*b, R*h*b)
	add("sum", red, bt, R*h, R*h*b, R*b)
	add("_to_copy", dmv, f32, 0, R*b, R*4)
	add("index_select", emb, bt, 0, R*h*b+R*8, R*h*b)
	wlay := func(e float64) {
		if ac {
			add("_to_copy", dmv, f32, 0, e*b, e*4)
		}
		add("new_empty_strided", dmv, at, 0, e*a, e*a).Launches = 0
		add("copy_", dmv, at, 0, 2*e*a, e*a)
	}
	add("bmm", gmm, bt, 2*X*f*h, X*f*b+X*h*b, L*f*h*b)
	add("bmm", gmm, bt, 2*X*f*h, X*h*b+L*f*h*b, X*f*b)
	wlay(L * f * h)
	for range 2 {
		add("mul", ew, bt, X*f, 2*X*f*b, X*f*b)
	}
	add("silu_backward", ew, bt, X*f, 2*X*f*b, X*f*b)
	add("cat", dmv, bt, 0, 2*X*f*b, 2*X*f*b)
	add("bmm", gmm, bt, 2*X*h*2*f, X*2*f*b+X*h*b, L*h*2*f*b)
	add("bmm", gmm, bt, 2*X*h*2*f, X*2*f*b+L*h*2*f*b, X*h*b)
	wlay(L * h * 2 * f)
	if ac {
		add("_to_copy", dmv, f32, 0, R*h*b, R*h*4)
	}
	add("new_zeros", dmv, at, 0, R*h*a, N*h*a)
	add("index_add", emb, at, 0, N*h*a+R*8+R*h*a, N*h*a)
	add("new_zeros", dmv, f32, 0, N*k*4, N*E*4)
	add("scatter", emb, f32, 0, N*E*4+N*k*12, N*E*4)
	l.routerScoresBwd(N, h, E)
	if ac {
		wlay(E * h)
		add("_to_copy", dmv, f32, 0, N*h*b, N*h*4)
		add("add", ew, at, N*h, 2*N*h*a, N*h*a)
	} else {
		add("add", ew, at, N*h, 2*N*h*a, N*h*a)
		wlay(E * h)
	}
	return l.ops
}

func hfGroupedOps(m transformer.Spec, s MoEShape) []Op {
	N, h, E, k, f := float64(s.Tokens), float64(m.Hidden), float64(max(1, s.Local)), float64(m.TopK), float64(m.ExpertFFN)
	R := N * k
	X := R
	if s.Copies > 0 {
		X = s.Copies
	}
	ac := s.FP32Weights
	a, at := 2.0, graph.BF16
	if ac {
		a, at = 4, graph.F32
	}
	const b, w = 2.0, 2.0
	bt, f32, i64 := graph.BF16, graph.F32, graph.I64
	var l opList
	add := l.add
	l.routerScores(N, h, E, ac)
	add("topk", red, f32, N*E, N*E*4, N*k*(4+8))
	add("sum", red, f32, N*k, N*k*4, N*4)
	add("clone", dmv, f32, 0, N*k*4, N*k*4)
	add("div_", ew, f32, N*k, N*k*4+N*4, N*k*4)
	add("_to_copy", dmv, bt, 0, N*k*4, N*k*w)
	// The copies in expert order; the counts (histc of a 4-byte copy of
	// the ids: FP32 as a CPU records it, int32 on a GPU) and offsets.
	add("sort", red, i64, R, R*8, R*16)
	add("floor_divide", ew, i64, R, R*8, R*8)
	add("index", emb, at, 0, X*h*a+X*8, X*h*a)
	add("index", emb, bt, 0, X*w+X*8, X*w)
	add("_to_copy", dmv, f32, 0, R*8, R*4)
	add("histc", ew, f32, E, R*4, E*4)
	add("cumsum", red, graph.I32, E, E*4, E*4)
	add("_grouped_mm", gmm, at, 2*X*h*2*f, X*h*a+E*2*f*h*a+E*4, X*2*f*a)
	add("silu", ew, at, X*f, X*f*a, X*f*a)
	add("mul", ew, at, X*f, 2*X*f*a, X*f*a)
	add("_grouped_mm", gmm, at, 2*X*f*h, X*f*a+E*h*f*a+E*4, X*h*a)
	add("mul", ew, at, X*h, X*h*a+X*w, X*h*a)
	add("empty_like", dmv, i64, 0, R*8, R*8).Launches = 0
	add("arange", dmv, i64, 0, 0, R*8)
	add("index_put_", ew, i64, R, 3*R*8, R*8)
	add("index", emb, at, 0, X*h*a+X*8, X*h*a)
	add("sum", red, at, X*h, X*h*a, N*h*a)
	fs := float64(m.SharedExperts) * f
	if fs > 0 { // not held to the exporter
		l.sharedFwd(N, h, fs)
		add("add", ew, at, N*h, 2*N*h*a, N*h*a)
	}

	l.bwd = true
	if fs > 0 {
		l.sharedBwd(N, h, fs)
	}
	if !ac {
		add("clone", dmv, at, 0, X*h*a, X*h*a)
	}
	add("new_zeros", dmv, at, 0, X*h*a, X*h*a)
	add("index_put", emb, at, 0, 2*X*h*a+X*8, X*h*a)
	add("mul", ew, at, X*h, 2*X*h*a, X*h*a)
	add("mul", ew, at, X*h, X*h*a+X*w, X*h*a)
	add("sum", red, at, X*h, X*h*a, X*a)
	if ac {
		add("_to_copy", dmv, bt, 0, X*4, X*w)
	}
	wlay := func(e float64) {
		add("new_empty_strided", dmv, at, 0, e*a, e*a).Launches = 0
		add("copy_", dmv, at, 0, 2*e*a, e*a)
	}
	add("_grouped_mm", gmm, at, 2*X*f*h, X*h*a+X*f*a+E*4, E*h*f*a)
	add("_grouped_mm", gmm, at, 2*X*f*h, X*h*a+E*h*f*a+E*4, X*f*a)
	wlay(E * h * f)
	for range 2 {
		add("mul", ew, at, X*f, 2*X*f*a, X*f*a)
	}
	add("silu_backward", ew, at, X*f, 2*X*f*a, X*f*a)
	add("cat", dmv, at, 0, 2*X*f*a, 2*X*f*a)
	add("_grouped_mm", gmm, at, 2*X*h*2*f, X*2*f*a+X*h*a+E*4, E*2*f*h*a)
	add("_grouped_mm", gmm, at, 2*X*h*2*f, X*2*f*a+E*2*f*h*a+E*4, X*h*a)
	wlay(E * 2 * f * h)
	add("new_zeros", dmv, bt, 0, X*w, X*w)
	add("index_put", emb, bt, 0, 2*X*w+X*8, X*w)
	add("new_zeros", dmv, at, 0, X*h*a, N*h*a)
	add("index_put", emb, at, 0, N*h*a+X*8+X*h*a, N*h*a)
	add("_to_copy", dmv, f32, 0, N*k*w, N*k*4)
	for range 3 {
		add("div", ew, f32, N*k, N*k*4+N*4, N*k*4)
	}
	add("neg", ew, f32, N*k, N*k*4, N*k*4)
	add("mul", ew, f32, N*k, 2*N*k*4, N*k*4)
	add("sum", red, f32, N*k, N*k*4, N*4)
	add("add", ew, f32, N*k, 2*N*k*4, N*k*4)
	add("new_zeros", dmv, f32, 0, N*k*4, N*E*4)
	add("scatter", emb, f32, 0, N*E*4+N*k*8+N*k*4, N*E*4)
	l.routerScoresBwd(N, h, E)
	if ac {
		add("_to_copy", dmv, f32, 0, E*h*b, E*h*4)
		add("new_empty_strided", dmv, f32, 0, E*h*4, E*h*4).Launches = 0
		add("copy_", dmv, f32, 0, 2*E*h*4, E*h*4)
		add("_to_copy", dmv, f32, 0, N*h*b, N*h*4)
	}
	return l.ops
}
