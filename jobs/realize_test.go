package jobs

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/workloads/export"
)

// torchCNN is a graph from PyTorch with its meta file beside it
// (testdata/torch: tools/dev/torchexport's small CNN, the meta file written
// from its op names).
const torchCNN = "testdata/torch/cnn.json"

// TestSearchPredictsThePlan: for a graph from PyTorch, the step time
// search prints for its answer is placer's evaluation of the exported
// torch plan, to the bit: search -> result file -> export --to
// torch-plan -> the plan read back (DecodeTorchPlan) -> the decision it
// executes (Realizer.Decision) -> the strategy evaluator, without any
// realization in between. The plan uses the prediction's GPUs, and the
// answer is the decision the plan executes.
func TestSearchPredictsThePlan(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		graph  string
		gpus   int
		method string
		budget int
		topo   string
	}{
		{"4 gpus", torchCNN, 4, "", 300, ""},
		{"2 gpus local search", torchCNN, 2, "local-search", 200, ""},
		{"4 gpus pcie", torchCNN, 4, "", 200, "pcie"},
		// A zoo model (make zoo; skipped without it) whose answer is a
		// pipeline of replicas.
		{"resnet50 8 gpus pcie", "../out/zoo/resnet50.json", 8, "", 400, "pcie"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(c.graph); err != nil {
				t.Skipf("%s: %v", c.graph, err)
			}
			res := filepath.Join(dir, c.name+".result.json")
			cs := inputs.ClusterSpec{GPUs: c.gpus, Topology: c.topo, Hardware: "h100"}
			rowsDir := filepath.Join(dir, c.name+".rows")
			rep, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: c.graph}, Cluster: cs,
				Method: c.method, Evals: c.budget, Seed: 3, Out: res, Rows: rowsDir})
			if err != nil {
				t.Fatal(err)
			}
			want := rep.Result.StepTime
			plan := filepath.Join(dir, c.name+".plan.json")
			if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: c.graph}}, Placement: res, To: "torch-plan", Out: plan}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(plan)
			if err != nil {
				t.Fatal(err)
			}
			tp, err := export.DecodeTorchPlan(data)
			if err != nil {
				t.Fatal(err)
			}
			if tp.GPUs != c.gpus {
				t.Errorf("plan on %d GPUs, the prediction on %d", tp.GPUs, c.gpus)
			}
			pp, err := NewSetup(inputs.GraphSpec{Path: c.graph}, cs, optimize.AllTasks, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer pp.Close()
			if pp.realizer == nil {
				t.Fatal("a graph with a meta file beside it is not realized")
			}
			d, err := pp.realizer.Decision(tp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := evaluate.Unwrap(pp.Evaluator).Evaluate(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if got.StepTime != want {
				t.Errorf("search printed %v s, the plan evaluates to %v s", want, got.StepTime)
			}
			// The answer printed is the decision the plan executes.
			f := rep.Result.Decision.Decision()
			for i := range d.Device {
				if f.Device[i] != d.Device[i] {
					t.Fatalf("op %d: the answer puts it on %d, the plan on %d", i, f.Device[i], d.Device[i])
				}
			}
			if f.Fusion != nil {
				t.Error("the answer fuses ops; the plan runs none")
			}
			t.Logf("%s: %v s, %d stages x %d replicas, strategy %s", c.name, want, len(tp.Stages), tp.Replicas, f.Strategy)
			// Every row of the table is a decision a plan executes, and
			// --rows writes it: the row's file evaluates (placer eval
			// --placement FILE) and its exported plan read back evaluate
			// to the row's figure, on the prediction's GPUs.
			idx, err := placements.ReadRows(filepath.Join(rowsDir, placements.RowsIndex))
			if err != nil {
				t.Fatal(err)
			}
			if idx.Answer != cmp.Or(rep.Result.Source, rep.Result.Method) {
				t.Errorf("index: answer %q, the result's %q (source %q)", idx.Answer, rep.Result.Method, rep.Result.Source)
			}
			files := map[string]placements.RowEntry{}
			for _, e := range idx.Rows {
				files[e.Method] = e
			}
			table := map[string]placements.BaselinesRow{}
			for _, row := range rep.Comparison.Rows {
				table[row.Method] = row
				e, ok := files[row.Method]
				if !ok {
					t.Errorf("row %s is not in the index", row.Method)
					continue
				}
				if (row.Error == "") != (e.File != "") || (e.File != "" && row.File != filepath.Join(rowsDir, e.File)) {
					t.Errorf("row %s (error %q, file %q): index file %q, note %q", row.Method, row.Error, row.File, e.File, e.Note)
				}
			}
			for name, r := range rep.rows {
				if r != nil && files[name].File == "" {
					t.Errorf("row %s has a decision and no file: %q", name, files[name].Note)
				}
			}
			for _, e := range idx.Rows {
				if e.File == "" {
					continue
				}
				dec := filepath.Join(rowsDir, e.File)
				ev, err := EvalGraph(context.Background(), GraphEvalOptions{Graph: inputs.GraphSpec{Path: c.graph}, Cluster: cs, Placement: dec})
				if err != nil {
					t.Fatalf("row %s: eval: %v", e.Method, err)
				}
				out, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: c.graph}}, Placement: dec, To: "torch-plan"})
				if err != nil {
					t.Fatalf("row %s: %v", e.Method, err)
				}
				rp, err := export.DecodeTorchPlan(out)
				if err != nil {
					t.Fatal(err)
				}
				rd, err := pp.realizer.Decision(rp)
				if err != nil {
					t.Fatal(err)
				}
				pe, err := evaluate.Unwrap(pp.Evaluator).Evaluate(context.Background(), rd)
				if err != nil {
					t.Fatal(err)
				}
				row := table[e.Method]
				if row.StepTime != e.StepTime || row.ColocationViolations != 0 {
					t.Errorf("row %s: %v s in the table (%d co-location violations), %v s in the index", e.Method, row.StepTime, row.ColocationViolations, e.StepTime)
				}
				if ev.StepTime != e.StepTime || pe.StepTime != e.StepTime || rp.GPUs != c.gpus {
					t.Errorf("row %s (%s): %v s on %d GPUs; eval of its file %v s, its plan %v s on %d GPUs", e.Method, e.Strategy, e.StepTime, c.gpus, ev.StepTime, pe.StepTime, rp.GPUs)
				}
			}
			n := 0
			for _, e := range idx.Rows {
				if e.File != "" {
					n++
				}
			}
			t.Logf("%s: %d rows written, %d without a decision", c.name, n, len(idx.Rows)-n)
		})
	}
}

// TestExportTorchGPUs: export reads --gpus as eval does (GPUsRule): a
// placement file is one replica's, and --strategy dp=2 around a 4-GPU
// file takes 8 GPUs (without --gpus, or with --gpus 8), while --gpus 4 is
// refused in one line naming --gpus 8; --stages asks for a number of
// stages, at most a replica's GPUs; torchtitan and deepspeed say the
// same plan.
func TestExportTorchGPUs(t *testing.T) {
	dir := t.TempDir()
	pp, err := NewSetup(inputs.GraphSpec{Path: torchCNN}, inputs.ClusterSpec{GPUs: 4}, optimize.AllTasks, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pp.Close()
	g := pp.Graph
	write := func(name string, dev []int, devices int) string {
		var buf bytes.Buffer
		if err := decision.Write(&buf, g, devices, decision.Decision{Device: dev}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	four := make([]int, g.NumOps())
	two := make([]int, g.NumOps())
	for i := range four {
		four[i] = i * 4 / g.NumOps()
		// The classifier on GPU 1, the features on 0.
		if name := g.Op(i).Name; strings.HasPrefix(name, "classifier") || strings.HasPrefix(name, "param:classifier") {
			two[i] = 1
		}
	}
	on4, on2of4 := write("four.json", four, 4), write("two.json", two, 4)
	for _, c := range []struct {
		name      string
		placement string
		cluster   int // --gpus (0 = none)
		to        string
		strategy  string
		stages    int
		want      string // error text, or "" for a plan
		gpus      int
		nstages   int
	}{
		{"dp=2 of 4 GPUs", on4, 0, "torch-plan", "dp=2", 0, "", 8, 2},
		{"dp=2 of 4 GPUs, --gpus 8", on4, 8, "torch-plan", "dp=2", 0, "", 8, 2},
		{"dp=2 of 4 GPUs, --gpus 4", on4, 4, "torch-plan", "dp=2", 0, "made for 4 devices a replica, and 2 replicas of it take 8 GPUs, not --gpus 4 (--gpus is every GPU: give --gpus 8", 0, 0},
		{"dp=4 of 4 GPUs, --gpus 6", on4, 6, "torch-plan", "dp=4", 0, "--gpus 6: 4 replicas do not divide 6 GPUs", 0, 0},
		{"dp=2 of 2 of 4 GPUs", on2of4, 0, "torch-plan", "dp=2", 0, "", 8, 2},
		{"stages 2", on4, 0, "torch-plan", "", 2, "", 4, 2},
		{"stages 5", on4, 0, "torch-plan", "", 5, "--stages 5: want 1 to the 4 GPUs of a replica", 0, 0},
		{"torchtitan", on2of4, 0, "torchtitan", "dp=2,mb=2,schedule=1f1b", 0, "", 0, 0},
		{"deepspeed gpipe", on2of4, 0, "deepspeed", "dp=2,mb=2", 0, "pipeline: schedule gpipe", 0, 0},
	} {
		out, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: c.cluster}, Stages: c.stages}, Placement: c.placement, To: c.to, Strategy: c.strategy})
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.to != "torch-plan" {
			if !strings.Contains(string(out), "pipeline_parallel_degree = 2") || !strings.Contains(string(out), "data_parallel_replicate_degree = 2") {
				t.Errorf("%s:\n%s", c.name, out)
			}
			continue
		}
		tp, err := export.DecodeTorchPlan(out)
		if err != nil {
			t.Fatal(err)
		}
		if tp.GPUs != c.gpus || len(tp.Stages) != c.nstages {
			t.Errorf("%s: %d GPUs, %d stages; want %d, %d", c.name, tp.GPUs, len(tp.Stages), c.gpus, c.nstages)
		}
	}
}

// TestSearchStages: --stages N cuts the answer of a graph from PyTorch
// into N stages, and is refused in one line for another graph.
func TestSearchStages(t *testing.T) {
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 4},
		Methods: []string{"single"}, Evals: 100, Seed: 1, Stages: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Every row and the answer: 3 stages, or one per GPU of a replica
	// with fewer.
	for name, r := range rep.rows {
		if r == nil {
			continue
		}
		used := map[int]bool{}
		for _, k := range r.Decision.Device {
			used[k] = true
		}
		if want := min(3, 4/r.Decision.Strategy.R()); len(used) != want {
			t.Errorf("row %s (%s): %d stages, want %d", name, r.Decision.Strategy, len(used), want)
		}
	}
	_, err = SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{GPUs: 2}, Evals: 10, Stages: 2})
	if err == nil || !strings.Contains(err.Error(), "--stages 2: for a graph from PyTorch") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--stages on a graph without a meta file: %v", err)
	}
}

// TestTorchGraphLearned: the learned methods run on a graph from
// PyTorch (their policies decide every task; the realization keeps the
// placement and the strategy): zero-shot inference and go, whose joint
// space refines one-GPU replicas.
func TestTorchGraphLearned(t *testing.T) {
	rep, err := Infer(context.Background(), TransferOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 2}, Model: pretrained(t), Samples: 2, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.Result.Decision.Decision(); d.Fusion != nil {
		t.Error("infer's answer fuses ops on a graph from PyTorch")
	}
	if _, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 2},
		Method: "go", Steps: 1, Samples: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestBaselinesRealizable: the default baselines of a graph from PyTorch
// leave out tf-default (its row realized is single's decision), as
// search's table does; a TensorFlow-style graph keeps it, and a user who
// names it gets it.
func TestBaselinesRealizable(t *testing.T) {
	has := func(b placements.Baselines) bool {
		for _, r := range b.Rows {
			if r.Method == "tf-default" {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		graph   string
		methods []string
		want    bool
	}{
		{torchCNN, nil, false},
		{torchCNN, []string{"single", "tf-default"}, true},
		{"../examples/mlp.json", nil, true},
	} {
		b, err := Baselines(context.Background(), BaselinesOptions{Graph: inputs.GraphSpec{Path: c.graph}, Cluster: inputs.ClusterSpec{GPUs: 2},
			Methods: c.methods, Budget: 20, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := has(b); got != c.want {
			t.Errorf("%s, methods %v: tf-default row %v, want %v", c.graph, c.methods, got, c.want)
		}
	}
}

// TestExportGPUsAsEval: --gpus is every GPU in export as in eval: a
// decision file of 4 one-GPU replicas (what search answers with ddp)
// exports with --gpus 4, as eval --gpus 4 scores it, and the plan takes
// the 4 GPUs; a GPU count its replicas do not divide stays refused.
func TestExportGPUsAsEval(t *testing.T) {
	pp, err := NewSetup(inputs.GraphSpec{Path: torchCNN}, inputs.ClusterSpec{GPUs: 1}, optimize.AllTasks, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pp.Close()
	g := pp.Graph
	var buf bytes.Buffer
	d := decision.Decision{Device: make([]int, g.NumOps()), Strategy: decision.Strategy{Replicas: 4}}
	if err := decision.Write(&buf, g, 4, d); err != nil { // 4 GPUs in all: one a replica
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ddp.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Eval(context.Background(), EvalOptions{OpGraph: GraphEvalOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 4}, Placement: path}}); err != nil {
		t.Fatalf("eval --gpus 4: %v", err)
	}
	for _, gpus := range []int{0, 4} {
		out, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: gpus}}, Placement: path, To: "torch-plan"})
		if err != nil {
			t.Fatalf("export --gpus %d: %v", gpus, err)
		}
		tp, err := export.DecodeTorchPlan(out)
		if err != nil {
			t.Fatal(err)
		}
		if tp.GPUs != 4 || tp.Replicas != 4 || tp.Devices != 1 {
			t.Errorf("export --gpus %d: %d GPUs, %d replicas of %d; want 4, 4 of 1", gpus, tp.GPUs, tp.Replicas, tp.Devices)
		}
	}
	if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 6}}, Placement: path, To: "torch-plan"}); err == nil {
		t.Errorf("export --gpus 6 of 4 one-GPU replicas: no error")
	}
}
