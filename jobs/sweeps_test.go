package jobs

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/report/plans"
)

// TestSweepOrder: pairs by hand. Tokens a second 10, 20, 30 predicted
// 11, 25, 25: of the three pairs, (10, 20) and (10, 30) are ordered as
// measured, (20, 30) is predicted alike; the fastest measured is row 2,
// predicted row 1 (the first of equals). Read as seconds a step the same
// numbers order the other way, which placer's 11 < 25 also does.
func TestSweepOrder(t *testing.T) {
	m, p := []float64{10, 20, 30}, []float64{11, 25, 25}
	pairs, conc, tied, fm, fp := sweepOrder(published.TokensPerGPU, m, p)
	if pairs != 3 || conc != 2 || tied != 1 || fm != 2 || fp != 1 {
		t.Errorf("tokens: %d pairs, %d concordant, %d tied, fastest %d and %d; want 3, 2, 1, 2, 1", pairs, conc, tied, fm, fp)
	}
	pairs, conc, tied, fm, fp = sweepOrder(published.StepSeconds, m, p)
	if pairs != 3 || conc != 2 || tied != 1 || fm != 0 || fp != 0 {
		t.Errorf("seconds: %d pairs, %d concordant, %d tied, fastest %d and %d; want 3, 2, 1, 0, 0", pairs, conc, tied, fm, fp)
	}
	// Order: ranks 1 and 2 (1 the fastest) against seconds; the first
	// row predicted faster agrees, the other way it does not.
	if pairs, conc, _, fm, fp = sweepOrder(published.Order, []float64{1, 2}, []float64{2.5, 2.7}); pairs != 1 || conc != 1 || fm != 0 || fp != 0 {
		t.Errorf("order: %d pairs, %d concordant, fastest %d and %d; want 1, 1, 0, 0", pairs, conc, fm, fp)
	}
	if _, conc, _, _, fp = sweepOrder(published.Order, []float64{1, 2}, []float64{2.7, 2.5}); conc != 0 || fp != 1 {
		t.Errorf("order reversed: %d concordant, fastest predicted %d; want 0, 1", conc, fp)
	}
	// Reversed: no pair concordant; equal measured figures order nothing.
	if pairs, conc, _, _, _ = sweepOrder(published.TokensPerGPU, []float64{1, 2, 2}, []float64{3, 2, 1}); pairs != 2 || conc != 0 {
		t.Errorf("reversed: %d pairs, %d concordant; want 2, 0", pairs, conc)
	}
}

// publishedSweeps is SweepsOf(published.Sweeps(), plan.Tuned) less the
// code bases' validation sets, computed
// once per test binary: TestSweeps, TestPublishedRunsFit and
// TestPublishedPeaks read the same report (every sweep's rows predicted,
// a few CPU seconds each time). The tests only read it.
var publishedSweeps = sync.OnceValues(func() (plans.Sweeps, error) {
	return SweepsOf(context.Background(), testedSweeps(), plan.Tuned)
})

// testedSweeps are published.Sweeps less the code bases' validation
// sets: their rows are report bench's aggregates only (their fits counted
// there), never a row's figure here.
func testedSweeps() []published.Sweep {
	var sweeps []published.Sweep
	for _, sw := range published.Sweeps() {
		if !slices.Contains(published.CodebaseValidationSets(), sw.Set) {
			sweeps = append(sweeps, sw)
		}
	}
	return sweeps
}

// TestSweeps: every published sweep's rows are either predicted (a
// finite figure, its error against the published one) or refused with
// one line; swapping every published figure for another leaves every
// prediction the same to the bit (a figure is a test, never an input).
func TestSweeps(t *testing.T) {
	sweeps := testedSweeps()
	a, err := publishedSweeps()
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows < 15 {
		t.Errorf("%d rows predicted, want at least 15", a.Rows)
	}
	if a.Ordered < 2 {
		t.Errorf("%d rows ordered only, want the README's 2", a.Ordered)
	}
	swapped := make([]published.Sweep, len(sweeps))
	for i, sw := range sweeps {
		swapped[i] = sw
		swapped[i].Rows = append([]published.SweepRow(nil), sw.Rows...)
		for j := range swapped[i].Rows {
			swapped[i].Rows[j].Measured *= 1.37 + 0.01*float64(j)
			swapped[i].Rows[j].PeakGiB *= 0.71 + 0.01*float64(j)
		}
	}
	b, err := SweepsOf(context.Background(), swapped, plan.Tuned)
	if err != nil {
		t.Fatal(err)
	}
	peaks, reserved := 0, 0
	for i, sw := range a.Sweeps {
		for j, r := range sw.Rows {
			if r.Refused != "" {
				if strings.Contains(r.Refused, "\n") {
					t.Errorf("%s, %s: refusal of more than one line: %q", sw.Name, r.Label, r.Refused)
				}
				continue
			}
			wantErr := r.Predicted/r.Measured - 1
			if sw.OrderOnly {
				wantErr = 0 // a rank has no error
			}
			if !(r.Predicted > 0) || math.IsInf(r.Predicted, 0) || !near(r.Error, wantErr, 1e-12) {
				t.Errorf("%s, %s: predicted %g, error %g against %g", sw.Name, r.Label, r.Predicted, r.Error, r.Measured)
			}
			if q := b.Sweeps[i].Rows[j].Predicted; math.Float64bits(q) != math.Float64bits(r.Predicted) {
				t.Errorf("%s, %s: %g with the published figures, %g with others", sw.Name, r.Label, r.Predicted, q)
			}
			if q := b.Sweeps[i].Rows[j].OutOfSamplePredicted; math.Float64bits(q) != math.Float64bits(r.OutOfSamplePredicted) || !(q > 0) {
				t.Errorf("%s, %s: out of sample %g with the published figures, %g with others", sw.Name, r.Label, r.OutOfSamplePredicted, q)
			}
			// A published peak is a test of the memory model too, never
			// an input: another peak leaves the prediction to the bit.
			if r.PublishedPeakGiB > 0 {
				peaks++
				// A reserved figure is set beside placer's simulated
				// reserve (at least its allocated), an allocated one
				// beside its allocated.
				if r.PredictedReserved != r.PeakReserved || r.PredictedAllocatedGiB <= 0 ||
					r.PredictedReserved && r.PredictedPeakGiB < r.PredictedAllocatedGiB ||
					!r.PredictedReserved && r.PredictedPeakGiB != r.PredictedAllocatedGiB {
					t.Errorf("%s, %s: published reserved %v, predicted reserved %v: %g GiB (allocated %g)", sw.Name, r.Label,
						r.PeakReserved, r.PredictedReserved, r.PredictedPeakGiB, r.PredictedAllocatedGiB)
				}
				if r.PeakReserved {
					reserved++
				}
				q := b.Sweeps[i].Rows[j].PredictedPeakGiB
				if !(r.PredictedPeakGiB > 0) || math.Float64bits(q) != math.Float64bits(r.PredictedPeakGiB) ||
					!near(r.PeakError, r.PredictedPeakGiB/r.PublishedPeakGiB-1, 1e-12) {
					t.Errorf("%s, %s: peak %g GiB (error %g) against %g published; %g with another peak", sw.Name, r.Label,
						r.PredictedPeakGiB, r.PeakError, r.PublishedPeakGiB, q)
				}
			}
		}
		// Swapping the figures (each row by a factor rising with its
		// index) may reorder the measured ones, never the predictions:
		// the order compared is the published one.
		if sw.OrderOnly && (sw.Pairs != 1 || b.Sweeps[i].Pairs != 1) {
			t.Errorf("%s: %d and %d pairs, want 1", sw.Name, sw.Pairs, b.Sweeps[i].Pairs)
		}
	}
	// torchtitan's tables 1 to 6 publish a peak beside every row.
	if peaks < 18 || a.Peaks != peaks || a.ReservedPeaks != reserved {
		t.Errorf("%d rows with a published peak (report: %d), %d reserved (report: %d), want torchtitan's 18", peaks, a.Peaks, reserved, a.ReservedPeaks)
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestPublishedRunsFit: every plan published as run (each sweep's rows,
// cited in its Source, published.Sweeps; Megatron-Bridge's 25.11 table,
// published.MegatronBridge) fits the GPU's memory in placer's model at the
// default margin. The rows placer still calls over are listed with
// why; a listed row that comes to fit fails the test too, so the list
// only shrinks.
func TestPublishedRunsFit(t *testing.T) {
	// Sweep name prefix | row label: why placer's count is above the GPU.
	over := map[string]string{}
	key := func(sweep, label string) (string, bool) {
		for k := range over {
			name, row, _ := strings.Cut(k, "|")
			if strings.HasPrefix(sweep, name) && row == label {
				return k, true
			}
		}
		return "", false
	}
	rep, err := publishedSweeps()
	if err != nil {
		t.Fatal(err)
	}
	checked, blackwellOver := 0, 0
	for _, sw := range rep.Sweeps {
		for _, r := range sw.Rows {
			if r.Refused != "" {
				continue
			}
			checked++
			if sw.Sample.Set == published.SetBridgeBlackwell {
				// Megatron-Bridge's Blackwell rows: none over in
				// placer's model (35 before MXFP8's and 26.04.01's NVFP4
				// primary weights, the fused loss and the embedding's
				// model chunk were read; 7 while the verdict weighed the
				// count against a 6% margin: GB300 Llama 3 70B at TP 1 x
				// PP 4 x VP 5, 267.0 to 267.6 GB counted, over the 261.2
				// usable). The verdict on the caching allocator's
				// simulated reservation (267.0 to 267.8 GB) against the
				// 278.0 GB usable (279 less the CUDA context and NCCL's
				// buffers) fits them all.
				if !r.Fits {
					blackwellOver++
				}
				continue
			}
			k, known := key(sw.Name, r.Label)
			switch {
			case !r.Fits && !known:
				t.Errorf("%s, %s (%s): ran, placer says over memory", sw.Name, r.Label, sw.Source)
			case r.Fits && known:
				t.Errorf("%s, %s: fits now; take it off the list (%s)", sw.Name, r.Label, over[k])
			}
		}
	}
	t.Logf("%d of Megatron-Bridge's Blackwell rows over memory in placer's model", blackwellOver)
	if blackwellOver > 0 {
		t.Errorf("%d of Megatron-Bridge's Blackwell rows over memory in placer's model, want none (every one ran)", blackwellOver)
	}
	if checked < 60 {
		t.Errorf("%d published runs checked, want every sweep row (at least 60)", checked)
	}
	// And a plan published as out of memory is over: torchtitan's A100
	// page, Llama 2 70B at local batch 2 with selective checkpointing
	// (the page's footnote: "local batch 2 with selective checkpointing
	// ran out of memory"; scale's torchtitanA100Source).
	oom := published.SweepRow{Workload: "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=4096,vocab=32000,batch=128",
		Cluster: "dgx-a100:8", Strategy: "dp=64,mbs=2,fsdp=on,recompute=selective,stack=torchtitan-0.2", Measured: 1}
	if r := sweepRow(published.TokensPerGPU, oom, "", nil); r.Refused != "" || r.Fits {
		t.Errorf("torchtitan A100 Llama 2 70B, local batch 2, selective op (ran out of memory): fits %v, refused %q; want over", r.Fits, r.Refused)
	}
	for _, pub := range published.MegatronBridge() {
		r, err := publishedBridgeRow(context.Background(), pub)
		if err != nil {
			t.Fatal(err)
		}
		if !r.MegatronFits {
			t.Errorf("Megatron-Bridge %s (ran): over memory in placer's model", pub.Name)
		}
		// The row its framework's tracker lists as a regression of its
		// release carries the citation into report megatron; no other does.
		if want := map[bool]string{true: published.BridgeQwen3DroplessRegression}[pub.Name == "Qwen3-30B-A3B"]; r.Regression != want {
			t.Errorf("Megatron-Bridge %s: regression %q, want %q", pub.Name, r.Regression, want)
		}
	}
}

// TestBesideMegatronLMEstimate: where Megatron-LM's own estimate
// (theoretical_memory_usage.py) counts what the plan runs, sequence
// parallelism with selective recomputation and no FSDP, experts, FP8
// or context parallelism, as in Megatron-LM's 2022 A100 table
// (Korthikanti et al.'s configurations), placer's memory of each row's
// plan is within 2% of it (measured 0.2% to 1.1%, 2026-11-27): a
// second opinion, not a measurement.
func TestBesideMegatronLMEstimate(t *testing.T) {
	for _, pub := range published.MegatronA100() {
		r, err := publishedRow(context.Background(), pub)
		if err != nil {
			t.Fatal(err)
		}
		if e := float64(r.MegatronMemory)/float64(r.MegatronLMEstimate) - 1; math.Abs(e) > 0.02 {
			t.Errorf("%s on %d GPUs: placer %.1f GB, Megatron-LM's estimate %.1f GB (%+.1f%%)", pub.Name, pub.GPUs,
				float64(r.MegatronMemory)/1e9, float64(r.MegatronLMEstimate)/1e9, 100*e)
		}
	}
}

// TestPublishedPeaks holds the 21 published peaks (reserved, GiB:
// torchtitan's 18 and torchao's float8 README's 3, torchtitan's memory
// monitor both) against placer's simulated reserve of its step's trace
// (planner's titanStageTrace): mean |error| at most 3.6% (3.55%
// over the 21 with torchao's once what torch 2.6.0's PipelineStage keeps
// to the step's end is counted, 3.74% before; 3.80% over torchtitan's
// 18 on 2026-11-27; 5.51% with the sum of parts, 6.15% before torch's
// pipelining was counted as it holds memory), every row within 8%, but
// for the rows listed with their bound and why; a listed row that comes
// within 8% fails the test, so that the list stays the rows placer
// still misses.
func TestPublishedPeaks(t *testing.T) {
	a, err := publishedSweeps()
	if err != nil {
		t.Fatal(err)
	}
	// Under by more than 8%, unexplained (docs/cluster-scale.md):
	// torchtitan's 1F1B row of table 5 publishes 7.2 GiB more than table
	// 6's first row at the same tokens a micro-batch, micro-batches and
	// stages (torchtitan 9dec370 generate_split_points: 15, 16 x 6, 15
	// for both) (placer: -13.1% against -4.8%), and table 6 grows 9.6 GiB
	// from CP 1 to CP 8 where placer's trace grows 2.3 GiB (-12.9% at CP
	// 8).
	// torchtitan's Trainy H200 row (local batch 2 at 8,192 under FSDP 32,
	// float8 all-gathers, per-op SAC: 47.96 GiB reserved) placer counts
	// 37% above: not traced (no profile of it; torchao's batch-1 FSDP 8
	// rows of the same recipe are within 8%).
	missed := map[string]float64{
		"torchtitan on H200 (Trainy, 2025-06): Llama 3.1 8B FSDP, 4 nodes/4 nodes":                                                 0.38,
		"torchtitan table 5: Llama 3.1 405B, FSDP 8 x TP 8 x PP 8 on 512 H100s/1F1B":                                               0.135,
		"torchtitan table 6: Llama 3.1 405B, FSDP x CP x TP 8 x PP 8 on 512 H100s, 32K to 262K tokens/FSDP 1, CP 8, 262144 tokens": 0.132,
	}
	var sum float64
	var n int
	for _, sw := range a.Sweeps {
		for _, r := range sw.Rows {
			if r.PublishedPeakGiB <= 0 {
				continue
			}
			n++
			e := math.Abs(r.PeakError)
			if sw.Sample.Set != published.SetTorchtitanH200 {
				// The mean's bound is the 21 peaks' it was set on; the
				// Trainy H200 row is held by its listed bound alone.
				sum += e
			}
			key := sw.Name + "/" + r.Label
			bound, listed := missed[key]
			switch {
			case listed && e <= 0.08:
				t.Errorf("%s: %+.1f%%, within 8%%: take it off the list", key, 100*r.PeakError)
			case listed && e > bound:
				t.Errorf("%s: %+.1f%%, beyond its %.0f%%", key, 100*r.PeakError, 100*bound)
			case !listed && e > 0.08:
				t.Errorf("%s: %+.1f%%, beyond 8%%", key, 100*r.PeakError)
			}
		}
	}
	if n != 22 {
		t.Fatalf("%d published peaks, want 22: torchtitan's 18, torchao's float8 README's 3 and the Trainy H200 development row", n)
	}
	if mean := sum / float64(n-1); mean > 0.036 {
		t.Errorf("mean |error| %.2f%% of the published peaks, want at most 3.6%%", 100*mean)
	}
}

// TestSweepsByGPU: rows grouped by GPU in first-seen order, refused and
// order-only rows left out, the means and the over-memory count worked
// by hand.
func TestSweepsByGPU(t *testing.T) {
	sweeps := []plans.Sweep{
		{Rows: []plans.SweepRow{
			{GPU: "h100", Error: 0.10, OutOfSampleError: 0.20, Fits: true},
			{GPU: "b200", Error: -0.30, OutOfSampleError: -0.30, Fits: false},
			{GPU: "h100", Error: -0.20, OutOfSampleError: 0.00, Fits: true},
			{GPU: "h100", Refused: "tp=3 does not divide", Error: 9},
		}},
		{OrderOnly: true, Rows: []plans.SweepRow{{GPU: "a100", Error: 0.5, Fits: true}}},
	}
	got := sweepsByGPU(sweeps)
	want := []plans.SweepGPU{
		{GPU: "h100", Rows: 2, MeanAbsError: 0.15, OutOfSampleMeanAbsError: 0.10},
		{GPU: "b200", Rows: 1, MeanAbsError: 0.30, OutOfSampleMeanAbsError: 0.30, Over: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.GPU != w.GPU || g.Rows != w.Rows || g.Over != w.Over || math.Abs(g.MeanAbsError-w.MeanAbsError) > 1e-12 ||
			math.Abs(g.OutOfSampleMeanAbsError-w.OutOfSampleMeanAbsError) > 1e-12 {
			t.Errorf("group %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestSweepsWithoutRegressions: a row its framework's tracker lists as a
// regression of its release keeps its error in the sweep's mean, and the
// sweep and the report say the mean (and the sweep its Spearman) over
// the other rows as well, by hand from the rows' own errors.
func TestSweepsWithoutRegressions(t *testing.T) {
	const w, c = "gpt:layers=4,hidden=1024,heads=16,seq=2048,vocab=32000,batch=64", "dgx-h100:1"
	plans := []string{"tp=1,pp=1,dp=8,mbs=1", "tp=2,pp=1,dp=4,mbs=1,sp=on", "tp=4,pp=1,dp=2,mbs=1,sp=on", "tp=8,pp=1,dp=1,mbs=1,sp=on"}
	sw := published.Sweep{Name: "s", Set: "s", Unit: published.StepSeconds}
	for i, s := range plans {
		sw.Rows = append(sw.Rows, published.SweepRow{Label: s, Workload: w, Cluster: c, Strategy: s, Measured: 0.1 * float64(i+1)})
	}
	sw.Rows[1].Regression = "tracker/1"
	clean := published.Sweep{Name: "t", Set: "t", Unit: published.StepSeconds, Rows: []published.SweepRow{sw.Rows[0]}}
	rep, err := SweepsOf(context.Background(), []published.Sweep{sw, clean}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Sweeps[0]
	var all, kept float64
	var measured, predicted []float64
	for i, r := range s.Rows {
		all += math.Abs(r.Error) / 4
		if i != 1 {
			kept += math.Abs(r.Error) / 3
			measured, predicted = append(measured, r.Measured), append(predicted, r.Predicted)
		}
	}
	if s.Rows[1].Regression != "tracker/1" || s.Regressions != 1 || !near(s.MeanAbsError, all, 1e-12) || s.WithoutRegressions == nil ||
		s.WithoutRegressions.Rows != 3 || !near(s.WithoutRegressions.MeanAbsError, kept, 1e-12) ||
		s.WithoutRegressions.Spearman == nil || *s.WithoutRegressions.Spearman != Spearman(measured, predicted) {
		t.Errorf("sweep: %d regressions, mean %g, without %+v; want 1, %g, 3 rows at %g", s.Regressions, s.MeanAbsError, s.WithoutRegressions, all, kept)
	}
	if rep.Sweeps[1].WithoutRegressions != nil || rep.Sweeps[1].Regressions != 0 {
		t.Errorf("a sweep of no regression: %+v, want none", rep.Sweeps[1].WithoutRegressions)
	}
	// The report: five rows, one of a regression; the other four's mean.
	want := (3*kept + math.Abs(rep.Sweeps[1].Rows[0].Error)) / 4
	if rep.Regressions != 1 || !near(rep.MeanAbsErrorWithoutRegressions, want, 1e-12) || !near(rep.MeanAbsError, (4*all+math.Abs(rep.Sweeps[1].Rows[0].Error))/5, 1e-12) {
		t.Errorf("report: %d regressions, without %g, mean %g; want 1, %g", rep.Regressions, rep.MeanAbsErrorWithoutRegressions, rep.MeanAbsError, want)
	}
}
