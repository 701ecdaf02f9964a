package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// TestH100RowwiseMeasured: the dgx-h100 pod's rowwise speedups are the
// measured ones: forward, the median of torch._scaled_mm's rowwise
// speedup over BF16 at the nine rows' 36 shard GEMMs (kernelbench on an
// H100 SXM); backward, the per-tensor backward (FP8Bwd: torchao runs
// rowwise's backward GEMMs in cuBLAS's tensorwise kernel); to three
// decimals. rowwise_with_gw_hp's backward is one over the mean of the
// FP8 data gradient's inverse speedup (FP8Bwd times the median rowwise
// over the median tensorwise forward speedup) and the BF16 weight
// gradient's (1).
func TestH100RowwiseMeasured(t *testing.T) {
	got := fp8Speedups(readKernelbench(t, kernelbenchH100))
	rw, tw := got["rowwise.fast"], got["tensorwise.fast"]
	if len(rw) != 36 || len(tw) != 36 {
		t.Fatalf("%d rowwise and %d tensorwise shard GEMMs paired, want 36 each", len(rw), len(tw))
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	bf16 := p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16)
	ratio := median(rw) / median(tw)
	bwd := h100.FP8Bwd * ratio
	for _, c := range []struct {
		recipe   string
		fwd, bwd float64
	}{
		{plan.FP8Rowwise, median(rw), h100.FP8Bwd},
		{plan.FP8RowwiseGWHP, median(rw), 2 / (1/bwd + 1)},
	} {
		f, b := mechanisms.RowwiseSpeedups(p.Kernels, c.recipe, bf16)
		if math.Abs(f-c.fwd) > 0.0005 || math.Abs(b-c.bwd) > 0.0005 {
			t.Errorf("fp8=%s: speedups %.4f forward, %.4f backward; measured %.4f, %.4f", c.recipe, f, b, c.fwd, c.bwd)
		}
	}
}

// TestRowwiseGEMMByHand: the FP8 GEMM of TestFP8GEMMByHand (4,096 tokens
// by 8,192 by 8,192 on an H100, 0.73498 ms of BF16 work at 0.756 of the
// BF16 peak, plus the 5 us launch) under the rowwise recipes, by hand:
// forward at 1.850 x 1.8655/1.850 = 1.8655, 0.39899 ms; backward at the
// tensorwise backward's 1.766 (cuBLAS's kernel, torchao rescaling after
// it), 0.42118 ms; rowwise_with_gw_hp's backward at 2/(1/(1.766 x
// 1.8655/1.850) + 1) = 2/(1/1.78080 + 1) = 1.28078, 0.57885 ms.
func TestRowwiseGEMMByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=4096,vocab=128256,batch=8")
	const n, h = 4096.0, 8192.0
	for _, c := range []struct {
		recipe   string
		fwd, bwd float64
	}{
		{plan.FP8Rowwise, 0.39899e-3, 0.42118e-3},
		{plan.FP8RowwiseGWHP, 0.39899e-3, 0.57885e-3},
	} {
		pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1, FP8: c.recipe, Software: plan.Software{Stack: "torchtitan-0.2"}}, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, 1, n)
		g := co.LGEMM(2*n*h*h, (n*h+h*h)*bf16, n*h*bf16)
		fwd, bwd := g.Time(co.H), co.Back(g).Time(co.H)
		if math.Abs(fwd/c.fwd-1) > 1e-4 || math.Abs(bwd/c.bwd-1) > 1e-4 {
			t.Errorf("fp8=%s: %.5g s forward, %.5g s backward; by hand %.5g, %.5g", c.recipe, fwd, bwd, c.fwd, c.bwd)
		}
	}
}

// TestRowwiseCastsByHand: the casts of one GEMM input of 4,096 x 8,192
// BF16 elements (e = 33,554,432) on an H100 (3.35 TB/s; elementwise
// kernels at 0.85 of it, reductions at 0.75; 5 us a launch), by hand:
//   - a cast along the rows, one pass of 3e bytes (2 read, 1 written):
//     100,663,296 B / 2.8475 TB/s + 5 us = 40.351 us;
//   - an amax pass along the columns, 2e bytes read: 67,108,864 B /
//     2.5125 TB/s + 5 us = 31.710 us;
//   - rowwise: forward one row cast (40.351 us, one launch); backward the
//     input's column cast and the output gradient's row and column
//     casts, three casts and two amax passes: 184.474 us, five launches;
//   - rowwise_with_gw_hp: the output gradient's row cast each way
//     (40.351 us, one launch);
//   - current (per-tensor) scaling on Megatron's stack (Transformer
//     Engine): a cast and an amax each way, 72.061 us, two launches;
//   - torchao's tensorwise (torchtitan's fp8=current): forward the same;
//     backward also the output gradient's transposed float8 (33,554,432
//     B more written: 11.784 us) and the input's float8 copied
//     column-major (67,108,864 B: 23.568 us + 5 us): 112.413 us, three
//     launches.
func TestRowwiseCastsByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=4096,vocab=128256,batch=8")
	const e = 4096 * 8192.0
	for _, c := range []struct {
		recipe           string
		fwd, bwd         float64
		fwdLaun, bwdLaun float64
	}{
		{plan.FP8Rowwise, 40.351e-6, 184.474e-6, 1, 5},
		{plan.FP8RowwiseGWHP, 40.351e-6, 40.351e-6, 1, 1},
		{plan.FP8Current, 72.061e-6, 112.413e-6, 2, 3},
		{"te " + plan.FP8Current, 72.061e-6, 72.061e-6, 2, 2},
	} {
		sw := plan.Software{Stack: "torchtitan-0.2"}
		if recipe, ok := strings.CutPrefix(c.recipe, "te "); ok {
			c.recipe, sw = recipe, plan.Software{}
		}
		pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1, FP8: c.recipe, Software: sw}, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, 1, 4096)
		f, b := mechanisms.Casts(&co.Shard, e), mechanisms.BwdCasts(&co.Shard, e)
		if math.Abs(f.Busy/c.fwd-1) > 1e-4 || math.Abs(b.Busy/c.bwd-1) > 1e-4 || f.Launches != c.fwdLaun || b.Launches != c.bwdLaun {
			t.Errorf("fp8=%s: casts %.6g s (%g launches) forward, %.6g s (%g) backward; by hand %.6g (%g), %.6g (%g)",
				c.recipe, f.Busy, f.Launches, b.Busy, b.Launches, c.fwd, c.fwdLaun, c.bwd, c.bwdLaun)
		}
	}
}

// TestRowwiseBwdByHand: the backward's casts of a linear under the
// rowwise recipes counted at its own input (e = 4,096 x 8,192) and its
// own output gradient (g = e/8, a column-parallel GEMM's shard of 1,024
// columns), on an H100 as TestRowwiseCastsByHand's, by hand:
//   - rowwise: g's row cast (12,582,912 B: 9.419 us), column amax
//     (8,388,608 B at 2.5125 TB/s: 8.339 us) and column cast (9.419 us);
//     e's column amax (31.710 us) and cast (40.351 us): 99.238 us, five
//     launches. Counted at e for both (the rule before), 184.474 us;
//   - rowwise_with_gw_hp: g's row cast alone, 9.419 us, one launch;
//   - the input a column-parallel GEMM casts under tensor parallelism
//     (tp=8, sp=on): all of its n x h rowwise (cast after the BF16
//     all-gather), 1/8 of it under current scaling (before the float8
//     all-gather).
func TestRowwiseBwdByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=4096,vocab=128256,batch=8")
	const e = 4096 * 8192.0
	for _, c := range []struct {
		recipe string
		bwd    float64
		laun   float64
	}{
		{plan.FP8Rowwise, 99.238e-6, 5},
		{plan.FP8RowwiseGWHP, 9.419e-6, 1},
	} {
		pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1, FP8: c.recipe, Software: plan.Software{Stack: "torchtitan-0.2"}}, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, 1, 4096)
		b := mechanisms.RowwiseBwd(&co.Shard, []float64{e}, []float64{e / 8})
		if math.Abs(b.Busy/c.bwd-1) > 1e-4 || b.Launches != c.laun {
			t.Errorf("fp8=%s: %.6g s (%g launches); by hand %.6g (%g)", c.recipe, b.Busy, b.Launches, c.bwd, c.laun)
		}
	}
	for _, c := range []struct {
		recipe string
		want   float64
	}{{plan.FP8Rowwise, 1}, {plan.FP8RowwiseGWHP, 1}, {plan.FP8Current, 0.125}} {
		pl, err := plan.Resolve(m, plan.Strategy{Tensor: 8, Replicas: 1, MicroBatchSize: 1, SequenceParallel: true, FP8: c.recipe, Software: plan.Software{Stack: "torchtitan-0.2"}}, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, 8, 4096)
		if got := mechanisms.RowwiseInput(&co.Shard); got != c.want {
			t.Errorf("fp8=%s, tp=8, sp=on: the first GEMMs cast %g of the input; want %g", c.recipe, got, c.want)
		}
	}
}

// TestRowwiseRescalesByHand: under fp8=rowwise torchao runs each
// backward GEMM in cuBLAS's tensorwise kernel with unit scales and
// rescales its BF16 output after it (mechanisms.RowwiseRescales), a pass
// of 4 bytes an element (2 read, 2 written) on an H100 (elementwise at
// 0.85 of 3.35 TB/s, 2.8475 TB/s; 5 us a launch). The attention half of
// a 64-head, 8-KV-head, hidden-8,192 block at tp=8, 4,096 tokens, by
// hand:
//   - wq, wk and wv's input gradients, each the gathered input's n x h =
//     33,554,432 elements: 134,217,728 B / 2.8475 TB/s + 5 us = 52.135
//     us each, 156.406 us;
//   - their weight gradients, h x (64 + 2 x 8) x 128 / 8 = 10,485,760
//     elements split three ways: 13,981,013 B each, 9.910 us each,
//     29.730 us;
//   - wo's input gradient, n x 8,192 / 8 = 4,194,304 elements: 10.892 us;
//   - wo's weight gradient, 1,024 x 8,192 = 8,388,608 elements: 16.784
//     us;
//   - 213.811 us, eight launches; none under rowwise_with_gw_hp (no
//     axiswise pair in its data gradient, its weight gradient BF16) nor
//     under tensorwise scaling.
func TestRowwiseRescalesByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100,power=off", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=4096,vocab=128256,batch=8")
	const n, h = 4096.0, 8192.0
	in, mid := n*h, n*h/8
	outs := [2]float64{n * (64 + 16) * 128 / 8, n * h}
	for _, c := range []struct {
		recipe   string
		busy     float64
		launches float64
	}{
		{plan.FP8Rowwise, 213.811e-6, 8},
		{plan.FP8RowwiseGWHP, 0, 0},
		{plan.FP8Current, 0, 0},
	} {
		pl, err := plan.Resolve(m, plan.Strategy{Tensor: 8, Replicas: 1, MicroBatchSize: 1, SequenceParallel: true, FP8: c.recipe, Software: plan.Software{Stack: "torchtitan-0.2"}}, p)
		if err != nil {
			t.Fatal(err)
		}
		co := newCoster(m, pl, &p, 8, n)
		got := mechanisms.RowwiseRescales(&co.Shard, in, mid, outs, 3)
		if math.Abs(got.Busy-c.busy) > 1e-9 || got.Launches != c.launches {
			t.Errorf("fp8=%s: rescales %.6g s, %g launches; by hand %.6g s, %g", c.recipe, got.Busy, got.Launches, c.busy, c.launches)
		}
	}
}
