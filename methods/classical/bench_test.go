package classical_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/workloads"
)

// Run with: go test -run '^$' -bench . -benchtime 1x ./methods/classical/
//
// Every deterministic heuristic must finish within 20 s on these graphs;
// the searches stop at a budget of 32 evaluations and report evaluations
// per second.

var (
	bigOnce  sync.Once
	bigProb  *optimize.Problem
	gnmtOnce sync.Once
	gnmtProb *optimize.Problem
	gnmtErr  error
)

// onV100s is g on 8 V100s in DGX-1's hybrid cube-mesh.
func onV100s(g *graph.Graph) (*optimize.Problem, error) {
	h, err := roofline.Preset("v100")
	if err != nil {
		return nil, err
	}
	c, err := roofline.NewCluster(h, 8, "")
	if err != nil {
		return nil, err
	}
	return methodstest.RooflineProblem(g, c, roofline.Options{})
}

// standIn is an 80,000-op random layered DAG, 200 wide, standing in for
// gnmt8 (83,712 TensorFlow ops in GDP): about 134 GB of parameters, so
// one V100 runs out of memory.
func standIn(b *testing.B) *optimize.Problem {
	bigOnce.Do(func() {
		var err error
		bigProb, err = onV100s(graphtest.LayeredDAG(graphtest.Layered{Ops: 80000, Width: 200, Seed: 1}))
		if err != nil {
			b.Fatal(err)
		}
	})
	return bigProb
}

// gnmt8 is the workloads package's gnmt8 (76,424 ops).
func gnmt8(b *testing.B) *optimize.Problem {
	gnmtOnce.Do(func() {
		g, err := workloads.Build("gnmt8")
		if err != nil {
			gnmtErr = err
			return
		}
		gnmtProb, gnmtErr = onV100s(g)
		if gnmtErr == nil {
			gnmtProb.Expert, gnmtErr = workloads.Expert("", g, gnmtProb.Devices())
		}
	})
	if gnmtErr != nil {
		b.Skip("gnmt8:", gnmtErr)
	}
	return gnmtProb
}

var benchMethods = []struct {
	name   string
	budget optimize.Budget
}{
	{"single", optimize.Budget{}},
	{"expert", optimize.Budget{}},
	{"round-robin", optimize.Budget{}},
	{"metis", optimize.Budget{}},
	{"gp-dfs", optimize.Budget{}},
	{"m-topo", optimize.Budget{}},
	{"m-etf", optimize.Budget{}},
	{"tf-default", optimize.Budget{}},
	{"dp", optimize.Budget{}},
	{"random", optimize.Budget{Evaluations: 32}},
	{"local-search", optimize.Budget{Evaluations: 32}},
	{"sa", optimize.Budget{Evaluations: 32}},
	{"brkga", optimize.Budget{Evaluations: 32}},
	{"local-search-anchored", optimize.Budget{Evaluations: 32}},
	{"sa-anchored", optimize.Budget{Evaluations: 32}},
}

// benchAll runs every method on the problem, one sub-benchmark each, and
// reports the step time found, the efficiency against the lower bound,
// whether it is out of memory, and evaluations per second.
func benchAll(b *testing.B, problem func(*testing.B) *optimize.Problem) {
	for _, m := range benchMethods {
		b.Run(m.name, func(b *testing.B) {
			p := problem(b)
			o, err := methods.New(m.name, methods.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var res *optimize.Result
			for i := 0; i < b.N; i++ {
				res, err = o.Optimize(context.Background(), p, &optimize.Settings{Budget: m.budget, Seed: 1})
				if err != nil {
					b.Skip(err) // expert on the stand-in: no expert placement
				}
			}
			b.StopTimer()
			oom := 0.0
			if res.Eval.OOM {
				oom = 1
			}
			b.ReportMetric(res.Eval.StepTime*1e3, "step-ms")
			b.ReportMetric(p.Cost.LowerBound(res.Decision.Fusion != nil)/res.Eval.StepTime, "efficiency")
			b.ReportMetric(oom, "oom")
			b.ReportMetric(float64(res.Stats.Evaluations)/res.Stats.Elapsed.Seconds(), "evals/s")
		})
	}
}

func BenchmarkStandIn80k(b *testing.B) {
	benchAll(b, standIn) // the stand-in has no expert placement
}
func BenchmarkGNMT8(b *testing.B) { benchAll(b, gnmt8) }

// BenchmarkPipedream runs pipedream (planning and its evaluations) on the
// zoo's gpt2_small (make zoo) on 8 V100s over PCIe, else on trxl2.
func BenchmarkPipedream(b *testing.B) {
	g, err := zooOr(b, "gpt2_small", "trxl2")
	if err != nil {
		b.Fatal(err)
	}
	h, _ := roofline.Preset("v100")
	c, err := roofline.NewCluster(h, 8, "pcie")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		// A fresh problem each time: the strategy evaluator caches one
		// model per micro-batch size, which a first run pays for.
		p, err := methodstest.RooflineProblem(g, c, roofline.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (classical.PipeDream{}).Optimize(context.Background(), p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// zooOr reads out/zoo/NAME.json when make zoo has written it, else builds
// the workload fallback.
func zooOr(b *testing.B, name, fallback string) (*graph.Graph, error) {
	f, err := os.Open(filepath.Join("..", "..", "out", "zoo", name+".json"))
	if err != nil {
		b.Logf("no zoo %s (make zoo): %s instead", name, fallback)
		return workloads.Build(fallback)
	}
	defer f.Close()
	return graph.Read(f)
}
