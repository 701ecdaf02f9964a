package hw

import (
	"fmt"
	"math"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// KernelTiming is one measured kernel, the input of FitEfficiencies.
type KernelTiming struct {
	Class graph.Class `json:"class"`
	DType graph.DType `json:"dtype"`
	// TF32 says an f32 GEMM ran on TF32 tensor cores: it is held against
	// the TF32 peak, other f32 kernels against the FP32 one.
	TF32    bool    `json:"tf32,omitempty"`
	Name    string  `json:"name"`    // what ran, e.g. "gemm fp16 4096x4096x4096"
	FLOPs   float64 `json:"flops"`   // arithmetic done
	Bytes   float64 `json:"bytes"`   // device memory read + written
	Seconds float64 `json:"seconds"` // measured time of one kernel, launch included
}

// ClassFit is the outcome of fitting one op class.
type ClassFit struct {
	Class      graph.Class `json:"class"`
	ComputeEff float64     `json:"compute_eff"`
	MemEff     float64     `json:"mem_eff"`
	// ComputeFitted and MemFitted say whether some measurement was bound
	// by that resource at the fit; an efficiency that was not fitted
	// keeps the base profile's value (raised, if the measurements show
	// the base was too pessimistic to explain them).
	ComputeFitted bool `json:"compute_fitted"`
	MemFitted     bool `json:"mem_fitted"`
	// Derived names the class this one was derived from ("" if measured
	// or kept): convolutions without measurements scale the matmul fit.
	Derived string `json:"derived,omitempty"`
	Samples int    `json:"samples"`
	// FasterThanPeak counts the class's measurements left out of the fit
	// because they took less time than their FLOPs and bytes take at the
	// hardware's peaks (efficiency 1, no launch): no efficiency Validate
	// accepts explains them. A few are a profile's events matched to the
	// wrong op (torchexport --profile) or data served from L2; most of a
	// class, a preset whose peaks are not the GPU's (an H200 profiled
	// against h100's 3.35 TB/s).
	FasterThanPeak int `json:"faster_than_peak,omitempty"`
	// RMSRelErr is the root mean square of predicted/measured - 1 over
	// the class's measurements with the fitted efficiencies.
	RMSRelErr float64 `json:"rms_rel_err"`
}

// Efficiency bounds of the fit, those Hardware.Validate accepts: the
// presets' peaks are the datasheets' at boost clock, so a kernel faster
// than they allow is not evidence of an efficiency above 1 but of a
// wrong measurement or a wrong preset (ClassFit.FasterThanPeak): such
// kernels are left out of the fit, and what is left is fitted up to 1.
const (
	minEff = 0.001
	maxEff = 1.0
)

// fasterThanPeak says that t took less time than its FLOPs and bytes
// take on h at efficiency 1 without launch overhead.
func fasterThanPeak(h *roofline.Hardware, t KernelTiming) bool {
	floor := t.Bytes / h.MemBandwidth
	if t.FLOPs > 0 {
		hh := *h
		hh.AllowTF32 = t.TF32
		floor = math.Max(floor, t.FLOPs/hh.PeakFLOPS(t.Class, t.DType))
	}
	return t.Seconds < floor
}

// FitEfficiencies fits, per op class, the compute and memory efficiencies
// of hardware h to measured kernel times under the roofline model the
// simulator uses:
//
//	t = Launch + max(FLOPs / (PeakFLOPS(class, dtype) * ComputeEff[class]),
//	                 Bytes / (MemBandwidth * MemEff[class]))
//
// minimizing the squared log error of the predicted times (so that small
// and large kernels weigh alike, except that kernels whose time is mostly
// launch overhead weigh less) by coordinate descent over both
// efficiencies. Launch, the peaks and the bandwidth are taken as given
// (from the preset or from placer hw bench). Kernels faster than the
// peaks allow are left out (ClassFit.FasterThanPeak; FasterThanPeakNote
// says so). Classes without measurements
// keep h's efficiencies, except convolutions, whose compute efficiency
// scales with the matmul fit (h's conv/matmul ratio) when only matmuls
// were measured. It returns the updated hardware and one ClassFit per
// class.
func FitEfficiencies(h roofline.Hardware, ts []KernelTiming) (roofline.Hardware, []ClassFit, error) {
	if h.MemBandwidth <= 0 {
		return h, nil, fmt.Errorf("hw: fit: hardware %q has no memory bandwidth", h.Name)
	}
	byClass := make([][]KernelTiming, graph.NumClasses)
	faster := make([]int, graph.NumClasses)
	for i, t := range ts {
		if int(t.Class) >= graph.NumClasses {
			return h, nil, fmt.Errorf("hw: fit: timing %d (%s): class %d out of range", i, t.Name, t.Class)
		}
		if !(t.Seconds > 0) || math.IsInf(t.Seconds, 0) || t.FLOPs < 0 || t.Bytes < 0 || math.IsNaN(t.FLOPs) || math.IsNaN(t.Bytes) {
			return h, nil, fmt.Errorf("hw: fit: timing %d (%s): seconds, flops and bytes must be finite, seconds positive", i, t.Name)
		}
		if t.FLOPs == 0 && t.Bytes == 0 {
			continue // an empty kernel says nothing about efficiency
		}
		if fasterThanPeak(&h, t) {
			faster[t.Class]++
			continue
		}
		byClass[t.Class] = append(byClass[t.Class], t)
	}
	out := h
	fits := make([]ClassFit, graph.NumClasses)
	for c := range fits {
		cl := graph.Class(c)
		fits[c] = ClassFit{Class: cl, ComputeEff: h.ComputeEff[c], MemEff: h.MemEff[c], FasterThanPeak: faster[c]}
		if len(byClass[c]) == 0 {
			continue
		}
		f := fitClass(&h, cl, byClass[c])
		f.FasterThanPeak = faster[c]
		fits[c] = f
		out.ComputeEff[c], out.MemEff[c] = f.ComputeEff, f.MemEff
	}
	mm, cv := graph.ClassMatMul, graph.ClassConv
	if len(byClass[cv]) == 0 && fits[mm].ComputeFitted && h.ComputeEff[mm] > 0 {
		e := clampEff(fits[mm].ComputeEff * h.ComputeEff[cv] / h.ComputeEff[mm])
		out.ComputeEff[cv] = e
		fits[cv].ComputeEff = e
		fits[cv].Derived = "matmul"
	}
	if out.ComputeEff[cv] != h.ComputeEff[cv] {
		out.DenseConvEff = 0 // the calibrated convolution efficiency stands for every convolution
	}
	if err := out.Validate(); err != nil {
		return h, nil, err
	}
	return out, fits, nil
}

type fitSample struct{ x, y, t float64 } // seconds at efficiency 1, measured seconds

func fitClass(h *roofline.Hardware, c graph.Class, ts []KernelTiming) ClassFit {
	ss := make([]fitSample, len(ts))
	lbC, lbM := 0.0, 0.0 // efficiencies below these cannot explain the times
	for i, t := range ts {
		s := fitSample{t: t.Seconds, y: t.Bytes / h.MemBandwidth}
		if t.FLOPs > 0 {
			hh := *h
			hh.AllowTF32 = t.TF32
			s.x = t.FLOPs / hh.PeakFLOPS(c, t.DType)
		}
		ss[i] = s
		d := math.Max(t.Seconds-h.Launch, t.Seconds*1e-3)
		lbC = math.Max(lbC, s.x/d)
		lbM = math.Max(lbM, s.y/d)
	}
	ce := clampEff(math.Max(lbC, h.ComputeEff[c]*0.5))
	me := clampEff(math.Max(lbM, h.MemEff[c]*0.5))
	hasC, hasM := lbC > 0, lbM > 0
	L := &loss{ss: ss, launch: h.Launch, ce0: h.ComputeEff[c], me0: h.MemEff[c]}
	for iter := 0; iter < 30; iter++ {
		oc, om := ce, me
		if hasC {
			ce = minimize1D(func(e float64) float64 { return L.at(e, me) })
		}
		if hasM {
			me = minimize1D(func(e float64) float64 { return L.at(ce, e) })
		}
		if math.Abs(ce-oc) < 1e-7*oc && math.Abs(me-om) < 1e-7*om {
			break
		}
	}
	f := ClassFit{Class: c, Samples: len(ts)}
	// A resource counts as fitted when at least two measurements (all, if
	// fewer) are clearly bound by it at the fit (its term 10% above the
	// other): one borderline kernel bound by it is how the fit overfits
	// noise with a free parameter.
	need := min(2, len(ss))
	nc, nm := 0, 0
	for _, s := range ss {
		tc, tm := s.x/ce, s.y/me
		if s.x > 0 && tc > 1.1*tm {
			nc++
		}
		if s.y > 0 && tm > 1.1*tc {
			nm++
		}
	}
	f.ComputeFitted, f.MemFitted = hasC && nc >= need, hasM && nm >= need
	// A resource no measurement is bound by is unidentified: any value
	// above the bound the measurements set fits them equally well. Keep
	// the base value unless it is below that bound, and refit the other.
	switch {
	case !f.ComputeFitted && !f.MemFitted:
		ce = clampEff(math.Max(h.ComputeEff[c], lbC))
		me = clampEff(math.Max(h.MemEff[c], lbM))
	case !f.ComputeFitted:
		ce = clampEff(math.Max(h.ComputeEff[c], lbC))
		me = minimize1D(func(e float64) float64 { return L.at(ce, e) })
	case !f.MemFitted:
		me = clampEff(math.Max(h.MemEff[c], lbM))
		ce = minimize1D(func(e float64) float64 { return L.at(e, me) })
	}
	f.ComputeEff, f.MemEff = ce, me
	var se float64
	for _, s := range ss {
		r := (h.Launch+math.Max(s.x/ce, s.y/me))/s.t - 1
		se += r * r
	}
	f.RMSRelErr = math.Sqrt(se / float64(len(ss)))
	return f
}

// fitPrior weighs a weak pull of the efficiencies toward the base
// profile's. It matters only where the data cannot tell (a class whose
// kernels all have one arithmetic intensity is explained as well by a
// tiny compute efficiency as by the right memory efficiency); elsewhere
// its bias is far below the measurement noise.
const fitPrior = 1e-3

// loss is the weighted squared log error of the predicted times plus the
// prior. A sample's weight is the square of the fraction of its time the
// launch overhead does not explain: kernels that are mostly launch say
// little about efficiency, and their noise would otherwise dominate.
type loss struct {
	ss       []fitSample
	launch   float64
	ce0, me0 float64 // base efficiencies
}

func (l *loss) at(ce, me float64) float64 {
	v := 0.0
	for _, s := range l.ss {
		d := math.Log(l.launch+math.Max(s.x/ce, s.y/me)) - math.Log(s.t)
		w := math.Max(s.t-l.launch, 0) / s.t
		v += w * w * d * d
	}
	if l.ce0 > 0 {
		v += fitPrior * math.Pow(math.Log(ce/l.ce0), 2)
	}
	if l.me0 > 0 {
		v += fitPrior * math.Pow(math.Log(me/l.me0), 2)
	}
	return v
}

// minimize1D minimizes f over [minEff, maxEff] on a log grid, then
// refines around the best grid point by golden-section search.
func minimize1D(f func(float64) float64) float64 {
	const n = 240
	lo, hi := math.Log(minEff), math.Log(maxEff)
	step := (hi - lo) / n
	best, bestV := lo, math.Inf(1)
	for i := 0; i <= n; i++ {
		x := lo + float64(i)*step
		if v := f(math.Exp(x)); v < bestV {
			best, bestV = x, v
		}
	}
	a, b, _, _ := goldenLog(math.Max(lo, best-step), math.Min(hi, best+step), 60, f, func(v float64) float64 { return v })
	x := (a + b) / 2
	if f(math.Exp(x)) > bestV {
		x = best
	}
	return math.Exp(x)
}

// goldenLog narrows [a, b], logarithms of positive arguments, by iters
// steps of golden-section search for the minimum of value(f(exp(x))),
// and returns the last bracket and f at its two inner points.
func goldenLog[T any](a, b float64, iters int, f func(float64) T, value func(T) float64) (lo, hi float64, fc, fd T) {
	g := (math.Sqrt(5) - 1) / 2
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd = f(math.Exp(c)), f(math.Exp(d))
	for range iters {
		if value(fc) <= value(fd) {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = f(math.Exp(c))
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = f(math.Exp(d))
		}
	}
	return a, b, fc, fd
}

func clampEff(e float64) float64 { return math.Min(maxEff, math.Max(minEff, e)) }

// FasterThanPeakNote is the note calibrate prints when fits left some
// kernels out as faster than h's peaks allow (ClassFit.FasterThanPeak),
// or "" when none was: how many of each class, and, where the kernels
// were measured on a GPU whose own preset is not h's (device, as the
// profile names it), that preset.
func FasterThanPeakNote(fits []ClassFit, h *roofline.Hardware, device string) string {
	var parts []string
	n, all := 0, 0
	for _, f := range fits {
		all += f.Samples + f.FasterThanPeak
		if f.FasterThanPeak > 0 {
			n += f.FasterThanPeak
			parts = append(parts, fmt.Sprintf("%s %d of %d", f.Class, f.FasterThanPeak, f.Samples+f.FasterThanPeak))
		}
	}
	if n == 0 {
		return ""
	}
	why := "a profile's event matched to the wrong op, or data served from L2"
	if own, ok := PresetFor(device); ok && !strings.EqualFold(own, h.Name) {
		why = fmt.Sprintf("the kernels ran on %s, whose preset is %s, not %s: calibrate with --hardware %s", device, own, h.Name, own)
	}
	return fmt.Sprintf("%d of %d measured kernels ran faster than %s's peaks allow (%s): left out of the fit (%s)",
		n, all, h.Name, strings.Join(parts, ", "), why)
}
