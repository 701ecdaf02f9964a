package kernels

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/placer/placer/internal/lines"

	"gonum.org/v1/gonum/mat"
)

// Attention is a fused causal attention kernel's time by shape, one
// fit per direction, from measurements of the kernel (kernelbench's
// attention section; FitAttention).
type Attention struct {
	// Backend names the kernel measured: "cudnn" (cuDNN's fused
	// attention through torch's SDPA, what Transformer Engine runs on
	// sm90) or "flash" (torch's own flash kernel).
	Backend  string
	Fwd, Bwd AttentionRate
	// FullFwd and FullBwd, where set, are the kernel's fit to its full
	// blocks alone (the measured calls without a causal mask: a
	// context-parallel ring's chunk against another; FitFullBlocks), at
	// the head dimensions they were measured at: For takes them for a
	// ring's full call at one of those (cost.FusedAttn.Full), Fwd and
	// Bwd for every other call. nil: Fwd and Bwd for every call.
	FullFwd, FullBwd *AttentionRate
	// Provenance, where set, is the node's Provenance once this kernel
	// replaces its unfused attention (WithAttention): where the node's
	// figures come from, this kernel's included.
	Provenance string
}

// AttentionRate is one direction of a fused attention kernel:
//
//	t = F / R(d) + Beta * E + Tail * L + T0
//
// F the call's FLOPs (forward: Q K^T and P V over the scores the call
// computes, 2 b h sq sk (dqk + dv): a causal call of s queries and keys
// the causal half, 2 b h s^2 (dqk + dv) / 2, as the attention benchmarks
// count it, a ring's full block of a chunk against another chunk all of
// it; backward 2.5 times that), d the query and key head dimension, E the
// call's query elements b h s (dqk + dv), L a causal call's s (dqk + dv)
// (0 for a full block) and T0 what a call costs whatever its size.
// F / R is the tiles' arithmetic; Beta * E the work of each block of
// queries that does not grow with the keys it meets (loading Q, the
// softmax's rescaling and writing O, forward; dO, O and the row sums,
// backward); Tail * L a causal call's tail: its last block of queries
// meets every key, so the call ends a row of s key tiles after the
// others' work is spread over the SMs, whatever b and h (a full block's
// rows are all alike and leave no such tail); T0 the launch and the last
// wave's. A small shard (a tensor-parallel GPU's few heads) is further
// from the rate than a benchmark's 16 heads by 16K tokens.
type AttentionRate struct {
	// HeadDims are the head dimensions measured, ascending; Rates the
	// FLOP/s at each. Between two, 1/R is interpolated linearly in d;
	// outside, the nearest is taken.
	HeadDims []int
	Rates    []float64
	// Beta is seconds per query element, Tail seconds per element of a
	// causal call's last row (s (dqk + dv)), T0 seconds per call.
	Beta, Tail, T0 float64
}

// For is the fit that prices a call of head dimension d, forward or
// backward: the full blocks' own fit (FullFwd, FullBwd) for a full call
// (a context-parallel ring's chunk against another) where k has one
// measured at d, else Fwd or Bwd.
func (k *Attention) For(backward, full bool, d int) *AttentionRate {
	r, f := &k.Fwd, k.FullFwd
	if backward {
		r, f = &k.Bwd, k.FullBwd
	}
	if full && f != nil && slices.Contains(f.HeadDims, d) {
		return f
	}
	return r
}

// AttentionCall is the shape of one fused attention call as AttentionRate
// takes it: its FLOPs (F), query elements (E), causal row elements (L:
// 0 for a full block) and query and key head dimension (d).
type AttentionCall struct {
	Flops, Elems, Tail float64
	HeadDim            int
}

// Time is the kernel's time for call a.
func (r *AttentionRate) Time(a AttentionCall) float64 {
	return a.Flops/r.Rate(a.HeadDim) + r.Beta*a.Elems + r.Tail*a.Tail + r.T0
}

// Rate is R(d).
func (r *AttentionRate) Rate(d int) float64 {
	n := len(r.HeadDims)
	i, _ := slices.BinarySearch(r.HeadDims, d)
	switch {
	case i < n && r.HeadDims[i] == d:
		return r.Rates[i]
	case i == 0:
		return r.Rates[0]
	case i == n:
		return r.Rates[n-1]
	}
	d0, d1 := float64(r.HeadDims[i-1]), float64(r.HeadDims[i])
	w := (float64(d) - d0) / (d1 - d0)
	return 1 / ((1-w)/r.Rates[i-1] + w/r.Rates[i])
}

// MeasuredAttention is one case of kernelbench's attention or longattn
// section: an attention of Batch x Heads queries of Seq tokens against
// SeqK keys (0: Seq), causal (the causal half of the scores: Seq keys)
// or not (every score: a context-parallel ring's block of one chunk
// against an earlier one, or torch's load-balanced ring's call of two
// chunks of queries against one of keys, or one against two), Q and K
// of HeadDim, V of VHeadDim, timed forward and backward (seconds) with
// one backend.
type MeasuredAttention struct {
	Name              string
	Backend           string
	Batch, Heads, Seq int
	SeqK              int
	HeadDim, VHeadDim int
	Causal            bool
	Fwd, Bwd          float64
}

// keys is the case's key length: SeqK, or Seq where it is 0.
func (m MeasuredAttention) keys() float64 {
	if m.SeqK > 0 {
		return float64(m.SeqK)
	}
	return float64(m.Seq)
}

// Flops is the case's forward FLOPs (AttentionRate's F): a causal call
// the causal half of the scores, a full one all of them (queries x
// keys).
func (m MeasuredAttention) flops() float64 {
	f := float64(m.Batch) * float64(m.Heads) * float64(m.Seq) * m.keys() * float64(m.HeadDim+m.VHeadDim)
	if !m.Causal {
		f *= 2
	}
	return f
}

// Elems is the case's query elements (AttentionRate's E).
func (m MeasuredAttention) elems() float64 {
	return float64(m.Batch) * float64(m.Heads) * float64(m.Seq) * float64(m.HeadDim+m.VHeadDim)
}

// Call is the case's forward call (mul 1) or backward (mul 2.5: its
// FLOPs 2.5 times the forward's).
func (m MeasuredAttention) Call(mul float64) AttentionCall {
	var tail float64
	if m.Causal {
		tail = float64(m.Seq) * float64(m.HeadDim+m.VHeadDim)
	}
	return AttentionCall{Flops: mul * m.flops(), Elems: m.elems(), Tail: tail, HeadDim: m.HeadDim}
}

type attentionLine struct {
	Kind    string   `json:"kind"`
	Name    string   `json:"name"`
	Error   string   `json:"error"`
	Backend string   `json:"backend"`
	Batch   int      `json:"batch"`
	Heads   int      `json:"heads"`
	Seq     int      `json:"seq"`
	SeqK    *int     `json:"seq_k"`
	D       int      `json:"head_dim"`
	DV      int      `json:"v_head_dim"`
	Causal  *bool    `json:"causal"`
	Fwd     *float64 `json:"fwd_seconds"`
	Bwd     *float64 `json:"bwd_seconds"`
}

// ReadAttentionBench reads kernelbench's attention and longattn sections
// (one JSON object a line; other sections' lines and failed cases are
// skipped). Errors name the line: a shape that is not positive, a case
// that does not say whether it is causal, a time that is not above 0.
func ReadAttentionBench(r io.Reader) ([]MeasuredAttention, error) {
	var out []MeasuredAttention
	err := lines.Each(r, func(n int, text string) error {
		var l attentionLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if (l.Kind != "attention" && l.Kind != "longattn") || l.Error != "" {
			return nil
		}
		if l.Backend == "" {
			return fmt.Errorf("line %d (%s): no backend", n, l.Name)
		}
		if l.Batch <= 0 || l.Heads <= 0 || l.Seq <= 0 || l.D <= 0 || l.DV <= 0 {
			return fmt.Errorf("line %d (%s): batch %d, heads %d, seq %d, head_dim %d, v_head_dim %d: want each above 0",
				n, l.Name, l.Batch, l.Heads, l.Seq, l.D, l.DV)
		}
		if l.Causal == nil {
			return fmt.Errorf("line %d (%s): no causal (true: the causal half; false: a full block)", n, l.Name)
		}
		var seqK int
		if l.SeqK != nil {
			seqK = *l.SeqK
			if seqK <= 0 {
				return fmt.Errorf("line %d (%s): seq_k %d: want above 0", n, l.Name, seqK)
			}
			if *l.Causal && seqK != l.Seq {
				return fmt.Errorf("line %d (%s): causal with seq %d and seq_k %d: want a causal call square", n, l.Name, l.Seq, seqK)
			}
		}
		for _, v := range []struct {
			name string
			v    *float64
		}{{"fwd_seconds", l.Fwd}, {"bwd_seconds", l.Bwd}} {
			if v.v == nil {
				return fmt.Errorf("line %d (%s): no %s", n, l.Name, v.name)
			}
			if !(*v.v > 0) || math.IsInf(*v.v, 0) {
				return fmt.Errorf("line %d (%s): %s %v: want a time above 0", n, l.Name, v.name, *v.v)
			}
		}
		out = append(out, MeasuredAttention{Name: l.Name, Backend: l.Backend, Batch: l.Batch, Heads: l.Heads, Seq: l.Seq, SeqK: seqK,
			HeadDim: l.D, VHeadDim: l.DV, Causal: *l.Causal, Fwd: *l.Fwd, Bwd: *l.Bwd})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FitAttention fits backend's Attention to the measured cases of
// that backend: per direction, one rate per head dimension measured,
// Beta, Tail and T0, minimising the sum of squared relative errors (a
// linear least squares in 1/R, Beta, Tail and T0: each case's equation
// divided by its measured time). A Beta, Tail or T0 that comes out below
// 0 is set to 0 and the rest refitted (a kernel does not get faster as
// it is given more). A head dimension needs at least one case; the fit
// needs more cases than unknowns.
func FitAttention(ms []MeasuredAttention, backend string) (Attention, error) {
	var use []MeasuredAttention
	for _, m := range ms {
		if m.Backend == backend {
			use = append(use, m)
		}
	}
	if len(use) == 0 {
		return Attention{}, fmt.Errorf("no measured attention with backend %q", backend)
	}
	var dims []int
	for _, m := range use {
		if !slices.Contains(dims, m.HeadDim) {
			dims = append(dims, m.HeadDim)
		}
	}
	slices.Sort(dims)
	k := Attention{Backend: backend}
	var err error
	if k.Fwd, err = fitRate(use, dims, 1, func(m MeasuredAttention) float64 { return m.Fwd }); err != nil {
		return Attention{}, fmt.Errorf("%s forward: %w", backend, err)
	}
	if k.Bwd, err = fitRate(use, dims, 2.5, func(m MeasuredAttention) float64 { return m.Bwd }); err != nil {
		return Attention{}, fmt.Errorf("%s backward: %w", backend, err)
	}
	return k, nil
}

// FitFullBlocks fits backend's measured full blocks alone (its cases
// without a causal mask) as FitAttention fits every case: per direction
// one rate per head dimension measured, Beta and T0 (no Tail: a full
// block has no causal tail). An error where backend has no full block
// measured, or too few for the unknowns.
func FitFullBlocks(ms []MeasuredAttention, backend string) (fwd, bwd AttentionRate, err error) {
	var full []MeasuredAttention
	for _, m := range ms {
		if !m.Causal {
			full = append(full, m)
		}
	}
	k, err := FitAttention(full, backend)
	if err != nil {
		return AttentionRate{}, AttentionRate{}, fmt.Errorf("full blocks: %w", err)
	}
	return k.Fwd, k.Bwd, nil
}

// fitRate is one direction's fit: its FLOPs are mul times the forward's.
func fitRate(ms []MeasuredAttention, dims []int, mul float64, secs func(MeasuredAttention) float64) (AttentionRate, error) {
	// The terms beside the rates: Beta, Tail, T0, each in the fit until
	// it comes out below 0; Tail only where a case is causal (full blocks
	// alone leave its column zero).
	in := [3]bool{true, slices.ContainsFunc(ms, func(m MeasuredAttention) bool { return m.Causal }), true}
	for {
		cols := len(dims)
		for _, on := range in {
			if on {
				cols++
			}
		}
		if len(ms) <= cols {
			return AttentionRate{}, fmt.Errorf("%d cases for %d unknowns: want more cases", len(ms), cols)
		}
		a := mat.NewDense(len(ms), cols, nil)
		b := mat.NewVecDense(len(ms), nil)
		for i, m := range ms {
			t, x := secs(m), m.Call(mul)
			a.Set(i, slices.Index(dims, m.HeadDim), x.Flops/t)
			c := len(dims)
			for j, v := range [3]float64{x.Elems, x.Tail, 1} {
				if in[j] {
					a.Set(i, c, v/t)
					c++
				}
			}
			b.SetVec(i, 1)
		}
		var x mat.VecDense
		if err := x.SolveVec(a, b); err != nil {
			return AttentionRate{}, err
		}
		r := AttentionRate{HeadDims: dims}
		for i := range dims {
			if !(x.AtVec(i) > 0) {
				return AttentionRate{}, fmt.Errorf("head dimension %d: no positive rate fits", dims[i])
			}
			r.Rates = append(r.Rates, 1/x.AtVec(i))
		}
		terms := [3]*float64{&r.Beta, &r.Tail, &r.T0}
		c, neg := len(dims), -1
		for j := range in {
			if in[j] {
				*terms[j] = x.AtVec(c)
				c++
				if neg < 0 && *terms[j] < 0 {
					neg = j
				}
			}
		}
		if neg < 0 {
			return r, nil
		}
		in[neg] = false
	}
}

// Check is the kernel's error on each measured case of its backend,
// predicted/measured - 1, forward and backward.
func (k *Attention) Check(ms []MeasuredAttention) (fwd, bwd []float64, err error) {
	for _, m := range ms {
		if m.Backend != k.Backend {
			continue
		}
		fwd = append(fwd, k.Fwd.Time(m.Call(1))/m.Fwd-1)
		bwd = append(bwd, k.Bwd.Time(m.Call(2.5))/m.Bwd-1)
	}
	if len(fwd) == 0 {
		return nil, nil, errors.New("no measured attention with backend " + k.Backend)
	}
	return fwd, bwd, nil
}
