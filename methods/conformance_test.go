package methods_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/workloads"
	"github.com/placer/placer/workloads/msrfiddle"
)

// testExpert is a stand-in expert placement: contiguous runs of the
// topological order of equal op count, one per device.
func testExpert(g *graph.Graph, devices int) []int {
	dev := make([]int, g.NumOps())
	for k, v := range g.Topo() {
		dev[v] = k * devices / g.NumOps()
	}
	return dev
}

// msrDir holds the msr-fiddle graphs beside the checkout (shared/data).
const msrDir = "../../shared/data/msr-fiddle"

// cases are the conformance problems, each with the stand-in expert
// placement: the suite's own and examples/mlp.json on 2 GPUs.
func cases(t *testing.T) []methodstest.Case {
	t.Helper()
	cs, err := methodstest.StandardCases()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../examples/mlp.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := graph.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs, methodstest.Case{Name: "mlp/2gpu", Problem: p})
	for _, c := range cs {
		c.Problem.Expert = testExpert(c.Problem.Graph, c.Problem.Devices())
	}
	return cs
}

// msrCases are the msr-fiddle graphs beside the checkout, on their own
// device counts (2 to 8) and memory limits; none when the data set is
// absent.
func msrCases(t *testing.T) []methodstest.Case {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(msrDir, "*.json"))
	var cs []methodstest.Case
	for _, file := range files {
		g, meta, err := msrfiddle.ReadWithMeta(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		devices := min(max(meta.Devices, 2), 8)
		p, err := methodstest.NewProblem(g, devices, meta.MaxBytesPerDevice)
		if err != nil {
			t.Fatal(err)
		}
		p.Expert = testExpert(g, p.Devices())
		cs = append(cs, methodstest.Case{Name: "msr-fiddle/" + g.Name(), Problem: p})
	}
	return cs
}

// batchCases are problems on graphs that record their batch (built-in
// workloads), for the methods that split it.
func batchCases(t *testing.T) []methodstest.Case {
	t.Helper()
	var cs []methodstest.Case
	for _, w := range []struct {
		name    string
		devices int
	}{{"wavenet2x18", 2}, {"trxl2", 4}} {
		g, err := workloads.Build(w.name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := methodstest.NewProblem(g, w.devices, 0)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, methodstest.Case{Name: w.name, Problem: p})
	}
	return cs
}

// small is a policy small enough for the suite.
var small = &policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32, SegmentLen: 16}

// TestConformance runs the suite for every method of the registry: the
// classical ones on 40 evaluations, the learned ones with a small network
// and 2 steps of 4 samples (go-zero-shot with an untrained network of the
// same size, since the suite checks the seam, not the quality).
func TestConformance(t *testing.T) {
	standard := cases(t)
	msr := msrCases(t)
	for _, e := range methods.All() {
		t.Run(e.Name, func(t *testing.T) {
			s := optimize.Settings{Budget: optimize.Budget{Evaluations: 40}, Seed: 3}
			o := methods.Options{}
			cs := standard
			withMSR := true
			if e.Splits {
				cs = batchCases(t) // it splits the batch: graphs that have one
				withMSR = false
			}
			if e.Kind == methods.Learned {
				s.Budget = optimize.Budget{Steps: 2}
				o = methods.Options{Policy: small, Samples: 4, Warmup: 2}
				withMSR = false
			}
			newOpt := func() (optimize.Optimizer, error) {
				if e.Pretrained {
					// A fresh untrained network stands in for the
					// embedded model, sized for each problem's tasks
					// by the go method's own configuration.
					return untrainedFor{e.Name, o}, nil
				}
				return e.New(o)
			}
			methodstest.Run(t, e.Name, newOpt, cs, s)
			if withMSR {
				t.Run("msr-fiddle", func(t *testing.T) {
					if len(msr) == 0 {
						t.Skipf("no msr-fiddle graphs in %s (shared/data/msr-fiddle beside the checkout)", msrDir)
					}
					methodstest.Run(t, e.Name, newOpt, msr, s)
				})
			}
		})
	}
}

// TestNames pins the table order of the papers' methods (a new method
// may sit anywhere among them), the kinds in order, and the default lists.
func TestNames(t *testing.T) {
	want := []string{"single", "expert", "round-robin", "random", "metis", "gp-dfs", "m-topo", "m-etf", "dp", "local-search", "sa", "local-search-anchored", "sa-anchored", "brkga", "tf-default", "go", "go-no-learning", "go-zero-shot", "rl17", "hdp"}
	if got := methods.Names(); !subsequence(want, got) {
		t.Errorf("Names() = %v, want %v in this order", got, want)
	}
	all := methods.All()
	for i := 1; i < len(all); i++ {
		if all[i].Kind < all[i-1].Kind {
			t.Errorf("%s (%s) after %s (%s): the table shows kinds in order", all[i].Name, all[i].Kind, all[i-1].Name, all[i-1].Kind)
		}
	}
	if got, want := methods.Quick(), []string{"single", "expert", "metis", "gp-dfs", "m-topo", "m-etf", "dp", "tf-default"}; !equal(got, want) {
		t.Errorf("Quick() = %v, want %v", got, want)
	}
	seen := map[string]bool{}
	for _, e := range methods.All() {
		if seen[e.Name] {
			t.Errorf("%s registered twice", e.Name)
		}
		seen[e.Name] = true
		o, err := e.New(methods.Options{})
		if e.Pretrained && err != nil {
			continue // no embedded model in this build
		}
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if o.Name() != e.Name {
			t.Errorf("registered as %q, calls itself %q", e.Name, o.Name())
		}
	}
	if _, err := methods.New("nope", methods.Options{}); err == nil {
		t.Error("an unknown method was made")
	}
	if err := methods.Check([]string{"single", "nope"}); err == nil {
		t.Error("Check accepted an unknown method")
	}
	if _, err := methods.New("local-search", methods.Options{Start: "bogus"}); err == nil {
		t.Error("local-search accepted an unknown start")
	}
}

// subsequence reports whether a's names appear in b in a's order.
func subsequence(a, b []string) bool {
	i := 0
	for _, x := range b {
		if i < len(a) && a[i] == x {
			i++
		}
	}
	return i == len(a)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// untrainedFor makes a method that places with a pre-trained model
// through the registry, with an untrained network made for each problem's
// tasks in the model's place (a trained model decides fixed tasks; the
// suite changes them).
type untrainedFor struct {
	name string
	o    methods.Options
}

func (u untrainedFor) Name() string { return u.name }

func (u untrainedFor) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	pol, err := gdp.NewPolicy(u.o.Policy, p.EffectiveTasks(), 1)
	if err != nil {
		return nil, err
	}
	o := u.o
	o.Trained = pol
	if o.Regal, err = regal.NewModel(regal.Config{Dim: 8, Hidden: 8}, 1); err != nil {
		return nil, err
	}
	opt, err := methods.New(u.name, o)
	if err != nil {
		return nil, err
	}
	return opt.Optimize(ctx, p, s)
}
