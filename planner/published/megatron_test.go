package published

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// TestLlama3: the Llama 3 paper's plan resolves (7, 8 x 14, 7 layers) and
// its reading keeps its degrees and stages.
func TestLlama3(t *testing.T) {
	for _, row := range Llama3() {
		p, err := plan.PodOf(row.Pod, row.GPUs)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(row.Model, row.Strategy, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(pl.Stages) != 16 || pl.Stages[0] != 7 || pl.Stages[1] != 8 || pl.Stages[15] != 7 {
			t.Errorf("stages %v", pl.Stages)
		}
		r, err := MegatronPlan(t.Context(), row, p)
		if err != nil || !r.Fits {
			t.Fatalf("%s: %v", r, err)
		}
		if r.Plan.TP != 8 || r.Plan.PP != 16 || r.Plan.CP != row.Strategy.ContextDegree() || r.Plan.DP != row.GPUs/(128*r.Plan.CP) || r.Plan.FirstLayers != 7 || r.Plan.LastLayers != 7 {
			t.Errorf("reading %s", r.Plan)
		}
	}
}

// TestMegatronDefault: a Megatron-LM row is read as it ran: its stated
// degrees with micro-batch 1, no virtual stages and no recomputation
// (Megatron-LM's defaults) where that fits; the least recomputation
// that fits where it does not; a row of another stack (Llama 3's) at
// MegatronPlan's fastest reading.
func TestMegatronDefault(t *testing.T) {
	ctx := t.Context()
	row := MegatronTable()[0] // 1.7B: TP 1, PP 1, DP 48
	p, err := plan.PodOf(row.Pod, row.GPUs)
	if err != nil {
		t.Fatal(err)
	}
	r, err := MegatronDefault(ctx, row, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Plan.String(), "tp=1,pp=1,dp=48,mbs=1,distopt=on"; got != want {
		t.Errorf("1.7B read at the defaults: %s, want %s", got, want)
	}
	want, err := planner.Evaluate(row.Model, plan.Strategy{Tensor: 1, Pipeline: 1, Replicas: 48, MicroBatchSize: 1, DistOpt: true}, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Step != want.Step {
		t.Errorf("1.7B default reading: step %v, the stated plan at mbs=1 %v", r.Step, want.Step)
	}

	// A row whose plan does not fit without recomputation, nor with
	// selective: a 70B-shaped GPT at sequence 32,768 on TP 8 x PP 8
	// keeps about 113 GB of activations and weights per GPU (108 GB
	// with selective recomputation, 28 GB with full).
	m := transformer.GPT(80, 8192, 64, 32768, 131072, 64)
	big := Row{Name: "tight", Model: m, Pod: "dgx-h100", GPUs: 64,
		Strategy: plan.Strategy{Tensor: 8, Pipeline: 8, Replicas: 1, SequenceParallel: true}, Megatron: true}
	p, err = plan.PodOf(big.Pod, big.GPUs)
	if err != nil {
		t.Fatal(err)
	}
	none := big.Strategy
	none.MicroBatchSize = 1
	rn, err := planner.Evaluate(big.Model, none, p)
	if err != nil {
		t.Fatal(err)
	}
	r, err = MegatronDefault(ctx, big, p)
	if err != nil {
		t.Fatal(err)
	}
	if rn.Fits {
		t.Fatalf("%s fits without recomputation: the case needs a plan that does not", rn.Plan)
	}
	if !r.Fits || r.Plan.Recompute != plan.FullRecompute || r.Plan.VP > 1 || r.Plan.MBS != 1 {
		t.Errorf("does not fit without full recomputation: read as %s (fits %v)", r.Plan, r.Fits)
	}

	// Llama 3's rows ran on Meta's stack: the fastest reading.
	l := Llama3()[0]
	p, err = plan.PodOf(l.Pod, l.GPUs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := MegatronDefault(ctx, l, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MegatronPlan(ctx, l, p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Plan.String() != b.Plan.String() || a.Step != b.Step {
		t.Errorf("Llama 3 row: default %s, fastest %s", a.Plan, b.Plan)
	}
}

// TestContextOneIsNone: context parallelism of degree 1 is the plan
// without it, to the bit, on published rows that state none.
func TestContextOneIsNone(t *testing.T) {
	for _, row := range append(MegatronTable()[:2], Llama3()[0]) {
		pp, _ := plan.PodOf(row.Pod, row.GPUs)
		one := row.Strategy
		one.Context = 1
		r0, err0 := planner.Evaluate(row.Model, row.Strategy, pp)
		r1, err1 := planner.Evaluate(row.Model, one, pp)
		if err0 != nil || err1 != nil || r0.Step != r1.Step || r0.Memory != r1.Memory || r0.Plan.String() != r1.Plan.String() {
			t.Errorf("%s: cp=1 %v %v, without %v %v", row.Name, r1, err1, r0, err0)
		}
	}
}
