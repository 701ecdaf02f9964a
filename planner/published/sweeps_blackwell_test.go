package published

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"

	"github.com/placer/placer/graph/transformer"
)

// TestBridgeBlackwellRows: every Blackwell row resolves on its pod with
// the archive's GPUs (8, 64 or 256: the row's per-node= share of an
// NVL72 rack, or 8 a DGX B200) and the precision its label states, in
// its own source set.
func TestBridgeBlackwellRows(t *testing.T) {
	want := map[string]string{"FP8-CS": plan.FP8Current, "FP8": plan.FP8Current, "FP8-MX": plan.FP8MX, "MXFP8": plan.FP8MX, "NVFP4": plan.FP4NV, "BF16": ""}
	n := 0
	for _, sw := range bridgeBlackwell() {
		if sw.Set != SetBridgeBlackwell || !IsSourceSet(sw.Set) {
			t.Errorf("%s: source set %q", sw.Name, sw.Set)
		}
		for _, row := range sw.Rows {
			n++
			m, err := transformer.Parse(row.Workload)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.ParsePod(row.Cluster)
			if err != nil {
				t.Fatalf("%s: %v", row.Label, err)
			}
			s, err := plan.ParseStrategy(row.Strategy)
			if err != nil {
				t.Fatalf("%s: %v", row.Label, err)
			}
			pl, err := plan.Resolve(m, s, p)
			if err != nil {
				t.Errorf("%s, %s: %v", sw.Name, row.Label, err)
				continue
			}
			gpus := map[bool]int{true: 8, false: 64}[strings.Contains(sw.Name, "8 GPUs")]
			if strings.Contains(sw.Name, "256 GPUs") {
				gpus = 256
			}
			prec := strings.Fields(strings.SplitN(row.Label, ":", 2)[0])[1]
			if pl.TP*pl.CP*pl.PP*pl.DP != gpus || p.GPUs() != gpus || pl.FP8 != want[prec] {
				t.Errorf("%s, %s: %s on %d GPUs, want %d GPUs and %q", sw.Name, row.Label, pl, p.GPUs(), gpus, want[prec])
			}
		}
	}
	if n != 82 { // 10 Llama 3 8B, 16 70B, 30 405B, 12 GPT-OSS, 14 Qwen3-30B-A3B
		t.Errorf("%d rows, want the 82 transcribed", n)
	}
}

// TestBlackwellRatios: every ratio's two rows are found, of the same
// model and release, and the published ratio is theirs: Llama 3 8B
// 25.09's B200/H100 is 29,994 / 14,079 = 2.1304.
func TestBlackwellRatios(t *testing.T) {
	rs := BlackwellRatios()
	if len(rs) != 20 {
		t.Fatalf("%d ratios, want 20", len(rs))
	}
	for _, r := range rs {
		rel := strings.Fields(strings.Split(r.Name, ",")[0])
		release := rel[len(rel)-1]
		if !strings.HasPrefix(r.Num.Label, release) || !strings.HasPrefix(r.Den.Label, release) || r.Num.Workload != r.Den.Workload && !strings.Contains(r.Name, "Qwen3") && !strings.Contains(r.Name, "8B") {
			t.Errorf("%s: %q over %q", r.Name, r.Num.Label, r.Den.Label)
		}
	}
	if got := rs[0].Num.Measured / rs[0].Den.Measured; rs[0].Name != "Llama 3 8B 25.09, B200/H100" || math.Abs(got-29994.0/14079) > 1e-12 {
		t.Errorf("%s: %g, want 2.1304", rs[0].Name, got)
	}
}

// TestSampleErrorTies: Spearman's rho of predictions that are all
// equal is undefined: left null, not NaN (which JSON cannot carry).
func TestSampleErrorTies(t *testing.T) {
	rank := func(x, y []float64) float64 { return math.NaN() }
	e := SampleErrorOf("s", nil, []float64{1, 2, 3}, []float64{5, 5, 5}, []float64{5, 5, 5}, rank)
	if e.Spearman != nil || e.OutSpearman != nil || math.Abs(e.MeanAbs-(4+1.5+2.0/3)/3) > 1e-12 {
		t.Errorf("%+v", e)
	}
}
