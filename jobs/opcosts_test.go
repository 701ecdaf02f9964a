package jobs

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/torchenv/torchtest"
	exportjob "github.com/placer/placer/jobs/export"
	profilejob "github.com/placer/placer/jobs/profile"
	"github.com/placer/placer/report/placements"
)

// opsProfile is evaluate/profile's three-op ops profile (an H100's, torch
// 2.11): mm measured at 1 ms, relu at 0.5 ms, add not measured, with
// 284,750,000 bytes to read and write and no FLOPs.
var opsProfile = filepath.Join("..", "evaluate", "profile", "testdata", "ops.json")

// eval --profile on the three-op profile, its figures by hand. One GPU,
// FIFO, no fusion: the step is the three ops one after another. A
// measured op takes its time; add takes the H100 preset's roofline: its
// launch (5 us) plus its bytes at 3.35 TB/s x 0.85 (elementwise), 100
// us. With every op measured (add at 0.25 ms) the step is measured
// alone.
func TestEvalOpsProfile(t *testing.T) {
	data, err := os.ReadFile(opsProfile)
	if err != nil {
		t.Fatal(err)
	}
	allMeasured := filepath.Join(t.TempDir(), "all.json")
	text := strings.Replace(string(data), `"bytes_written": 84750000}`, `"bytes_written": 84750000, "time_s": 0.00025}`, 1)
	if err := os.WriteFile(allMeasured, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, file, hardware string
		step                 float64
		measured, modelled   int
		measuredS, modelledS float64
		source               string
	}{
		{"one modelled", opsProfile, "", 1e-3 + 5e-4 + 5e-6 + 1e-4, 2, 1, 1.5e-3, 1.05e-4, "measured and modelled"},
		{"--hardware h100 named", opsProfile, "h100", 1e-3 + 5e-4 + 5e-6 + 1e-4, 2, 1, 1.5e-3, 1.05e-4, "measured and modelled"},
		{"all measured", allMeasured, "", 1e-3 + 5e-4 + 2.5e-4, 3, 0, 1.75e-3, 0, "measured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := inputs.ClusterSpec{Profile: c.file, Hardware: c.hardware, HardwareSet: c.hardware != ""}
			e, err := EvalGraph(context.Background(), GraphEvalOptions{Cluster: cl, Placement: "single"})
			if err != nil {
				t.Fatal(err)
			}
			if e.Hardware != "h100" || !closeTo(e.StepTime, c.step) {
				t.Errorf("step %v on %s, want %v on h100", e.StepTime, e.Hardware, c.step)
			}
			k := e.Costs
			if k == nil {
				t.Fatal("no costs")
			}
			if k.MeasuredOps != c.measured || k.ModelledOps != c.modelled || !closeTo(k.Measured, c.measuredS) || !closeTo(k.Modelled, c.modelledS) || k.StepTime != c.source {
				t.Errorf("costs %+v, want %d measured (%v s), %d modelled (%v s), step %s", *k, c.measured, c.measuredS, c.modelled, c.modelledS, c.source)
			}
			if len(k.PerDevice) != 1 || k.PerDevice[0].Busy != c.source {
				t.Errorf("per device %+v", k.PerDevice)
			}
			var b bytes.Buffer
			if err := placements.WriteEval(&b, e); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "step time "+c.source+": ") {
				t.Errorf("no line saying the step is %s:\n%s", c.source, b.String())
			}
		})
	}
	// Every op measured, on two GPUs round-robin: mm and add on GPU 0,
	// relu on GPU 1, each busy time measured, but the step moves relu's
	// input and output between them, which the roofline's links price.
	e, err := EvalGraph(context.Background(), GraphEvalOptions{Cluster: inputs.ClusterSpec{Profile: allMeasured, GPUs: 2}, Placement: "round-robin"})
	if err != nil {
		t.Fatal(err)
	}
	if k := e.Costs; k.StepTime != "measured and modelled" || k.Transfers != "modelled" || len(k.PerDevice) != 2 ||
		k.PerDevice[0] != (placements.DeviceCost{Measured: 1.25e-3, Busy: "measured"}) || k.PerDevice[1] != (placements.DeviceCost{Measured: 5e-4, Busy: "measured"}) {
		t.Errorf("round-robin on 2 GPUs: costs %+v", *k)
	}
	// Without a profile nothing says measured.
	e, err = EvalGraph(context.Background(), GraphEvalOptions{Graph: inputs.GraphSpec{Path: filepath.Join("..", "examples", "mlp.json")}, Placement: "single"})
	if err != nil || e.Costs != nil {
		t.Errorf("eval without a profile: costs %+v, %v", e.Costs, err)
	}
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

// placer profile --model on the CPU, end to end: the zoo's mlp (batch
// 16) exported and timed, its profile read back by eval --profile,
// whose step on one device (FIFO, no fusion) is its ops' times one
// after another: the measured ones' plus the roofline's of the rest.
// About 4 s of CPU.
func TestProfileModelCPU(t *testing.T) {
	py := torchtest.Python(t)
	if testing.Short() {
		t.Skip("runs torch (-short)")
	}
	out := filepath.Join(t.TempDir(), "mlp.profile.json")
	var progress bytes.Buffer
	o := profilejob.Options{Out: out, Python: py, Device: "cpu", Threads: 1, ModelOptions: profilejob.ModelOptions{Model: "mlp", Steps: 2, Warmup: 1}}
	pr, err := profilejob.Run(context.Background(), o, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if !strings.Contains(progress.String(), "profile: step 2/2") || strings.Contains(progress.String(), "USDT:") {
		t.Errorf("progress:\n%s", progress.String())
	}
	read, err := profile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if read.Kind != profile.KindOps || !read.Complete || read.Device.Kind != "cpu" || read.Software.Torch == "" || read.Model != "mlp" || read.DType != "fp32" || read.Ops.Steps != 2 || read.Ops.Batch != 16 || len(read.Ops.Meta) == 0 {
		t.Errorf("profile: kind %s, complete %v, device %+v, software %+v, model %s, dtype %s, ops %d steps at batch %d", read.Kind, read.Complete, read.Device, read.Software, read.Model, read.DType, read.Ops.Steps, read.Ops.Batch)
	}
	g := pr.Graph()
	timed, sum := 0, 0.0
	for i := range g.NumOps() {
		if op := g.Op(i); op.HasTime {
			timed++
			sum += op.Time
			if op.HasDispatch {
				t.Errorf("op %s: a dispatch time on a CPU (its time holds it)", op.Name)
			}
		}
	}
	if timed < g.NumOps()/2 {
		t.Errorf("%d of %d ops timed", timed, g.NumOps())
	}
	e, err := EvalGraph(context.Background(), GraphEvalOptions{Cluster: inputs.ClusterSpec{Profile: out}, Placement: "single"})
	if err != nil {
		t.Fatal(err)
	}
	k := e.Costs
	if k == nil || k.MeasuredOps != timed || !closeTo(k.Measured, sum) || k.Device != `cpu "`+pr.Device.Name+`"` {
		t.Fatalf("costs %+v, want %d ops measured (%v s)", k, timed, sum)
	}
	if !closeTo(e.StepTime, k.Measured+k.Modelled) {
		t.Errorf("step %v, want the measured %v + the modelled %v", e.StepTime, k.Measured, k.Modelled)
	}
	if _, err := EvalGraph(context.Background(), GraphEvalOptions{Cluster: inputs.ClusterSpec{Profile: out, Hardware: "h100", HardwareSet: true}, Placement: "single"}); err == nil || !strings.Contains(err.Error(), "of another device: cpu") {
		t.Errorf("a CPU profile on --hardware h100: %v", err)
	}
	// Two replicas of batch 8 each: the measured times scaled from 16
	// (composed), the gradients' all-reduce the roofline's.
	e, err = EvalGraph(context.Background(), GraphEvalOptions{Cluster: inputs.ClusterSpec{Profile: out, GPUs: 2}, Placement: "single", Strategy: "dp=2"})
	if err != nil || e.Costs.Batch != 16 || e.Costs.ScaledTo != 8 || e.Costs.StepTime != "composed and modelled" || e.Costs.Transfers != "modelled" {
		t.Errorf("dp=2: %v, costs %+v", err, e.Costs)
	}
	// search on it, then export the searched placement as a torch plan
	// from the profile's graph and meta.
	res := filepath.Join(t.TempDir(), "result.json")
	cl := inputs.ClusterSpec{Profile: out, GPUs: 2}
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{Cluster: cl, Evals: 30, Out: res})
	if err != nil || rep.Costs == nil || rep.Costs.MeasuredOps != timed {
		t.Fatalf("search --profile: %v, costs %+v", err, rep.Costs)
	}
	plan, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Cluster: cl}, Placement: res, To: "torch-plan"})
	if err != nil || !strings.Contains(string(plan), `"placer-torch-plan"`) || !strings.Contains(string(plan), `"fc1"`) {
		t.Errorf("export --profile --to torch-plan: %v\n%s", err, plan)
	}
}

// An interrupted placer profile --model keeps the steps it finished:
// cancelled once the first step is timed, it writes the profile with
// those, complete false.
func TestProfileModelInterrupted(t *testing.T) {
	py := torchtest.Python(t)
	if testing.Short() {
		t.Skip("runs torch (-short)")
	}
	out := filepath.Join(t.TempDir(), "mlp.profile.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelAfter{cancel: cancel, line: "profile: step 1/"}
	o := profilejob.Options{Out: out, Python: py, Device: "cpu", Threads: 1, ModelOptions: profilejob.ModelOptions{Model: "mlp", Steps: 100000, Warmup: -1}}
	pr, err := profilejob.Run(ctx, o, w)
	if err == nil || pr == nil {
		t.Fatalf("profile: %v, %v, want the interruption and what was measured", pr, err)
	}
	read, rerr := profile.ReadFile(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if read.Complete || read.Ops.Steps < 1 || read.Ops.Steps >= 100000 {
		t.Errorf("complete %v after %d steps", read.Complete, read.Ops.Steps)
	}
	e, err := EvalGraph(context.Background(), GraphEvalOptions{Cluster: inputs.ClusterSpec{Profile: out}, Placement: "single"})
	if err != nil || e.Costs == nil || e.Costs.Complete || e.Costs.MeasuredOps == 0 {
		t.Fatalf("eval of the interrupted profile: %v, %+v", err, e.Costs)
	}
	var b bytes.Buffer
	placements.WriteOpCosts(&b, e.Costs)
	if !strings.Contains(b.String(), "interrupted") {
		t.Errorf("the costs' lines do not say interrupted:\n%s", b.String())
	}
}

// cancelAfter calls cancel once a line holding line is written.
type cancelAfter struct {
	mu     sync.Mutex
	cancel func()
	line   string
	buf    strings.Builder
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.line) {
		c.cancel()
	}
	return len(p), nil
}

// search and export --profile on the three-op profile: the search's
// answer says what it rests on, and export writes the searched
// placement from the profile's graph; the profile holds no exporter's
// meta, so torch-plan is refused in one line.
func TestSearchExportOpsProfile(t *testing.T) {
	res := filepath.Join(t.TempDir(), "result.json")
	cl := inputs.ClusterSpec{Profile: opsProfile, GPUs: 2}
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{Cluster: cl, Evals: 50, Out: res})
	if err != nil {
		t.Fatal(err)
	}
	if k := rep.Costs; k == nil || k.MeasuredOps != 2 || k.ModelledOps != 1 || k.StepTime != "measured and modelled" || len(k.PerDevice) != 2 {
		t.Fatalf("search costs %+v", rep.Costs)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " measured and modelled: 2 ops measured (1.500 ms), 1 modelled") || !strings.Contains(b.String(), "step time of the answer") {
		t.Errorf("search's text:\n%s", b.String())
	}
	out, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Cluster: cl}, Placement: res, To: "decision"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"graph":"three"`) || !strings.Contains(string(out), `"ops":3`) {
		t.Errorf("export: %s", out)
	}
	if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Cluster: cl}, Placement: res, To: "torch-plan"}); err == nil || !strings.Contains(err.Error(), "holds no meta") || strings.Contains(err.Error(), "\n") {
		t.Errorf("torch-plan of a profile without meta: %v", err)
	}
}
