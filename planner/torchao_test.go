package planner

import (
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// TestTorchaoWeightCastsByHand: torchao's weight casts for a stage whose
// blocks hold lw = 1e9 parameters on an H100 (3.35 TB/s; elementwise
// kernels at 0.85 of it, 2.8475 TB/s; reductions at 0.75, 2.5125 TB/s;
// 5 us a launch), 4 micro-batches a step (batch 32 over 8 replicas of
// micro-batch 1), by hand:
//   - tensorwise: an amax (2e9 B: 0.801020 ms), a cast (3e9 B: 1.058556
//     ms) and the backward's transposed copy of the float8 weight (2e9 B:
//     0.707371 ms), 2.566946 ms a micro-batch, 10.267785 ms a step;
//   - tensorwise with the float8 all-gather: the transposed copy alone,
//     2.829482 ms a step;
//   - rowwise (and rowwise_with_gw_hp): a row cast (1.058556), a column
//     amax (0.801020) and a column cast (1.058556): 11.672526 ms a step.
//
// Before this, torchtitan's FP8 plans cast once a step as Transformer
// Engine does (optimizerStep), whatever the micro-batches.
func TestTorchaoWeightCastsByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=1024,vocab=32000,batch=32")
	base := plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, Software: plan.Software{Stack: "torchtitan-0.2"}}
	for _, c := range []struct {
		name   string
		fp8    string
		gather bool
		want   float64
	}{
		{"tensorwise", plan.FP8Current, false, 10.267785e-3},
		{"tensorwise, float8 all-gather", plan.FP8Current, true, 2.829482e-3},
		{"rowwise", plan.FP8Rowwise, false, 11.672526e-3},
		{"rowwise_with_gw_hp", plan.FP8RowwiseGWHP, false, 11.672526e-3},
	} {
		s := base
		s.FP8, s.FP8Gather = c.fp8, c.gather
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if pl.NumMicro != 4 || !mechanisms.TorchaoOn(&pl) {
			t.Fatalf("%s: %d micro-batches, torchao %v; want 4, true", c.name, pl.NumMicro, mechanisms.TorchaoOn(&pl))
		}
		if got := mechanisms.TorchaoWeightCasts(&pl, &p.Hardware, 1e9); !close5(got, c.want) {
			t.Errorf("%s: %.7g s a step; by hand %.7g", c.name, got, c.want)
		}
	}
}

// TestFP8GatherByHand: what torchao's float8 all-gather changes for a
// stage of 1e9 parameters, 0.8e9 of them its 2 blocks' (14 linears), on
// 8 H100s (figures as TestTorchaoWeightCastsByHand's), by hand:
//   - gathered: 0.2e9 parameters in BF16 and 0.8e9 in float8: 1.2e9 B
//     (2e9 without it);
//   - the copy-out forward: 1.2e9 B read and written, 0.847845 ms;
//     backward the first block's again (0.4e9 B each way: 0.285948 ms)
//     and the reduce-scatter's copy-in (2 read and 4 written of 1e9:
//     2.112112 ms): 2.398060 ms; the launches as in BF16 (3 and 4);
//   - the copy-in of a shard of 1.25e8, 1e8 of it linears: the BF16
//     part 0.25e8 x (4 + 2 read, 2 + 2 written), the linears 1e8 x (13
//     read, 10 written), 2.55e9 B at 2.8475 TB/s and 1 + 42 launches
//     (three eager kernels each linear): 1.110522 ms;
//   - the scales once a step for 1e8 sharded linear elements: an amax
//     of their FP32 (4e8 B: 0.164204 ms and a launch) and 5 small
//     kernels, 0.189204 ms, and one all-reduce of 14 amaxes.
func TestFP8GatherByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=1024,vocab=32000,batch=32")
	s := plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, FP8: plan.FP8Current, FP8Gather: true, Software: plan.Software{Stack: "torchtitan-0.2"}}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := plan.ParseStrategy(pl.String()); err != nil || !back.FP8Gather {
		t.Errorf("the plan writes %q, which reads fp8gather %v, %v", pl.String(), back.FP8Gather, err)
	}
	off := pl
	off.FP8Gather = false
	if got, bf := mechanisms.GatheredBytes(&pl, &p, 1e9, 0.8e9), mechanisms.GatheredBytes(&off, &p, 1e9, 0.8e9); got != 1.2e9 || bf != 2e9 {
		t.Errorf("gathered %g B, %g B without; by hand 1.2e9, 2e9", got, bf)
	}
	var st stageCost
	st.Params, st.Layers = 1e9, 0.8e9
	st.addStageKernels(registered, stepShard(m, pl, &p), 0)
	if !close5(st.fwd.Busy, 0.847845e-3) || !close5(st.bwd.Busy, 2.398060e-3) || st.fwd.Launches != 3 || st.bwd.Launches != 4 {
		t.Errorf("copies: %.7g s (%g launches) forward, %.7g s (%g) backward; by hand 0.847845 ms (3), 2.398060 ms (4)", st.fwd.Busy, st.fwd.Launches, st.bwd.Busy, st.bwd.Launches)
	}
	g, _ := sideCopies(stepShard(m, pl, &p), 1.25e8, 1e8, 14)
	if _, gh := g.Share(); !close5(g.Time, 1.110522e-3) || !close5(gh*g.Time, 2.55e9) {
		t.Errorf("copy-in: %.7g s of %.4g B; by hand 1.110522 ms of 2.55e9 B", g.Time, gh*g.Time)
	}
	if g0, _ := sideCopies(stepShard(m, off, &p), 1.25e8, 1e8, 14); !close5(g0.Time, 0.443982e-3) {
		t.Errorf("copy-in without the float8 all-gather: %.7g s; by hand 0.443982 ms (TestFSDP2SideCopiesByHand)", g0.Time)
	}
	moe := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=32,experts=8,topk=2,expert_ffn=512")
	if _, err := plan.Resolve(moe, s, p); err == nil || !strings.Contains(err.Error(), "fp8gather=on with") || strings.Contains(err.Error(), "\n") {
		t.Errorf("fp8gather=on on a model with experts: %v; want a one-line refusal", err)
	}
	_, dpG := pl.Groups(p, 0)
	ar := p.StateCollective(roofline.AllReduce, dpG, 4*14)
	if got := mechanisms.FP8GatherScales(&p, dpG, 1e8, 14); ar <= 0 || !close5(got-ar, 0.189204e-3) {
		t.Errorf("scales: %.7g s less the all-reduce's %.4g; by hand 0.189204 ms", got-ar, ar)
	}
}
