package reports

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/report/placements"
)

// smallPolicy is the small network of jobs' tests.
var smallPolicy = &policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32, SegmentLen: 16}

// tinyGeneralization holds out two "families" whose graphs are the
// example MLP (as trxl) and the tiny example (as wavenet), with budgets
// of a few steps.
func tinyGeneralization(t *testing.T, families ...string) GeneralizationOptions {
	t.Helper()
	train := filepath.Join(t.TempDir(), "train")
	os.MkdirAll(train, 0o755)
	for name, src := range map[string]string{"trxl-mlp.json": "../../examples/mlp.json", "wavenet-tiny.json": "../../examples/tiny.json"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(train, name), data, 0o644)
	}
	return GeneralizationOptions{
		Families: families, Train: []string{"none"}, GraphsDir: train,
		Test:    map[string]string{"trxl": "../../examples/mlp.json", "wavenet": "../../examples/tiny.json"},
		Cluster: inputs.ClusterSpec{GPUs: 2}, Seed: 1, Samples: 4, Policy: smallPolicy, PolicyName: "small",
		PretrainSteps: 4, Warmup: 2, SearchSteps: 3, FinetuneSteps: 2,
	}
}

// withoutWallTimes zeroes what may differ between two runs of one seed.
func withoutWallTimes(r placements.GeneralizationRow) placements.GeneralizationRow {
	r.PretrainTime, r.WallTime = 0, 0
	for _, m := range []*placements.GeneralizationRun{&r.Expert, &r.Best, &r.GOOne, &r.ZeroShot, &r.FineTuned} {
		m.WallTime = 0
	}
	return r
}

func TestGeneralization(t *testing.T) {
	dir := t.TempDir()
	o := tinyGeneralization(t, "trxl")
	o.Dir = dir
	rep, err := Generalization(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Family != "trxl" {
		t.Fatalf("rows: %+v", rep.Rows)
	}

	// Both families in the same folder: trxl is read back; Ctrl-C during
	// wavenet's fine-tuning keeps trxl only.
	o.Families = []string{"trxl", "wavenet"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progress bytes.Buffer
	o.Progress = &progress
	o.OnSearchStep = func(fam, phase string, _ gdp.Point, _ float64, _ int) {
		if fam == "wavenet" && phase == "fine-tune" {
			cancel()
		}
	}
	rep, err = Generalization(ctx, o)
	if !errors.Is(err, context.Canceled) || len(rep.Rows) != 1 || rep.Rows[0].Family != "trxl" {
		t.Fatalf("cancelled: %v, %d rows", err, len(rep.Rows))
	}
	if !strings.Contains(progress.String(), "[1/2] trxl: finished in an earlier run ("+filepath.Join(dir, "trxl.json")+"), skipped") ||
		!strings.Contains(progress.String(), "[2/2] wavenet: interrupted; a rerun with --dir "+dir+" resumes it") {
		t.Fatalf("progress:\n%s", progress.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "wavenet.json")); err == nil {
		t.Fatal("an interrupted family's result was written")
	}

	// The rerun resumes wavenet from its finished checkpoint.
	progress.Reset()
	o.OnSearchStep = nil
	o.Plot = filepath.Join(dir, "generalization.svg")
	rep, err = Generalization(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "wavenet held out: resuming pre-training from") {
		t.Fatalf("progress:\n%s", progress.String())
	}
	if len(rep.Rows) != 2 || !reflect.DeepEqual(rep.Resumed, []string{"trxl"}) || rep.Summary.Families != 2 || rep.Plot == "" {
		t.Fatalf("report: %d rows, resumed %v, summary %+v", len(rep.Rows), rep.Resumed, rep.Summary)
	}
	for _, r := range rep.Rows {
		if r.Ops == 0 || r.Devices != 2 || r.PretrainSteps != 4 || len(r.Train) != 1 || strings.HasPrefix(r.Train[0], r.Family) ||
			r.Expert.Method != "single" || r.Best.StepTime <= 0 || r.Best.StepTime > r.Expert.StepTime || r.Reference != r.Best.Method ||
			r.GOOne.Method != "go" || r.GOOne.Steps != 3 || r.ZeroShot.Method != "go-zero-shot" || r.ZeroShot.Evaluations != 5 ||
			r.FineTuned.Method != "go-finetune" || r.FineTuned.Steps != 2 || !r.GOOne.Valid || !r.ZeroShot.Valid || !r.FineTuned.Valid ||
			r.ZeroShotSpeedUp <= 0 || r.FineTunedOverGOOne <= 0 {
			t.Fatalf("row %+v", r)
		}
	}
	for _, f := range []string{"wavenet.policy", "wavenet-go-one.json", "wavenet-zero-shot.json", "wavenet-fine-tuned.json", "generalization.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}

	// Same seed, same rows (wall times aside), in a fresh folder.
	o2 := tinyGeneralization(t, "wavenet")
	again, err := Generalization(context.Background(), o2)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := withoutWallTimes(again.Rows[0]), withoutWallTimes(rep.Rows[1]); !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, other result:\n%+v\n%+v", a, b)
	}

	// Other settings, a corrupt family file: one-line errors naming it.
	o.Seed, o.Plot, o.Progress = 2, "", nil
	if _, err := Generalization(context.Background(), o); err == nil || !strings.Contains(err.Error(), "trxl.json was made with other settings (seed 1, this run's 2)") {
		t.Fatalf("other seed: %v", err)
	}
	o.Seed = 1
	famFile := filepath.Join(dir, "trxl.json")
	os.WriteFile(famFile, []byte(`{"format": "placer-generalization-family", "version": 1, "row": {`), 0o644)
	if _, err := Generalization(context.Background(), o); err == nil || !strings.Contains(err.Error(), famFile+" is not a family result") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("corrupt file: %v", err)
	}
}

func TestGeneralizationOptions(t *testing.T) {
	o := tinyGeneralization(t, "trxl")
	for _, tc := range []struct {
		edit func(o *GeneralizationOptions)
		want string
	}{
		{func(o *GeneralizationOptions) { o.Families = []string{"lstm"} }, `unknown family "lstm"`},
		{func(o *GeneralizationOptions) { o.Families = []string{"er"} }, "family er has no built-in workload; give its test graph (--test er=FILE)"},
		{func(o *GeneralizationOptions) { o.Test = map[string]string{"gmnt": "gnmt4"} }, `test graph for unknown family "gmnt"`},
		{func(o *GeneralizationOptions) { o.Train = []string{"bogus"} }, "unknown workload"},
		{func(o *GeneralizationOptions) { o.GraphsDir = "" }, "holding out trxl: pretrain: no graphs"},
		{func(o *GeneralizationOptions) { o.Cluster.Hardware = "tpu" }, "generalization:"},
		{func(o *GeneralizationOptions) { o.Plot = "g.gif" }, `unknown format "gif"`},
	} {
		oo := o
		tc.edit(&oo)
		if _, err := Generalization(context.Background(), oo); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
}

func TestGeneralizationResumesPretraining(t *testing.T) {
	o := tinyGeneralization(t, "wavenet")
	o.Dir, o.PretrainSteps = t.TempDir(), 6
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.OnPretrainStep = func(_ string, pt gdp.PretrainPoint, _ int) {
		if pt.Step == 2 {
			cancel()
		}
	}
	if rep, err := Generalization(ctx, o); !errors.Is(err, context.Canceled) || len(rep.Rows) != 0 {
		t.Fatalf("cancelled: %v, %d rows", err, len(rep.Rows))
	}
	var progress bytes.Buffer
	o.OnPretrainStep, o.Progress = nil, &progress
	rep, err := Generalization(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "resuming pre-training from "+filepath.Join(o.Dir, "wavenet.policy")+" (step 2)") || rep.Rows[0].PretrainSteps != 6 {
		t.Fatalf("%d steps; progress:\n%s", rep.Rows[0].PretrainSteps, progress.String())
	}
}
