package planner

import (
	"math"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestFSDP2CopiesByHand: FSDP2's copies for a stage of u = 1e9
// parameters on an H100 (3.35 TB/s, elementwise kernels at 0.85 of it:
// 2.8475 TB/s; 5 us a launch), BF16 parameters and FP32 reduction, by
// hand:
//   - the copy-out (split_with_sizes_copy, 2 bytes read and 2 written an
//     element): 4e9 B / 2.8475 TB/s + 5 us = 1.409741 ms;
//   - the reduce-scatter's copy-in (chunk_cat, 2 read and 4 written):
//     6e9 B / 2.8475 TB/s + 5 us = 2.112112 ms;
//   - without a pipeline (2 layers of 0.8e9 parameters together, and the
//     root: 3 groups) the forward one copy-out (3 launches), the backward
//     the copy-out of the first block alone (gathered again: 0.4e9, 1.6e9
//     B, 0.566896 ms, 1 launch) and the copy-in (3 launches): 2.679008
//     ms, 4 launches;
//   - with 2 stages and 4 micro-batches (the first stage's 1 layer and
//     the root: 2 groups) a step gathers once: forward a quarter of the
//     copy-out, 0.352435 ms (0.5 launches); backward a quarter of the
//     first micro-batch's cast of its BF16 gradients to FP32 (2 read, 4
//     written: 6e9 B, 2.112112 ms), three accumulations into them (4 + 2
//     read, 4 written: 10e9 B, 3.516853 ms each) and the last's copy-in
//     from FP32 (4 and 4: 8e9 B, 2.814482 ms): 15.477153 / 4 = 3.869288
//     ms, (1 + 3 + 1) x 2 / 4 = 2.5 launches;
//   - Megatron-Core's FSDP (the default stack): none.
func TestFSDP2CopiesByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=1024,vocab=32000,batch=32")
	titan := plan.Software{Stack: "torchtitan-0.2"}
	for _, c := range []struct {
		name             string
		s                plan.Strategy
		fwd, bwd         float64
		fwdLaun, bwdLaun float64
	}{
		{"no pipeline", plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, Software: titan}, 1.409741e-3, 2.679008e-3, 3, 4},
		{"pipeline, 4 micro-batches", plan.Strategy{Replicas: 4, Pipeline: 2, MicroBatchSize: 2, FSDP: true, Software: titan}, 0.352435e-3, 3.869288e-3, 0.5, 2.5},
		{"megatron fsdp", plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true}, 0, 0, 0, 0},
	} {
		pl, err := plan.Resolve(m, c.s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var st stageCost
		st.Params, st.Layers = 1e9, 0.8e9
		st.addStageKernels(registered, stepShard(m, pl, &p), 0)
		if !close5(st.fwd.Busy, c.fwd) || !close5(st.bwd.Busy, c.bwd) || st.fwd.Launches != c.fwdLaun || st.bwd.Launches != c.bwdLaun {
			t.Errorf("%s: %.7g s (%g launches) forward, %.7g s (%g) backward; by hand %.7g (%g), %.7g (%g)",
				c.name, st.fwd.Busy, st.fwd.Launches, st.bwd.Busy, st.bwd.Launches, c.fwd, c.fwdLaun, c.bwd, c.bwdLaun)
		}
	}
}

// TestFSDP2SideCopiesByHand: what FSDP2 copies on its side streams for a
// shard of 1.25e8 parameters (1e9 over 8 GPUs) on an H100 (2.8475 TB/s
// for elementwise kernels, 5 us a launch), by hand:
//   - each all-gather's copy-in: the FP32 shard cast into a BF16 buffer
//     (4 read, 2 written an element) and that copied into the
//     all-gather's input (2 and 2): 1.25e9 B, 0.443982 ms;
//   - with 4 micro-batches and no pipeline, 3/4 of the FP32 sharded
//     gradient's accumulation (4 + 4 read, 4 written: 1.5e9 B,
//     0.531777 ms) a micro-batch: 0.398833 ms and 1.125e9 B; with 1
//     micro-batch none (the reduced gradient is kept as it is).
func TestFSDP2SideCopiesByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=1024,vocab=32000,batch=32")
	titan := plan.Software{Stack: "torchtitan-0.2"}
	for _, c := range []struct {
		name             string
		s                plan.Strategy
		gather, reduce   float64 // seconds
		gatherB, reduceB float64 // HBM bytes
	}{
		{"4 micro-batches", plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, Software: titan}, 0.443982e-3, 0.398833e-3, 1.25e9, 1.125e9},
		{"1 micro-batch", plan.Strategy{Replicas: 8, MicroBatchSize: 4, FSDP: true, Software: titan}, 0.443982e-3, 0, 1.25e9, 0},
		{"megatron fsdp", plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true}, 0, 0, 0, 0},
	} {
		pl, err := plan.Resolve(m, c.s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g, r := sideCopies(stepShard(m, pl, &p), 1.25e8, 0, 0)
		_, gh := g.Share()
		_, rh := r.Share()
		if !close5(g.Time, c.gather) || !close5(r.Time, c.reduce) || !close5(gh*g.Time, c.gatherB) || !close5(rh*r.Time, c.reduceB) {
			t.Errorf("%s: gather %.6g s of %.4g B, reduce %.6g s of %.4g B; by hand %.6g, %.4g, %.6g, %.4g",
				c.name, g.Time, gh*g.Time, r.Time, rh*r.Time, c.gather, c.gatherB, c.reduce, c.reduceB)
		}
	}
}

// close5 is whether got is want within 1e-5 of it (want 0: got 0).
func close5(got, want float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got/want-1) < 1e-5
}

// TestFSDP2Gathers: what a stage of 1e9 parameters, 0.8e9 of them in
// its blocks, gathers forward and backward and how often a step, by
// hand: Megatron-FSDP (the default stack) all of it each way, 8 times
// with 8 micro-batches; torchtitan's FSDP2 without a pipeline, 4 blocks:
// forward all of it, backward 3 blocks (0.6e9; not the last, not the
// root), 8 times; with 2 stages (the first's 2 blocks) all of it
// forward, nothing backward, once a step.
func TestFSDP2Gathers(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=4,hidden=1024,heads=8,kv_heads=8,ffn=4096,seq=1024,vocab=32000,batch=64")
	titan := plan.Software{Stack: "torchtitan-0.2"}
	for _, c := range []struct {
		name            string
		s               plan.Strategy
		fwd, bwd, times float64
	}{
		{"megatron fsdp", plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true}, 1e9, 1e9, 8},
		{"fsdp2", plan.Strategy{Replicas: 8, MicroBatchSize: 1, FSDP: true, Software: titan}, 1e9, 0.6e9, 8},
		{"fsdp2, pipeline", plan.Strategy{Replicas: 4, Pipeline: 2, MicroBatchSize: 1, FSDP: true, Software: titan}, 1e9, 0, 1},
	} {
		pl, err := plan.Resolve(m, c.s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var st stageCost
		st.Params, st.Layers = 1e9, 0.8e9
		sh := stepShard(m, pl, &p)
		f, b, n := fsdpGathers(fsdpOf(registered, sh), sh, &st, 0)
		if !close5(f, c.fwd) || !close5(b, c.bwd) || n != c.times {
			t.Errorf("%s: %g forward, %g backward, %g times a step; by hand %g, %g, %g", c.name, f, b, n, c.fwd, c.bwd, c.times)
		}
	}
}

// stepShard is the step's shard of plan pl of m on p, as evaluateAt
// hands the step-level extension points.
func stepShard(m transformer.Spec, pl plan.Plan, p *plan.Pod) *cost.Shard {
	s := &cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: p}
	decide(registered, s)
	return s
}

// sideCopies is what the step's FSDP copies on its side streams
// (fsdpSideCopies of fsdpOf's).
func sideCopies(s *cost.Shard, shard, lin, linears float64) (gather, reduce plan.Comm) {
	return fsdpSideCopies(fsdpOf(registered, s), s, shard, lin, linears)
}
