package calibration

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/bench"
	"github.com/placer/placer/planner/plan"
)

// TestRegimeOf: each fact read from the plan, worked by hand from the
// definitions (Regime's comment).
func TestRegimeOf(t *testing.T) {
	const gpt = "gpt:layers=8,hidden=1024,heads=16,vocab=32000,batch=256"
	const moe = "gpt:layers=8,hidden=1024,heads=16,vocab=32000,batch=256,experts=8,topk=2,expert_ffn=1024,seq=4096"
	const mc = "megatron-core"
	for _, c := range []struct {
		workload, cluster, strategy string
		want                        Regime
	}{
		// 8 H100s, Megatron-Core's default stack, 4,096 tokens.
		{gpt + ",seq=4096", "dgx-h100:1", "tp=8", Regime{KindDense, GenHopper, StackMegatron, ScaleSmall, SeqShort, mc}},
		// 64 GPUs is still the small band; 72 is not.
		{gpt + ",seq=4096", "dgx-h100:8", "tp=8", Regime{KindDense, GenHopper, StackMegatron, ScaleSmall, SeqShort, mc}},
		{gpt + ",seq=4096", "dgx-b200:9", "tp=8", Regime{KindDense, GenBlackwell, StackMegatron, ScaleMedium, SeqShort, mc}},
		// 1,024 GPUs is the middle band; 1,032 the large one.
		{gpt + ",seq=4096", "dgx-h100:128", "tp=8", Regime{KindDense, GenHopper, StackMegatron, ScaleMedium, SeqShort, mc}},
		{gpt + ",seq=4096", "dgx-h100:129", "tp=8", Regime{KindDense, GenHopper, StackMegatron, ScaleLarge, SeqShort, mc}},
		// Context parallelism at 4,096 tokens is long; 16,384 tokens
		// without it too; 8,192 without it is short.
		{gpt + ",seq=4096", "dgx-h100:1", "tp=4,cp=2", Regime{KindDense, GenHopper, StackMegatron, ScaleSmall, SeqLong, mc}},
		{gpt + ",seq=16384", "dgx-h100:1", "tp=8", Regime{KindDense, GenHopper, StackMegatron, ScaleSmall, SeqLong, mc}},
		{gpt + ",seq=8192", "dgx-h100:1", "tp=8", Regime{KindDense, GenHopper, StackMegatron, ScaleSmall, SeqShort, mc}},
		// torchtitan's stack is eager PyTorch.
		{gpt + ",seq=4096", "dgx-h100:1", "fsdp=on,stack=torchtitan-0.2", Regime{KindDense, GenHopper, StackPyTorch, ScaleSmall, SeqShort, "torchtitan"}},
		// A model with experts; LoRA over any model is fine-tuning.
		{moe, "dgx-h100:1", "ep=8", Regime{KindMoE, GenHopper, StackMegatron, ScaleSmall, SeqShort, mc}},
		{gpt + ",seq=4096", "dgx-a100:1", "tp=8,peft=lora,lora-rank=16", Regime{KindLoRA, GenAmpere, StackMegatron, ScaleSmall, SeqShort, mc}},
	} {
		m, err := transformer.Parse(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.ParsePod(c.cluster)
		if err != nil {
			t.Fatal(err)
		}
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		if got := RegimeOf(m, s, p); got != c.want {
			t.Errorf("%s on %s with %s: regime %s, want %s", c.workload, c.cluster, c.strategy, got.Key(), c.want.Key())
		}
	}
	for hw, want := range map[string]string{"h100-96gb": GenHopper, "gb300-nvl72": GenBlackwell, "a100": GenAmpere, "cpu": GenOther, "l40s": GenOther} {
		if got := Generation(hw); got != want {
			t.Errorf("Generation(%q) = %s, want %s", hw, got, want)
		}
	}
}

// TestQuantile on a hand table of nine errors, sorted .01 .02 .03 .05
// .07 .10 .15 .20 .30: at 0.9, k = ceil(0.9 x 10) = 9, the largest,
// .30; at 0.8, k = ceil(0.8 x 10) = 8, .20; at 0.5, k = ceil(5) = 5,
// .07. Eight rows at 0.9: k = ceil(8.1) = 9 > 8, none.
func TestQuantile(t *testing.T) {
	abs := []float64{0.05, 0.01, 0.20, 0.10, 0.03, 0.07, 0.02, 0.15, 0.30}
	for _, c := range []struct {
		level, want float64
	}{{0.9, 0.30}, {0.8, 0.20}, {0.5, 0.07}} {
		if got, ok := Quantile(abs, c.level); !ok || got != c.want {
			t.Errorf("Quantile at %.1f = %v, %v; want %v", c.level, got, ok, c.want)
		}
	}
	if _, ok := Quantile(abs[:8], 0.9); ok {
		t.Error("Quantile of 8 rows at 0.9: want none (k = 9 > 8)")
	}
	if _, ok := Quantile(nil, 0.5); ok {
		t.Error("Quantile of no rows: want none")
	}
	if abs[0] != 0.05 {
		t.Error("Quantile sorted its argument")
	}
}

var (
	hopperSmall  = Regime{KindDense, GenHopper, StackMegatron, ScaleSmall, SeqShort, ""}
	hopperMedium = Regime{KindDense, GenHopper, StackMegatron, ScaleMedium, SeqShort, ""}
	moeBlackwell = Regime{KindMoE, GenBlackwell, StackMegatron, ScaleSmall, SeqShort, ""}
)

// handRows: nine rows of hopperSmall (|error| .01 to .09, one sweep
// each), two of hopperMedium (.40, -.50) in sweep "m".
func handRows() []Row {
	var rows []Row
	for i := 1; i <= 9; i++ {
		rows = append(rows, Row{Sweep: string(rune('a' + i)), Regime: hopperSmall, Error: float64(i) / 100})
	}
	return append(rows, Row{Sweep: "m", Regime: hopperMedium, Error: 0.40}, Row{Sweep: "m", Regime: hopperMedium, Error: -0.50})
}

// TestFor: a regime of nine rows states its own; one of two the nearest
// regime's with enough (its sequence band dropped: still two; its scale
// dropped: dense/Hopper/Megatron-Core, eleven rows, k = ceil(0.9 x 12) =
// 11, the largest, .50); a regime of none whose every coarser regime
// short of the whole holds none: the whole bench's (the same eleven,
// .50).
func TestFor(t *testing.T) {
	tb := NewTable(handRows(), 0.9)
	for _, c := range []struct {
		g            Regime
		basis        string
		from         Regime
		rows, sweeps int
		bound        float64
	}{
		// Nine rows: k = ceil(0.9 x 10) = 9, .09.
		{hopperSmall, BasisRegime, hopperSmall, 9, 9, 0.09},
		{hopperMedium, BasisNearest, Regime{Kind: KindDense, Gen: GenHopper, Stack: StackMegatron}, 11, 10, 0.50},
		{moeBlackwell, BasisWhole, Regime{}, 11, 10, 0.50},
	} {
		e := tb.ForRegime(c.g)
		if e.Basis != c.basis || e.From != c.from || e.Rows != c.rows || e.Sweeps != c.sweeps || math.Abs(e.Bound-c.bound) > 1e-12 {
			t.Errorf("For(%s) = %+v, want basis %s from %s, %d rows of %d sweeps, bound %v", c.g.Key(), e, c.basis, c.from.Key(), c.rows, c.sweeps, c.bound)
		}
	}
	if s := tb.ForRegime(moeBlackwell).String(); !strings.Contains(s, "±50% stated error") || !strings.Contains(s, "the whole bench") {
		t.Errorf("whole bench's error says %q", s)
	}
	if s := tb.ForRegime(hopperMedium).String(); !strings.Contains(s, "the nearest regime, dense, Hopper, Megatron-Core (its own") {
		t.Errorf("nearest regime's error says %q", s)
	}
	// Three rows in all: no level gives a 0.9 quantile.
	if e := NewTable(handRows()[:3], 0.9).ForRegime(hopperSmall); e.Rows != 0 || e.Holds(0) {
		t.Errorf("three rows: %+v, want none stated", e)
	}
}

// TestLeaveOneSweepOut at level 0.5 on five rows of one regime, sweeps
// s1 {.10, -.10}, s2 {.20}, s3 {.30}, s4 {.05}. Without s1: .05 .20
// .30, k = ceil(0.5 x 4) = 2, .20: both s1 rows within. Without s2:
// .05 .10 .10 .30, k = ceil(2.5) = 3, .10: .20 beyond. Without s3: .05
// .10 .10 .20, .10: .30 beyond. Without s4: .10 .10 .20 .30, .20: .05
// within. 3 of 5; mean stated (.20+.20+.10+.10+.20)/5 = .16.
func TestLeaveOneSweepOut(t *testing.T) {
	rows := []Row{{Sweep: "s1", Regime: hopperSmall, Error: 0.10}, {Sweep: "s1", Regime: hopperSmall, Error: -0.10},
		{Sweep: "s2", Regime: hopperSmall, Error: 0.20}, {Sweep: "s3", Regime: hopperSmall, Error: 0.30}, {Sweep: "s4", Regime: hopperSmall, Error: 0.05}}
	c := LeaveOneSweepOut(rows, 0.5)
	if c.Rows != 5 || c.Within != 3 || c.ByBasis[BasisRegime] != 5 || math.Abs(c.MeanBound-0.16) > 1e-12 {
		t.Errorf("LeaveOneSweepOut = %+v, want 3 of 5 within, all by regime, mean stated 0.16", c)
	}
	// Against the whole table (every row in): .05 .10 .10 .20 .30, k =
	// ceil(3) = 3, .10: .10, -.10, .05 within, 3 of 4 new rows below.
	h := Holdout(NewTable(rows, 0.5), []Row{{Regime: hopperSmall, Error: 0.1}, {Regime: hopperSmall, Error: -0.1}, {Regime: hopperSmall, Error: 0.05}, {Regime: hopperSmall, Error: 0.11}})
	if h.Rows != 4 || h.Within != 3 {
		t.Errorf("Holdout = %+v, want 3 of 4 within", h)
	}
}

// TestDevelopmentCoverage: the stated error holds on at least 80% of the
// development part's rows out of sample (each row against the error
// stated without its sweep), the model as it stands; and every row is
// in a regime the table states an error for.
func TestDevelopmentCoverage(t *testing.T) {
	tb, err := Development()
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows()) < 150 {
		t.Fatalf("%d development rows predicted, want at least 150", len(tb.Rows()))
	}
	c := LeaveOneSweepOut(tb.Rows(), StatedLevel)
	t.Logf("development, leave one sweep out: %d of %d within (%.1f%%), by %v, mean stated %.1f%%", c.Within, c.Rows, 100*c.Share(), c.ByBasis, 100*c.MeanBound)
	if c.Share() < 0.8 {
		t.Errorf("development, leave one sweep out: %d of %d rows within their stated error (%.1f%%), want at least 80%%", c.Within, c.Rows, 100*c.Share())
	}
	for _, r := range tb.Rows() {
		if r.Part != bench.Development {
			t.Fatalf("%s: part %s in the development table", r.Name, r.Part)
		}
		if e := tb.ForRegime(r.Regime); e.Rows == 0 {
			t.Errorf("%s: no error stated for its regime %s", r.Name, r.Regime.Key())
		}
	}
}

// TestPaired: the error of a difference, by hand. Sweep a: errors +10%
// and -10%, steps' ratio predicted over measured 1.1/0.9 = 1.2222, its
// larger way round 22.22%; sweep b: 0, +20%, +20%: pairs 20%, 20%, 0;
// sweep c one row, no pair; a refused row counts in no pair. Four pairs,
// mean (0.2222 + 0.2 + 0.2 + 0) / 4 = 0.15556.
func TestPaired(t *testing.T) {
	rows := []Lazy{
		{Row: Row{Sweep: "a"}, ErrorOf: func() (float64, bool) { return 0.1, true }},
		{Row: Row{Sweep: "b"}, ErrorOf: func() (float64, bool) { return 0, true }},
		{Row: Row{Sweep: "a"}, ErrorOf: func() (float64, bool) { return -0.1, true }},
		{Row: Row{Sweep: "b"}, ErrorOf: func() (float64, bool) { return 0.2, true }},
		{Row: Row{Sweep: "b"}, ErrorOf: func() (float64, bool) { return 0.2, true }},
		{Row: Row{Sweep: "c"}, ErrorOf: func() (float64, bool) { return 0.5, true }},
		{Row: Row{Sweep: "a"}, ErrorOf: func() (float64, bool) { return 3, false }},
	}
	tb := NewLazyTable(rows, StatedLevel)
	pairs, mean := Paired(tb.rows)
	if want := (1.1/0.9 - 1 + 0.2 + 0.2) / 4; pairs != 4 || math.Abs(mean-want) > 1e-12 {
		t.Errorf("Paired: %d pairs, mean %.6f; want 4, %.6f", pairs, mean, want)
	}
	if pairs, _ := Paired(NewLazyTable(rows[5:6], StatedLevel).rows); pairs != 0 {
		t.Errorf("one row: %d pairs, want 0", pairs)
	}
}

// TestForOwnCodeBase: a code base with enough rows states its own error,
// and another code base's rows do not widen it. Code base "a" has nine
// rows of hopperSmall (|error| .01 to .09), "b" eight (.50 each). The
// pooled regime's seventeen give k = ceil(0.9 x 18) = 17, the largest,
// .50; a's own nine k = 9, .09.
//   - a plan of a in hopperSmall: its own regime's .09;
//   - of b: its own has eight (< OwnCodeBaseRows), as have its two
//     coarser own levels: the pooled regime's .50;
//   - of "c", which has no row: the pooled regime's .50;
//   - of a at 65-1,024 GPUs: none of a's there, nor at that scale with
//     the sequence band dropped; with the scale dropped too, a's nine,
//     .09;
//   - of a on Blackwell: a's own levels keep the GPU's generation (none
//     there), and the pooled levels have a Blackwell row only once the
//     generation is dropped: dense, every row, .50.
func TestForOwnCodeBase(t *testing.T) {
	in := func(g Regime, cb string) Regime { g.CodeBase = cb; return g }
	var rows []Row
	for i := 1; i <= 9; i++ {
		rows = append(rows, Row{Sweep: "a" + string(rune('0'+i)), Regime: in(hopperSmall, "a"), Error: float64(i) / 100})
	}
	for i := 1; i <= 8; i++ {
		rows = append(rows, Row{Sweep: "b" + string(rune('0'+i)), Regime: in(hopperSmall, "b"), Error: 0.5})
	}
	tb := NewTable(rows, 0.9)
	ownA := in(Regime{Kind: KindDense, Gen: GenHopper, Stack: StackMegatron}, "a")
	for _, c := range []struct {
		g     Regime
		basis string
		from  Regime
		rows  int
		bound float64
	}{
		{in(hopperSmall, "a"), BasisRegime, in(hopperSmall, "a"), 9, 0.09},
		{in(hopperSmall, "b"), BasisNearest, hopperSmall, 17, 0.50},
		{in(hopperSmall, "c"), BasisNearest, hopperSmall, 17, 0.50},
		{in(hopperMedium, "a"), BasisNearest, ownA, 9, 0.09},
		{in(Regime{KindDense, GenBlackwell, StackMegatron, ScaleSmall, SeqShort, ""}, "a"), BasisNearest, Regime{Kind: KindDense}, 17, 0.50},
	} {
		e := tb.ForRegime(c.g)
		if e.Basis != c.basis || e.From != c.from || e.Rows != c.rows || math.Abs(e.Bound-c.bound) > 1e-12 {
			t.Errorf("For(%s) = %s from %s, %d rows, %v; want %s from %s, %d rows, %v", c.g.Key(), e.Basis, e.From.Key(), e.Rows, e.Bound,
				c.basis, c.from.Key(), c.rows, c.bound)
		}
	}
	if s := tb.ForRegime(in(hopperSmall, "a")).String(); !strings.Contains(s, "short sequence, in a)") {
		t.Errorf("own code base's error says %q", s)
	}
}
