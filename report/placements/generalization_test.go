package placements

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/report"
)

// genRows are hand-made: speed-ups over the 100 ms expert of 2 and 1 for
// GO-one, 1.25 and 0.8 for zero-shot, and fine-tuned / GO-one of 1.1 and
// 0.9.
func genRows() []GeneralizationRow {
	run := func(method string, ms float64) GeneralizationRun {
		return GeneralizationRun{Method: method, StepTime: ms / 1e3, Valid: true, WallTime: 1}
	}
	a := GeneralizationRow{Family: "rnnlm", Graph: "rnnlm2", Ops: 8292, Devices: 2,
		Expert: run("expert", 100), Best: run("m-etf", 80), GOOne: run("go", 50), ZeroShot: run("go-zero-shot", 80), FineTuned: run("go-finetune", 55)}
	b := GeneralizationRow{Family: "gnmt", Graph: "gnmt2", Ops: 23498, Devices: 2,
		Expert: run("expert", 100), Best: run("expert", 100), GOOne: run("go", 100), ZeroShot: run("go-zero-shot", 125), FineTuned: run("go-finetune", 90)}
	rows := []GeneralizationRow{a, b}
	for i := range rows {
		rows[i].SetRatios()
	}
	return rows
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummarizeGeneralization(t *testing.T) {
	rows := genRows()
	if r := rows[0]; !near(r.GOOneSpeedUp, 2) || !near(r.ZeroShotSpeedUp, 1.25) || !near(r.FineTunedOverGOOne, 1.1) || !near(r.BestSpeedUp, 1.25) {
		t.Fatalf("ratios %+v", r)
	}
	s := SummarizeGeneralization(rows)
	// sqrt(2*1), sqrt(1.25*0.8) = 1, sqrt(1.1*0.9) = sqrt(0.99).
	if !near(s.GOOneSpeedUp.Value, math.Sqrt2) || !near(s.ZeroShotSpeedUp.Value, 1) || !near(s.FineTunedOverGOOne.Value, math.Sqrt(0.99)) || s.FineTunedOverGOOne.Families != 2 {
		t.Fatalf("summary %+v", s)
	}
	if s.ZeroShotBeatsExpert.Holds || !s.FineTunedNearGOOne.Holds {
		t.Fatalf("checks: %+v %+v", s.ZeroShotBeatsExpert, s.FineTunedNearGOOne)
	}
	// A zero-shot decision that runs out of memory has no ratio: the
	// geometric mean is over the other families and the check fails.
	c := rows[0]
	c.Family, c.ZeroShot.Valid, c.ZeroShot.StepTime = "trxl", false, 0.04
	c.SetRatios()
	rows[1].ZeroShot.StepTime = 0.08 // 1.25x: the mean of the valid ones is above 1
	rows[1].SetRatios()
	s = SummarizeGeneralization(append(rows, c))
	if s.ZeroShotSpeedUp.Families != 2 || !near(s.ZeroShotSpeedUp.Value, 1.25) || s.ZeroShotBeatsExpert.Holds || !strings.Contains(s.ZeroShotBeatsExpert.Measured, "2 of 3 families") {
		t.Fatalf("with an OOM row: %+v", s.ZeroShotBeatsExpert)
	}
	if empty := SummarizeGeneralization(nil); empty.ZeroShotBeatsExpert.Holds || empty.FineTunedNearGOOne.Holds {
		t.Fatal("no rows hold a claim")
	}
}

func TestWriteGeneralization(t *testing.T) {
	g := Generalization{Hardware: "v100", Devices: 2, Topology: "hybrid-cube-mesh", Transfers: "async", Tasks: "placement", Policy: "small",
		Samples: 16, PretrainSteps: 500, SearchSteps: 100, FinetuneSteps: 50, Rows: genRows()}
	g.Rows[1].ZeroShot.Valid = false
	g.Rows[1].SetRatios()
	g.Summary = SummarizeGeneralization(g.Rows)
	var b bytes.Buffer
	if err := WriteGeneralization(report.Wide{Writer: &b}, g); err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(b.String(), "\n  ", " ") // the prose as one line
	for _, want := range []string{
		"2 x v100", "pre-training 500 steps", "m-etf 80.000", "125.000 OOM", "2.000x", "1.100", "geomean", "1.414x", "0.995",
		"zero-shot beats the expert placement on held-out families on average (speed-up over expert > 1): geometric mean 1.250x over 1 of 2 families (1 without both decisions valid): false",
		"fine-tuned lands within 5% of GO-one on average (fine-tuned step / GO-one step <= 1.05): geometric mean 0.995 over 2 of 2 families: true",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The JSON twin carries the same numbers.
	b.Reset()
	if err := report.JSON(&b, g); err != nil {
		t.Fatal(err)
	}
	var back Generalization
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Rows) != 2 || back.Summary != g.Summary || back.Rows[0].GOOneSpeedUp != 2 {
		t.Fatalf("json: %v %+v", err, back.Summary)
	}
	dir := t.TempDir()
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, "g."+ext)
		if err := report.WriteBarPlot(path, GeneralizationPlot(g)); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() < 500 {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	if err := report.WriteBarPlot(filepath.Join(dir, "g.gif"), GeneralizationPlot(g)); err == nil {
		t.Fatal("gif accepted")
	}
	bad := GeneralizationPlot(g)
	bad.Series[0].Values = bad.Series[0].Values[:1]
	if err := report.WriteBarPlot(filepath.Join(dir, "bad.png"), bad); err == nil || !strings.Contains(err.Error(), "1 values for 2 groups") {
		t.Fatalf("short series: %v", err)
	}
}
