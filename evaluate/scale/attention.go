package scale

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

// AttentionKernel is a fused causal attention kernel's time by shape, one
// fit per direction, from measurements of the kernel (kernelbench's
// attention section; FitAttention).
type AttentionKernel struct {
	// Backend names the kernel measured: "cudnn" (cuDNN's fused
	// attention through torch's SDPA, what Transformer Engine runs on
	// sm90) or "flash" (torch's own flash kernel).
	Backend  string
	Fwd, Bwd AttentionRate
}

// AttentionRate is one direction of a fused attention kernel:
//
//	t = F / R(d) + Beta * E + T0
//
// F the call's FLOPs (forward: the causal half of Q K^T and P V, 2 b h s^2
// (dqk + dv) / 2 as the attention benchmarks count them; backward 2.5
// times that), d the query and key head dimension, E the call's query
// elements b h s (dqk + dv) and T0 what a call costs whatever its size.
// F / R is the tiles' arithmetic; Beta * E the work of each block of
// queries that does not grow with the keys it meets (loading Q, the
// softmax's rescaling and writing O, forward; dO, O and the row sums,
// backward); T0 the launch and the last wave's tail. A small shard (a
// tensor-parallel GPU's few heads) is further from the rate than a
// benchmark's 16 heads by 16K tokens.
type AttentionRate struct {
	// HeadDims are the head dimensions measured, ascending; Rates the
	// FLOP/s at each. Between two, 1/R is interpolated linearly in d;
	// outside, the nearest is taken.
	HeadDims []int
	Rates    []float64
	// Beta is seconds per query element, T0 seconds per call.
	Beta, T0 float64
}

// time is the kernel's time for flops at head dimension d over elems
// query elements.
func (r *AttentionRate) time(flops, elems float64, d int) float64 {
	return flops/r.rate(d) + r.Beta*elems + r.T0
}

// rate is R(d).
func (r *AttentionRate) rate(d int) float64 {
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

// MeasuredAttention is one case of kernelbench's attention section: a
// causal attention of Batch x Heads queries of Seq tokens, Q and K of
// HeadDim, V of VHeadDim, timed forward and backward (seconds) with one
// backend.
type MeasuredAttention struct {
	Name              string
	Backend           string
	Batch, Heads, Seq int
	HeadDim, VHeadDim int
	Fwd, Bwd          float64
}

// flops is the case's forward FLOPs (AttentionRate's F).
func (m MeasuredAttention) flops() float64 {
	s := float64(m.Seq)
	return float64(m.Batch) * float64(m.Heads) * s * s * float64(m.HeadDim+m.VHeadDim)
}

// elems is the case's query elements (AttentionRate's E).
func (m MeasuredAttention) elems() float64 {
	return float64(m.Batch) * float64(m.Heads) * float64(m.Seq) * float64(m.HeadDim+m.VHeadDim)
}

type attentionLine struct {
	Kind    string   `json:"kind"`
	Name    string   `json:"name"`
	Error   string   `json:"error"`
	Backend string   `json:"backend"`
	Batch   int      `json:"batch"`
	Heads   int      `json:"heads"`
	Seq     int      `json:"seq"`
	D       int      `json:"head_dim"`
	DV      int      `json:"v_head_dim"`
	Causal  *bool    `json:"causal"`
	Fwd     *float64 `json:"fwd_seconds"`
	Bwd     *float64 `json:"bwd_seconds"`
}

// ReadAttentionBench reads kernelbench's attention section (one JSON
// object a line; other sections' lines and failed cases are skipped).
// Errors name the line: a shape that is not positive, a case that is not
// causal, a time that is not above 0.
func ReadAttentionBench(r io.Reader) ([]MeasuredAttention, error) {
	var out []MeasuredAttention
	err := lines.Each(r, func(n int, text string) error {
		var l attentionLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if l.Kind != "attention" || l.Error != "" {
			return nil
		}
		if l.Backend == "" {
			return fmt.Errorf("line %d (%s): no backend", n, l.Name)
		}
		if l.Batch <= 0 || l.Heads <= 0 || l.Seq <= 0 || l.D <= 0 || l.DV <= 0 {
			return fmt.Errorf("line %d (%s): batch %d, heads %d, seq %d, head_dim %d, v_head_dim %d: want each above 0",
				n, l.Name, l.Batch, l.Heads, l.Seq, l.D, l.DV)
		}
		if l.Causal == nil || !*l.Causal {
			return fmt.Errorf("line %d (%s): not causal (the fits are of causal attention)", n, l.Name)
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
		out = append(out, MeasuredAttention{Name: l.Name, Backend: l.Backend, Batch: l.Batch, Heads: l.Heads, Seq: l.Seq,
			HeadDim: l.D, VHeadDim: l.DV, Fwd: *l.Fwd, Bwd: *l.Bwd})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FitAttention fits backend's AttentionKernel to the measured cases of
// that backend: per direction, one rate per head dimension measured, Beta
// and T0, minimising the sum of squared relative errors (a linear least
// squares in 1/R, Beta and T0: each case's equation divided by its
// measured time). A Beta or T0 that comes out below 0 is set to 0 and the
// rest refitted (a kernel does not get faster as it is given more). A
// head dimension needs at least one case; the fit needs more cases than
// unknowns.
func FitAttention(ms []MeasuredAttention, backend string) (AttentionKernel, error) {
	var use []MeasuredAttention
	for _, m := range ms {
		if m.Backend == backend {
			use = append(use, m)
		}
	}
	if len(use) == 0 {
		return AttentionKernel{}, fmt.Errorf("no measured attention with backend %q", backend)
	}
	var dims []int
	for _, m := range use {
		if !slices.Contains(dims, m.HeadDim) {
			dims = append(dims, m.HeadDim)
		}
	}
	slices.Sort(dims)
	k := AttentionKernel{Backend: backend}
	var err error
	if k.Fwd, err = fitRate(use, dims, 1, func(m MeasuredAttention) float64 { return m.Fwd }); err != nil {
		return AttentionKernel{}, fmt.Errorf("%s forward: %w", backend, err)
	}
	if k.Bwd, err = fitRate(use, dims, 2.5, func(m MeasuredAttention) float64 { return m.Bwd }); err != nil {
		return AttentionKernel{}, fmt.Errorf("%s backward: %w", backend, err)
	}
	return k, nil
}

// fitRate is one direction's fit: its FLOPs are mul times the forward's.
func fitRate(ms []MeasuredAttention, dims []int, mul float64, secs func(MeasuredAttention) float64) (AttentionRate, error) {
	beta, t0 := true, true
	for {
		cols := len(dims)
		if beta {
			cols++
		}
		if t0 {
			cols++
		}
		if len(ms) <= cols {
			return AttentionRate{}, fmt.Errorf("%d cases for %d unknowns: want more cases", len(ms), cols)
		}
		a := mat.NewDense(len(ms), cols, nil)
		b := mat.NewVecDense(len(ms), nil)
		for i, m := range ms {
			t := secs(m)
			a.Set(i, slices.Index(dims, m.HeadDim), mul*m.flops()/t)
			c := len(dims)
			if beta {
				a.Set(i, c, m.elems()/t)
				c++
			}
			if t0 {
				a.Set(i, c, 1/t)
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
		c := len(dims)
		if beta {
			r.Beta = x.AtVec(c)
			c++
		}
		if t0 {
			r.T0 = x.AtVec(c)
		}
		switch {
		case beta && r.Beta < 0:
			beta = false
		case t0 && r.T0 < 0:
			t0 = false
		default:
			return r, nil
		}
	}
}

// Check is the kernel's error on each measured case of its backend,
// predicted/measured - 1, forward and backward.
func (k *AttentionKernel) Check(ms []MeasuredAttention) (fwd, bwd []float64, err error) {
	for _, m := range ms {
		if m.Backend != k.Backend {
			continue
		}
		f, e := m.flops(), m.elems()
		fwd = append(fwd, k.Fwd.time(f, e, m.HeadDim)/m.Fwd-1)
		bwd = append(bwd, k.Bwd.time(2.5*f, e, m.HeadDim)/m.Bwd-1)
	}
	if len(fwd) == 0 {
		return nil, nil, errors.New("no measured attention with backend " + k.Backend)
	}
	return fwd, bwd, nil
}

// AttentionCheck is one measured attention case against the pod's fit of
// the same backend, seconds.
type AttentionCheck struct {
	Name         string  `json:"name"`
	Backend      string  `json:"backend"`
	Heads        int     `json:"heads"`
	HeadDim      int     `json:"head_dim"`
	Seq          int     `json:"seq"`
	Batch        int     `json:"batch"`
	FwdMeasured  float64 `json:"fwd_measured_s"`
	FwdPredicted float64 `json:"fwd_predicted_s"`
	BwdMeasured  float64 `json:"bwd_measured_s"`
	BwdPredicted float64 `json:"bwd_predicted_s"`
}

// CheckAttention predicts each measured case with pod p's attention
// kernel of its backend (Kernels.Attention). A backend p has not
// measured is an error naming those it has.
func CheckAttention(ms []MeasuredAttention, p *Pod) ([]AttentionCheck, error) {
	out := make([]AttentionCheck, len(ms))
	for i, m := range ms {
		k, err := p.Kernels.withAttention(m.Backend)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if len(k.Attention) == 0 {
			return nil, fmt.Errorf("%s: the pod has no measured attention kernel", m.Name)
		}
		a := k.Attention[0]
		f, e := m.flops(), m.elems()
		out[i] = AttentionCheck{Name: m.Name, Backend: m.Backend, Heads: m.Heads, HeadDim: m.HeadDim, Seq: m.Seq, Batch: m.Batch,
			FwdMeasured: m.Fwd, FwdPredicted: a.Fwd.time(f, e, m.HeadDim),
			BwdMeasured: m.Bwd, BwdPredicted: a.Bwd.time(2.5*f, e, m.HeadDim)}
	}
	return out, nil
}
