package hw

import (
	"bytes"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// synthetic makes kernel timings of class c that follow the roofline
// model of h with efficiencies ce, me, times (1 + noise*N(0,1)).
func synthetic(h roofline.Hardware, c graph.Class, dt graph.DType, ce, me, noise float64, rng *rand.Rand, ks [][2]float64) []KernelTiming {
	var ts []KernelTiming
	for _, k := range ks {
		flops, bytes := k[0], k[1]
		t := h.Launch + math.Max(flops/(h.PeakFLOPS(c, dt)*ce), bytes/(h.MemBandwidth*me))
		t *= 1 + noise*rng.NormFloat64()
		ts = append(ts, KernelTiming{Class: c, DType: dt, Name: c.String(), FLOPs: flops, Bytes: bytes, Seconds: t})
	}
	return ts
}

func gemmSizes() [][2]float64 {
	var ks [][2]float64
	for _, d := range []float64{1024, 1536, 2048, 3072, 4096, 8192} {
		ks = append(ks, [2]float64{2 * d * d * d, 3 * d * d * 2})
	}
	return ks
}

func streamSizes(flopsPerByte float64) [][2]float64 {
	var ks [][2]float64
	for _, e := range []float64{1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26} {
		ks = append(ks, [2]float64{flopsPerByte * 8 * e, 8 * e})
	}
	return ks
}

var fitSeed int64 = 7

func TestFitRecoversEfficiencies(t *testing.T) {
	h, _ := roofline.Preset("h100")
	rng := rand.New(rand.NewSource(fitSeed))
	var ts []KernelTiming
	ts = append(ts, synthetic(h, graph.ClassMatMul, graph.F16, 0.62, 0.9, 0.02, rng, gemmSizes())...)
	ts = append(ts, synthetic(h, graph.ClassElementwise, graph.F32, 0.4, 0.88, 0.02, rng, streamSizes(0.25))...)
	// FMA-bound elementwise kernels pin its compute efficiency.
	ts = append(ts, synthetic(h, graph.ClassElementwise, graph.F32, 0.4, 0.88, 0.02, rng, [][2]float64{{2 * 64 * (1 << 22), 8 << 22}, {2 * 256 * (1 << 22), 8 << 22}})...)
	ts = append(ts, synthetic(h, graph.ClassReduction, graph.F32, 0.5, 0.7, 0.02, rng, streamSizes(0.1))...)
	ts = append(ts, synthetic(h, graph.ClassEmbedding, graph.F32, 0.5, 0.35, 0.02, rng, streamSizes(0))...)
	out, fits, err := FitEfficiencies(h, ts)
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got/want-1) > tol {
			t.Errorf("%s = %.4f, want %.4f (±%.0f%%)", name, got, want, 100*tol)
		}
	}
	near("matmul compute", out.ComputeEff[graph.ClassMatMul], 0.62, 0.04)
	near("elementwise mem", out.MemEff[graph.ClassElementwise], 0.88, 0.04)
	near("elementwise compute", out.ComputeEff[graph.ClassElementwise], 0.4, 0.05)
	near("reduction mem", out.MemEff[graph.ClassReduction], 0.7, 0.06)
	near("embedding mem", out.MemEff[graph.ClassEmbedding], 0.35, 0.04)
	f := fits[graph.ClassMatMul]
	if !f.ComputeFitted || f.MemFitted || f.Samples != 6 || f.RMSRelErr > 0.05 {
		t.Errorf("matmul fit %+v: compute-bound GEMMs fit compute only", f)
	}
	// Unidentified: the matmul memory efficiency keeps the base value.
	if out.MemEff[graph.ClassMatMul] != h.MemEff[graph.ClassMatMul] {
		t.Errorf("matmul mem eff %v, want the base %v", out.MemEff[graph.ClassMatMul], h.MemEff[graph.ClassMatMul])
	}
	// Convolutions scale with the matmul fit.
	wantConv := out.ComputeEff[graph.ClassMatMul] * h.ComputeEff[graph.ClassConv] / h.ComputeEff[graph.ClassMatMul]
	if fc := fits[graph.ClassConv]; fc.Derived != "matmul" || math.Abs(out.ComputeEff[graph.ClassConv]-wantConv) > 1e-12 {
		t.Errorf("conv %+v, eff %v want %v", fc, out.ComputeEff[graph.ClassConv], wantConv)
	}
	if fu := fits[graph.ClassUnknown]; fu.Samples != 0 || out.ComputeEff[graph.ClassUnknown] != h.ComputeEff[graph.ClassUnknown] {
		t.Errorf("unknown class changed: %+v", fu)
	}
	if fd := fits[graph.ClassDataMovement]; fd.Samples != 0 {
		t.Errorf("datamove has no samples: %+v", fd)
	}
}

func TestFitTF32AgainstTF32Peak(t *testing.T) {
	h, _ := roofline.Preset("a100") // AllowTF32 false
	rng := rand.New(rand.NewSource(3))
	ht := h
	ht.AllowTF32 = true
	ts := synthetic(ht, graph.ClassMatMul, graph.F32, 0.7, 0.9, 0, rng, gemmSizes())
	for i := range ts {
		ts[i].TF32 = true
	}
	out, _, err := FitEfficiencies(h, ts)
	if err != nil {
		t.Fatal(err)
	}
	if e := out.ComputeEff[graph.ClassMatMul]; math.Abs(e-0.7) > 0.01 {
		t.Fatalf("TF32 GEMMs fitted %v, want 0.7 (against the TF32 peak)", e)
	}
}

func TestFitRaisesTooPessimisticBase(t *testing.T) {
	h, _ := roofline.Preset("v100")
	h.MemEff[graph.ClassMatMul] = 0.01 // would make the GEMMs memory-bound
	rng := rand.New(rand.NewSource(1))
	ts := synthetic(h, graph.ClassMatMul, graph.F16, 0.7, 0.9, 0, rng, gemmSizes())
	out, fits, err := FitEfficiencies(h, ts)
	if err != nil {
		t.Fatal(err)
	}
	if f := fits[graph.ClassMatMul]; math.Abs(f.ComputeEff-0.7) > 0.02 || f.RMSRelErr > 0.02 {
		t.Fatalf("fit %+v", f)
	}
	if out.MemEff[graph.ClassMatMul] <= 0.01 {
		t.Fatal("memory efficiency not raised to what the timings imply")
	}
}

func TestFitErrors(t *testing.T) {
	h, _ := roofline.Preset("v100")
	for _, ts := range [][]KernelTiming{
		{{Class: graph.ClassMatMul, FLOPs: 1, Seconds: -1}},
		{{Class: graph.ClassMatMul, FLOPs: math.NaN(), Seconds: 1}},
		{{Class: graph.Class(99), FLOPs: 1, Seconds: 1}},
	} {
		if _, _, err := FitEfficiencies(h, ts); err == nil {
			t.Errorf("accepted %+v", ts)
		}
	}
	out, fits, err := FitEfficiencies(h, []KernelTiming{{Class: graph.ClassMatMul, Seconds: 1e-6}})
	if err != nil || out.ComputeEff != h.ComputeEff || fits[graph.ClassMatMul].Samples != 0 {
		t.Fatalf("an empty kernel changed the fit: %v %+v", err, fits)
	}
}

func TestFinishCalibrationWritesProfile(t *testing.T) {
	h, _ := roofline.Preset("h100")
	rng := rand.New(rand.NewSource(5))
	run := CalibrationRun{GPU: "NVIDIA H100 80GB HBM3", MemoryTotal: 85e9, Launch: 3e-6,
		Timings: synthetic(h, graph.ClassMatMul, graph.BF16, 0.66, 0.9, 0.01, rng, gemmSizes()),
		Notes:   []string{"convolutions are not measured"}}
	hh, base, err := calibrationBase("", run.GPU)
	if err != nil || base != "h100" || hh.Name != "h100" {
		t.Fatalf("calibrationBase: %v %q", err, base)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "cal.json")
	var out, errw bytes.Buffer
	if err := finishCalibration(&out, &errw, CalibrateOptions{Out: path}, run, hh, base); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "matmul") || !strings.Contains(out.String(), "fitted") || !strings.Contains(out.String(), "note: convolutions") {
		t.Fatalf("fit table:\n%s", out.String())
	}
	got, err := roofline.LoadHardware(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Launch != 3e-6 || got.Memory != 85e9 || math.Abs(got.ComputeEff[graph.ClassMatMul]-0.66) > 0.02 || !strings.Contains(got.Source, "placer calibrate on NVIDIA H100") {
		t.Fatalf("profile %+v", got)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"base": "h100"`) {
		t.Fatalf("profile lacks its base:\n%s", data)
	}
	// Calibrating that profile again names its base too.
	if _, b2, err := calibrationBase(path, run.GPU); err != nil || b2 != "h100" {
		t.Fatalf("calibrationBase(file) = %q, %v", b2, err)
	}
	// Without --out: profile on stdout, table on stderr.
	out.Reset()
	errw.Reset()
	if err := finishCalibration(&out, &errw, CalibrateOptions{JSON: true}, run, hh, base); err != nil {
		t.Fatal(err)
	}
	if _, err := roofline.DecodeHardware(out.Bytes()); err != nil || !strings.Contains(errw.String(), `"fits"`) {
		t.Fatalf("stdout profile: %v; stderr %q", err, errw.String())
	}
	if _, _, err := calibrationBase("", "Some Future GPU"); err == nil {
		t.Fatal("unknown GPU without --hardware accepted")
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2, 10}
	if Median(xs) != 2.5 || xs[0] != 3 || Median([]float64{5, 1, 3}) != 3 || Median(nil) != 0 {
		t.Fatal("Median")
	}
}

// TestFitFasterThanPeak: kernels that take less time than their bytes
// take at the peak bandwidth are left out and counted, and the rest are
// fitted as before, within the efficiencies Validate accepts (the H100
// profiles of 2026-11-26 failed calibrate with "mem_eff[elementwise] =
// 1.5: want an efficiency from 0.001 to 1"). By hand, on the h100
// preset without launch overhead: five streaming kernels at 80% of 3.35
// TB/s and two at twice the peak bandwidth (a mismatched profile event):
// mem_eff 0.8, two left out. Kernels of an H200 (4.8 TB/s at 0.85)
// fitted against h100: most are faster than h100 allows, and the note
// names h200.
func TestFitFasterThanPeak(t *testing.T) {
	h, _ := roofline.Preset("h100")
	h.Launch = 0
	rng := rand.New(rand.NewSource(fitSeed))
	ts := synthetic(h, graph.ClassElementwise, graph.F32, 0.5, 0.8, 0, rng, streamSizes(0.25))
	for _, b := range []float64{1 << 26, 1 << 27} {
		ts = append(ts, KernelTiming{Class: graph.ClassElementwise, DType: graph.F32, Name: "mismatched", FLOPs: b / 4, Bytes: b,
			Seconds: b / h.MemBandwidth / 2})
	}
	out, fits, err := FitEfficiencies(h, ts)
	if err != nil {
		t.Fatalf("fit: %v", err)
	}
	f := fits[graph.ClassElementwise]
	if f.FasterThanPeak != 2 || f.Samples != 5 {
		t.Errorf("faster than peak %d, samples %d: want 2 and 5", f.FasterThanPeak, f.Samples)
	}
	if math.Abs(out.MemEff[graph.ClassElementwise]-0.8) > 1e-3 {
		t.Errorf("mem_eff[elementwise] %v, want 0.8", out.MemEff[graph.ClassElementwise])
	}
	note := FasterThanPeakNote(fits, &h, "NVIDIA H100 80GB HBM3")
	if want := "2 of 7 measured kernels ran faster than h100's peaks allow (elementwise 2 of 7)"; !strings.HasPrefix(note, want) {
		t.Errorf("note %q, want it to start %q", note, want)
	}

	h200, _ := roofline.Preset("h200")
	h200.Launch = 0
	ts = synthetic(h200, graph.ClassElementwise, graph.F32, 0.5, 0.85, 0, rng, streamSizes(0.25))
	out, fits, err = FitEfficiencies(h, ts)
	if err != nil {
		t.Fatalf("H200 kernels on h100: %v", err)
	}
	if err := out.Validate(); err != nil {
		t.Error(err)
	}
	if fits[graph.ClassElementwise].FasterThanPeak != 5 {
		t.Errorf("H200 kernels on h100: %d faster than peak, want all 5", fits[graph.ClassElementwise].FasterThanPeak)
	}
	if note := FasterThanPeakNote(fits, &h, "NVIDIA H200"); !strings.Contains(note, "--hardware h200") {
		t.Errorf("note %q does not name h200", note)
	}
	if _, fits, _ := FitEfficiencies(h200, ts); FasterThanPeakNote(fits, &h200, "NVIDIA H200") != "" {
		t.Error("H200 kernels on h200: some faster than its peaks")
	}
}

// TestCalibrateFromProfileH100: the committed H100 profile of resnet50
// (measurements/2026-11-26-h100) calibrates, where it failed with
// mem_eff[conv] = 1.5, and says what it left out.
func TestCalibrateFromProfileH100(t *testing.T) {
	path := filepath.Join("..", "..", "measurements", "2026-11-26-h100", "graphs", "resnet50-b32-fp32.json")
	var out, errw bytes.Buffer
	if err := CalibrateFromProfile(&out, &errw, CalibrateOptions{FromProfile: path, Hardware: "h100"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errw.String(), "ran faster than h100's peaks allow (conv 1 of 18, elementwise 20 of 417)") {
		t.Errorf("no note of the kernels left out:\n%s", errw.String())
	}
}

// TestFitClearsDenseConvEff: a preset's dense convolution efficiency
// (the rtx3090's 0.9093) gives way to a calibration that moves the
// convolutions' (here derived from the matmuls' fit, 0.62 x 0.6 / 0.9093);
// a calibration that leaves them keeps it.
func TestFitClearsDenseConvEff(t *testing.T) {
	h, _ := roofline.Preset("rtx3090")
	if h.DenseConvEff == 0 {
		t.Fatal("rtx3090 has no dense convolution efficiency")
	}
	rng := rand.New(rand.NewSource(fitSeed))
	out, _, err := FitEfficiencies(h, synthetic(h, graph.ClassMatMul, graph.F16, 0.62, 0.9, 0.02, rng, gemmSizes()))
	if err != nil {
		t.Fatal(err)
	}
	if out.DenseConvEff != 0 || out.ComputeEff[graph.ClassConv] == h.ComputeEff[graph.ClassConv] {
		t.Errorf("dense %v, conv %v: the fitted convolution efficiency should stand for all", out.DenseConvEff, out.ComputeEff[graph.ClassConv])
	}
	out, _, err = FitEfficiencies(h, synthetic(h, graph.ClassElementwise, graph.F32, 0.4, 0.88, 0.02, rng, streamSizes(0.25)))
	if err != nil {
		t.Fatal(err)
	}
	if out.DenseConvEff != h.DenseConvEff {
		t.Errorf("dense %v, want the preset's %v (no convolution fitted)", out.DenseConvEff, h.DenseConvEff)
	}
}
