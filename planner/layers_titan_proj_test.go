package planner

import (
	"github.com/placer/placer/planner/codebases"
	"math"
	"testing"

	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// TestTitanProjectionsByHand: torchtitan's separate wq, wk, wv (and w1,
// w3) GEMMs of a compiled block against the fused blocks' QKV and
// gate-up GEMMs, by hand. Llama 3 8B at TP 8 with sp=on, MBS 12, 8,192
// tokens: n = 98,304, h = 4,096, wq 512 columns, wk and wv 128, the fused
// QKV 768; w1 and w3 1,792 each. On grand-teton (500 W) a GEMM runs at
// 989.4e12 x 0.756 / 1.250845 = 597.98e12 FLOP/s, HBM at 2.4e12 x 0.8 =
// 1.92e12 B/s for GEMMs and 2.4e12 x 0.85 = 2.04e12 for elementwise
// kernels. One activation is 98,304 x 4,096 x 2 = 805,306,368 bytes.
//   - wq: 412,316,860,416 FLOPs, 0.68951 ms (its 910,163,968 bytes take
//     0.47404 ms): compute-bound, forward and each backward GEMM alike.
//   - wk, wv: 103,079,215,104 FLOPs (0.17238 ms) but 831,520,768 bytes
//     (input, weight, output; in the backward the same bytes in other
//     roles): 0.43308 ms, memory-bound.
//   - fused QKV: 618,475,290,624 FLOPs, 1.03427 ms (962,592,768 bytes,
//     0.50135 ms).
//   - forward: 0.68951 + 2 x 0.43308 - 1.03427 = 0.52140 ms more, 2
//     launches more.
//   - backward: 2 x 0.68951 + 4 x 0.43308 + the gradients' sum (3 read,
//     1 written: 3,221,225,472 bytes at 2.04e12, 1.57903 ms) - 2 x 1.03427
//     = 2.62183 ms more, 5 launches more.
//   - MLP: w1, w3 at 1,443,109,011,456 FLOPs each (2.41330 ms, bytes
//     0.61 ms) sum to the fused gate-up's time; only the sum of two
//     gradients (2,415,919,104 bytes, 1.18427 ms) and 2 launches remain
//     in the backward; nothing in the forward but 1 launch.
//
// At TP 1 (MBS 2: n = 16,384, an activation 134,217,728 bytes) every
// projection is compute-bound and the sum is read by the norm's
// backward: (3 - 1) x 134,217,728 bytes at 2.4e12 x 0.75 (a reduction)
// = 0.14913 ms, no launch.
func TestTitanProjectionsByHand(t *testing.T) {
	const ms = 1e-3
	total := func(ks []kernel, c coster) (busy, launches float64) {
		p := c.RunAll(ks...)
		return p.Busy, p.Launches
	}
	c := stackCoster(t, "llama3-8b:seq=8192,batch=96", "tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on", "grand-teton:8,attention=flash")
	L := c.H.Launch
	sw := codebases.TitanProjections(c.blocks())
	if len(sw) != 2 {
		t.Fatalf("%d halves, want attention and MLP", len(sw))
	}
	cases := []struct {
		name              string
		titan, fused      []kernel
		wantMs, wantLaunc float64
	}{
		{"attention forward", sw[0].TitanF, sw[0].FusedF, 0.52140, 2},
		{"attention backward", sw[0].TitanB, sw[0].FusedB, 2.62183, 5},
		{"MLP forward", sw[1].TitanF, sw[1].FusedF, 0, 1},
		{"MLP backward", sw[1].TitanB, sw[1].FusedB, 1.18427, 3},
	}
	for _, k := range cases {
		tb, tl := total(k.titan, c)
		fb, fl := total(k.fused, c)
		got := (tb - fb - (tl-fl)*L) / ms
		if math.Abs(got-k.wantMs) > 2e-4 {
			t.Errorf("%s: %.5f ms more than the fused GEMMs, by hand %.5f", k.name, got, k.wantMs)
		}
		if tl-fl != k.wantLaunc {
			t.Errorf("%s: %v launches more, by hand %v", k.name, tl-fl, k.wantLaunc)
		}
	}
	// The compiled block runs them: beside the fused block its forward
	// issues the rotary kernels, Inductor's norms in place of the fused
	// ones, 2 + 1 projection launches more, and the copies that lay out
	// its sequence-parallel gathers and scatters (TitanSeqCopies: 2 a half).
	rf, _, _ := codebases.TitanRotary(c.blocks())
	tf, _, ff, _ := codebases.TitanResidualNorms(c.blocks())
	tfwd, _ := codebases.TitanCompiled{}.Dense(c.blocks())
	ffwd, _ := codebases.Fused{}.Dense(c.blocks())
	if got, want := tfwd.Launches-ffwd.Launches, float64(len(rf)+len(tf)-len(ff)+3+4); got != want {
		t.Errorf("compiled block: %v forward launches beside the fused block's, want %v", got, want)
	}
	if sw[0].InNorm.Busy != 0 {
		t.Errorf("TP 8: the gradients' sum read by the norm (%g s), want a kernel of its own", sw[0].InNorm.Busy)
	}
	one := stackCoster(t, "llama3-8b:seq=8192,batch=16", "dp=8,mbs=2,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on", "grand-teton:1,attention=flash")
	s1 := codebases.TitanProjections(one.blocks())
	if got := s1[0].InNorm.Busy / ms; math.Abs(got-0.14913) > 2e-4 || s1[0].InNorm.Launches != 0 {
		t.Errorf("TP 1: the sum in the norm's backward %.5f ms, %v launches; by hand 0.14913, 0", got, s1[0].InNorm.Launches)
	}
	for i, s := range s1 {
		tb, tl := total(s.TitanF, one)
		fb, fl := total(s.FusedF, one)
		if got := (tb - fb - (tl-fl)*one.H.Launch) / ms; math.Abs(got) > 2e-4 {
			t.Errorf("TP 1, half %d: the separate forward GEMMs %.5f ms beside the fused, by hand 0 (compute-bound)", i, got)
		}
	}
}

// TestTitanUnfusedBwdByHand: under async TP a compiled torchtitan
// block's backward runs the reduce-scatter of its column-parallel input
// gradient (a sum, not a matmul) and the all-gather for their weight
// gradients (the gathered input their right operand) after their GEMM,
// not overlapped. Llama 3 8B, TP 8, sp=on, MBS 12 on grand-teton:
// an activation is 805,306,368 bytes; its all-gather or reduce-scatter
// over 8 GPUs on NVLink 7/8 x 805,306,368 / 362e9 + 7 x 6 us = 1.98853
// ms. The fused QKV's backward GEMM (618,475,290,624 FLOPs at 597.985e12
// FLOP/s, plus a 5 us launch) 1.03927 ms; beside a collective on 116 of
// 132 SMs 1.18261 ms, overlapped max + min/8 = 2.13635 ms, in sequence
// 3.02779 ms: 0.89144 ms a pair, 1.78288 ms for the two, 7 launches
// fewer each. The gate-up's (2,886,218,022,912 FLOPs): 4.83157 ms,
// 5.49800 beside, 5.74656 overlapped, 6.82010 in sequence: 2.14708 ms.
// Vanilla TP under selective recomputation: nothing. Under full
// recomputation the weight gradients read the recomputed forward's
// gathered input, so their all-gather goes: async, the reduce-scatter's
// 0.89144 plus 1.03927 - 2.13635 = -0.20565 ms (QKV) and 1.07354 plus
// 4.83157 - 5.74656 = 0.15855 ms (gate-up), 7 + 8 launches fewer;
// vanilla, the 1.98853 ms all-gather less a half, 1 launch.
func TestTitanUnfusedBwdByHand(t *testing.T) {
	const ms = 1e-3
	for _, k := range []struct {
		strategy  string
		attn, mlp float64
		launches  float64
	}{
		{"tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on,tpoverlap=on", 1.78288, 2.14708, -14},
		{"tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on", 0, 0, 0},
		{"tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on,tpoverlap=on", -0.20565, 0.15855, -15},
		{"tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=full,stack=torchtitan-0.2,compile=on", -1.98853, -1.98853, -1},
	} {
		c := stackCoster(t, "llama3-8b:seq=8192,batch=96", k.strategy, "grand-teton:8,attention=flash")
		a, m := codebases.TitanUnfusedBwd(c.blocks())
		if math.Abs(a.Busy/ms-k.attn) > 1e-4 || math.Abs(m.Busy/ms-k.mlp) > 1e-4 {
			t.Errorf("%s: %.5f and %.5f ms exposed, by hand %.5f and %.5f", k.strategy, a.Busy/ms, m.Busy/ms, k.attn, k.mlp)
		}
		if math.Abs(a.TPExposed-a.Busy) > 1e-12 || a.Launches != k.launches || m.Launches != k.launches {
			t.Errorf("%s: %+v, %+v; want all of it exposed TP time, %v launches a half", k.strategy, a, m, k.launches)
		}
		// The compiled block's backward carries it: its exposed TP time is
		// the fused block's plus these (the other swaps run no collective).
		_, tb := codebases.TitanCompiled{}.Dense(c.blocks())
		_, fb := codebases.Fused{}.Dense(c.blocks())
		if got, want := tb.TPExposed-fb.TPExposed, a.TPExposed+m.TPExposed; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: compiled backward exposes %.6g s of TP beside the fused block's, want %.6g", k.strategy, got, want)
		}
	}
}

// TestTitanRowwiseUnfusedByHand: under torchao's rowwise recipe async TP
// fuses none of the all-gathers whose output is cast before its GEMM.
// Llama 3 8B, TP 8, sp=on, MBS 12 on grand-teton, fp8=rowwise: its GEMMs
// at the BF16 rate (597.985e12) over the recipe's speedups (1.8655
// forward, 1.766 backward, cuBLAS's tensorwise kernel torchao runs
// rowwise's backward GEMMs in: mechanisms.RowwiseSpeedups, measured), plus a 5 us
// launch; an all-gather 1.98853 ms (TestTitanUnfusedBwdByHand); beside
// it a GEMM on 116 of 132 SMs. In sequence gt + ct, overlapped
// max(og, ct) + min(og, ct)/8:
//   - QKV forward: 618,475,290,624 / 1.8655 FLOPs, gt 0.55942 ms, og
//     0.63658 < ct: gt - og/8 = 0.47985 ms;
//   - gate-up forward: 2,886,218,022,912 / 1.8655, gt 2.59228, og 2.94984
//     > ct: gt + ct - og - ct/8 = 1.38241 ms;
//   - w2's input gradient: 1,443,109,011,456 / 1.766, gt 1.37153, og
//     1.56070 < ct: 1.17644 ms;
//   - wo's input gradient writes 805 MB for 0.39 ms of FLOPs: memory-bound,
//     slower beside the all-gather's traffic; between 0 and the
//     all-gather's time.
//
// BF16 or vanilla TP: nothing.
func TestTitanRowwiseUnfusedByHand(t *testing.T) {
	const ms = 1e-3
	c := stackCoster(t, "llama3-8b:seq=8192,batch=96", "tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on,tpoverlap=on,fp8=rowwise", "grand-teton:8,attention=flash")
	af, ab, mf, mb := codebases.TitanRowwiseUnfused(c.blocks())
	for _, k := range []struct {
		name      string
		got, want float64
	}{{"QKV forward", af.Busy, 0.47985}, {"gate-up forward", mf.Busy, 1.38241}, {"w2 input gradient", mb.Busy, 1.17644}} {
		if math.Abs(k.got/ms-k.want) > 1e-4 {
			t.Errorf("%s: %.5f ms exposed, by hand %.5f", k.name, k.got/ms, k.want)
		}
	}
	if ab.Busy <= 0 || ab.Busy >= 1.98853*ms || af.Launches != -7 {
		t.Errorf("wo input gradient %.5f ms exposed, want between 0 and 1.98853; %v launches, want -7", ab.Busy/ms, af.Launches)
	}
	for _, s := range []string{
		"tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on,tpoverlap=on",
		"tp=8,dp=8,mbs=12,sp=on,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on,fp8=rowwise",
	} {
		o := stackCoster(t, "llama3-8b:seq=8192,batch=96", s, "grand-teton:8,attention=flash")
		if a, b, m, d := codebases.TitanRowwiseUnfused(o.blocks()); a != (phase{}) || b != (phase{}) || m != (phase{}) || d != (phase{}) {
			t.Errorf("%s: %+v %+v %+v %+v, want nothing", s, a, b, m, d)
		}
	}
	// The compiled block carries it, forward and backward.
	tf, tb := codebases.TitanCompiled{}.Dense(c.blocks())
	ff, fb := codebases.Fused{}.Dense(c.blocks())
	ua, uf := codebases.TitanUnfusedBwd(c.blocks())
	if got, want := tf.TPExposed-ff.TPExposed, af.TPExposed+mf.TPExposed; math.Abs(got-want) > 1e-12 {
		t.Errorf("compiled forward exposes %.6g s of TP beside the fused block's, want %.6g", got, want)
	}
	if got, want := tb.TPExposed-fb.TPExposed, ab.TPExposed+mb.TPExposed+ua.TPExposed+uf.TPExposed; math.Abs(got-want) > 1e-12 {
		t.Errorf("compiled backward exposes %.6g s of TP beside the fused block's, want %.6g", got, want)
	}
}

// TestTitanClipByHand: torchtitan's step clips the gradients' norm and
// zeroes no gradient buffer. torchao's BF16 row (Llama 3 8B, FSDP 8 on
// grand-teton): 1,003,782,656 FP32 gradients a GPU (the optimizer share:
// 8,030,261,248 parameters over 8).
//   - _foreach_norm reads 4,015,130,624 bytes at 2.4e12 x 0.75 (a
//     reduction): 2.23063 ms + a 5 us launch;
//   - _foreach_mul_ reads and writes them at 2.4e12 x 0.85: 3.93640 ms + 5 us;
//   - the norm's scalar all-reduced over the 8 data-parallel GPUs: a ring,
//     2 x (7/8 x 4 / 362e9 + 7 x 6 us) = 84.0 us (TP 1: none).
//
// 6.26103 ms. Megatron's stack zeroes the 8,030,261,248 parameters'
// FP32 gradient buffer in its Adam kernel, 32,121,044,992 bytes at
// 2.04e12: 15.74561 ms that torchtitan (set_to_none) does not run. So the
// same plan's optimizer step is 15.74561 - 6.26103 = 9.48458 ms shorter
// on torchtitan's stack than on placer's default.
func TestTitanClipByHand(t *testing.T) {
	const ms = 1e-3
	c := stackCoster(t, "llama3-8b:seq=8192,batch=8", "dp=8,mbs=1,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on", "grand-teton:1,attention=flash")
	if got := mechanisms.TitanClip(&c.Plan, c.Pod, 1003782656) / ms; math.Abs(got-6.26103) > 1e-4 {
		t.Errorf("clip %.5f ms, by hand 6.26103", got)
	}
	m := mustSpec(t, "llama3-8b:seq=8192,batch=8")
	p, err := plan.ParsePod("grand-teton:1,attention=flash")
	if err != nil {
		t.Fatal(err)
	}
	var opt [2]float64
	for i, s := range []string{"dp=8,mbs=1,fsdp=on,recompute=selective,stack=torchtitan-0.2,compile=on", "dp=8,mbs=1,fsdp=on,recompute=selective"} {
		st, err := plan.ParseStrategy(s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, st, p)
		if err != nil {
			t.Fatal(err)
		}
		opt[i] = r.Optimizer
	}
	if got := (opt[1] - opt[0]) / ms; math.Abs(got-9.48458) > 1e-4 {
		t.Errorf("default stack's optimizer step %.5f ms longer than torchtitan's, by hand 9.48458", got)
	}
}

// TestTitanSeqCopiesByHand: the copies that lay out torchtitan's
// sequence-parallel collectives on the batch-first activations
// (codebases.TitanSeqCopies), by hand. Llama 3 8B at TP 8, sp=on, MBS 12,
// 8,192 tokens on grand-teton: the gathered tensor is n x h = 98,304 x
// 4,096 = 402,653,184 elements. One copy reads and writes them at HBM's
// 2.4e12 x 0.85 = 2.04e12 B/s (an elementwise kernel) plus a 5 us launch:
//   - BF16: 2 x 805,306,368 = 1,610,612,736 bytes, 0.789516 ms + 0.005 =
//     0.794516 ms;
//   - float8: 2 x 402,653,184 = 805,306,368 bytes, 0.394758 + 0.005 =
//     0.399758 ms.
//
// A half (attention or MLP, the same counts) copies:
//   - BF16, vanilla TP, selective: forward the gather and the scatter
//     (2 x 0.794516 = 1.589032), backward the output gradient's gather
//     and the weight gradients' second gather (1.589032);
//   - BF16, async TP: the second gather alone (0.794516 backward);
//   - BF16, vanilla, recompute=full: forward 1.589032, backward the
//     output gradient's gather 0.794516 (no second gather);
//   - tensorwise, vanilla: the float8 gather and the scatter,
//     0.399758 + 0.794516 = 1.194274 forward; backward the float8
//     gradient's gather and the float8 second gather, 2 x 0.399758 =
//     0.799516; async: the second gather, 0.399758 backward;
//   - rowwise, vanilla: the scatter, 0.794516 forward;
//   - rowwise_with_gw_hp, vanilla: the scatter forward (0.794516), the
//     gradient's gather and the second gather backward (1.589032); async:
//     nothing forward, 1.589032 backward;
//   - rowwise under async TP, a micro-batch of 1 sample
//     (batch 8: the gather is a view), or sp=off: nothing.
func TestTitanSeqCopiesByHand(t *testing.T) {
	const ms = 1e-3
	base := "tp=8,dp=8,sp=on,fsdp=on,stack=torchtitan-0.2,compile=on,"
	for _, k := range []struct {
		workload, strategy string
		fwd, bwd           float64
	}{
		{"batch=96", "mbs=12,recompute=selective", 1.589032, 1.589032},
		{"batch=96", "mbs=12,recompute=selective,tpoverlap=on", 0, 0.794516},
		{"batch=96", "mbs=12,recompute=full", 1.589032, 0.794516},
		{"batch=96", "mbs=12,recompute=selective,fp8=current", 1.194274, 0.799516},
		{"batch=96", "mbs=12,recompute=selective,fp8=current,tpoverlap=on", 0, 0.399758},
		{"batch=96", "mbs=12,recompute=selective,fp8=rowwise", 0.794516, 0},
		{"batch=96", "mbs=12,recompute=selective,fp8=rowwise,tpoverlap=on", 0, 0},
		{"batch=96", "mbs=12,recompute=selective,fp8=rowwise_with_gw_hp", 0.794516, 1.589032},
		{"batch=96", "mbs=12,recompute=selective,fp8=rowwise_with_gw_hp,tpoverlap=on", 0, 1.589032},
		{"batch=8", "mbs=1,recompute=selective", 0, 0},
	} {
		c := stackCoster(t, "llama3-8b:seq=8192,"+k.workload, base+k.strategy, "grand-teton:8,attention=flash")
		af, ab, mf, mb := codebases.TitanSeqCopies(c.blocks())
		if af != mf || ab != mb {
			t.Errorf("%s: attention %+v %+v, MLP %+v %+v: want the same", k.strategy, af, ab, mf, mb)
		}
		if math.Abs(af.Busy/ms-k.fwd) > 1e-5 || math.Abs(ab.Busy/ms-k.bwd) > 1e-5 {
			t.Errorf("%s: %.6f ms forward, %.6f backward; by hand %.6f, %.6f", k.strategy, af.Busy/ms, ab.Busy/ms, k.fwd, k.bwd)
		}
	}
	off := stackCoster(t, "llama3-8b:seq=8192,batch=96", "tp=8,dp=8,mbs=12,fsdp=on,stack=torchtitan-0.2,compile=on,recompute=selective", "grand-teton:8,attention=flash")
	if a, b, m, d := codebases.TitanSeqCopies(off.blocks()); a != (phase{}) || b != (phase{}) || m != (phase{}) || d != (phase{}) {
		t.Errorf("sp=off: %+v %+v %+v %+v, want nothing", a, b, m, d)
	}
}

// TestTitanSymmMemKernelsByHand: the kernels torch's async TP runs beside
// its fused GEMMs (codebases.TitanSymmMemKernels), by hand. Llama 3 8B at
// TP 8, sp=on, MBS 12, 8,192 tokens on grand-teton: n x h = 98,304 x
// 4,096; a shard is a T-th, 12,288 x 4,096 = 50,331,648 elements.
//   - the shard copied into the symmetric workspace, read and written:
//     BF16 2 x 100,663,296 = 201,326,592 bytes at 2.4e12 x 0.85 =
//     2.04e12 B/s, 0.0986895 ms + a 5 us launch = 0.1036895 ms; float8
//     100,663,296 bytes, 0.0493447 + 0.005 = 0.0543447 ms;
//   - the reduce-scatter's sum of 8 partials: reads 805,306,368 bytes,
//     writes 100,663,296, 905,969,664 at 2.4e12 x 0.75 = 1.8e12 B/s (a
//     reduction; its 7 x 50,331,648 adds take far less): 0.503316 ms +
//     0.005 = 0.508316 ms.
//
// A half (attention or MLP): BF16 forward 0.508316 + 0.1036895 =
// 0.6120055 ms, backward the gradient's gather 0.1036895; per-tensor
// FP8 forward 0.508316 + 0.0543447 = 0.5626607, backward 0.0543447;
// rowwise forward the sum alone, 0.508316, backward nothing (its gathers
// unfused). Vanilla TP (no tpoverlap) runs none.
func TestTitanSymmMemKernelsByHand(t *testing.T) {
	const ms = 1e-3
	base := "tp=8,dp=8,mbs=12,sp=on,fsdp=on,stack=torchtitan-0.2,compile=on,recompute=selective"
	for _, k := range []struct {
		strategy string
		fwd, bwd float64
	}{
		{",tpoverlap=on", 0.6120055, 0.1036895},
		{",tpoverlap=on,fp8=current", 0.5626607, 0.0543447},
		{",tpoverlap=on,fp8=rowwise", 0.508316, 0},
		{",tpoverlap=on,fp8=rowwise_with_gw_hp", 0.508316, 0},
		{"", 0, 0},
		{",fp8=current", 0, 0},
	} {
		c := stackCoster(t, "llama3-8b:seq=8192,batch=96", base+k.strategy, "grand-teton:8,attention=flash")
		af, ab, mf, mb := codebases.TitanSymmMemKernels(c.blocks())
		if af != mf || ab != mb {
			t.Errorf("%s: attention %+v %+v, MLP %+v %+v: want the same", k.strategy, af, ab, mf, mb)
		}
		if math.Abs(af.Busy/ms-k.fwd) > 1e-5 || math.Abs(ab.Busy/ms-k.bwd) > 1e-5 {
			t.Errorf("%s: %.7f ms forward, %.7f backward; by hand %.7f, %.7f", k.strategy, af.Busy/ms, ab.Busy/ms, k.fwd, k.bwd)
		}
	}
}
