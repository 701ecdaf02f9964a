package jobs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/report"
	"github.com/placer/placer/workloads/export"
)

// TestGPUsRuleEvalExport: eval and export read --gpus with a strategy
// the same way (GPUsRule). Round-robin with dp=2 on --gpus 4 is 2
// replicas of round-robin on 2 GPUs in both; eval's report (its -o file)
// is a placement file export and eval read back, with --gpus 4 or none;
// --gpus 2 with that file, or an odd count, is refused in one line
// naming what fits.
func TestGPUsRuleEvalExport(t *testing.T) {
	ctx := context.Background()
	g := inputs.GraphSpec{Path: torchCNN}
	const strat = "dp=2,mb=2,schedule=1f1b"
	ans, err := Eval(ctx, EvalOptions{OpGraph: GraphEvalOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: 4}, Placement: "round-robin", Strategy: strat}})
	if err != nil {
		t.Fatal(err)
	}
	e := ans.(EvalReport).Eval
	if e.Devices != 4 || e.Replicas != 2 || e.Decision == nil || e.Decision.Devices != 2 || e.Decision.Strategy == nil {
		t.Fatalf("eval: %d GPUs, %d replicas, decision %+v; want 4 GPUs, 2 replicas of a 2-GPU decision with its strategy", e.Devices, e.Replicas, e.Decision)
	}
	path := filepath.Join(t.TempDir(), "eval.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.JSON(f, ans); err != nil {
		t.Fatal(err)
	}
	f.Close()

	direct, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: 4}}, Placement: "round-robin", Strategy: strat, To: "torch-plan"})
	if err != nil {
		t.Fatalf("export round-robin --gpus 4 --strategy %s: %v", strat, err)
	}
	want, err := export.DecodeTorchPlan(direct)
	if err != nil {
		t.Fatal(err)
	}
	if want.GPUs != 4 || want.Replicas != 2 || want.Devices != 2 || want.MicroBatches != 2 || want.Schedule != "1f1b" {
		t.Errorf("export --gpus 4 --strategy %s: %d GPUs, %d replicas of %d, %d micro-batches, %s; want 4, 2 of 2, 2, 1f1b",
			strat, want.GPUs, want.Replicas, want.Devices, want.MicroBatches, want.Schedule)
	}
	for _, gpus := range []int{0, 4} {
		out, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: gpus}}, Placement: path, To: "torch-plan"})
		if err != nil {
			t.Fatalf("export eval's -o with --gpus %d: %v", gpus, err)
		}
		got, err := export.DecodeTorchPlan(out)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("export eval's -o with --gpus %d:\n%s\nwant the plan of round-robin --gpus 4 --strategy %s:\n%s", gpus, out, strat, direct)
		}
		again, err := Eval(ctx, EvalOptions{OpGraph: GraphEvalOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: gpus}, Placement: path}})
		if err != nil {
			t.Fatalf("eval --placement eval's -o with --gpus %d: %v", gpus, err)
		}
		if a := again.(EvalReport).Eval; a.StepTime != e.StepTime || a.Devices != 4 || a.Strategy != e.Strategy {
			t.Errorf("eval of eval's -o with --gpus %d: %g s on %d GPUs (%s), want %g s on 4 (%s)", gpus, a.StepTime, a.Devices, a.Strategy, e.StepTime, e.Strategy)
		}
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"export --gpus 2", func() error {
			_, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: 2}}, Placement: path, To: "torch-plan"})
			return err
		}, "made for 2 devices a replica, and 2 replicas of it take 4 GPUs, not --gpus 2 (--gpus is every GPU: give --gpus 4, or leave it out)"},
		{"eval --gpus 2", func() error {
			_, err := Eval(ctx, EvalOptions{OpGraph: GraphEvalOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: 2}, Placement: path}})
			return err
		}, "not --gpus 2 (--gpus is every GPU: give --gpus 4"},
		{"export --gpus 3", func() error {
			_, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: 3}}, Placement: "round-robin", Strategy: strat, To: "torch-plan"})
			return err
		}, "--gpus 3: 2 replicas do not divide 3 GPUs"},
		{"eval --gpus 3", func() error {
			_, err := Eval(ctx, EvalOptions{OpGraph: GraphEvalOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: 3}, Placement: "round-robin", Strategy: strat}})
			return err
		}, "--gpus 3: 2 replicas do not divide 3 GPUs"},
		{"export dp=2 on the graph's one GPU", func() error {
			_, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: g}, Placement: "round-robin", Strategy: strat, To: "torch-plan"})
			return err
		}, "2 replicas do not divide the 1 GPUs of the graph file (give --gpus"},
	} {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestGPUsRuleSearch: search --gpus N writes its answer as one replica's
// decision on N / R GPUs, which eval and export read back with --gpus N
// (or none) as the same N GPUs.
func TestGPUsRuleSearch(t *testing.T) {
	ctx := context.Background()
	g := inputs.GraphSpec{Path: torchCNN}
	out := filepath.Join(t.TempDir(), "result.json")
	rep, err := SearchGraph(ctx, GraphSearchOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: 4}, Methods: []string{"single"}, Evals: 100, Seed: 1, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Result.Decision
	R := d.Decision().Strategy.R()
	if d.Devices*R != 4 {
		t.Fatalf("search --gpus 4: the answer is %d replicas of %d GPUs", R, d.Devices)
	}
	for _, gpus := range []int{0, 4} {
		ans, err := Eval(ctx, EvalOptions{OpGraph: GraphEvalOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: gpus}, Placement: out}})
		if err != nil {
			t.Fatalf("eval --gpus %d: %v", gpus, err)
		}
		if e := ans.(EvalReport).Eval; e.Devices != 4 || e.StepTime != rep.Result.StepTime {
			t.Errorf("eval --gpus %d: %g s on %d GPUs, want search's %g s on 4", gpus, e.StepTime, e.Devices, rep.Result.StepTime)
		}
		plan, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: g, Cluster: inputs.ClusterSpec{GPUs: gpus}}, Placement: out, To: "torch-plan"})
		if err != nil {
			t.Fatalf("export --gpus %d: %v", gpus, err)
		}
		tp, err := export.DecodeTorchPlan(plan)
		if err != nil {
			t.Fatal(err)
		}
		if tp.GPUs != 4 || tp.Replicas != R {
			t.Errorf("export --gpus %d: %d GPUs, %d replicas; want 4, %d", gpus, tp.GPUs, tp.Replicas, R)
		}
	}
}
