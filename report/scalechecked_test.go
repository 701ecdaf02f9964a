package report

import (
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale"
)

// TestScaleSearchChecked: the search table's "checked against" says,
// row by row, what was checked: "yes" only where a published row vouches
// for each of the plan's features; the features none does; "nothing to
// check" for a plan with no feature (the plan's own line says so); "no
// published row" where none can apply (the header's note: a CPU pod's
// plans, every row of which said "yes" before).
func TestScaleSearchChecked(t *testing.T) {
	const note = "no published row: they ran on GPUs, this pod is a CPU's"
	for _, c := range []struct {
		name  string
		plans []ScalePlan // the best first
		want  []string    // each plan's cell
	}{
		{"gpu pod",
			[]ScalePlan{
				{Strategy: "tp=8,pp=1,dp=1,mbs=1", CheckedBy: map[string]string{"tp": "Megatron-LM H100, 16B"}},
				{Strategy: "tp=4,pp=2,dp=1,mbs=1", CheckedBy: map[string]string{"tp": "Megatron-LM H100, 16B"}, Unchecked: []string{"pp"}},
				{Strategy: "tp=1,pp=1,dp=8,mbs=1"},
			},
			[]string{"yes", "no: pp", "nothing to check"}},
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
				r.Result = scale.Result{Step: float64(i + 1)}
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
