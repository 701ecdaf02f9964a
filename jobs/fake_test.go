package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/report/placements"
)

// fakeCost is a cost model that is not the roofline model: op i takes
// (1 + i%3) ms, nothing fuses, transfers take 0.5 ms, one channel per
// ordered pair of devices.
type fakeCost struct {
	g       *graph.Graph
	devices int
}

func (f fakeCost) Devices() int             { return f.devices }
func (f fakeCost) Capacity() int64          { return 1 << 40 }
func (f fakeCost) IgnoresMemory() bool      { return false }
func (f fakeCost) OpTime(i int) float64     { return float64(1+i%3) * 1e-3 }
func (f fakeCost) Fusible(int) (bool, bool) { return false, false }
func (f fakeCost) TransferTime(s, d int, _ int64) float64 {
	if s == d {
		return 0
	}
	return 0.5e-3
}
func (f fakeCost) Channels() int        { return f.devices * f.devices }
func (f fakeCost) Channel(s, d int) int { return s*f.devices + d }
func (f fakeCost) OpTimes() []float64 {
	t := make([]float64, f.g.NumOps())
	for i := range t {
		t[i] = f.OpTime(i)
	}
	return t
}
func (f fakeCost) LowerBound(bool) float64 {
	s := 0.0
	for _, t := range f.OpTimes() {
		s += t
	}
	return s / float64(f.devices)
}

// fakeEvaluator scores a decision with a formula no roofline code
// computes: the busiest device's op time, plus 0.5 ms per edge between
// devices, minus 1 µs per op with a fusion priority and 1 ns per
// distinct priority (so that every part of a decision counts). It counts
// its calls and writes a trace of its own.
type fakeEvaluator struct {
	cost  fakeCost
	calls atomic.Int64
}

func (f *fakeEvaluator) score(d decision.Decision) (evaluate.Result, error) {
	g := f.cost.g
	if err := d.Validate(g, f.cost.devices); err != nil {
		return evaluate.Result{}, err
	}
	busy := make([]float64, f.cost.devices)
	peak := make([]int64, f.cost.devices)
	for i, dv := range d.Device {
		busy[dv] += f.cost.OpTime(i)
		peak[dv] += g.Op(i).ParamBytes
	}
	step := 0.0
	for _, b := range busy {
		step = math.Max(step, b)
	}
	for i := 0; i < g.NumOps(); i++ {
		for _, s := range g.Succs(i) {
			if d.Device[i] != d.Device[s] {
				step += 0.5e-3
			}
		}
	}
	seen := map[int]bool{}
	for i := range d.Fusion {
		if d.Fusion[i] >= 0 {
			step -= 1e-6
		}
	}
	for _, p := range d.Priority {
		if !seen[p] {
			seen[p] = true
			step -= 1e-9
		}
	}
	capacity := make([]int64, f.cost.devices)
	for i := range capacity {
		capacity[i] = f.cost.Capacity()
	}
	f.calls.Add(1)
	return evaluate.Result{StepTime: step, DeviceBusy: busy, PeakMemory: peak, Capacity: capacity, Kernels: g.NumOps()}, nil
}

func (f *fakeEvaluator) Evaluate(ctx context.Context, d decision.Decision) (evaluate.Result, error) {
	if err := ctx.Err(); err != nil {
		return evaluate.Result{}, err
	}
	return f.score(d)
}

func (f *fakeEvaluator) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []evaluate.Result) error {
	return evaluate.Serial(ctx, f, ds, out)
}

func (f *fakeEvaluator) Trace(ctx context.Context, d decision.Decision, w io.Writer) (evaluate.Result, error) {
	r, err := f.Evaluate(ctx, d)
	if err != nil {
		return r, err
	}
	_, err = fmt.Fprintf(w, `{"fake":true,"step_time_s":%v}`, r.StepTime)
	return r, err
}

// TestSearchThroughFakeEvaluator drives a whole `placer search` (quick
// baselines, the GO policy, the result file and the trace) through a cost
// model and an evaluator that are not the roofline model: every step time
// in the report must be the fake's, and the trace the fake's own, so
// nothing in the search path reaches around the seam.
func TestSearchThroughFakeEvaluator(t *testing.T) {
	var fe *fakeEvaluator
	backend := func(g *graph.Graph, c *roofline.Cluster, _ roofline.Options) (evaluate.CostModel, evaluate.Evaluator, func() error, error) {
		cost := fakeCost{g: g, devices: c.Devices}
		fe = &fakeEvaluator{cost: cost}
		return cost, fe, nil, nil
	}
	dir := t.TempDir()
	out, trace := filepath.Join(dir, "r.json"), filepath.Join(dir, "t.json")
	small := &policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32, SegmentLen: 16}
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{
		Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{GPUs: 2},
		Steps: 3, Samples: 4, Warmup: -1, Seed: 1, Policy: small, Backend: backend, Out: out, Trace: trace,
	})
	if err != nil {
		t.Fatal(err)
	}
	if fe == nil || fe.calls.Load() == 0 {
		t.Fatal("the fake evaluator was never called")
	}
	// Every row's step time is the fake's score of a decision: at most
	// the busiest device's op time plus its transfers, and the lower
	// bound is the fake cost model's.
	if want := (fakeCost{g: mustGraph(t), devices: 2}).LowerBound(false); rep.Comparison.LowerBound != want {
		t.Errorf("lower bound %v, want the fake's %v", rep.Comparison.LowerBound, want)
	}
	// The result file's decision, re-scored by the fake, gives the
	// reported step time exactly.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res placements.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	g := mustGraph(t)
	if err := res.Decision.Check(g, 2); err != nil {
		t.Fatal(err)
	}
	d := res.Decision.Decision()
	again, err := fe.score(d)
	if err != nil {
		t.Fatal(err)
	}
	if again.StepTime != res.StepTime || rep.Result.StepTime != res.StepTime {
		t.Errorf("result step %v, report %v, the fake scores the decision %v", res.StepTime, rep.Result.StepTime, again.StepTime)
	}
	// The GO row and the quick baselines' rows are the fake's numbers,
	// not the roofline model's.
	rf, err := methodstest.RooflineProblem(g, mustCluster(t), roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	roof, err := rf.Evaluator.Evaluate(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if roof.StepTime == res.StepTime {
		t.Fatalf("the roofline model gives the fake's step time %v: the test cannot tell them apart", roof.StepTime)
	}
	tr, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var tv struct {
		Fake bool    `json:"fake"`
		Step float64 `json:"step_time_s"`
	}
	if err := json.Unmarshal(tr, &tv); err != nil || !tv.Fake || tv.Step != res.StepTime {
		t.Errorf("trace %s (%v): not the fake evaluator's trace of the result", tr, err)
	}
}

func mustGraph(t *testing.T) *graph.Graph {
	t.Helper()
	g, _, err := inputs.Graph(inputs.GraphSpec{Path: "../examples/mlp.json"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustCluster(t *testing.T) *roofline.Cluster {
	t.Helper()
	c, err := inputs.Cluster(inputs.ClusterSpec{GPUs: 2}, inputs.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFewerGPUReferences: a search on 4 GPUs also runs the quick methods
// on 2 GPUs; the best of them joins the table as "NAME@2gpu", scored on
// the 4 GPUs, and the search's result is never worse than it (nor than
// its reference, which the search keeps as a candidate).
func TestFewerGPUReferences(t *testing.T) {
	small := &policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32, SegmentLen: 16}
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{
		Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{GPUs: 4},
		Steps: 2, Samples: 4, Warmup: -1, Seed: 1, Policy: small,
	})
	if err != nil {
		t.Fatal(err)
	}
	var at2 *placements.BaselinesRow
	for i, r := range rep.Comparison.Rows {
		if strings.HasSuffix(r.Method, "@2gpu") {
			at2 = &rep.Comparison.Rows[i]
		}
		if r.Method == "go" {
			continue
		}
		if r.Error == "" && !r.OOM && rep.Result.StepTime > r.StepTime && r.Method == rep.Result.Reference {
			t.Errorf("search %v worse than its reference %s %v", rep.Result.StepTime, r.Method, r.StepTime)
		}
	}
	if at2 == nil {
		t.Fatalf("no @2gpu row in %v", rep.Comparison.Rows)
	}
	if rep.Result.StepTime > at2.StepTime {
		t.Errorf("search on 4 GPUs %v, worse than %s %v", rep.Result.StepTime, at2.Method, at2.StepTime)
	}
	g := mustGraph(t)
	if at2.Evaluations < 1 || at2.StepTime <= 0 || g.NumOps() == 0 {
		t.Errorf("row %+v", *at2)
	}
}

// TestExpertFromFile: --expert FILE gives any graph an expert row, from
// msr-fiddle's expert JSON (node ids; here op indices) or a decision file;
// a bad file is an error.
func TestExpertFromFile(t *testing.T) {
	g := mustGraph(t)
	n := g.NumOps()
	var first, second []string
	for i := 0; i < n; i++ {
		if i < n/2 {
			first = append(first, fmt.Sprint(i))
		} else {
			second = append(second, fmt.Sprint(i))
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "expert.json")
	body := fmt.Sprintf(`{"fpgas":[{"nodes":[%s]},{"nodes":[%s]}]}`, strings.Join(first, ","), strings.Join(second, ","))
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := inputs.GraphSpec{Path: "../examples/mlp.json", Expert: file}
	b, err := Baselines(context.Background(), BaselinesOptions{Graph: spec, Cluster: inputs.ClusterSpec{GPUs: 2}, Methods: []string{"single", "expert"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Reference != "expert" || b.Rows[1].Error != "" || b.Rows[1].StepTime <= 0 {
		t.Fatalf("reference %q, expert row %+v", b.Reference, b.Rows[1])
	}
	e, err := EvalGraph(context.Background(), GraphEvalOptions{Graph: spec, Cluster: inputs.ClusterSpec{GPUs: 2}, Placement: "expert"})
	if err != nil {
		t.Fatal(err)
	}
	// (The table's expert row moves co-location groups together; eval
	// takes the file as it is.)
	if e.PerDevice[0].Ops != n/2 || e.PerDevice[1].Ops != n-n/2 {
		t.Errorf("ops per device %+v, want %d and %d", e.PerDevice, n/2, n-n/2)
	}
	// A node placed twice is a one-line error naming the file.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"fpgas":[{"nodes":[0]},{"nodes":[0]}]}`), 0o644)
	_, err = Baselines(context.Background(), BaselinesOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json", Expert: bad}, Cluster: inputs.ClusterSpec{GPUs: 2}, Methods: []string{"expert"}})
	if err == nil || !strings.Contains(err.Error(), "bad.json") || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad expert file: %v", err)
	}
}
