package decision

import (
	"bytes"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

func testGraph(t testing.TB) *graph.Graph {
	b := graph.NewBuilder("g")
	a := b.AddOp(graph.Op{Name: "a", Colocation: "v"})
	c := b.AddOp(graph.Op{Name: "c"})
	d := b.AddOp(graph.Op{Name: "d", Colocation: "v"})
	e := b.AddOp(graph.Op{Name: "e"})
	b.AddTensor(a, 1, c)
	b.AddTensor(c, 1, d, e)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestBuiltinDecisions(t *testing.T) {
	g := testGraph(t)
	rr := RoundRobin(g, 3)
	// topo a, c, d, e: a->0, c->1, d follows a (0), e->2
	want := []int{0, 1, 0, 2}
	for i := range want {
		if rr[i] != want[i] {
			t.Fatalf("round robin = %v, want %v", rr, want)
		}
	}
	if ColocationViolations(g, rr) != 0 {
		t.Fatal("round robin breaks co-location")
	}
	if v := ColocationViolations(g, []int{0, 0, 1, 0}); v != 1 {
		t.Fatalf("violations = %d, want 1", v)
	}
	f := TopologicalFusion(g)
	if f[0] <= f[1] || f[1] <= f[2] {
		t.Fatalf("topological fusion = %v, want decreasing in topo order", f)
	}
	for _, dv := range Single(g) {
		if dv != 0 {
			t.Fatal("single: not device 0")
		}
	}
}

func TestValidate(t *testing.T) {
	g := testGraph(t)
	tests := []struct {
		d    Decision
		dev  int
		want string
	}{
		{Decision{Device: []int{0, 0, 0}}, 2, "has 3 entries, graph \"g\" has 4 ops"},
		{Decision{Device: []int{0, 0, 2, 0}}, 2, `device of op "d": device 2 does not exist (cluster has devices 0..1)`},
		{Decision{Device: []int{0, 0, 0, -1}}, 2, `op "e": device -1 does not exist`},
		{Decision{Device: []int{0, 0, 0, 0}, Priority: []int{1}}, 2, "priority: has 1 entries"},
		{Decision{Device: []int{0, 0, 0, 0}, Fusion: []int{1}}, 2, "fusion: has 1 entries"},
		{Decision{Device: []int{0, 0, 0, 0}, Transfer: []int{1}}, 2, "transfer: has 1 entries"},
		{Decision{Device: []int{0, 0, 0, 0}}, 0, "cluster has 0 devices"},
	}
	for _, tc := range tests {
		err := tc.d.Validate(g, tc.dev)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.d, err, tc.want)
		}
	}
	if err := (Decision{Device: []int{1, 0, 1, 0}, Priority: []int{1, 2, 3, 4}}).Validate(g, 2); err != nil {
		t.Fatal(err)
	}
}

// TestValidateShape: everything Validate checks but the devices' range;
// where ValidateShape fails, Validate fails too.
func TestValidateShape(t *testing.T) {
	g := testGraph(t)
	tests := []struct {
		d    Decision
		dev  int
		want string // "" for no error
	}{
		{Decision{Device: []int{0, 0, 0}}, 2, "has 3 entries, graph \"g\" has 4 ops"},
		{Decision{Device: []int{0, 0, 2, 0}}, 2, ""},
		{Decision{Device: []int{0, 0, 0, -1}, Fusion: []int{1, 2, 3, 4}}, 2, ""},
		{Decision{Device: []int{0, 0, 9, 0}, Priority: []int{1}}, 2, "priority: has 1 entries"},
		{Decision{Device: []int{0, 0, 0, 0}, Fusion: []int{1}}, 2, "fusion: has 1 entries"},
		{Decision{Device: []int{0, 0, 0, 0}, Transfer: []int{1}}, 2, "transfer: has 1 entries"},
		{Decision{Device: []int{0, 0, 0, 0}}, 0, "cluster has 0 devices"},
	}
	for _, tc := range tests {
		err := tc.d.ValidateShape(g, tc.dev)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: err = %v, want none", tc.d, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: err = %v, want %q", tc.d, err, tc.want)
		case err != nil && tc.d.Validate(g, tc.dev) == nil:
			t.Errorf("%+v: ValidateShape fails but Validate does not", tc.d)
		}
	}
}

func TestFileRoundTripAndChecks(t *testing.T) {
	g := testGraph(t)
	d := Decision{Device: []int{1, 0, 1, 0}, Priority: []int{1, 2, 3, 4}, Fusion: []int{4, 3, 2, 1}}
	var buf bytes.Buffer
	if err := Write(&buf, g, 2, d); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Check(g, 2); err != nil {
		t.Fatal(err)
	}
	if got := f.Decision(); got.Device[0] != 1 || got.Priority[3] != 4 || got.Fusion[0] != 4 {
		t.Fatalf("round trip: %+v", got)
	}
	if err := f.Check(g, 4); err == nil || !strings.Contains(err.Error(), "made for 2 devices") {
		t.Fatalf("devices mismatch: %v", err)
	}
	// a result file embedding the decision
	res := `{"step_time_s": 1, "decision": ` + buf.String() + `}`
	if _, err := Decode([]byte(res)); err != nil {
		t.Fatalf("result file: %v", err)
	}
	for in, want := range map[string]string{
		`{"format": "placer-decision", "version": 1, "device": [0, 1`:  "truncated",
		`{"format": "placer-decision", "version": 3, "device": [0]}`:   "version 3",
		`{"format": "placer-graph", "version": 1}`:                     `format is "placer-graph"`,
		`{"format": "placer-decision", "version": 1, "device": ["x"]}`: "line 1, column",
	} {
		if _, err := Decode([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
}

// FuzzDecode: decoding never panics; a decoded file either passes Check
// against a graph or fails it with an error, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"format":"placer-decision","version":1,"graph":"g","ops":4,"devices":2,"device":[0,1,0,1]}`))
	g := testGraph(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if file.Check(g, file.Devices) == nil {
			if err := file.Decision().Validate(g, file.Devices); err != nil {
				t.Fatalf("Check passed but Validate fails: %v", err)
			}
		}
	})
}

// TestDecodeEvalReport: an evaluation's report (placer eval -o) holds
// its decision, one replica's with the strategy, under "decision" and
// reads as that decision; a report without one (an older eval -o) is
// refused in one line saying so, not as an unknown field.
func TestDecodeEvalReport(t *testing.T) {
	g := testGraph(t)
	var buf bytes.Buffer
	d := Decision{Device: []int{0, 1, 0, 1}, Strategy: Strategy{Replicas: 2, MicroBatches: 2, Schedule: OneFOneB}}
	if err := Write(&buf, g, 4, d); err != nil {
		t.Fatal(err)
	}
	report := `{"graph": "g", "ops": 4, "hardware": "v100", "devices": 4, "strategy": "dp=2,mb=2,schedule=1f1b", "replicas": 2, "step_time_s": 0.001, "decision": ` + buf.String() + `}`
	f, err := Decode([]byte(report))
	if err != nil {
		t.Fatalf("eval report: %v", err)
	}
	if f.Devices != 2 || f.Strategy == nil || f.Strategy.R() != 2 || f.Strategy.M() != 2 {
		t.Errorf("eval report: %d devices a replica, strategy %v; want 2, dp=2,mb=2,schedule=1f1b", f.Devices, f.Strategy)
	}
	if err := f.Check(g, 2); err != nil {
		t.Error(err)
	}
	_, err = Decode([]byte(`{"graph": "g", "ops": 4, "hardware": "v100", "devices": 4, "step_time_s": 0.001}`))
	if err == nil || !strings.Contains(err.Error(), "a report without the decision it evaluated") || strings.Contains(err.Error(), "\n") {
		t.Errorf("report without a decision: %v", err)
	}
}

// TestDecodeClusterPlan: a plan file of a transformer at cluster scale
// (search -o's best, eval -o's report) where an op graph's decision goes
// is refused in one line that says what it is and what takes it (it was
// `json: unknown field "best"`); an op graph's eval report, whose
// strategy is text too, is still a decision.
func TestDecodeClusterPlan(t *testing.T) {
	const want = "decision: a plan of a transformer at cluster scale (placer search -o or eval -o), not an op graph's decision: give it to eval or export as --plan FILE with --workload llama:layers=2 --cluster dgx-h100:1"
	for _, file := range []string{
		`{"best": {"model": "llama:layers=2", "cluster": "dgx-h100:1", "gpus": 8, "strategy": "tp=8,pp=1,dp=1,mbs=1"}, "runners_up": [], "evaluated": 3}`,
		`{"model": "llama:layers=2", "cluster": "dgx-h100:1", "gpus": 8, "strategy": "tp=8,pp=1,dp=1,mbs=1", "step_s": 1.5}`,
	} {
		if _, err := Decode([]byte(file)); err == nil || err.Error() != want {
			t.Errorf("%s: %v; want %s", file, err, want)
		}
	}
	g := testGraph(t)
	var buf bytes.Buffer
	if err := Write(&buf, g, 2, Decision{Device: []int{0, 1, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	report := `{"graph": "g", "ops": 4, "hardware": "h100", "devices": 2, "strategy": "", "step_time_s": 0.001, "decision": ` + buf.String() + `}`
	if _, err := Decode([]byte(report)); err != nil {
		t.Errorf("an op graph's eval report: %v", err)
	}
}
