package tunebrkga

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/placer/placer/jobs"
	"github.com/placer/placer/methods/brkga/tuned"
	"github.com/placer/placer/optimize"
)

// TestRun tunes a two-setting grid on one training graph and reads
// the file back through the method's decoder.
func TestRun(t *testing.T) {
	out := t.TempDir() + "/params.json"
	grid := tuned.Grid{Population: []int{10, 20}, Elites: []float64{0.2}, Mutants: []float64{0.2}, EliteBias: []float64{0.7}, Beta: [][2]float64{{1, 1}}}
	f, err := Run(context.Background(), Options{Grid: grid, Graphs: 1, Evaluations: 60, Out: out, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	back, err := tuned.Decode(data, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range optimize.Objectives {
		tu := back.Objectives[obj.String()]
		if tu.Settings != 2 || tu.Score > 1 || tu.DefaultScore != 1 || !reflect.DeepEqual(tu, f.Objectives[obj.String()]) {
			t.Errorf("%v: %+v", obj, tu)
		}
		if tu.Score < 1 && tu.Params.Population != 10 && tu.Params.Population != 20 {
			t.Errorf("%v: chose %+v, not in the grid", obj, tu.Params)
		}
	}
	if back.Graphs != 1 || back.Evaluations != 60 || back.Seed != jobs.RegalTrainSeed || back.WallSeconds <= 0 {
		t.Errorf("recipe %+v", back)
	}
}
