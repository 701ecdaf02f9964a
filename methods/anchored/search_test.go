package anchored

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// problemOn is g on n V100s over PCIe with capacity bytes each (0 = the
// hardware's), TensorFlow's base, and its resizer.
func problemOn(t *testing.T, g *graph.Graph, n int, capacity int64) (*optimize.Problem, Resizer) {
	t.Helper()
	h, err := roofline.Preset(roofline.DefaultHardware)
	if err != nil {
		t.Fatal(err)
	}
	if capacity > 0 {
		h.Memory = capacity
	}
	resize := func(g *graph.Graph, k int) (*optimize.Problem, func() error, error) {
		c, err := roofline.NewCluster(h, k, "pcie")
		if err != nil {
			return nil, nil, err
		}
		p, err := methodstest.RooflineProblem(g, c, roofline.Options{})
		return p, nil, err
	}
	p, _, err := resize(g, n)
	if err != nil {
		t.Fatal(err)
	}
	TFBase(p)
	return p, resize
}

// TestNeverWorseThanItsRows, on random layered graphs with and without a
// batch, at 2 and 4 GPUs, for an anchored and a non-anchored method: the
// answer is at most every valid row's objective (the joint space's rows
// included); Source names a row exactly when the answer is that row's
// decision; the same seed gives the same answer.
func TestNeverWorseThanItsRows(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		for _, batch := range []int{0, 8} {
			for _, n := range []int{2, 4} {
				for _, method := range []string{"local-search-anchored", "local-search"} {
					name := fmt.Sprintf("seed%d/batch%d/%dgpu/%s", seed, batch, n, method)
					t.Run(name, func(t *testing.T) {
						g := graphtest.LayeredDAG(graphtest.Layered{Ops: 60, Width: 4, Seed: seed, Batch: batch})
						run := func() *Outcome {
							p, resize := problemOn(t, g, n, 0)
							s := &Search{Method: method, Resize: resize}
							out, err := s.Run(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 60}, Seed: seed})
							if err != nil {
								t.Fatal(err)
							}
							return out
						}
						out := run()
						o := optimize.StepTime
						got := o.Of(&out.Result.Eval)
						for _, r := range append(slices.Clone(out.Rows), out.Joint...) {
							if r.Result != nil && o.Valid(&r.Eval) && o.Of(&r.Eval) < got*(1-1e-12) {
								t.Errorf("answer %g, worse than row %s %g", got, r.Name, o.Of(&r.Eval))
							}
						}
						if kept := out.Result != out.Own; kept != (out.Source != "") {
							t.Errorf("answer kept from a row %v, source %q", kept, out.Source)
						}
						if batch == 0 && len(out.Joint) > 0 {
							t.Errorf("joint rows %d on a graph without a batch", len(out.Joint))
						}
						again := run()
						if !slices.Equal(again.Result.Decision.Device, out.Result.Decision.Device) || again.Result.Eval.StepTime != out.Result.Eval.StepTime || again.Source != out.Source {
							t.Errorf("same seed, another answer: %g (%s) and %g (%s)", out.Result.Eval.StepTime, out.Source, again.Result.Eval.StepTime, again.Source)
						}
					})
				}
			}
		}
	}
}

// counting counts the evaluations of its evaluator.
type counting struct {
	evaluate.Evaluator
	n atomic.Int64
}

func (c *counting) Evaluate(ctx context.Context, d decision.Decision) (evaluate.Result, error) {
	c.n.Add(1)
	return c.Evaluator.Evaluate(ctx, d)
}

// TestQuickMethodsRunOnce: when no reference is valid (every device far
// too small), the anchored search starts from the least invalid of the
// rows the pipeline already has instead of running the quick methods a
// second time. With one reference ("single", one evaluation) and a
// search of at most 5 evaluations, the problem's evaluator is called at
// most 1 + 5 + 1 times (the anchor evaluated when nothing else was);
// running the eight quick methods again would call it more than 10 times.
func TestQuickMethodsRunOnce(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 60, Width: 4, Seed: 1})
	p, resize := problemOn(t, g, 2, 1<<10)
	c := &counting{Evaluator: p.Evaluator}
	p.Evaluator = c
	s := &Search{Method: "local-search-anchored", References: []string{"single"}, Resize: resize}
	out, err := s.Run(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 5}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reference.Result != nil {
		t.Fatalf("reference %s is valid on 1 KiB devices", out.Reference.Name)
	}
	if got := c.n.Load(); got > 7 {
		t.Errorf("%d evaluations of the problem's evaluator, want at most 7 (the quick methods ran again)", got)
	}
}

// TestLimits: a method states its own limits and default budget; the
// search refuses a problem outside them before running anything.
func TestLimits(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 20, Width: 2, Seed: 1})
	p, resize := problemOn(t, g, 16, 0)
	c := &counting{Evaluator: p.Evaluator}
	p.Evaluator = c
	_, err := (&Search{Method: "go", Resize: resize}).Run(context.Background(), p, nil)
	if err == nil || c.n.Load() != 0 {
		t.Errorf("go on 16 GPUs: error %v after %d evaluations, want an error before any", err, c.n.Load())
	}
	if b := (&Search{Method: "go"}).Budget(optimize.Budget{}, 76424); b != (optimize.Budget{Steps: 100}) {
		t.Errorf("go's default budget %+v, want 100 steps", b)
	}
	// The default: 10,000 evaluations up to 25,000 ops, then 2.5e8
	// op-evaluations (gnmt8's 76,424 ops: 3,271), never under 500.
	for _, c := range []struct{ ops, want int }{{0, 10000}, {3332, 10000}, {25000, 10000}, {25001, 9999}, {76424, 3271}, {600000, 500}} {
		if b := (&Search{}).Budget(optimize.Budget{}, c.ops); b != (optimize.Budget{Evaluations: c.want}) {
			t.Errorf("the default search's budget on %d ops %+v, want %d evaluations", c.ops, b, c.want)
		}
	}
	if b := (&Search{}).Budget(optimize.Budget{CPU: 5}, 76424); b != (optimize.Budget{CPU: 5}) {
		t.Errorf("a named budget became %+v", b)
	}
	if _, err := (&Search{Method: "metis"}).Run(context.Background(), p, nil); err == nil || !strings.Contains(err.Error(), `"metis": not a search (searches: local-search, sa, `) {
		t.Errorf("metis as a search: %v, want a one-line refusal listing the searches", err)
	}
}

// TestRecorder: every row of the table is reported once, as it finishes,
// in table order.
func TestRecorder(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 60, Width: 4, Seed: 2, Batch: 8})
	p, resize := problemOn(t, g, 2, 0)
	var done []string
	rec := optimize.RecorderFunc(func(e optimize.Event) {
		if e.Kind == optimize.Done {
			done = append(done, e.Method)
		}
	})
	out, err := (&Search{Method: "local-search-anchored", Resize: resize}).Run(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 40}, Seed: 2, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range append(slices.Clone(out.Rows), out.Joint...) {
		want = append(want, r.Name)
	}
	if !slices.Equal(done, want) {
		t.Errorf("recorded %v, want the rows %v", done, want)
	}
}

// TestConformance: the search is an optimizer like every method, and
// passes their one conformance suite (every op placed, memory and
// co-location honoured, the same result for the same seed, a result when
// cancelled, the tasks kept).
func TestConformance(t *testing.T) {
	cases, err := methodstest.StandardCases()
	if err != nil {
		t.Fatal(err)
	}
	newOpt := func() (optimize.Optimizer, error) {
		return &Search{Method: "local-search-anchored"}, nil
	}
	methodstest.Run(t, "local-search-anchored", newOpt, cases, optimize.Settings{Budget: optimize.Budget{Evaluations: 50}, Seed: 4})
}
