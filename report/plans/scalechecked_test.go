package plans

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/report"
)

// TestScaleSearchChecked: the search table's "checked against" says,
// row by row, what was checked: "yes" only where a published row checks
// the plan; else the traits the nearest row differs in; "no published
// row" where none can apply (the header's note: a CPU pod's plans, every
// row of which said "yes" before, or no rows).
func TestScaleSearchChecked(t *testing.T) {
	const note = "no published row: they ran on GPUs, this pod is a CPU's"
	row := published.CheckedRow{Source: "Megatron-LM H100, 16B"}
	for _, c := range []struct {
		name  string
		plans []ScalePlan // the best first
		want  []string    // each plan's cell
	}{
		{"gpu pod",
			[]ScalePlan{
				{Strategy: "tp=8,pp=1,dp=1,mbs=1", Check: &published.Check{Checked: true, Row: &row}},
				{Strategy: "tp=4,pp=2,dp=1,mbs=1", Check: &published.Check{Row: &row, Differences: []published.Difference{
					{Trait: "parallelism", Row: "SP+TP", Plan: "PP+SP+TP"}, {Trait: "scale", Row: "192", Plan: "8 GPUs"}}}},
				{Strategy: "tp=1,pp=1,dp=8,mbs=1", Check: &published.Check{}},
			},
			[]string{"yes", "no: parallelism, scale", "no published row"}},
		{"cpu pod",
			[]ScalePlan{
				{Strategy: "tp=2,pp=1,dp=1,mbs=1", CheckedNote: note},
				{Strategy: "tp=1,pp=1,dp=2,mbs=1", CheckedNote: note},
			},
			[]string{"no published row", "no published row"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := ScaleSearch{Best: c.plans[0], Runners: c.plans[1:]}
			for i := range c.plans {
				r := &s.Best
				if i > 0 {
					r = &s.Runners[i-1]
				}
				r.Result = planner.Result{Step: float64(i + 1)}
			}
			var b strings.Builder
			if err := WriteScaleSearch(&b, s); err != nil {
				t.Fatal(err)
			}
			for i, p := range c.plans {
				cell := ""
				for _, line := range strings.Split(b.String(), "\n") {
					if cells := strings.Split(line, "│"); len(cells) > 7 && strings.TrimSpace(cells[1]) == p.Strategy {
						cell = strings.TrimSpace(cells[len(cells)-2])
					}
				}
				if cell != c.want[i] {
					t.Errorf("%s: checked %q, want %q\n%s", p.Strategy, cell, c.want[i], b.String())
				}
			}
		})
	}
}

// TestCheckedLine: the plan's "checked against" line names the row that
// checks it, or says UNCHECKED with the nearest row and how it differs;
// its step line carries its regime's error, or that no published row is
// of its regime (hand-built rows and errors).
func TestCheckedLine(t *testing.T) {
	fp8 := published.CheckedRow{Source: "Megatron-Bridge 25.11, Llama 3 8B", Error: 0.0628,
		Traits: published.Traits{Precision: "fp8=current", Family: "dense", GPUs: 8, Seq: 8192}}
	bf16 := fp8
	bf16.Precision, bf16.GPUs, bf16.Error = "bf16", 32, -0.04
	regime := published.Regime{Family: "dense", Precision: "bf16", Style: "fsdp", GPU: "h100"}
	for _, c := range []struct {
		name       string
		check      *published.Check
		err        *published.RegimeError
		line, step string
	}{
		{"FP8 row, 4x fewer GPUs",
			&published.Check{Row: &fp8, Differences: []published.Difference{{Trait: "precision", Row: "FP8 current", Plan: "BF16"}, {Trait: "scale", Row: "8", Plan: "32 GPUs"}}},
			&published.RegimeError{Regime: regime, Kind: published.InSample, Rows: 4, MeanAbs: 0.3007, MaxAbs: 0.3981, Fast: 4},
			"UNCHECKED: nearest Megatron-Bridge 25.11, Llama 3 8B (FP8 current, 8 GPUs) differs in precision (FP8 current vs BF16) and scale (8 vs 32 GPUs)",
			"5.921 s; dense BF16 FSDP on H100: mean |error| 30% (largest 40%, 4 of 4 too fast) on 4 published rows (in-sample)"},
		{"checked", &published.Check{Checked: true, Row: &bf16}, &published.RegimeError{Regime: regime, Kind: published.InSample},
			"checked by Megatron-Bridge 25.11, Llama 3 8B: the same precision (BF16), attention, family and parallelism, 32 GPUs, 8192 tokens; predicted -4%, within its 10%",
			"5.921 s; no published row of this regime (dense BF16 FSDP on H100)"},
		{"no rows", &published.Check{}, nil, "UNCHECKED: no published row", "5.921 s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := ScalePlan{Check: c.check, RegimeError: c.err, Result: planner.Result{Step: 5.921}}
			if got := checkedLine(p); got != c.line {
				t.Errorf("checked line %q, want %q", got, c.line)
			}
			if got := report.Seconds(p.Step) + regimeNote(&p); got != c.step {
				t.Errorf("step %q, want %q", got, c.step)
			}
		})
	}
}

// TestMemoryLineError: the memory line ends with the peak memory's
// error of the plan's regime where it has one (hand-built), and says
// nothing of it where none applies.
func TestMemoryLineError(t *testing.T) {
	parts := []plan.MemoryPart{{Name: "weights", Bytes: 2e9}}
	e := &published.MemoryError{Family: "dense", Precision: "bf16", Kind: published.OutOfSample, Rows: 5, MeanAbs: 0.0161, MaxAbs: 0.0356, Over: 3}
	for _, c := range []struct {
		name string
		err  *published.MemoryError
		want string
	}{
		{"regime", e, ": weights 2.0 GB; peak memory of dense BF16: mean |error| 1.6% (largest 3.6%, 3 of 5 over) on 5 published peaks (out-of-sample)"},
		{"none", nil, ": weights 2.0 GB"},
	} {
		p := ScalePlan{PeakRegimeError: c.err, Result: planner.Result{Memory: 2e9, Usable: 80e9, Capacity: 85e9, MemoryParts: parts}}
		if got := memoryLine(&p, "fits"); !strings.HasSuffix(got, c.want) {
			t.Errorf("%s: %q, want it to end %q", c.name, got, c.want)
		}
	}
	// In --json beside, not in place of, the traced peak's measured
	// error (planner.Result's memory_error).
	p := ScalePlan{PeakRegimeError: e, Result: planner.Result{MemoryError: 0.019}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"memory_error":0.019`, `"peak_regime_error":{"family":"dense"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("--json lacks %s: %s", key, b)
		}
	}
}

// TestTied: the plans closer to the best than the error of a
// difference are a tie, counted from the best; the line says so only
// where two or more are (steps and error by hand).
func TestTied(t *testing.T) {
	for _, c := range []struct {
		steps []float64
		err   float64
		want  int
	}{
		{[]float64{10, 10.5, 11, 13}, 0.10, 3}, // 0, 5%, 10% within 10%; 30% not
		{[]float64{10, 12}, 0.10, 1},
		{[]float64{10, 10.1}, 0, 1},
		{[]float64{10}, 0.5, 1},
	} {
		if got := TiedWithin(c.steps, c.err); got != c.want {
			t.Errorf("%v within %g: %d tied, want %d", c.steps, c.err, got, c.want)
		}
	}
	e := &calibration.Error{Basis: calibration.BasisWhole, Rows: 30, Pairs: 12, PairMean: 0.30}
	s := ScaleSearch{Best: ScalePlan{StatedError: e, Result: planner.Result{Step: 10}},
		Runners: []ScalePlan{{Result: planner.Result{Step: 10.5}}, {Result: planner.Result{Step: 20}}}, Tied: 2}
	want := "a tie within the error of a difference: the best 2 of the 3 plans shown are within 5.0% of the best step, closer than 30.0%, the mean |error| of the ratio of two runs' steps on 12 pairs of development runs of one sweep (the whole bench)\n"
	if got := tieLine(s); got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if s.Tied = 1; tieLine(s) != "" {
		t.Errorf("one plan tied: %q, want no line", tieLine(s))
	}
	if s.Tied, e.Pairs = 2, 0; tieLine(s) != "" {
		t.Errorf("no pairs: %q, want no line", tieLine(s))
	}
}

// TestTableHeading: the line over a search's table says what it holds
// (the answer among the plans) and its order: fastest first, or a tie's
// plans by what is cheaper to run first.
func TestTableHeading(t *testing.T) {
	runners := []ScalePlan{{Result: planner.Result{Step: 10.5}}, {Result: planner.Result{Step: 11}}}
	tie := func(n int) *Tie { return &Tie{Order: make([]RunCost, n)} }
	for _, c := range []struct {
		tie  *Tie
		want string
	}{
		{nil, "the 3 fastest plans that fit, fastest first (the answer):"},
		{tie(2), "the 3 fastest plans that fit (the answer among them): the 2 tied first, cheapest to run first (the tie below), then fastest first:"},
		{tie(3), "the 3 fastest plans that fit (the answer among them), all tied: cheapest to run first (the tie below):"},
	} {
		s := ScaleSearch{Best: ScalePlan{Result: planner.Result{Step: 10}}, Runners: runners, Tie: c.tie}
		if got := tableHeading(s); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestMemoryFiguresAgree: one plan, one memory figure. Where the caching
// allocator's replay runs out of memory (the 8B packed plan on one DGX
// H100: 84,319,440,896 bytes allocated, 84,895,858,688 needed, 84,370,522,112
// reserved before the request that failed, 84,872,790,016 usable), the
// memory line and the reserved line give the need alike, at the
// precision that tells it from the usable memory (84.90 against 84.87
// GB, not 84.9 and 84.9), and the room as over (23.1 MB), never "-0.0
// GB to spare".
func TestMemoryFiguresAgree(t *testing.T) {
	a := &memory.AllocatorPeak{Reserved: 84370522112, Allocated: 84320489472, Requested: 84319440896, OutOfMemory: true, Needed: 84895858688}
	p := ScalePlan{Result: planner.Result{Memory: 84319440896, Judged: 84895858688, Usable: 84872790016, Capacity: 85899345920,
		Allocator: a, MemoryParts: []plan.MemoryPart{{Name: "weights", Bytes: 8030261248}}}}
	line := memoryLine(&p, "does NOT fit")
	for _, want := range []string{"84.3 GB allocated (the caching allocator, simulated, runs out of memory: it needs 84.90 GB)",
		"does NOT fit the 84.87 GB usable of 85.9 GB", "23.1 MB over"} {
		if !strings.Contains(line, want) {
			t.Errorf("memory line %q lacks %q", line, want)
		}
	}
	if res := reservedLine(a, p.Usable); !strings.HasPrefix(res, "84.4 GB reserved") || !strings.HasSuffix(res, "with the cache released: it needed 84.90 GB") {
		t.Errorf("reserved line %q: want 84.4 GB reserved and the need, 84.90 GB", res)
	}
	// Where it fits, its reservation read at one precision in both lines.
	a = &memory.AllocatorPeak{Reserved: 84862790016, Allocated: 84320489472}
	p.Allocator, p.Judged = a, a.Reserved
	line = memoryLine(&p, "fits")
	if !strings.Contains(line, "(84.86 GB reserved, the caching allocator simulated), fits the 84.87 GB usable") || !strings.Contains(line, "10.0 MB to spare") {
		t.Errorf("memory line %q: want 84.86 GB reserved against 84.87 GB usable, 10.0 MB to spare", line)
	}
	if res := reservedLine(a, p.Usable); !strings.HasPrefix(res, "84.86 GB reserved") {
		t.Errorf("reserved line %q: want 84.86 GB reserved, as the memory line says", res)
	}
	for _, c := range []struct {
		a, b    int64
		as, bs  string
		decimal int
	}{
		{84895858688, 84872790016, "84.90 GB", "84.87 GB", 2},
		{54.6e9, 85e9, "54.6 GB", "85.0 GB", 1},
		{98.3e6, 1e6, "98.3 MB", "1.0 MB", 1},
		{5e9, 5e9, "5.000 GB", "5.000 GB", 3},
	} {
		if as, bs, d := GBApart(c.a, c.b); as != c.as || bs != c.bs || d != c.decimal {
			t.Errorf("GBApart(%d, %d) = %q, %q, %d; want %q, %q, %d", c.a, c.b, as, bs, d, c.as, c.bs, c.decimal)
		}
	}
}
