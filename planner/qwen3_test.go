package planner

import (
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// The Qwen3 H100 rows' plans: Qwen3-30B-A3B on Megatron-Bridge 26.04 (EP
// 16, MBS 1, 4,096 tokens a GPU: 32 heads and 4 key/value heads of 128)
// and Qwen3-235B-A22B on 25.11 (TP 2 with sequence parallelism: 64 and 4
// heads over 2, the router's 2,048 tokens a GPU).
const (
	q30A2A   = "ep=16,dp=16,mbs=1,distopt=on,grads=bf16,fp8=current,stack=megatron-bridge-26.04"
	q30Plan  = "ep=16,dp=16,mbs=1,distopt=on,grads=bf16,fp8=current,stack=megatron-bridge-26.04,dispatcher=flex"
	q235     = "qwen3-235b-a22b:seq=4096,batch=2048"
	q235Plan = "tp=2,pp=8,vp=4,ep=32,etp=1,dp=16,mbs=1,sp=on,distopt=on,embedding-layer=on,loss-layer=on,grads=bf16,fp8=current,stack=megatron-bridge-25.11"
)

// TestQKNorm: the queries' and keys' RMS norms by hand. Qwen3-30B-A3B:
// q = 4,096 x 32 x 128 = 16,777,216 elements (33,554,432 BF16 bytes),
// k = 4,096 x 4 x 128 = 2,097,152 (4,194,304 bytes). Forward: the
// queries' norm (4q FLOPs, q read and written), the keys' copy and norm:
// 3 launches. Backward: each norm's gradient (6x FLOPs, the gradient and
// the input read, the input's gradient written): 2 launches.
// Qwen3-235B-A22B at TP 2: the same q (32 heads a GPU), k = 4,096 x 2 x
// 128 = 1,048,576. None on torchtitan's layer, none for a model without
// the norms (Mixtral).
func TestQKNorm(t *testing.T) {
	norms := func(q, k float64) (f, b [][4]float64) {
		f = [][4]float64{{red, 4 * q, 2 * q, 2 * q}, {mov, 0, 2 * k, 2 * k}, {red, 4 * k, 2 * k, 2 * k}}
		b = [][4]float64{{red, 6 * q, 4 * q, 2 * q}, {red, 6 * k, 4 * k, 2 * k}}
		return f, b
	}
	f30, b30 := norms(16777216, 2097152)
	f235, b235 := norms(16777216, 1048576)
	for _, tc := range []struct {
		name, model, keys, pod string
		fwd, bwd               [][4]float64
	}{
		{"30B on Megatron-Core", stackMoE, q30Plan, "dgx-h100:2", f30, b30},
		{"235B at TP 2", q235, q235Plan, "dgx-h100:32", f235, b235},
		{"torchtitan", stackMoE, "ep=8,dp=8,mbs=1,stack=torchtitan-0.2", "dgx-h100:1", nil, nil},
		{"no norms", "mixtral-8x7b:seq=4096,batch=512", "ep=8,dp=8,mbs=1", "dgx-h100:1", nil, nil},
	} {
		c := stackCoster(t, tc.model, tc.keys, tc.pod)
		f, b := asked(c.Points, &c.Shard, families.QKNorm{}, func() (cost.Phase, cost.Phase) { return families.QKNorm{}.Attention(&c.Shard) })
		wf, lf := kernelsTime(c, tc.fwd)
		wb, lb := kernelsTime(c, tc.bwd)
		if !near(f.Busy, wf) || !near(b.Busy, wb) || f.Launches != lf || b.Launches != lb {
			t.Errorf("%s: forward %g s in %g launches, backward %g in %g; want %g in %g, %g in %g",
				tc.name, f.Busy, f.Launches, b.Busy, b.Launches, wf, lf, wb, lb)
		}
	}
}

// TestAuxLoss: the router's balancing loss by hand. Qwen3-30B-A3B, 4,096
// tokens x 128 experts = 524,288 scores (2,097,152 FP32 bytes).
// Forward: the scores for the loss (the logits in; the scores and a bool
// map, 2,621,440 bytes, out), the counts (524,288 bools in, 128 int64
// out), the loss (the scores in, a scalar out), three scalar kernels,
// and under forced balance the random logits' clone and normal_: 8
// launches. Backward: three scalars, the loss's gradient (2,097,152
// out), the scores' backward and the add to the top-k's gradient (two
// tensors in, one out each): 6 launches. Token-dropping (capacity
// routing) and a stated imbalance do not force balance: 6 launches
// forward. With the router unfused (router-fusion=off) the scores for
// the loss are six kernels (softmax, topk: 4,096 x 8 values and int64
// indices, 393,216 bytes, zeros_like, .int(), scatter, .bool(): 524,288
// bytes out) and the loss four (the scores' sum over the tokens, 512
// bytes; its product with the 128 counts, 1,536 bytes in; their sum, a
// scalar; the scalar factor): 16 launches with forced balance, the
// backward the same 6. Qwen3-235B-A22B at TP 2: 2,048 tokens a GPU, and the counts'
// all-reduce (1,024 bytes over the 2 tensor ranks) on the tensor group's
// account. None for torchtitan, for a model without the loss (Mixtral's
// preset), and for GPT-OSS (trained without one).
func TestAuxLoss(t *testing.T) {
	scalar := [4]float64{ew, 1, 4, 4}
	aux := func(nl float64, forced bool) (f, b [][4]float64) {
		ne, s := nl*128, nl*128*4
		f = [][4]float64{{ew, ne, s, s + ne}, {red, ne, ne, 1024}, {red, 2 * ne, s, 4}, scalar, scalar, scalar}
		if nl < 0 { // router-fusion=off at 4,096 tokens, top 8
			nl = -nl
			ne, s = nl*128, nl*128*4
			f = [][4]float64{{ew, ne, s, s}, {ew, ne, s, nl * 8 * 12}, {ew, ne, 0, s}, {ew, ne, s, s}, {ew, ne, s, s},
				{ew, ne, s, ne}, {red, ne, ne, 1024}, {ew, ne, s, 512}, {ew, ne, 1536, 512}, {ew, ne, 512, 4}, {ew, ne, 4, 4},
				scalar, scalar, scalar}
		}
		if forced {
			f = append(f, [4]float64{ew, ne, s, s}, [4]float64{ew, ne, 0, s})
		}
		b = [][4]float64{scalar, scalar, scalar, {ew, ne, 4, s}, {ew, ne, 2 * s, s}, {ew, ne, 2 * s, s}}
		return f, b
	}
	f30, b30 := aux(4096, true)
	fCap, _ := aux(4096, false)
	f235, b235 := aux(2048, true)
	fUnfused, _ := aux(-4096, true)
	for _, tc := range []struct {
		name, model, keys, pod string
		nl                     float64
		fwd, bwd               [][4]float64
		reduce                 bool
	}{
		{"30B forced", stackMoE, q30Plan, "dgx-h100:2", 4096, f30, b30, false},
		{"30B token-dropping", stackMoE, q30Plan + ",routing=capacity:1", "dgx-h100:2", 4096, fCap, b30, false},
		{"30B imbalance 1.3", stackMoE, q30Plan + ",imbalance=1.3", "dgx-h100:2", 4096, fCap, b30, false},
		{"30B router unfused", stackMoE, q30Plan + ",router-fusion=off", "dgx-h100:2", 4096, fUnfused, b30, false},
		{"235B at TP 2", q235, q235Plan, "dgx-h100:32", 2048, f235, b235, true},
		{"torchtitan", stackMoE, "ep=8,dp=8,mbs=1,stack=torchtitan-0.2", "dgx-h100:1", 4096, nil, nil, false},
		{"no loss", "mixtral-8x7b:seq=4096,batch=512", "ep=8,dp=8,mbs=1", "dgx-h100:1", 4096, nil, nil, false},
		{"gpt-oss", ossModel, ossPlan, "dgx-h100:8", 4096, nil, nil, false},
	} {
		c := stackCoster(t, tc.model, tc.keys, tc.pod)
		f, b := asked(c.Points, &c.Shard, mechanisms.RouterAuxLoss{}, func() (cost.Phase, cost.Phase) { return mechanisms.RouterAuxLoss{}.Router(&c.Shard, tc.nl) })
		wf, lf := kernelsTime(c, tc.fwd)
		wb, lb := kernelsTime(c, tc.bwd)
		var ar float64
		if tc.reduce {
			ar, _ = c.Pod.Collective(roofline.AllReduce, plan.Group{PerNode: 2, Nodes: 1}, 1024)
			wf, lf = wf+ar, lf+1
		}
		if !near(f.Busy, wf) || !near(b.Busy, wb) || f.Launches != lf || b.Launches != lb || !near(f.TPExposed, ar) {
			t.Errorf("%s: forward %g s in %g launches (tensor group %g), backward %g in %g; want %g in %g (%g), %g in %g",
				tc.name, f.Busy, f.Launches, f.TPExposed, b.Busy, b.Launches, wf, lf, ar, wb, lb)
		}
	}
}

// TestQuantPadding: TEGroupedMLP's FP8 padding by hand. Qwen3-30B-A3B at
// EP 16 on the all-to-all dispatcher: 4,096 tokens x 8 = 32,768 rows received, x 2,048 x 2 bytes =
// 134,217,728 bytes the tokens' padding and the output's unpadding each
// read and write, the probabilities' padding 65,536: 3 launches forward,
// the same 3 backward. None in BF16, with SequentialMLP
// (grouped-gemm=off), on torchtitan's layer, or with HybridEP
// (dispatcher=hybridep: its dispatch pads the counts; DeepEP's,
// dispatcher=flex, does not: padded); none with capacity
// routing at factor 1 (4,096 x 8 / 128 = 256 rows an expert from each of
// 16 ranks: 4,096, aligned); at factor 1.01 on one rank ceil(258.56) =
// 259 rows an expert, not aligned: padded.
func TestQuantPadding(t *testing.T) {
	const x, p = 134217728.0, 65536.0
	pads := [][4]float64{{mov, 0, x, x}, {mov, 0, p, p}, {mov, 0, x, x}}
	for _, tc := range []struct {
		name, keys string
		fwd        [][4]float64
	}{
		{"FP8 current scaling", q30A2A, pads},
		{"HybridEP pads in its dispatch", q30A2A + ",dispatcher=hybridep", nil},
		{"DeepEP does not (flex)", q30Plan, pads},
		{"BF16", "ep=16,dp=16,mbs=1,distopt=on,stack=megatron-bridge-26.04", nil},
		{"SequentialMLP", q30A2A + ",grouped-gemm=off", nil},
		{"torchtitan", "ep=16,dp=16,mbs=1,fp8=current,stack=torchtitan-0.2", nil},
		{"capacity 1, aligned", q30A2A + ",routing=capacity:1", nil},
		{"capacity 1.01 on one rank", "dp=16,mbs=1,distopt=on,grads=bf16,fp8=current,stack=megatron-bridge-26.04,routing=capacity:1.01", pads},
	} {
		c := stackCoster(t, stackMoE, tc.keys, "dgx-h100:2")
		f, b := asked(c.Points, &c.Shard, mechanisms.FP8Padding{}, func() (cost.Phase, cost.Phase) {
			return mechanisms.FP8Padding{}.ExpertOutput(&c.Shard, 32768, 0, 4096)
		})
		w, l := kernelsTime(c, tc.fwd)
		if !near(f.Busy, w) || !near(b.Busy, w) || f.Launches != l || b.Launches != l {
			t.Errorf("%s: forward %g s in %g launches, backward %g in %g; want %g in %g each way",
				tc.name, f.Busy, f.Launches, b.Busy, b.Launches, w, l)
		}
	}
}
