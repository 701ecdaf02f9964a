package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/optimize"
)

// TestSearchPlotAlwaysWritten: --plot is written by every search, one
// too short for its curve's first point included (the search method's
// few evaluations on tiny.json at 2 GPUs record none), and the plot it
// draws holds the answer returned.
func TestSearchPlotAlwaysWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.svg")
	o := GraphSearchOptions{Graph: inputs.GraphSpec{Path: "../examples/tiny.json"}, Cluster: inputs.ClusterSpec{GPUs: 2}, Evals: 20, Seed: 1, Plot: path}
	rep, err := SearchGraph(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() < 500 {
		t.Fatalf("plot %s not written (%v); the report names %q", path, err, rep.Plot)
	}
	if rep.Plot != path {
		t.Errorf("the report names the plot %q, want %q", rep.Plot, path)
	}
}

// TestCurvePlot: the search's plot draws its curve with its result's end
// (a curve of no point gets that end as a mark), the reference and the
// answer returned as level lines across the curve's evaluations, each
// named with its step time.
func TestCurvePlot(t *testing.T) {
	own := &optimize.Result{Stats: optimize.Stats{Steps: 10, Evaluations: 75, BestStep: 0.064253}}
	curve := curveOf(own)
	if len(curve) != 1 || curve[0].Evaluations != 75 || curve[0].BestStep != 0.064253 {
		t.Fatalf("curveOf a result with no curve: %+v, want its end (75 evaluations, 64.253 ms)", curve)
	}
	own.Learning = &optimize.Learning{Curve: []gdp.Point{{Step: 4, Evaluations: 32, BestStep: 0.07}, {Step: 10, Evaluations: 75, BestStep: 0.064253}}}
	if got := curveOf(own); len(got) != 2 {
		t.Errorf("curveOf a curve ending at the result's end: %d points, want 2 (the end not repeated)", len(got))
	}
	p := curvePlot("trxl2", "go-scored", "dp+reverse-fusion", 0.066019, curve, answerLine{name: "go-scored dp=2", step: 0.056889})
	if len(p.Series) != 3 {
		t.Fatalf("%d series, want the curve, the reference and the answer", len(p.Series))
	}
	c, ref, ans := p.Series[0], p.Series[1], p.Series[2]
	if !c.Marks || len(c.X) != 1 || c.X[0] != 75 || !near(c.Y[0], 64.253, 1e-12) {
		t.Errorf("curve %+v: want one marked point at 75 evaluations, 64.253 ms", c)
	}
	if !strings.Contains(ref.Name, "dp+reverse-fusion (66.019 ms)") || ref.X[1] != 75 || !near(ref.Y[0], 66.019, 1e-12) {
		t.Errorf("reference %+v", ref)
	}
	if ans.Name != "answer returned: go-scored dp=2 (56.889 ms)" || ans.X[0] != 0 || ans.X[1] != 75 || !near(ans.Y[0], 56.889, 1e-12) || !near(ans.Y[1], 56.889, 1e-12) {
		t.Errorf("answer %+v: want a level line at 56.889 ms from 0 to 75 evaluations", ans)
	}
}
