package jobs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report/placements"
)

var smallPolicy = &policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32, SegmentLen: 16}

// pretrained writes a model pre-trained for a few steps on synthetic
// graphs (the ba family held out) and the example MLP.
func pretrained(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := WorkloadSynth(filepath.Join(dir, "synth"), "all", 4, 1); err != nil {
		t.Fatal(err)
	}
	// A result file in the folder is not a graph and is skipped.
	os.WriteFile(filepath.Join(dir, "synth", "result.json"), []byte(`{"format":"placer-result"}`), 0o644)
	model := filepath.Join(dir, "m.policy")
	rep, err := Pretrain(context.Background(), PretrainOptions{
		GraphsDir: filepath.Join(dir, "synth"), HoldOut: "ba", Cluster: inputs.ClusterSpec{GPUs: 2}, ExtraGPUs: []int{4},
		Steps: 5, Samples: 4, Warmup: 2, Seed: 1, Policy: smallPolicy, Out: model, CheckpointEvery: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Graphs) != 6 || rep.Graphs[1].Name != rep.Graphs[0].Name+"@4" || rep.Graphs[1].Devices != 4 || len(rep.HeldOut) != 1 || !strings.HasPrefix(rep.HeldOut[0], "ba-") || rep.Steps != 5 || len(rep.Curve) != 5 {
		t.Fatalf("report: %d graphs, held out %v, %d steps", len(rep.Graphs), rep.HeldOut, rep.Steps)
	}
	for _, g := range rep.Graphs {
		if g.RefStep <= 0 || g.Reference == "" {
			t.Fatalf("graph %+v has no reference", g)
		}
	}
	if _, st, err := gdp.LoadCheckpoint(model); err != nil || st.Step != 5 {
		t.Fatalf("checkpoint: %+v %v", st, err)
	}
	return model
}

func checkResult(t *testing.T, rep SearchReport, method string, before ...string) {
	t.Helper()
	rows := rep.Comparison.Rows
	// The quick baselines, the schedulers on TensorFlow's default
	// placement, the best one's fusion variants, then the method.
	want := append(slices.Clone(methods.Quick()), "tf-default+gp-dfs", "tf-default+m-topo", "tf-default+m-etf", "BEST+reverse-fusion", "BEST+no-fusion")
	want = append(append(want, before...), method)
	var got []string
	for _, r := range rows {
		name := r.Method
		if i := strings.LastIndex(name, "+"); i > 0 && slices.Contains(got, name[:i]) && (name[i+1:] == "reverse-fusion" || name[i+1:] == "no-fusion") {
			name = "BEST+" + name[i+1:]
		}
		got = append(got, name)
	}
	if !slices.Equal(got, want) || rows[len(rows)-1].StepTime <= 0 {
		t.Fatalf("comparison rows %v, want %v", got, want)
	}
	data, err := os.ReadFile(rep.Out)
	if err != nil {
		t.Fatal(err)
	}
	var r placements.Result
	if err := json.Unmarshal(data, &r); err != nil || r.Method != method || r.StepTime != rep.Result.StepTime {
		t.Fatalf("result file: %v %+v", err, r)
	}
	// The result file is a decision file eval reads back, with the same
	// step time.
	e, err := EvalGraph(context.Background(), GraphEvalOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{GPUs: 2}, Placement: rep.Out})
	if err != nil || e.StepTime != r.StepTime {
		t.Fatalf("eval of the result: %v, step %v vs %v", err, e.StepTime, r.StepTime)
	}
}

func TestPretrainInferFinetune(t *testing.T) {
	model := pretrained(t)
	dir := t.TempDir()
	o := TransferOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{GPUs: 2}, Model: model, Samples: 4, Seed: 2}
	o.Out = filepath.Join(dir, "infer.json")
	rep, err := Infer(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, rep, "go-zero-shot")
	if rep.Result.Evaluations != 5 {
		t.Fatalf("zero-shot evaluated %d decisions, want 4 samples + argmax", rep.Result.Evaluations)
	}
	// With --refine, go-scored refines from the better of the reference and
	// the zero-shot decision: the zero-shot row stays in the table, the
	// refined result is no worse, and it keeps the one-pass step time.
	zs := rep.Result
	o.Refine, o.Out = time.Second, filepath.Join(dir, "refined.json")
	rrep, err := Infer(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, rrep, "go-zero-shot+refined", "go-zero-shot")
	if rrep.Result.StepTime > zs.StepTime || rrep.Result.OnePass != zs.OnePass || rrep.Result.Evaluations <= 5 {
		t.Errorf("refined step %v (zero-shot %v), one pass %v (%v), %d evaluations", rrep.Result.StepTime, zs.StepTime, rrep.Result.OnePass, zs.OnePass, rrep.Result.Evaluations)
	}
	o.Refine = 0
	o.Out, o.Steps = filepath.Join(dir, "finetune.json"), 3
	steps := 0
	o.OnStep = func(gdp.Point, float64, int) { steps++ }
	rep, err = Finetune(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, rep, "go-finetune")
	if rep.Result.Steps != 3 || steps != 3 {
		t.Fatalf("fine-tuned %d steps (%d callbacks), want 3", rep.Result.Steps, steps)
	}
	// A model for other tasks, more GPUs than the model serves.
	o.Tasks = "placement"
	if _, err := Finetune(context.Background(), o); err == nil || !strings.Contains(err.Error(), "the model decides placement,scheduling,fusion, --tasks asks for placement") {
		t.Fatalf("task mismatch: %v", err)
	}
	o.Tasks, o.Cluster.GPUs, o.Cluster.Topology = "", 16, "pcie"
	if _, err := Infer(context.Background(), o); err == nil || !strings.Contains(err.Error(), "at most 8") {
		t.Fatalf("16 GPUs: %v", err)
	}
	// No model: the default model, or a clear error without one.
	if defaultmodel.Available() {
		o.Model, o.Cluster.GPUs, o.Cluster.Topology, o.Out = "", 2, "", ""
		if rep, err := Infer(context.Background(), o); err != nil || rep.Result.StepTime <= 0 {
			t.Fatalf("default model: %v", err)
		}
	} else {
		o.Model, o.Cluster.GPUs, o.Cluster.Topology = "", 2, ""
		if _, err := Infer(context.Background(), o); err == nil || !strings.Contains(err.Error(), "make default-model") {
			t.Fatalf("no model: %v", err)
		}
	}
}

func TestPretrainGraphSelection(t *testing.T) {
	for _, tc := range []struct {
		names   []string
		holdOut string
		want    string
	}{
		{[]string{"trxl2"}, "trxl", "leaves no graph"},
		{nil, "", "no graphs"},
		{[]string{"bogus"}, "", "unknown workload"},
		{[]string{"trxl2"}, "lstm", "unknown family"},
	} {
		if _, _, err := trainingGraphs(tc.names, "", tc.holdOut); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v hold out %q: %v, want %q", tc.names, tc.holdOut, err, tc.want)
		}
	}
	specs, held, err := trainingGraphs([]string{"trxl2", "wavenet2x18", "rnnlm2"}, "", "wavenet")
	if err != nil || len(specs) != 2 || len(held) != 1 || held[0] != "wavenet2x18" {
		t.Fatalf("hold-out wavenet: %v %v %v", specs, held, err)
	}
}

// TestFileFamily: the family a held-out family drops, by hand.
func TestFileFamily(t *testing.T) {
	for _, c := range []struct{ base, format, want string }{
		{"er-0001", "native", "er"},
		{"sbm-0042", "native", "sbm"},
		{"gnmt8", "native", "gnmt8"},
		{"throughput-LayerGraphs-gnmt_training", "msr-fiddle", "gnmt"},
		{"latency-LayerGraphs-gnmt_inference", "msr-fiddle", "gnmt"},
		{"throughput-LayerGraphs-inceptionv3_training", "msr-fiddle", "inception"},
		{"throughput-OperatorGraphs-resnet50_training", "msr-fiddle", "resnet50"},
		{"Model", "onnx", "model"},
	} {
		if got := fileFamily(c.base, c.format); got != c.want {
			t.Errorf("fileFamily(%q, %s) = %q, want %q", c.base, c.format, got, c.want)
		}
	}
}

// TestTrainingGraphsImported: --graphs takes folders and files; a
// folder's native graphs and imported graphs (msr-fiddle's) join, files
// that are no graph are passed over, and a held-out family's imported
// graphs are dropped.
func TestTrainingGraphsImported(t *testing.T) {
	fiddle, _ := filepath.Glob("../../shared/data/msr-fiddle/*.json")
	if len(fiddle) == 0 {
		t.Skip("no ../shared/data/msr-fiddle")
	}
	dir := t.TempDir()
	synth := filepath.Join(dir, "synth")
	if err := os.MkdirAll(synth, 0o755); err != nil {
		t.Fatal(err)
	}
	native, err := os.ReadFile("../examples/mlp.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ws-0001.json": native, "result.json": []byte(`{"method":"m-etf"}`)} {
		if err := os.WriteFile(filepath.Join(synth, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	specs, held, err := trainingGraphs(nil, synth+","+filepath.Dir(fiddle[0]), "gnmt")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range specs {
		got[s.name] = s.family + " " + s.spec.Format
	}
	want := map[string]string{"ws-0001": "ws native"}
	for _, f := range fiddle {
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		if !strings.Contains(base, "gnmt") {
			want[base] = fileFamily(base, "msr-fiddle") + " msr-fiddle"
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("training graphs %v, want %v", got, want)
	}
	if len(held) != len(fiddle)+1-len(want) {
		t.Errorf("held out %v", held)
	}
	// A file named alone is read as named.
	one, _, err := trainingGraphs(nil, fiddle[0], "")
	if err != nil || len(one) != 1 || one[0].spec.Path != fiddle[0] {
		t.Errorf("one file: %+v, %v", one, err)
	}
	if _, _, err := trainingGraphs(nil, filepath.Join(dir, "absent"), ""); err == nil {
		t.Error("a folder that does not exist: no error")
	}
}

// TestPretrainScoredSkipsInvalid: a graph none of whose quick baselines
// fits its GPUs (msr-fiddle's resnet50 layer graph on 2) is listed as
// skipped, not trained on; on 4 GPUs it is trained on.
func TestPretrainScoredSkipsInvalid(t *testing.T) {
	f := "../../shared/data/msr-fiddle/throughput-LayerGraphs-resnet50_training.json"
	if _, err := os.Stat(f); err != nil {
		t.Skip("no ../shared/data/msr-fiddle")
	}
	o := PretrainOptions{GraphsDir: f, Cluster: inputs.ClusterSpec{GPUs: 2}, ExtraGPUs: []int{4}, Scored: true, Steps: 1,
		PerVisit: optimize.Budget{Evaluations: 20}, Out: filepath.Join(t.TempDir(), "h.head")}
	rep, err := Pretrain(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Graphs) != 2 || rep.Graphs[0].Skipped == "" || rep.Graphs[1].Skipped != "" || rep.Graphs[1].RefStep <= 0 {
		t.Fatalf("graphs %+v: want the 2-GPU row skipped, the 4-GPU one trained on", rep.Graphs)
	}
	o.ExtraGPUs = nil
	if _, err := Pretrain(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no graph has a valid quick baseline") {
		t.Errorf("nothing to train on: %v", err)
	}
}
