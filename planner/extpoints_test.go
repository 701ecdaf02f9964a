package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
)

// implementers is the names of the registered plug-ins that implement
// extension point T, families first, in the order registered.
func implementers[T cost.Plugin]() string {
	var names []string
	for _, p := range cost.Each[T](families.Registered) {
		names = append(names, p.Name())
	}
	for _, p := range cost.Each[T](mechanisms.Registered) {
		names = append(names, p.Name())
	}
	return strings.Join(names, ",")
}

// TestExtensionPointsImplemented: the extension points the composition
// asks where it once named a family or a mechanism are each implemented
// by the registered plug-in that priced them by name before, and by no
// other; the coster asks those (registered: cost.Resolve).
func TestExtensionPointsImplemented(t *testing.T) {
	for _, c := range []struct {
		point, got, want string
	}{
		{"OutputHeads", implementers[cost.OutputHeads](), "mlm-nsp-heads"},
		{"GroupedGEMM", implementers[cost.GroupedGEMM](), "te-grouped-gemm"},
		{"LowPrecision", implementers[cost.LowPrecision](), "fp8-casts"},
		{"TokenDispatcher", implementers[cost.TokenDispatcher](), "token-dispatch"},
		{"ExpertLoad", implementers[cost.ExpertLoad](), "random-routing"},
		{"AttentionBlock", implementers[cost.AttentionBlock](), "latent-attention"},
		{"PredictionModules", implementers[cost.PredictionModules](), "multi-token-prediction"},
		{"AttentionMemory", implementers[cost.AttentionMemory](), "latent-attention"},
		{"PredictionMemory", implementers[cost.PredictionMemory](), "multi-token-prediction"},
	} {
		if c.got != c.want {
			t.Errorf("%s implemented by %q, want %q", c.point, c.got, c.want)
		}
	}
	if len(registered.OutputHeads.Plugins()) != 1 || registered.OutputHeads.Plugins()[0].Name() != "mlm-nsp-heads" {
		t.Errorf("the coster's output heads %v, want mlm-nsp-heads's", registered.OutputHeads.Plugins())
	}
	if registered.GroupedGEMM == nil || registered.GroupedGEMM.Name() != "te-grouped-gemm" {
		t.Errorf("the coster's grouped GEMM %v, want te-grouped-gemm's", registered.GroupedGEMM)
	}
	if lp := registered.LowPrecision.Plugins(); len(lp) != 1 || lp[0].Name() != "fp8-casts" {
		t.Errorf("the coster's casts %v, want fp8-casts'", lp)
	}
	if registered.TokenDispatcher == nil || registered.TokenDispatcher.Name() != "token-dispatch" {
		t.Errorf("the coster's token dispatcher %v, want token-dispatch's", registered.TokenDispatcher)
	}
}

// TestOutputHeadsAsked: an encoder's output layer is the decoder's
// output layer plus what the registered output heads price (the MLM and
// next-sentence heads, families.MLMHeads: its own by-hand test), and a
// decoder's has none: the composition asks the extension point, not the
// family by name.
func TestOutputHeadsAsked(t *testing.T) {
	c := stackCoster(t, "bert-large:seq=512,batch=384", "tp=1,dp=8,mbs=48", "dgx-h100:1")
	fwd, bwd := c.fusedOutput()
	none := swapped(func(p *cost.Points) { p.OutputHeads = cost.EachPricing[cost.OutputHeads]{} })
	bare := c
	bare.Points = none
	bareF, bareB := bare.fusedOutput()
	hf, hb := families.MLMHeads{}.Heads(&c.Shard)
	if hf.Launches != 7 || hb.Launches != 10 {
		t.Fatalf("MLM heads' launches %v, %v: want 7 and 10 (bert.go's kernels)", hf.Launches, hb.Launches)
	}
	if fwd != bareF.Plus(hf) || bwd != bareB.Plus(hb) {
		t.Errorf("output layer with heads %+v, %+v: want the bare layer's plus the heads' %+v, %+v", fwd, bwd, hf, hb)
	}
	d := stackCoster(t, "llama3-8b:seq=4096,batch=64", "tp=1,dp=8,mbs=1", "dgx-h100:1")
	withF, _ := d.fusedOutput()
	d.Points = none
	noneF, _ := d.fusedOutput()
	if withF != noneF {
		t.Errorf("a decoder's output layer %+v changed by the output heads (%+v without)", withF, noneF)
	}
}

// moreCalls is the in-tree grouped GEMM launching one GEMM more from its
// loop for each grouped GEMM.
type moreCalls struct{ mechanisms.TEGroupedGEMM }

func (m moreCalls) Calls(s *cost.Shard, local float64) float64 {
	return m.TEGroupedGEMM.Calls(s, local) + 1
}

// TestGroupedGEMMAsked: the experts' GEMMs are the registered
// cost.GroupedGEMM's: with one that launches a call more for each
// grouped GEMM, the experts' forward (FC1, FC2) launches two calls more and
// their backward (each GEMM's data and weight gradients) four, nothing else
// of them changing.
func TestGroupedGEMMAsked(t *testing.T) {
	c := stackCoster(t, stackMoE, "tp=1,ep=8,dp=8,mbs=1,stack=megatron-bridge-25.11", "dgx-h100:1")
	w := c.expertWork()
	c.Points = swapped(func(p *cost.Points) { p.GroupedGEMM = moreCalls{} })
	more := c.expertWork()
	if w.fwd.Calls == 0 {
		t.Fatalf("experts' forward issues no calls from Transformer Engine's loop: %+v", w.fwd)
	}
	if more.fwd.Calls-w.fwd.Calls != 2 || more.bwd.Calls-w.bwd.Calls != 4 {
		t.Errorf("calls %v, %v with one more a grouped GEMM (%v, %v before): want 2 and 4 more", more.fwd.Calls, more.bwd.Calls, w.fwd.Calls, w.bwd.Calls)
	}
	more.fwd.Calls, more.bwd.Calls = w.fwd.Calls, w.bwd.Calls
	if more.fwd != w.fwd || more.bwd != w.bwd {
		t.Errorf("the experts changed beyond their calls: %+v, %+v; want %+v, %+v", more.fwd, more.bwd, w.fwd, w.bwd)
	}
}

// TestLinearsCasts: a block half's casts (cost.LowPrecision' Linears) are
// the recipe's: forward the first linears' input (all of it under a
// rowwise recipe, which casts after the BF16 gather; its sequence share,
// 1/8 at tp=8 with sp=on, under the others) and the second's, backward
// the same inputs' casts, or under a rowwise recipe the inputs' and the
// outputs' gradients' (mechanisms.RowwiseBwd: its by-hand test) and,
// under fp8=rowwise, its backward GEMMs' rescales
// (mechanisms.RowwiseRescales: TestRowwiseRescalesByHand); none in BF16.
func TestLinearsCasts(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=4096,vocab=128256,batch=8")
	in, mid := 4096*8192.0, 4096*28672/8.0
	outs := [2]float64{4096 * 2 * 28672 / 8.0, 4096 * 8192.0}
	for _, recipe := range []string{plan.FP8Rowwise, plan.FP8RowwiseGWHP, plan.FP8Current, plan.FP8Delayed, ""} {
		pl, err := plan.Resolve(m, plan.Strategy{Tensor: 8, Replicas: 1, MicroBatchSize: 1, SequenceParallel: true, FP8: recipe, Software: plan.Software{Stack: "torchtitan-0.2"}}, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, 8, 4096)
		s := &co.Shard
		lp := registered.LowPrecision.Of(s)
		if (recipe == "") != (lp == nil) {
			t.Errorf("fp8=%q: the recipe's casts priced by %v", recipe, lp)
		}
		var f, b cost.Phase
		if lp != nil {
			f, b = lp.Linears(s, in, mid, outs, 2)
		}
		share := 1.0 / 8
		wantB := mechanisms.BwdCasts(s, in*share, mid)
		switch recipe {
		case plan.FP8Rowwise, plan.FP8RowwiseGWHP:
			share = 1
			wantB = mechanisms.RowwiseBwd(s, []float64{in, mid}, outs[:]).Plus(mechanisms.RowwiseRescales(s, in, mid, outs, 2))
		case "":
			wantB = cost.Phase{}
		}
		if wantF := mechanisms.Casts(s, in*share, mid); f != wantF || b != wantB {
			t.Errorf("fp8=%q: casts %+v, %+v; want %+v, %+v", recipe, f, b, wantF, wantB)
		}
		if (recipe == "") != (f.Launches == 0) {
			t.Errorf("fp8=%q: %v launches forward", recipe, f.Launches)
		}
	}
}

// moreCasts is the in-tree casts with a launch more forward and two more
// backward for a block half's linears.
type moreCasts struct{ mechanisms.FP8Casts }

func (m moreCasts) Linears(s *cost.Shard, in, mid float64, outs [2]float64, firsts float64) (fwd, bwd cost.Phase) {
	fwd, bwd = m.FP8Casts.Linears(s, in, mid, outs, firsts)
	fwd.Launches++
	bwd.Launches += 2
	return fwd, bwd
}

// TestLowPrecisionAsked: a block's casts are the registered cost.LowPrecision':
// with one whose linears' casts launch one kernel more forward and two
// more backward, an FP8 block's attention and MLP each launch that many
// more (and the MLP's recomputation the forward's one more), a BF16
// block's none.
func TestLowPrecisionAsked(t *testing.T) {
	for _, fp8 := range []string{",fp8=current", ""} {
		c := stackCoster(t, "llama3-8b:seq=4096,batch=64", "tp=2,sp=on,dp=4,mbs=1,recompute=selective,recompute-modules=mlp"+fp8, "dgx-h100:1")
		af, ab, _ := c.attnBlock()
		mf, mb, mr := c.mlpBlock()
		c.Points = replaced(t, moreCasts{})
		af2, ab2, _ := c.attnBlock()
		mf2, mb2, mr2 := c.mlpBlock()
		want := [5]float64{1, 2, 1, 2, 1}
		if fp8 == "" {
			want = [5]float64{}
		}
		got := [5]float64{af2.Launches - af.Launches, ab2.Launches - ab.Launches, mf2.Launches - mf.Launches, mb2.Launches - mb.Launches, mr2.Launches - mr.Launches}
		if got != want {
			t.Errorf("%q: launches more (attention fwd, bwd; MLP fwd, bwd, recomputed) %v, want %v", fp8, got, want)
		}
	}
}

// moreSyncs is the in-tree token dispatch with one synchronization more
// a layer's forward.
type moreSyncs struct{ mechanisms.TokenDispatch }

func (m moreSyncs) On(s *cost.Shard, router cost.EachPricing[cost.RouterKernels]) cost.Dispatch {
	return syncMore{m.TokenDispatch.On(s, router)}
}

type syncMore struct{ cost.Dispatch }

func (d syncMore) DispatchSyncs() float64 { return d.Dispatch.DispatchSyncs() + 1 }

// TestTokenDispatcherAsked: an MoE layer's dispatch is the registered
// cost.TokenDispatcher's: with one that synchronizes once more, the
// layer's forward synchronizes once more (alltoall's one: two), its
// backward as before; and the SMs its exchange takes beside the
// computation are DeepEP's 20 (moe_deepep_num_sms' default) under the
// flex dispatcher, none under alltoall.
func TestTokenDispatcherAsked(t *testing.T) {
	c := stackCoster(t, stackMoE, "tp=1,ep=8,dp=8,mbs=1,stack=megatron-bridge-25.11", "dgx-h100:1")
	f, b, _ := c.moe()
	more := c
	more.Points = swapped(func(p *cost.Points) { p.TokenDispatcher = moreSyncs{} })
	f2, b2, _ := more.moe()
	if f.Syncs != 1 || f2.Syncs != 2 || b2 != b {
		t.Errorf("forward syncs %v, %v with one more (want 1, 2); backward %+v, want %+v", f.Syncs, f2.Syncs, b2, b)
	}
	flex := stackCoster(t, stackMoE, "tp=1,ep=8,dp=8,mbs=1,dispatcher=flex", "dgx-h100:1")
	if got, none := registered.TokenDispatcher.ExchangeSMs(&flex.Plan), registered.TokenDispatcher.ExchangeSMs(&c.Plan); got != 20 || none != 0 {
		t.Errorf("exchange SMs: flex %d, alltoall %d; want 20 and 0", got, none)
	}
}

// fixedSpeedups is the in-tree recipe with its GEMMs 4x faster forward
// and 2x backward.
type fixedSpeedups struct{ mechanisms.FP8Casts }

func (fixedSpeedups) Speedups(*plan.Plan, *plan.Pod, float64) (fwd, bwd float64) { return 4, 2 }

// TestLowPrecisionSpeedups: an FP8 plan's GEMMs are priced at the
// registered cost.LowPrecision's speedups (their time's share the
// inverse: 1/4 forward, 1/2 backward with one that says 4x and 2x), a
// BF16 plan's at none.
func TestLowPrecisionSpeedups(t *testing.T) {
	fixed := replaced(t, fixedSpeedups{})
	c := stackCosterOf(t, fixed, "llama3-8b:seq=4096,batch=64", "tp=1,dp=8,mbs=1,fp8=current", "dgx-h100:1")
	if c.FP8Fwd != 0.25 || c.FP8Bwd != 0.5 {
		t.Errorf("FP8 GEMMs' shares %v, %v; want 0.25 and 0.5", c.FP8Fwd, c.FP8Bwd)
	}
	b := stackCosterOf(t, fixed, "llama3-8b:seq=4096,batch=64", "tp=1,dp=8,mbs=1", "dgx-h100:1")
	if b.FP8Fwd != 0 || b.FP8Bwd != 0 {
		t.Errorf("BF16 plan's FP8 shares %v, %v; want none", b.FP8Fwd, b.FP8Bwd)
	}
}

// TestExpertLoadAsked: the most loaded rank's copies are what the
// registered cost.ExpertLoad says on a plan it prices (a Megatron stack,
// expert parallelism, no imbalance stated, dropless: the force-balanced
// router's draw, mechanisms.RandomRouting, whose load its own test works
// by hand), the plan's stated imbalance or capacity elsewhere, and the
// even share on torchtitan's layers: GPT-OSS's H100 plan, 4,096 tokens
// a GPU, top-4: 16,384 copies x the load.
func TestExpertLoadAsked(t *testing.T) {
	load := mechanisms.LoadOf(4096*8, 128, 4, 8)
	for _, tc := range []struct {
		keys string
		want float64
	}{
		{ossPlan, 16384 * load},
		{ossPlan + ",imbalance=1.5", 16384 * 1.5},
		{"pp=4,ep=8,dp=16,mbs=1,routing=capacity:1.25,stack=megatron-bridge-25.11", 16384 * 1.25},
		{"pp=4,ep=8,dp=16,mbs=1,stack=torchtitan-0.2", 16384},
	} {
		c := stackCoster(t, ossModel, tc.keys, "dgx-h100:8")
		if got := c.expertWork().recv; math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%s: %g copies at the most loaded rank, want %g", tc.keys, got, tc.want)
		}
	}
	if load <= 1 || load > 1.02 {
		t.Errorf("GPT-OSS's load at EP 8 %g: want a percent or so above 1", load)
	}
}
