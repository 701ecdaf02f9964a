package hw

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// TestFromProfileRecoversLaunch: calibrate --from-profile on a synthetic
// profiled graph whose op times were made by the roofline formula from
// hand-set efficiencies and launch time recovers them. The truth is the
// h100 preset with a 4 us launch and, per class, compute and memory
// efficiencies of
//
//	matmul 0.70, 0.60; conv 0.55, 0.45; elementwise 0.30, 0.85;
//	reduction 0.40, 0.75
//
// (the preset's own: launch 5 us and other efficiencies, the fit's
// start). Each class has 14 ops, at 7 sizes (1 KB to 1 GB of memory
// traffic) each compute-bound (10x the arithmetic intensity at which the
// class's compute and memory times meet) and memory-bound (a tenth of
// it); the small ones are mostly launch. For example an f16 matmul of
// 1 MB at a tenth of that intensity: 1e6 B / (3.35e12 B/s x 0.60) =
// 0.497 us of memory against 0.050 us of compute, so 4 + 0.497 = 4.497 us
// measured. The times are exact, so the fit's only error is its prior's
// pull toward the preset's efficiencies (fitPrior = 1e-3 times the
// squared log of their ratio, against a data term of several kernels
// bound by each resource: about 1e-4 relative) and the searches'
// resolution (golden sections to 1e-7 in log): a tolerance of 1% on each
// efficiency and on the launch time is thirty times that (0.03% at most
// when recorded); the RMS log error of the fitted times must fall below
// 0.5%. With noise, every time multiplied by e^0.05 or e^-0.05 (in a
// pattern that gives each class and each resource both signs), each
// value the fit recovers is a weighted mean of log ratios that are all
// within 0.05 of the truth's, so it is within about 5% (1.3% at most
// when recorded), and the RMS log error of the fit is about the
// noise's, 0.05 (the truth's own; 0.051 allowed, for the efficiencies'
// fit weighing kernels by the share of their time that is not launch).
func TestFromProfileRecoversLaunch(t *testing.T) {
	for _, tc := range []struct {
		noise, tol, rms float64
	}{{0, 0.01, 0.005}, {0.05, 0.05, 0.051}} {
		t.Run(fmt.Sprintf("noise %g", tc.noise), func(t *testing.T) { recoverLaunch(t, tc.noise, tc.tol, tc.rms) })
	}
}

func recoverLaunch(t *testing.T, noise, tol, maxRMS float64) {
	truth, err := roofline.Preset("h100")
	if err != nil {
		t.Fatal(err)
	}
	truth.Launch = 4e-6
	type eff struct {
		class        graph.Class
		dtype        graph.DType
		compute, mem float64
		typ          string
	}
	effs := []eff{
		{graph.ClassMatMul, graph.F16, 0.70, 0.60, "mm"},
		{graph.ClassConv, graph.F16, 0.55, 0.45, "conv2d"},
		{graph.ClassElementwise, graph.F32, 0.30, 0.85, "add"},
		{graph.ClassReduction, graph.F32, 0.40, 0.75, "sum"},
	}
	for _, e := range effs {
		truth.ComputeEff[e.class], truth.MemEff[e.class] = e.compute, e.mem
	}
	b := graph.NewBuilder("synthetic-profile")
	nop := 0
	for _, e := range effs {
		peak := truth.PeakFLOPS(e.class, e.dtype)
		balance := peak * e.compute / (truth.MemBandwidth * e.mem) // FLOP/B where compute and memory meet
		for k := 3; k <= 9; k++ {
			bytes := math.Pow(10, float64(k))
			for _, intensity := range []float64{balance / 10, balance * 10} {
				flops := math.Round(intensity * bytes)
				kt := KernelTiming{Class: e.class, DType: e.dtype, TF32: truth.AllowTF32 && e.dtype == graph.F32 && (e.class == graph.ClassMatMul || e.class == graph.ClassConv),
					FLOPs: flops, Bytes: bytes}
				b.AddOp(graph.Op{Name: fmt.Sprintf("%s-%d-%g", e.typ, k, intensity), Type: e.typ, Class: e.class, DType: e.dtype,
					FLOPs: flops, BytesRead: int64(bytes) / 2, BytesWritten: int64(bytes) / 2, HasTime: true, Time: PredictKernel(&truth, kt) * math.Exp(noise*float64(1-2*((nop/2+nop)%2)))})
				nop++
			}
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gFile := filepath.Join(dir, "synthetic.json")
	var buf bytes.Buffer
	if err := graph.Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fitted.json")
	var stdout, report bytes.Buffer
	if err := CalibrateFromProfile(&stdout, &report, CalibrateOptions{FromProfile: gFile, Hardware: "h100", Out: out}); err != nil {
		t.Fatal(err)
	}
	fitted, err := roofline.LoadHardware(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", stdout.String())
	near := func(what string, got, want float64) {
		t.Helper()
		t.Logf("%s: %.6g, want %.6g (%+.4f%%)", what, got, want, 100*(got/want-1))
		if math.Abs(got/want-1) > tol {
			t.Errorf("%s: fitted %.6g, want %.6g within %g%%", what, got, want, 100*tol)
		}
	}
	near("launch", fitted.Launch, truth.Launch)
	for _, e := range effs {
		near(e.class.String()+" compute", fitted.ComputeEff[e.class], e.compute)
		near(e.class.String()+" memory", fitted.MemEff[e.class], e.mem)
	}
	rms := RMSLogError(&fitted, ProfileTimings(g, fitted))
	t.Logf("RMS log error %.5f", rms)
	if rms > maxRMS {
		t.Errorf("RMS log error of the fitted times %.4f, want at most %g", rms, maxRMS)
	}
}
