package published

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// plan8B is the quick start's plan as Traits: Llama 3 8B, BF16, FSDP on
// 32 H100s, cuDNN's attention, 8,192 tokens.
var plan8B = Traits{Precision: "bf16", Attention: "cudnn", Layers: "fused", Family: "dense", Parallel: []string{"fsdp"}, GPUs: 32, Seq: 8192, GPU: "h100"}

// row8B is a hand-built published row of the same traits, predicted
// +4% (within the 10% tolerance of a dense model).
func row8B(source string, edit func(*CheckedRow)) CheckedRow {
	r := CheckedRow{Source: source, Traits: plan8B, Error: 0.04, Fast: true}
	r.Parallel = []string{"fsdp"}
	if edit != nil {
		edit(&r)
	}
	return r
}

// TestCheckPlan: a plan is checked only by a row that ran what it runs
// within 2x of its scale and sequence, predicted within tolerance; else
// the nearest row (fewest differences, then closest in scale and
// sequence) and how it differs, by hand.
func TestCheckPlan(t *testing.T) {
	fp8 := row8B("FP8 8", func(r *CheckedRow) { r.Precision, r.GPUs = "fp8=current", 8 })
	for _, c := range []struct {
		name    string
		rows    []CheckedRow
		checked bool
		row     string   // the checking or nearest row
		diffs   []string // its differences, as words
	}{
		{"same everything", []CheckedRow{row8B("same", nil)}, true, "same", nil},
		{"BF16 plan, FP8 row", []CheckedRow{row8B("fp8", func(r *CheckedRow) { r.Precision = "fp8=current" })}, false, "fp8",
			[]string{"precision (FP8 current vs BF16)"}},
		{"4x the scale", []CheckedRow{row8B("8 GPUs", func(r *CheckedRow) { r.GPUs = 8 })}, false, "8 GPUs",
			[]string{"scale (8 vs 32 GPUs)"}},
		{"2x the scale is within", []CheckedRow{row8B("16 GPUs", func(r *CheckedRow) { r.GPUs = 16 })}, true, "16 GPUs", nil},
		{"2x the sequence is within, 4x is not", []CheckedRow{row8B("32K", func(r *CheckedRow) { r.Seq = 32768 }), row8B("16K", func(r *CheckedRow) { r.Seq = 16384 })},
			true, "16K", nil},
		{"the README's case: FP8 on 8 GPUs", []CheckedRow{fp8}, false, "FP8 8",
			[]string{"precision (FP8 current vs BF16)", "scale (8 vs 32 GPUs)"}},
		{"attention, family, GPU, parallelism", []CheckedRow{row8B("other", func(r *CheckedRow) {
			r.Attention, r.Layers, r.Family, r.GPU, r.Parallel = "flash", "eager", "moe", "a100", []string{"ep", "fsdp"}
		})}, false, "other", []string{"attention (flash vs cudnn)", "layers (eager vs fused)", "family (moe vs dense)", "GPU (A100 vs H100)", "parallelism (EP+FSDP vs FSDP)"}},
		{"a same row placer misses", []CheckedRow{row8B("off", func(r *CheckedRow) { r.Error = 0.3 })}, false, "off",
			[]string{"error (predicted +30% off the row, beyond its 10% tolerance)"}},
		{"a same row within tolerance, but a known regression", []CheckedRow{row8B("slow release", func(r *CheckedRow) { r.Regression = "tracker/1" })}, false, "slow release",
			[]string{"a known regression of its release (tracker/1)"}},
		{"a row without the regression first", []CheckedRow{row8B("slow release", func(r *CheckedRow) { r.Regression = "tracker/1" }), row8B("64", func(r *CheckedRow) { r.GPUs = 64 })},
			true, "64", nil},
		{"fewest differences of kind first", []CheckedRow{fp8, row8B("128", func(r *CheckedRow) { r.GPUs = 128 })}, false, "128",
			[]string{"scale (128 vs 32 GPUs)"}},
		{"scale and sequence only after kind", []CheckedRow{
			row8B("TP 64", func(r *CheckedRow) { r.Precision, r.Parallel, r.GPUs = "fp8=current", []string{"sp", "tp"}, 64 }), fp8},
			false, "FP8 8", []string{"precision (FP8 current vs BF16)", "scale (8 vs 32 GPUs)"}},
		{"then the closest scale", []CheckedRow{row8B("256", func(r *CheckedRow) { r.GPUs = 256 }), row8B("8", func(r *CheckedRow) { r.GPUs = 8 })},
			false, "8", []string{"scale (8 vs 32 GPUs)"}},
		{"no rows", nil, false, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckPlan(c.rows, plan8B)
			row := ""
			if got.Row != nil {
				row = got.Row.Source
			}
			if got.Checked != c.checked || row != c.row || !reflect.DeepEqual(got.Reasons(), c.diffs) {
				t.Errorf("checked %v by %q, %q; want %v by %q, %q", got.Checked, row, got.Reasons(), c.checked, c.row, c.diffs)
			}
		})
	}
}

// TestTraitsOf: a plan's traits read from its model, strategy and pod.
func TestTraitsOf(t *testing.T) {
	dense := mustSpec(t, "llama3-8b:seq=8192,batch=256")
	moe := mustSpec(t, smallMoE)
	for _, c := range []struct {
		name, pod string
		moe       bool
		strategy  string
		want      Traits
	}{
		{"the quick start", "dgx-h100:4", false, "dp=32,fsdp=on",
			Traits{Precision: "bf16", Attention: "cudnn", Layers: "fused", Family: "dense", Parallel: []string{"fsdp"}, GPUs: 32, Seq: 8192, GPU: "h100"}},
		{"torchtitan's pod, FP8, eager", "grand-teton:1,attention=flash", false, "dp=2,tp=4,sp=on,fp8=current,stack=torchtitan-0.2",
			Traits{Precision: "fp8=current", Attention: "flash", Layers: "eager", Family: "dense", Parallel: []string{"sp", "tp"}, GPUs: 8, Seq: 8192, GPU: "h100"}},
		{"A100, unfused", "dgx-a100:2", false, "pp=2,dp=8",
			Traits{Precision: "bf16", Attention: "unfused", Layers: "fused", Family: "dense", Parallel: []string{"pp"}, GPUs: 16, Seq: 8192, GPU: "a100"}},
		{"A100, FlashAttention-2", "dgx-a100:2,attention=flash", false, "pp=2,dp=8",
			Traits{Precision: "bf16", Attention: "flash", Layers: "fused", Family: "dense", Parallel: []string{"pp"}, GPUs: 16, Seq: 8192, GPU: "a100"}},
		{"experts", "dgx-h100:1", true, "ep=4,dp=8",
			Traits{Precision: "bf16", Attention: "cudnn", Layers: "fused", Family: "moe", Parallel: []string{"ep"}, GPUs: 8, Seq: moe.Seq, GPU: "h100"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.ParsePod(c.pod)
			if err != nil {
				t.Fatal(err)
			}
			s, err := plan.ParseStrategy(c.strategy)
			if err != nil {
				t.Fatal(err)
			}
			m := dense
			if c.moe {
				m = moe
			}
			if got := TraitsOf(m, s, p); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%+v, want %+v", got, c.want)
			}
		})
	}
}

// TestRegimeError: a regime's error is the mean and largest |error| of
// its rows, by hand; rows of another regime do not enter it; a regime
// with none says so.
func TestRegimeError(t *testing.T) {
	rows := []CheckedRow{
		row8B("A", func(r *CheckedRow) { r.Error, r.GPUs = 0.20, 8 }),
		row8B("B", func(r *CheckedRow) { r.Error, r.Fast, r.GPUs = -0.10, false, 128 }),
		row8B("C, FP8", func(r *CheckedRow) { r.Precision, r.Error = "fp8=current", 0.5 }),
		row8B("D, TP", func(r *CheckedRow) { r.Parallel, r.Error = []string{"fsdp", "tp"}, 0.9 }),
	}
	g := RegimeOf(plan8B)
	got := ErrorOf(rows, g)
	// (|0.20| + |-0.10|) / 2 = 0.15; the largest 0.20; A too fast.
	if got.Rows != 2 || math.Abs(got.MeanAbs-0.15) > 1e-12 || got.MaxAbs != 0.20 || got.Fast != 1 || got.Kind != InSample {
		t.Errorf("%+v, want 2 rows, mean 0.15, largest 0.20, 1 too fast, in-sample", got)
	}
	if want := "dense BF16 FSDP on H100: mean |error| 15% (largest 20%, 1 of 2 too fast) on 2 published rows (in-sample)"; got.String() != want {
		t.Errorf("%q, want %q", got, want)
	}
	// A row its framework's tracker lists as a regression of its
	// release is left out, and said: (0.20 + 0.10) / 2 again.
	withRegression := append(rows, row8B("E, regressed", func(r *CheckedRow) { r.Error, r.Regression = 1.4, "tracker/1" }))
	if got := ErrorOf(withRegression, g); got.Rows != 2 || math.Abs(got.MeanAbs-0.15) > 1e-12 || got.Regressions != 1 ||
		got.String() != "dense BF16 FSDP on H100: mean |error| 15% (largest 20%, 1 of 2 too fast) on 2 published rows (in-sample; 1 row of a known regression of its release left out)" {
		t.Errorf("with a regression row: %+v, %q", got, got)
	}
	tp := RegimeOf(Traits{Precision: "bf16", Family: "dense", Parallel: []string{"fsdp", "pp", "tp"}, GPU: "h200"})
	if none := ErrorOf(rows, tp); none.Rows != 0 || !strings.HasPrefix(none.String(), "no published row of this regime (dense BF16 PP on H200)") {
		t.Errorf("%q: want no published row of dense BF16 PP on H200", none)
	}
}

// TestOutOfSampleRegimeError: out of sample, a regime's error is its
// rows' OutOfSample errors (each with its own source's constants
// reset), by hand, and its too-fast count their OutFast; the kind says
// out-of-sample.
func TestOutOfSampleRegimeError(t *testing.T) {
	rows := []CheckedRow{
		row8B("A", func(r *CheckedRow) { r.Error, r.OutOfSample, r.OutFast = 0.20, 0.30, true }),
		row8B("B", func(r *CheckedRow) { r.Error, r.Fast, r.OutOfSample, r.OutFast = -0.10, false, -0.02, false }),
		row8B("C, FP8", func(r *CheckedRow) { r.Precision, r.Error, r.OutOfSample = "fp8=current", 0.5, 0.9 }),
	}
	got := OutOfSampleOf(rows, RegimeOf(plan8B))
	// (|0.30| + |-0.02|) / 2 = 0.16; the largest 0.30; A too fast.
	if got.Rows != 2 || math.Abs(got.MeanAbs-0.16) > 1e-12 || got.MaxAbs != 0.30 || got.Fast != 1 || got.Kind != OutOfSample {
		t.Errorf("%+v, want 2 rows, mean 0.16, largest 0.30, 1 too fast, out-of-sample", got)
	}
	if want := "dense BF16 FSDP on H100: mean |error| 16% (largest 30%, 1 of 2 too fast) on 2 published rows (out-of-sample)"; got.String() != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestMemoryErrorOf: the peak memory's error is over the published
// peaks of the plan's family and precision, out of sample (each peak's
// own source's constants reset), by hand; where the regime has none,
// over every published peak, and the line says so; rows with no peak
// count for nothing.
func TestMemoryErrorOf(t *testing.T) {
	peak := func(source, precision string, in, out float64) CheckedRow {
		return row8B(source, func(r *CheckedRow) {
			r.Precision, r.Peak, r.PeakError, r.PeakOutOfSample = precision, true, in, out
		})
	}
	rows := []CheckedRow{
		peak("A", "bf16", 0.01, 0.02),
		peak("B", "bf16", -0.05, -0.04),
		peak("C, FP8", "fp8=current", 0.10, 0.13),
		row8B("D, no peak", nil),
	}
	moe := plan8B
	moe.Family = "moe"
	for _, c := range []struct {
		name  string
		t     Traits
		rows  []CheckedRow
		want  MemoryError
		words string
	}{
		// (|0.02| + |-0.04|) / 2 = 0.03; the largest 0.04; A over.
		{"dense BF16: its own peaks", plan8B, rows,
			MemoryError{Family: "dense", Precision: "bf16", Kind: OutOfSample, Rows: 2, MeanAbs: 0.03, MaxAbs: 0.04, Over: 1},
			"peak memory of dense BF16: mean |error| 3.0% (largest 4.0%, 1 of 2 over) on 2 published peaks (out-of-sample)"},
		// (0.02 + 0.04 + 0.13) / 3 = 0.0633; the largest 0.13; A and C over.
		{"MoE BF16: none of its own, every peak", moe, rows,
			MemoryError{Family: "moe", Precision: "bf16", All: true, Kind: OutOfSample, Rows: 3, MeanAbs: 0.19 / 3, MaxAbs: 0.13, Over: 2},
			"no published peak of MoE BF16; every published peak: mean |error| 6.3% (largest 13.0%, 2 of 3 over) on 3 published peaks (out-of-sample)"},
		{"no peak at all", plan8B, rows[3:],
			MemoryError{Family: "dense", Precision: "bf16", All: true, Kind: OutOfSample},
			"no published peak memory to set it beside"},
	} {
		got := MemoryErrorOf(c.rows, c.t)
		if math.Abs(got.MeanAbs-c.want.MeanAbs) > 1e-12 {
			t.Errorf("%s: mean %v, want %v", c.name, got.MeanAbs, c.want.MeanAbs)
		}
		got.MeanAbs = c.want.MeanAbs
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if got.String() != c.words {
			t.Errorf("%s: %q, want %q", c.name, got, c.words)
		}
	}
}

// TestMainStyle: the first of pp, cp, tp, ep, fsdp in use, else dp.
func TestMainStyle(t *testing.T) {
	for _, c := range []struct {
		parallel []string
		want     string
	}{
		{nil, "dp"}, {[]string{"fsdp"}, "fsdp"}, {[]string{"fsdp", "sp", "tp"}, "tp"}, {[]string{"cp", "fsdp", "pp", "tp"}, "pp"},
		{[]string{"cp", "tp"}, "cp"}, {[]string{"ep", "fsdp"}, "ep"}, {[]string{"sp", "vp"}, "dp"},
	} {
		if got := MainStyle(c.parallel); got != c.want {
			t.Errorf("%v: %s, want %s", c.parallel, got, c.want)
		}
	}
}
