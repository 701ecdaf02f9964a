package planner

import (
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
)

// The GPT-OSS 120B H100 row's plan (Megatron-Bridge 25.11: PP 4, EP 8,
// MBS 1, 4,096 tokens): 16 local experts, top-4, so 16,384 rows
// received a GPU (force-balanced), 1,024 an expert; hidden and expert
// FFN 2,880.
const (
	ossModel = "gpt-oss-120b:seq=4096,batch=512"
	ossPlan  = "pp=4,ep=8,dp=16,mbs=1,distopt=on,grads=bf16,stack=megatron-bridge-25.11"
)

// kernelsTime is the time and launches of kernels given as {class,
// FLOPs, bytes read, bytes written}, each run once.
func kernelsTime(c coster, ks [][4]float64) (float64, float64) {
	var s float64
	for _, k := range ks {
		s += kernel{Class: graph.Class(k[0]), FLOPs: k[1], Read: k[2], Writes: k[3]}.Time(c.H)
	}
	return s, float64(len(ks))
}

var ew, red, mov = float64(graph.ClassElementwise), float64(graph.ClassReduction), float64(graph.ClassDataMovement)

// TestGLUClamp: Megatron-Core's clamp before GPT-OSS's activation
// (weighted_bias_quick_geglu_impl), by hand, for 16,384 rows of 2 x
// 2,880: e = 47,185,920 elements a half. Forward: two clamps of e BF16
// each way (94,371,840 bytes) and the cat of 2e (188,743,680 bytes each
// way): 3 launches. Backward: comparisons (94,371,840 in, 47,185,920
// bools out), a logical_and (94,371,840 in, 47,185,920 out), two wheres
// (141,557,760 in, 94,371,840 out) and the chunk's cat: 7 launches.
// None on torchtitan's layer, none for a model without a clamp.
func TestGLUClamp(t *testing.T) {
	const e = 47185920.0
	cmp := [4]float64{ew, e, 94371840, 47185920}
	where := [4]float64{ew, e, 141557760, 94371840}
	cat := [4]float64{ew, e, 188743680, 188743680}
	for _, tc := range []struct {
		name, model, keys string
		fwd, bwd          [][4]float64
	}{
		{"gpt-oss on Megatron-Core", ossModel, ossPlan,
			[][4]float64{{ew, e, 94371840, 94371840}, {ew, e, 94371840, 94371840}, cat},
			[][4]float64{cmp, where, cmp, cmp, {ew, e, 94371840, 47185920}, where, cat}},
		{"torchtitan", ossModel, "pp=4,ep=8,dp=16,mbs=1,stack=torchtitan-0.2", nil, nil},
		{"no clamp", stackMoE, "dp=64,ep=8,mbs=1", nil, nil},
	} {
		c := stackCoster(t, tc.model, tc.keys, "dgx-h100:8")
		f, b := asked(c.Points, &c.Shard, families.SwiGLUClamp{}, func() (cost.Phase, cost.Phase) {
			return families.SwiGLUClamp{}.ExpertActivation(&c.Shard, 16384, 2880)
		})
		wf, lf := kernelsTime(c, tc.fwd)
		wb, lb := kernelsTime(c, tc.bwd)
		if !near(f.Busy, wf) || !near(b.Busy, wb) || f.Launches != lf || b.Launches != lb {
			t.Errorf("%s: forward %g s in %g launches, backward %g in %g; want %g in %g, %g in %g",
				tc.name, f.Busy, f.Launches, b.Busy, b.Launches, wf, lf, wb, lb)
		}
	}
}

// TestExpertBias: TEGroupedMLP._apply_bias by hand, 16,384 rows over 16
// local experts (1,024 each, 2,949,120 outputs an expert, 5,898,240
// bytes). Forward, per expert: b x p (1,024 x 2 + 2,880 x 2 = 7,808
// bytes in) and the add (11,796,480 in), then the cat of 16,384 x 2,880
// BF16 (94,371,840 bytes each way): 33 launches. Backward, per expert:
// gradient x p (5,900,288 in), its sum over the rows (2,880 x 2 out),
// gradient x b (5,904,000 in), its sum over h (1,024 x 2 out); the
// rows' gradients' cat and the probabilities' (32,768 bytes each way):
// 66 launches. None with SequentialMLP (grouped-gemm=off) or without
// biases.
func TestExpertBias(t *testing.T) {
	const o = 2949120.0
	per := func(ks ...[4]float64) [][4]float64 {
		var all [][4]float64
		for range 16 {
			all = append(all, ks...)
		}
		return all
	}
	cat := [4]float64{mov, 0, 94371840, 94371840}
	fwd := append(per([4]float64{ew, o, 7808, 5898240}, [4]float64{ew, o, 11796480, 5898240}), cat)
	bwd := append(per([4]float64{ew, o, 5900288, 5898240}, [4]float64{red, o, 5898240, 5760},
		[4]float64{ew, o, 5904000, 5898240}, [4]float64{red, o, 5898240, 2048}), cat, [4]float64{mov, 0, 32768, 32768})
	for _, tc := range []struct {
		name, model, keys string
		fwd, bwd          [][4]float64
	}{
		{"gpt-oss on Megatron-Core", ossModel, ossPlan, fwd, bwd},
		{"sequential experts", ossModel, ossPlan + ",grouped-gemm=off", nil, nil},
		{"no biases", stackMoE, "dp=64,ep=8,mbs=1", nil, nil},
	} {
		c := stackCoster(t, tc.model, tc.keys, "dgx-h100:8")
		f, b := asked(c.Points, &c.Shard, families.LinearBias{}, func() (cost.Phase, cost.Phase) { return families.LinearBias{}.ExpertOutput(&c.Shard, 16384, 16, 0) })
		wf, lf := kernelsTime(c, tc.fwd)
		wb, lb := kernelsTime(c, tc.bwd)
		if !near(f.Busy, wf) || !near(b.Busy, wb) || f.Launches != lf || b.Launches != lb {
			t.Errorf("%s: forward %g s in %g launches, backward %g in %g; want %g in %g, %g in %g",
				tc.name, f.Busy, f.Launches, b.Busy, b.Launches, wf, lf, wb, lb)
		}
	}
}

// TestYarnRope: the unfused rotary embedding by hand. 4,096 tokens,
// heads of 64: Q of 64 heads is 16,777,216 elements (33,554,432 bytes),
// K of 8 heads 2,097,152 (4,194,304 bytes); frequencies 4,096 x 64 =
// 262,144 FP32 (1,048,576 bytes; 524,288 as BF16). Each tensor forward:
// cos, x mscale, cast; sin, x mscale, cast; t x cos, the negated half,
// the rotation's cat, x sin, the add, the final cat: 12 launches;
// backward 7. At TP 2 each GPU holds half the heads. None for a model
// without YaRN or on torchtitan.
func TestYarnRope(t *testing.T) {
	const sd = 262144.0
	trig := [][4]float64{{ew, sd, 1048576, 1048576}, {ew, sd, 1048576, 1048576}, {ew, sd, 1048576, 524288}}
	one := func(x float64) (f, b [][4]float64) {
		by := 2 * x
		mul := [4]float64{ew, x, by + 524288, by}
		neg := [4]float64{ew, x / 2, by / 2, by / 2}
		cat := [4]float64{ew, x, by, by}
		add := [4]float64{ew, x, 2 * by, by}
		f = append(append(append([][4]float64{}, trig...), trig...), mul, neg, cat, mul, add, cat)
		b = [][4]float64{mul, neg, cat, mul, add, {ew, x, 0, by}, cat}
		return f, b
	}
	both := func(q, k float64) (f, b [][4]float64) {
		qf, qb := one(q)
		kf, kb := one(k)
		return append(qf, kf...), append(qb, kb...)
	}
	f1, b1 := both(16777216, 2097152)
	f2, b2 := both(8388608, 1048576)
	for _, tc := range []struct {
		name, model, keys string
		fwd, bwd          [][4]float64
	}{
		{"gpt-oss on Megatron-Core", ossModel, ossPlan, f1, b1},
		{"tp 2", ossModel, "tp=2,sp=on,pp=4,ep=8,dp=8,mbs=1,stack=megatron-bridge-25.11", f2, b2},
		{"torchtitan", ossModel, "pp=4,ep=8,dp=16,mbs=1,stack=torchtitan-0.2", nil, nil},
		{"no yarn", stackMoE, "dp=64,ep=8,mbs=1", nil, nil},
	} {
		c := stackCoster(t, tc.model, tc.keys, "dgx-h100:8")
		f, b := asked(c.Points, &c.Shard, families.YaRNRope{}, func() (cost.Phase, cost.Phase) { return families.YaRNRope{}.Attention(&c.Shard) })
		wf, lf := kernelsTime(c, tc.fwd)
		wb, lb := kernelsTime(c, tc.bwd)
		if !near(f.Busy, wf) || !near(b.Busy, wb) || f.Launches != lf || b.Launches != lb {
			t.Errorf("%s: forward %g s in %g launches, backward %g in %g; want %g in %g, %g in %g",
				tc.name, f.Busy, f.Launches, b.Busy, b.Launches, wf, lf, wb, lb)
		}
	}
}

// TestProjBias: the attention output's bias outside a fused
// bias-dropout-add, by hand: 4,096 x 2,880 = 11,796,480 outputs
// (23,592,960 bytes) plus the bias (5,760 bytes) in, the outputs out;
// backward its gradient summed over the rows (5,760 bytes out). None
// with sequential experts (no TEGroupedMLP assertion) or without biases.
func TestProjBias(t *testing.T) {
	const e = 11796480.0
	for _, tc := range []struct {
		name, model, keys string
		fwd, bwd          [][4]float64
	}{
		{"gpt-oss on Megatron-Core", ossModel, ossPlan, [][4]float64{{ew, e, 23598720, 23592960}}, [][4]float64{{red, e, 23592960, 5760}}},
		{"sequential experts", ossModel, ossPlan + ",grouped-gemm=off", nil, nil},
		{"no biases", stackMoE, "dp=64,ep=8,mbs=1", nil, nil},
	} {
		c := stackCoster(t, tc.model, tc.keys, "dgx-h100:8")
		f, b := asked(c.Points, &c.Shard, families.LinearBias{}, func() (cost.Phase, cost.Phase) { return families.LinearBias{}.Attention(&c.Shard) })
		wf, lf := kernelsTime(c, tc.fwd)
		wb, lb := kernelsTime(c, tc.bwd)
		if !near(f.Busy, wf) || !near(b.Busy, wb) || f.Launches != lf || b.Launches != lb {
			t.Errorf("%s: forward %g s in %g launches, backward %g in %g; want %g in %g, %g in %g",
				tc.name, f.Busy, f.Launches, b.Busy, b.Launches, wf, lf, wb, lb)
		}
	}
}
