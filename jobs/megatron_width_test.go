package jobs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/plans"
)

// TestMegatronReportFits: report megatron's report (every row, its rows
// searched once for all this package's tests: publishedRow,
// publishedBridgeRow) as the command writes it (cmd/placer's emit) is at
// most report.MaxWidth (120) columns (report.WriteMegatron), --wide draws
// it wider (report.Wide), and --json (report.JSON) is one object per row
// with the fields the report's readers name. cmd/placer's
// TestEveryReportFits holds the other commands' output.
func TestMegatronReportFits(t *testing.T) {
	rep, err := megatronReport(t.Context(), MegatronOptions{}, publishedRow, publishedBridgeRow)
	if err != nil {
		t.Fatal(err)
	}
	var js strings.Builder
	if err := report.JSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(js.String()), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 9 {
		t.Fatalf("--json: %d rows, want 9", len(got.Rows))
	}
	for _, k := range []string{"model", "gpus", "published_tflops", "predicted_tflops", "placer_tflops", "placer_plan", "search_cpu_s"} {
		if _, ok := got.Rows[0][k]; !ok {
			t.Errorf("--json: row has no %q: %v", k, got.Rows[0])
		}
	}
	var out, wide strings.Builder
	if err := plans.WriteMegatron(&out, rep); err != nil {
		t.Fatal(err)
	}
	if w, line := widest(out.String()); w > report.MaxWidth {
		t.Errorf("%d columns wide: %q", w, line)
	}
	if err := plans.WriteMegatron(report.Wide{Writer: &wide}, rep); err != nil {
		t.Fatal(err)
	}
	if w, _ := widest(wide.String()); w <= report.MaxWidth {
		t.Errorf("--wide: %d columns wide, want wider than %d", w, report.MaxWidth)
	}
}

// widest is the widest line of s in terminal columns, and the line.
func widest(s string) (int, string) {
	w, at := 0, ""
	for _, line := range strings.Split(s, "\n") {
		if n := runewidth.StringWidth(line); n > w {
			w, at = n, line
		}
	}
	return w, at
}
