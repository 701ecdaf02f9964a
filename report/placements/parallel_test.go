package placements

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/report"
)

// handParallel is two cells by hand: on 4 GPUs over PCIe placer's answer
// is 80 ms against gpipe's 100 ms (the fastest user strategy that fits:
// ddp is faster but out of memory), 0.8; on 8 GPUs 99 ms against ddp's
// 100 ms, 0.99: not 5% better.
func handParallel() Parallel {
	absent := ParallelRow{Strategy: "pipedream", Note: "not built yet"}
	return Parallel{Hardware: "v100", Method: "go-scored", Evals: 4000, GPUs: []int{4, 8}, Topologies: []string{"pcie"}, Cells: []ParallelCell{
		{Graph: "m", GPUs: 4, Topology: "pcie", Batch: 16, Rows: []ParallelRow{
			{Strategy: "single", StepTime: 0.3, PeakMemory: 40 << 30, Replicas: 1, GPUsPerReplica: 1, OOM: true},
			{Strategy: "ddp", StepTime: 0.05, PeakMemory: 33 << 30, Chose: "dp=4", Replicas: 4, GPUsPerReplica: 1, OOM: true},
			{Strategy: "fsdp", Note: "no batch information"},
			{Strategy: "gpipe", StepTime: 0.1, PeakMemory: 8 << 30, Fits: true, Chose: "mb=8,schedule=gpipe", Replicas: 1, GPUsPerReplica: 4},
			absent,
			{Strategy: "placer", From: "go-scored dp=2", StepTime: 0.08, PeakMemory: 6 << 30, Fits: true, Chose: "dp=2", Replicas: 2, GPUsPerReplica: 2, Placer: true},
		}},
		{Graph: "m", GPUs: 8, Topology: "pcie", Batch: 16, Rows: []ParallelRow{
			{Strategy: "ddp", StepTime: 0.1, PeakMemory: 3 << 30, Fits: true, Chose: "dp=8", Replicas: 8, GPUsPerReplica: 1},
			absent,
			{Strategy: "placer", From: "go-scored", StepTime: 0.099, PeakMemory: 3 << 30, Fits: true, Replicas: 1, GPUsPerReplica: 3, Placer: true},
		}},
	}}
}

func TestParallelReport(t *testing.T) {
	p := handParallel()
	for i := range p.Cells {
		p.Cells[i].SetRatio()
	}
	p.Summarize()
	if c := p.Cells[0]; c.BestUser != "gpipe" || math.Abs(c.Ratio-0.8) > 1e-12 {
		t.Errorf("4 GPUs: best %q ratio %v, want gpipe 0.8", c.BestUser, c.Ratio)
	}
	if c := p.Cells[1]; c.BestUser != "ddp" || math.Abs(c.Ratio-0.99) > 1e-12 {
		t.Errorf("8 GPUs: best %q ratio %v, want ddp 0.99", c.BestUser, c.Ratio)
	}
	if len(p.Summary) != 2 || p.Summary[0].Graphs != 1 || math.Abs(p.Summary[0].GeoMean-0.8) > 1e-12 || len(p.Summary[0].NotBetter) != 0 ||
		math.Abs(p.Summary[1].GeoMean-0.99) > 1e-12 || len(p.Summary[1].NotBetter) != 1 {
		t.Errorf("summary %+v", p.Summary)
	}
	// The geometric mean over both cells in one group: sqrt(0.8 x 0.99).
	q := handParallel()
	q.GPUs = []int{4}
	q.Cells[1].GPUs = 4
	q.Cells[1].Graph = "n"
	for i := range q.Cells {
		q.Cells[i].SetRatio()
	}
	q.Summarize()
	if g := q.Summary[0]; g.Graphs != 2 || math.Abs(g.GeoMean-math.Sqrt(0.8*0.99)) > 1e-12 || len(g.NotBetter) != 1 || g.NotBetter[0] != "n 0.990" {
		t.Errorf("one group: %+v", g)
	}
	var b strings.Builder
	if err := WriteParallel(&b, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"m 4 pcie", "gpipe *", "100.0", "0.800", "50.0", "33.00 OOM", "dp=2", "2 x 2", "go-scored dp=2", "mb=8,schedule=gpipe",
		"absent: not built yet", "absent: no batch information", "0.990 !", "1 of 1", "| m ",
	} {
		if !strings.Contains(strings.ReplaceAll(out, "│", "|"), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if w := len([]rune(l)); w > report.MaxWidth {
			t.Errorf("line of %d columns: %s", w, l)
		}
	}
	// Absent rows are never 0 ms.
	if strings.Contains(out, " 0.0 ") {
		t.Errorf("an absent row as 0:\n%s", out)
	}
	bp := ParallelBars(p)
	if len(bp.Groups) != 1 || len(bp.Series) != 2 || bp.Series[1].Values[0] != p.Cells[1].Ratio {
		t.Errorf("bars %+v", bp)
	}
	if err := WriteParallelPlot(filepath.Join(t.TempDir(), "p.svg"), p); err != nil {
		t.Fatal(err)
	}
}
