package search

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// TestSpaceOf: a partial plan as a search space. The run's settings go to
// Space's fields; each degree or switch named keeps only the plans that
// have it (a resolved plan passes, the same with any one of them changed
// does not); vp and mbs above the search's defaults raise its bounds;
// what the search cannot keep is refused in one line.
func TestSpaceOf(t *testing.T) {
	if sp, err := SpaceOf(""); err != nil || sp.Keep != nil || sp.FP8 != "" || sp.GradBF16 || sp.FSDP {
		t.Errorf(`SpaceOf(""): %+v, %v; want the whole space`, sp, err)
	}
	sp, err := SpaceOf("fp8=blockwise,grads=bf16,imbalance=1.5,fsdp=on")
	if err != nil || sp.FP8 != plan.FP8Blockwise || !sp.GradBF16 || sp.Imbalance != 1.5 || !sp.FSDP || sp.Keep == nil {
		t.Errorf("settings: %+v, %v", sp, err)
	}
	if sp, err := SpaceOf("fp8=current,fsdp=on,fp8gather=on,stack=torchtitan-0.2"); err != nil || !sp.FP8Gather {
		t.Errorf("fp8gather=on: %+v, %v; want it kept", sp, err)
	}
	m := specOf(t, strings.Replace(smallMoESpec, "batch=8", "batch=256", 1))
	p, err := plan.PodOf("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	const fixed = "tp=2,pp=2,vp=1,mbs=16,sp=on,tpoverlap=off,distopt=on,recompute=selective,ep=4,etp=1,epoverlap=off"
	sp, err = SpaceOf(fixed)
	if err != nil || sp.MaxMBS != 16 || sp.MaxVirtual != 8 {
		t.Fatalf("SpaceOf(%s): %+v, %v", fixed, sp, err)
	}
	s, err := plan.ParseStrategy(fixed)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.Keep(pl) {
		t.Errorf("%s: its own plan is not kept", fixed)
	}
	for _, change := range []func(*plan.Plan){
		func(q *plan.Plan) { q.TP = 4 }, func(q *plan.Plan) { q.PP = 4 }, func(q *plan.Plan) { q.VP = 2 }, func(q *plan.Plan) { q.MBS = 8 },
		func(q *plan.Plan) { q.SequenceParallel = false }, func(q *plan.Plan) { q.TPOverlap = true }, func(q *plan.Plan) { q.DistOpt = false },
		func(q *plan.Plan) { q.Recompute = plan.FullRecompute }, func(q *plan.Plan) { q.EP = 8 }, func(q *plan.Plan) { q.ETP = 2 },
		func(q *plan.Plan) { q.EPOverlap = true },
	} {
		q := pl
		change(&q)
		if sp.Keep(q) {
			t.Errorf("%s: kept %s", fixed, q)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"schedule=gpipe", "the search runs 1F1B"},
		{"tq=2", `unknown key "tq"`},
		{"grads=fp8", "want bf16 or fp32"},
	} {
		if _, err := SpaceOf(c.text); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("SpaceOf(%q): %v, want one line with %q", c.text, err, c.want)
		}
	}
	// The search with a partial plan: every plan it keeps has what was
	// named, and the settings.
	sp, err = SpaceOf("tp=2,ep=4,fp8=current,grads=bf16")
	if err != nil {
		t.Fatal(err)
	}
	sp.Top = 5
	got, err := Search(context.Background(), m, p, sp)
	if err != nil || !got.Found || len(got.Top) == 0 {
		t.Fatalf("search: %+v, %v", got, err)
	}
	for _, r := range got.Top {
		if r.Plan.TP != 2 || r.Plan.EP != 4 || r.Plan.FP8 != plan.FP8Current || !r.Plan.GradBF16 {
			t.Errorf("search kept %s", r.Plan)
		}
	}
}

// BenchmarkSearchDeepSeekV3: the search of DeepSeek-V3 on 2,048 H800s in
// FP8 (blockwise), the project's budget: at most 10 CPU s.
//
//	go test -run xxx -bench SearchDeepSeekV3 -benchtime 1x ./planner
func BenchmarkSearchDeepSeekV3(b *testing.B) {
	m := specOf(b, "deepseek-v3:seq=4096,batch=15360")
	p, err := plan.PodOf("dgx-h800", 2048)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := Search(context.Background(), m, p, Space{FP8: plan.FP8Blockwise})
		if err != nil || !got.Found {
			b.Fatal(err)
		}
		b.ReportMetric(float64(got.Evaluated), "plans")
	}
}

// TestFSDPExpertsQwen3: Megatron-MoE-ModelZoo's FSDP plan of
// Qwen3-235B-A22B (tp 2, ep 8, expert-DP 32, dp 128, micro-batch 4, full
// recomputation) on 256 H100s evaluates and fits; the search with
// fsdp=on tries FSDP with experts.
func TestFSDPExpertsQwen3(t *testing.T) {
	m := specOf(t, "qwen3-235b-a22b:seq=4096,batch=2048")
	p, _ := plan.PodOf("dgx-h100", 256)
	r := evaluated(t, m, p, "tp=2,ep=8,etp=1,dp=128,mbs=4,sp=on,fsdp=on,recompute=full")
	if !r.Fits || r.Plan.EDP != 32 || !(r.DPExposed > 0) || !(r.Step > r.Compute) {
		t.Errorf("%s: fits %v, expert-DP %d, exposed %g s, step %g s", r, r.Fits, r.Plan.EDP, r.DPExposed, r.Step)
	}
	small := specOf(t, smallMoESpec)
	p8, _ := plan.PodOf("dgx-h100", 8)
	sp, err := SpaceOf("fsdp=on")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Search(context.Background(), small, p8, sp)
	if err != nil || !got.Found || !got.Best.Plan.FSDP {
		t.Errorf("search with fsdp=on: %v, found %v, %s", err, got.Found, got.Best.Plan)
	}
}

// TestSearchMoE: the search tries the experts' meshes and finds a plan at
// least as fast as a stated one.
func TestSearchMoE(t *testing.T) {
	m := specOf(t, smallMoESpec)
	p, _ := plan.PodOf("dgx-h100", 8)
	got, err := Search(context.Background(), m, p, Space{})
	if err != nil || !got.Found {
		t.Fatalf("%v, found %v", err, got.Found)
	}
	stated, err := planner.Evaluate(m, plan.Strategy{Replicas: 8, Experts: 4, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Best.Step > stated.Step {
		t.Errorf("search's best %s %.6f s, slower than %s %.6f s", got.Best.Plan, got.Best.Step, stated.Plan, stated.Step)
	}
}

func BenchmarkSearch462B(b *testing.B) {
	row := row462B()
	p, _ := plan.PodOf(row.Pod, row.GPUs)
	for b.Loop() {
		if _, err := Search(b.Context(), row.Model, p, Space{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLlamaSearch: a Llama 3 8B on 8 nodes: the search finds a plan that
// fits, and grouped-query attention's 8 key/value heads bound TP.
func TestLlamaSearch(t *testing.T) {
	m, err := transformer.Parse("llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=512")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plan.PodOf("dgx-h100", 64)
	got, err := Search(t.Context(), m, p, Space{})
	if err != nil || !got.Found || !got.Best.Fits {
		t.Fatalf("%v, %+v", err, got)
	}
	if _, err := planner.Evaluate(m, plan.Strategy{Tensor: 16}, p); err == nil {
		t.Error("tp=16 over 8 key/value heads: want an error")
	}
	if got.Best.MFU <= 0 || got.Best.MFU > 1 {
		t.Errorf("MFU %v", got.Best.MFU)
	}
}

// TestSearchTop: the kept plans are the fastest fitting ones, sorted, the
// best first.
func TestSearchTop(t *testing.T) {
	row := row70B()
	p, _ := plan.PodOf(row.Pod, row.GPUs)
	got, err := Search(t.Context(), row.Model, p, Space{Top: 5})
	if err != nil || len(got.Top) != 5 {
		t.Fatalf("%v, %d kept", err, len(got.Top))
	}
	if !reflect.DeepEqual(got.Top[0].Plan, got.Best.Plan) {
		t.Errorf("first kept %s, best %s", got.Top[0], got.Best)
	}
	for i := 1; i < len(got.Top); i++ {
		if got.Top[i].Step < got.Top[i-1].Step || !got.Top[i].Fits {
			t.Errorf("kept plan %d: %s after %s", i, got.Top[i], got.Top[i-1])
		}
	}
	if top := keepTop([]planner.Result{{Step: 1}, {Step: 3}}, planner.Result{Step: 2}, 2); len(top) != 2 || top[1].Step != 2 {
		t.Errorf("keepTop: %+v", top)
	}
}

// TestSearchUneven: with a vocabulary large enough that the output
// layer outweighs a few blocks, the search finds a split at least as fast
// as 5 layers on the first stage and 3 on the last, which beat 4 and 4
// (TestUnevenStages).
func TestSearchUneven(t *testing.T) {
	m := transformer.GPT(8, 1024, 16, 1024, 262144, 16)
	p, _ := plan.PodOf("dgx-h100", 2)
	p = p.AtBurst()
	uneven, err := planner.Evaluate(m, plan.Strategy{Pipeline: 2, MicroBatchSize: 1, FirstLayers: 5, LastLayers: 3}, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Search(t.Context(), m, p, Space{})
	if err != nil || !got.Found {
		t.Fatal(got, err)
	}
	if got.Best.Step > uneven.Step {
		t.Errorf("search: %s, slower than %s", got.Best, uneven)
	}
}

// TestFewestRecomputed: fewestRecomputed is the fewest layers of a chunk
// recomputing (recompute-layers=k) that fit, as a brute force over k
// finds it, on GPUs whose memory lets every layer, some or one keep its
// activations.
func TestFewestRecomputed(t *testing.T) {
	m := transformer.GPT(8, 2048, 16, 2048, 32000, 16)
	p, _ := plan.PodOf("dgx-h100", 2)
	p = p.AtBurst()
	full := plan.Strategy{Pipeline: 2, MicroBatchSize: 1, Recompute: plan.FullRecompute}
	block := full
	block.RecomputeLayers = 1
	rAll, err := planner.Evaluate(m, full, p)
	if err != nil {
		t.Fatal(err)
	}
	rOne, err := planner.Evaluate(m, block, p)
	if err != nil {
		t.Fatal(err)
	}
	// A GPU whose memory lets some but not all layers keep their
	// activations: the bisection's k is the brute force's.
	for _, mem := range []int64{rAll.Memory, (rAll.Memory + rOne.Memory) / 2, rOne.Memory} {
		q := p
		q.Hardware.Memory = mem + planner.Reserve
		want := 0
		for k := 1; k < 4; k++ {
			s := full
			s.RecomputeLayers = k
			if r, _ := planner.Evaluate(m, s, q); r.Fits {
				want = k
				break
			}
		}
		if got := fewestRecomputed(m, full, &q, 1, func(pl plan.Plan) bool { return planner.FitsTight(m, pl, &q, false) }); got != want {
			t.Errorf("memory %d: fewest recomputing layers %d, brute force %d", mem, got, want)
		}
	}
}

// TestStageTPSearch: the search's space holds every uniform plan, so it
// is never slower than the uniform plans' search; and where a heavy
// output layer and 24 GPUs make uniform plans awkward, it finds a plan of
// TP 4 and 8 stages faster than every uniform one.
func TestStageTPSearch(t *testing.T) {
	m := transformer.GPT(8, 1024, 16, 1024, 262144, 16)
	p, _ := plan.PodOf("dgx-h100", 24)
	all, err := Search(t.Context(), m, p, Space{})
	if err != nil || !all.Found {
		t.Fatal(err)
	}
	uni, err := Search(t.Context(), m, p, Space{Keep: func(pl plan.Plan) bool { return pl.Uniform() }})
	if err != nil || !uni.Found {
		t.Fatal(err)
	}
	if all.Best.Plan.Uniform() || !(all.Best.Step < uni.Best.Step) || !slices.Equal(all.Best.Plan.TPs, []int{4, 8}) {
		t.Errorf("search %s; uniform %s", all.Best, uni.Best)
	}
	if uni.Evaluated >= all.Evaluated {
		t.Errorf("%d plans evaluated, %d uniform", all.Evaluated, uni.Evaluated)
	}
}

// TestContextSearch: the degrees Search tries (none below a sequence of
// 8,192, none leaving a GPU fewer than 4,096 tokens), and a long
// sequence that fits only with context parallelism.
func TestContextSearch(t *testing.T) {
	for _, c := range []struct {
		seq, gpus int
		want      []int
	}{{4096, 1024, []int{1}}, {8192, 1024, []int{1, 2}}, {131072, 2048, []int{1, 2, 4, 8, 16, 32}}, {131072, 8, []int{1, 2, 4, 8}}, {12288, 64, []int{1, 2}}} {
		m := transformer.GPT(2, 64, 4, c.seq, 128, 8)
		if got := plan.ContextDegrees(m, c.gpus); !slices.Equal(got, c.want) {
			t.Errorf("seq %d on %d GPUs: %v, want %v", c.seq, c.gpus, got, c.want)
		}
	}
	m, err := transformer.Parse("llama:layers=4,hidden=4096,heads=32,kv_heads=8,seq=262144,vocab=32000,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plan.PodOf("dgx-h100", 8)
	got, err := Search(t.Context(), m, p, Space{})
	if err != nil || !got.Found {
		t.Fatalf("%v %v", got.Found, err)
	}
	if got.Best.Plan.CP < 2 {
		t.Errorf("a 262,144-token sequence on 8 GPUs: %s, want context parallelism", got.Best)
	}
	if noCP, _ := Search(t.Context(), m, p, Space{Keep: func(pl plan.Plan) bool { return pl.CP == 1 }}); noCP.Found && noCP.Best.Step <= got.Best.Step {
		t.Errorf("without context parallelism %s, with %s", noCP.Best, got.Best)
	}
}

// TestFitsAsEvaluated: fits, the memory alone, says what a whole
// evaluation's Fits says, on the count (CountFitsTight, EvaluateCounted)
// on every plan Search enumerates for models that fit, fit only with
// recomputation, and do not fit at all, and on the reservation
// (FitsTight, EvaluateCached) on a sample of them. The evaluations go
// through one phase cache, as Search's do (TestCachedAsEvaluated: the
// same evaluation as without one).
func TestFitsAsEvaluated(t *testing.T) {
	const judgedEvery = 37
	for _, c := range []struct {
		m    transformer.Spec
		pod  string
		gpus int
	}{
		{transformer.GPT(24, 2048, 16, 4096, 131072, 64), "dgx-h100", 16},
		{transformer.GPT(80, 8192, 64, 32768, 131072, 64), "dgx-h100", 64},
		{row70B().Model, "dgx-h100", 768},
	} {
		p, err := plan.PodOf(c.pod, c.gpus)
		if err != nil {
			t.Fatal(err)
		}
		n, yes := 0, 0
		cache := planner.PhaseCache{}
		_, err = Search(t.Context(), c.m, p, Space{Keep: func(pl plan.Plan) bool {
			n++
			want := planner.EvaluateCounted(c.m, pl, &p, cache).Fits
			if got := planner.CountFitsTight(c.m, pl, &p, true); got != want {
				t.Errorf("%s: fits on the count %v, evaluated %v", pl, got, want)
			}
			if n%judgedEvery == 0 {
				// The verdict on the reservation, a replay of
				// milliseconds: on every judgedEvery-th plan.
				want := planner.EvaluateCached(c.m, pl, &p, nil, false).Fits
				if got := planner.FitsTight(c.m, pl, &p, true); got != want {
					t.Errorf("%s: fits %v, evaluated %v", pl, got, want)
				}
			}
			if want {
				yes++
			}
			return false
		}})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("%s: no plans", c.m)
		}
		t.Logf("%s: %d plans, %d fit", c.m, n, yes)
	}
}

// TestCachedAsEvaluated: every plan Search enumerates is evaluated
// through one phase cache as Search evaluates them, and every
// comparedEvery-th is its evaluation without one, field for field (the
// block alone, LayerForward and LayerBackward, kept with the cached
// phases included): dense models with end stages of their own degree,
// FSDP and FP8, and DeepSeek-V3's dense and MoE layers with multi-token
// prediction. The cache sees every plan in Search's order, so a phase
// kept under a key that leaves out what it depends on is met again by
// the plans compared: with any one of costKey's T, MBS, sp, ov, EP, rc
// or blockRec left out the test fails at comparedEvery 7 as at 1
// (checked by hand, 2026-11-28; C, mods and imbalance, which its cases
// do not vary, pass at both); the uncached evaluations, most of its
// time, are one in seven.
func TestCachedAsEvaluated(t *testing.T) {
	const comparedEvery = 7
	for _, c := range []struct {
		m    transformer.Spec
		pod  string
		gpus int
		sp   Space
	}{
		{transformer.GPT(24, 2048, 16, 4096, 131072, 64), "dgx-h100", 16, Space{FSDP: true, FP8: plan.FP8Current}},
		{specOf(t, "deepseek-v3:seq=4096,batch=1920"), "dgx-h800", 256, Space{FP8: plan.FP8Blockwise}},
	} {
		p, err := plan.PodOf(c.pod, c.gpus)
		if err != nil {
			t.Fatal(err)
		}
		cache := planner.PhaseCache{}
		n, bad := 0, 0
		c.sp.Keep = func(pl plan.Plan) bool {
			n++
			got := planner.EvaluateCounted(c.m, pl, &p, cache)
			if n%comparedEvery != 0 {
				return false
			}
			if want := planner.EvaluateCounted(c.m, pl, &p, nil); !reflect.DeepEqual(got, want) && bad < 5 {
				bad++
				t.Errorf("%s: cached %+v, evaluated %+v", pl, got, want)
			}
			return false
		}
		if _, err := Search(t.Context(), c.m, p, c.sp); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("%s: no plans", c.m)
		}
		t.Logf("%s: %d plans", c.m, n)
	}
}

// TestPrefilterKeepsTheBest: a Prefilter that is a necessary condition of
// Keep skips resolving strategies Keep would refuse, nothing else: the 70B row's
// reading, with and without it, is the same plan at the same step from
// the same evaluations.
func TestPrefilterKeepsTheBest(t *testing.T) {
	row := row70B()
	p, err := plan.PodOf(row.Pod, row.GPUs)
	if err != nil {
		t.Fatal(err)
	}
	want := row.Strategy
	keep := func(pl plan.Plan) bool {
		return pl.Uniform() && pl.TP == want.TensorDegree() && pl.PP == want.PipelineDegree() && pl.DP == want.ReplicaCount()
	}
	pre := func(s plan.Strategy) bool {
		return s.TensorStages == nil && s.TensorDegree() == want.TensorDegree() && s.PipelineDegree() == want.PipelineDegree() && s.ReplicaCount() == want.ReplicaCount()
	}
	a, err := Search(t.Context(), row.Model, p, Space{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Search(t.Context(), row.Model, p, Space{Keep: keep, Prefilter: pre})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Found || a.Best.Plan.String() != b.Best.Plan.String() || a.Best.Step != b.Best.Step || a.Evaluated != b.Evaluated {
		t.Errorf("with the prefilter %s (%d evaluated), without %s (%d)", b.Best.Plan, b.Evaluated, a.Best.Plan, a.Evaluated)
	}
}

// TestSearchSetsTightAside: the measured sweep's model on one H100 under
// torch-eager at micro-batch 4, with a memory margin that leaves the
// plan without recomputation 1% over its peak (within the regime's
// ±1.9%: tight): the search sets it aside and counts it, and with
// AllowTight keeps it (the fastest, no forward run again) and counts it
// among the fitting (every plan it evaluates is fitting, or over on the
// reservation it is judged on where it would keep it: OverReserved).
// The recomputing plans' bisection takes a tight plan as fitting only
// with AllowTight: by default no plan the search returns is tight (one
// recomputing layer fits on the count and is tight on the reservation:
// the search takes two).
func TestSearchSetsTightAside(t *testing.T) {
	m, err := transformer.Parse("llama:layers=16,hidden=2048,heads=32,kv_heads=8,ffn=8192,seq=2048,vocab=128256,batch=16")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=1,pp=1,dp=1,mbs=4,stack=torch-eager")
	if err != nil {
		t.Fatal(err)
	}
	r, err := planner.Evaluate(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	outside := float64(r.Capacity - r.Usable - int64(float64(r.Capacity)*r.MemoryMargin))
	p.MemoryMargin = 1 - (1.01*float64(r.Memory)+outside)/float64(r.Capacity)
	if r2, _ := planner.Evaluate(m, s, p); r2.Verdict != plan.VerdictTight {
		t.Fatalf("at margin %.4f: %q, %.2f of %.2f GB; want tight", p.MemoryMargin, r2.Verdict, float64(r2.Memory)/1e9, float64(r2.Usable)/1e9)
	}
	sp, err := SpaceOf("mbs=4,stack=torch-eager")
	if err != nil {
		t.Fatal(err)
	}
	sp.Top = 6
	def, err := Search(context.Background(), m, p, sp)
	if err != nil {
		t.Fatal(err)
	}
	sp.AllowTight = true
	all, err := Search(context.Background(), m, p, sp)
	if err != nil {
		t.Fatal(err)
	}
	if def.Tight < 1 {
		t.Errorf("default: %d tight set aside, want at least 1", def.Tight)
	}
	for _, r := range def.Top {
		if r.Verdict != plan.VerdictFits {
			t.Errorf("default: %s kept, %q", r.Plan, r.Verdict)
		}
	}
	// No plan here is over on the count: every one evaluated is counted
	// as fitting, tight or over on the reservation.
	if def.Fitting+def.Tight+def.OverReserved != def.Evaluated {
		t.Errorf("default: %d fitting, %d tight, %d over on the reservation of %d evaluated", def.Fitting, def.Tight, def.OverReserved, def.Evaluated)
	}
	if all.Tight != 0 || all.Fitting+all.OverReserved != all.Evaluated || all.Best.Verdict != plan.VerdictTight || all.Best.Plan.Recompute != plan.NoRecompute {
		t.Errorf("allow tight: %d set aside, %d fitting and %d over on the reservation of %d, best %s %q; want 0, all, no recomputation, tight",
			all.Tight, all.Fitting, all.OverReserved, all.Evaluated, all.Best.Plan, all.Best.Verdict)
	}
}

// FuzzEvaluate: any model, pod and strategy text either fails with one
// line or evaluates to a finite, positive step that a search of the same
// model and pod does not beat when the plan fits and its stages are a
// split the search tries.
func FuzzEvaluate(f *testing.F) {
	f.Add("gpt:layers=8,hidden=1024,heads=16,seq=2048,vocab=32000,batch=64", "dgx-h100:2", "tp=2,pp=2,vp=2,mbs=2,sp=on,distopt=on")
	f.Add("llama:layers=4,hidden=512,heads=8,kv_heads=2,seq=1024,vocab=1000,batch=16", "dgx-a100:1", "tp=2,recompute=full")
	f.Add("gpt:layers=2,hidden=64,heads=4,seq=32,vocab=100,batch=8", "dgx-h100:1", "pp=2,schedule=gpipe,mbs=1")
	f.Add("gpt:layers=10,hidden=256,heads=4,seq=64,vocab=5000,batch=8", "dgx-h100:1", "pp=4,first=2,last=2,vp=2,mbs=1")
	f.Add("gpt:layers=8,hidden=1024,heads=16,seq=1024,vocab=262144,batch=16", "dgx-h100:3", "pp=2,stage-tp=4:8,mbs=4,sp=on")
	f.Add("llama:layers=4,hidden=512,heads=8,kv_heads=2,seq=16384,vocab=1000,batch=8", "dgx-h100:2", "tp=2,cp=4,pp=2,mbs=1,sp=on,distopt=on")
	f.Add("gpt:layers=2,hidden=64,heads=4,seq=32,vocab=100,batch=8", "dgx-h100:1", "cp=8,mbs=1")
	f.Fuzz(func(t *testing.T, model, pod, strategy string) {
		m, err := transformer.Parse(model)
		if err != nil || m.Layers > 256 || m.Hidden > 1<<16 || m.Batch > 1<<16 {
			return
		}
		p, err := plan.ParsePod(pod)
		if err != nil || p.Nodes > 64 {
			return
		}
		s, err := plan.ParseStrategy(strategy)
		if err != nil {
			return
		}
		r, err := planner.Evaluate(m, s, p)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %v", err)
			}
			return
		}
		if !(r.Step > 0) || math.IsInf(r.Step, 0) || r.Memory <= 0 {
			t.Fatalf("%s %s %s: step %g, memory %d", model, pod, strategy, r.Step, r.Memory)
		}
		best, err := Search(t.Context(), m, p, Space{MaxMBS: 1 << 20, MaxVirtual: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if r.Fits && searched(r.Plan, m.Layers) && slices.Contains(plan.ContextDegrees(m, p.GPUs()/r.Plan.TP), r.Plan.CP) && (!best.Found || best.Best.Step > r.Step*(1+1e-12)) {
			t.Fatalf("%s %s %s: fits at %g s, search found %v %g s", model, pod, strategy, r.Step, best.Found, best.Best.Step)
		}
	})
}

// searched reports whether Search tries pl's split of the layers and its
// virtual stages (any split evaluates; the search tries those near the
// even share, or with end stages of their own degree near the balancing
// share) and its degrees (with stage-tp, the middle stages' one).
func searched(pl plan.Plan, layers int) bool {
	splits := stageSplits(layers, pl.PP)
	if !pl.Uniform() {
		// End stages of their own degree, the stages between one.
		first, last := pl.TPs[0], pl.TPs[pl.PP-1]
		mid := first
		if pl.PP > 2 {
			mid = pl.TPs[1]
		}
		for _, t := range pl.TPs[1 : pl.PP-1] {
			if t != mid {
				return false
			}
		}
		splits = endSplits(layers, pl.PP, first, mid, last)
	}
	for _, sp := range splits {
		if sp.first == pl.FirstLayers && sp.last == pl.LastLayers {
			for _, v := range sp.virtual {
				if v == pl.VP {
					return true
				}
			}
		}
	}
	return false
}

// TestBlackwellEndToEnd: eval and search run on the new pods. Llama 3
// 70B at TP 8 x DP 9 fits a GB200 NVL72 rack (72 GPUs); the search of
// Llama 3 8B on four DGX B200s keeps to tensor degrees that divide a
// node's 8 GPUs and the model's 32 heads and 8 KV heads, and on an NVL72
// rack to the divisors of 72 that divide Llama 3 70B's 64 and 8: 1, 2, 4
// and 8.
func TestBlackwellEndToEnd(t *testing.T) {
	m := specOf(t, "llama3-70b:seq=4096,batch=36")
	s, _ := plan.ParseStrategy("tp=8,pp=1,dp=9,sp=on,distopt=on")
	nvl, _ := plan.ParsePod("gb200-nvl72:1")
	r, err := planner.Evaluate(m, s, nvl)
	if err != nil || r.Verdict != "fits" || r.Step <= 0 {
		t.Errorf("llama3-70b on gb200-nvl72:1: %v (%v)", r, err)
	}
	if got := tensorDegrees(m, nvl); !slices.Equal(got, []int{1, 2, 4, 8}) {
		t.Errorf("tensor degrees on an NVL72 rack: %v, want [1 2 4 8]", got)
	}
	b200, _ := plan.ParsePod("dgx-b200:4")
	res, err := Search(context.Background(), specOf(t, "llama3-8b:seq=8192,batch=256"), b200, Space{})
	if pl := res.Best.Plan; err != nil || !res.Found || pl.ReplicaGPUs()*pl.DP != 32 || 8%pl.TP != 0 {
		t.Errorf("search of llama3-8b on dgx-b200:4: %v (found %v, %v)", res.Best, res.Found, err)
	}
}

// TestSpaceOfAliases: a plan written with the keys' aliases keeps what
// the same plan written with their names keeps (SpaceOf reads each key
// by plan.KeyName).
func TestSpaceOfAliases(t *testing.T) {
	m := specOf(t, strings.Replace(smallMoESpec, "batch=8", "batch=256", 1))
	p, err := plan.PodOf("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	const aliased = "tensor=2,pipeline=2,virtual=1,micro-batch-size=16,sequence-parallel=on,tp-comm-overlap=off,distributed-optimizer=on,recompute=selective,expert-parallel=4,expert-tensor-parallel=1,ep-comm-overlap=off"
	sp, err := SpaceOf(aliased)
	if err != nil || sp.MaxMBS != 16 || sp.MaxVirtual != 8 || sp.MBS != 16 {
		t.Fatalf("SpaceOf(%s): %+v, %v", aliased, sp, err)
	}
	s, err := plan.ParseStrategy(aliased)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.Keep(pl) {
		t.Errorf("%s: its own plan is not kept", aliased)
	}
	for i, change := range []func(*plan.Plan){
		func(q *plan.Plan) { q.TP = 4 }, func(q *plan.Plan) { q.PP = 4 }, func(q *plan.Plan) { q.MBS = 8 },
		func(q *plan.Plan) { q.SequenceParallel = false }, func(q *plan.Plan) { q.DistOpt = false }, func(q *plan.Plan) { q.EP = 8 },
		func(q *plan.Plan) { q.ETP = 2 }, func(q *plan.Plan) { q.EPOverlap = true },
	} {
		q := pl
		change(&q)
		if sp.Keep(q) {
			t.Errorf("change %d: kept, want refused (a key written by its alias)", i)
		}
	}
}
