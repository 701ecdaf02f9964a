package planner

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/plan"
)

// hybridShape is a small hybrid: hidden 512, 8 heads, ffn 2,048,
// squared ReLU, 16 Mamba-2 heads of 64 (d_inner 1,024), state 64, 2
// groups, 4 taps, chunks of 128, at 4,096 tokens; pattern its layers.
func hybridShape(t *testing.T, pattern string) transformer.Spec {
	return mustSpec(t, "llama:layers="+strconv.Itoa(len(pattern))+",hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8,act=relu2,pattern="+pattern+
		",ssm_heads=16,ssm_head_dim=64,ssm_state=64,ssm_groups=2,ssm_conv=4,ssm_chunk=128")
}

// hybridCoster is hybrid m's coster on one H100 of dgx-h100 (8
// replicas, micro-batch 1): its kernels alone, no communication, no
// host.
func hybridCoster(t *testing.T, m transformer.Spec) coster {
	t.Helper()
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	return coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: 1, Nodes: 1}, Tokens: float64(m.Seq), NoComm: true, NoHost: true}, Points: registered}
}

// TestMambaBlockCost: one Mamba-2 block's forward and backward kernels
// by hand at hybridShape's size (n = 4,096 tokens, h = 512): in_proj's
// width 2 x 1,024 + 2 x 2 x 64 + 16 = 2,320; the convolution's channels
// 1,024 + 256 = 1,280; the SSD's FLOPs a token 2 x 128 x 64 x 2 + 2 x
// 128 x 64 x 16 + 4 x 64 x 64 x 16 = 557,056, its backward twice that
// and the chunk states recomputed, 2 x 64 x 64 x 16 = 131,072 a token.
// Each kernel is timed by the pod's roofline (a GEMM's FLOPs at the
// matmul rate: the SSD's too, modelled).
func TestMambaBlockCost(t *testing.T) {
	c := hybridCoster(t, hybridShape(t, "M"))
	const n, h, in, di, xbc, heads = 4096.0, 512.0, 2320.0, 1024.0, 1280.0, 16.0
	ks := []kernel{
		{Class: graph.ClassReduction, FLOPs: 8 * n * h, Read: n * h * 2, Writes: n * h * 2},             // norm
		{Class: graph.ClassMatMul, FLOPs: 2 * n * h * in, Read: n*h*2 + h*in*2, Writes: n * in * 2},     // in_proj
		{Class: graph.ClassElementwise, FLOPs: 12 * n * xbc, Read: n * xbc * 2, Writes: n * xbc * 2},    // conv1d and SiLU
		{Class: graph.ClassMatMul, FLOPs: n * 557_056, Read: n * (xbc + heads) * 2, Writes: n * di * 2}, // SSD
		{Class: graph.ClassReduction, FLOPs: 10 * n * di, Read: 2 * n * di * 2, Writes: n * di * 2},     // gated norm
		{Class: graph.ClassMatMul, FLOPs: 2 * n * di * h, Read: n*di*2 + di*h*2, Writes: n * h * 2},     // out_proj
		{Class: graph.ClassElementwise, FLOPs: 3 * n * h, Read: 2 * n * h * 2, Writes: 1.5 * n * h * 2}, // residual
	}
	var fwd, bwd float64
	for i, k := range ks {
		fwd += c.Run(k).Busy
		switch i {
		case 1, 5: // a GEMM's two gradients
			bwd += 2 * c.Run(k).Busy
		case 3:
			bwd += c.Run(kernel{Class: graph.ClassMatMul, FLOPs: 2*n*557_056 + n*131_072, Read: n * (2*xbc + heads + 2*di) * 2, Writes: n * (xbc + heads) * 2}).Busy
		default:
			bwd += c.Run(cost.Twice(k)).Busy
		}
	}
	f, b, rec := families.Mamba{}.SSMBlock(&c.Shard)
	if math.Abs(f.Busy/fwd-1) > 1e-12 || math.Abs(b.Busy/bwd-1) > 1e-12 {
		t.Errorf("Mamba-2 block: forward %g s, backward %g s; want %g, %g", f.Busy, b.Busy, fwd, bwd)
	}
	if rec.Busy != 0 {
		t.Errorf("selective recomputation of the mixer: %g s, want none", rec.Busy)
	}
	if f.Launches != 7 || b.Launches != 9 {
		t.Errorf("launches %g forward, %g backward; want 7 and 9", f.Launches, b.Launches)
	}
}

// TestHybridLayerMean: a hybrid's layer is the mean of its blocks: the
// pattern M*- costs a third of a Mamba-2 block, an attention block and
// an MLP block, forward and backward (its activations likewise:
// planner/memory's TestHybridLayerMemory).
func TestHybridLayerMean(t *testing.T) {
	c := hybridCoster(t, hybridShape(t, "M*-"))
	mf, mb, _ := families.Mamba{}.SSMBlock(&c.Shard)
	af, ab, _ := c.attnBlock()
	ff, fb, _ := c.mlpBlock()
	f, b := c.layer()
	if want := (mf.Busy + af.Busy + ff.Busy) / 3; math.Abs(f.Busy/want-1) > 1e-12 {
		t.Errorf("forward %g s, want the mean %g", f.Busy, want)
	}
	if want := (mb.Busy + ab.Busy + fb.Busy) / 3; math.Abs(b.Busy/want-1) > 1e-12 {
		t.Errorf("backward %g s, want the mean %g", b.Busy, want)
	}
}

// TestHybridPlans: Nemotron-H 8B evaluates end to end on a DGX H100
// (its step and memory finite and positive, the model's parameters on
// its GPUs), and the plans placer does not cost are refused in one line.
func TestHybridPlans(t *testing.T) {
	m, err := transformer.ReadHFConfig(filepath.Join("..", "graph", "transformer", "testdata", "hf", "nemotron-h-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.Seq, m.Batch = 8192, 64
	p, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=2,pp=2,dp=2,mbs=1,sp=on")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.Step > 0) || math.IsInf(r.Step, 0) || !(r.MFU > 0 && r.MFU < 1) {
		t.Errorf("step %g s, MFU %g", r.Step, r.MFU)
	}
	small := hybridShape(t, "M*-M")
	for _, c := range []struct {
		m         transformer.Spec
		text, pod string
		want      string
	}{
		{small, "tp=4,pp=1,dp=2,mbs=1", "dgx-h100:1", "tp=4 does not divide the 2 Mamba-2 groups"},
		{small, "tp=1,pp=1,dp=4,cp=2,mbs=1", "dgx-h100:1", "cp=2 with Mamba-2 or Gated DeltaNet layers"},
		{small, "tp=1,pp=1,dp=8,mbs=1,stack=torchtitan-0.2", "dgx-h100:1", "not under an eager or torchtitan stack"},
	} {
		s, err := plan.ParseStrategy(c.text)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		_, err = plan.Resolve(c.m, s, p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.text, err, c.want)
		}
	}
}

// TestGDNBlockCost: one Gated DeltaNet's kernels by hand on a small
// Qwen3-Next-like model (hidden 512, 4 key heads and 8 value heads of
// 64, 4 taps, 4,096 tokens): its input projections' width 2 x 256 + 2 x
// 512 + 16 = 1,552, the convolution's channels 2 x 256 + 512 = 1,024, the
// kernel's FLOPs a token 8 x (2 x 64 x (3 x 64 + 2 x 64) + 6 x 64 x 64) =
// 524,288, its backward twice that and the chunk states recomputed, 2 x
// 64 x 64 x 8 = 65,536 a token. And the mean of the mixers: GGG* is
// three quarters of it and a quarter of the gated attention (attnBlock's
// with the gate's GEMM of 2 x 4,096 x 512 x 512 FLOPs and its product).
func TestGDNBlockCost(t *testing.T) {
	m := mustSpec(t, "llama:layers=4,hidden=512,heads=8,seq=4096,vocab=1000,batch=8,experts=8,topk=2,expert_ffn=256,"+
		"mixers=GGG*,gdn_k_heads=4,gdn_v_heads=8,gdn_k_dim=64,gdn_v_dim=64,gdn_conv=4")
	c := hybridCoster(t, m)
	const n, h, in, conv, vd, vh = 4096.0, 512.0, 1552.0, 1024.0, 512.0, 8.0
	ks := []kernel{
		{Class: graph.ClassReduction, FLOPs: 8 * n * h, Read: n * h * 2, Writes: n * h * 2},
		{Class: graph.ClassMatMul, FLOPs: 2 * n * h * in, Read: n*h*2 + h*in*2, Writes: n * in * 2},
		{Class: graph.ClassElementwise, FLOPs: 12 * n * conv, Read: n * conv * 2, Writes: n * conv * 2},
		{Class: graph.ClassMatMul, FLOPs: n * 524_288, Read: n * (conv + 2*vh) * 2, Writes: n * vd * 2},
		{Class: graph.ClassReduction, FLOPs: 10 * n * vd, Read: 2 * n * vd * 2, Writes: n * vd * 2},
		{Class: graph.ClassMatMul, FLOPs: 2 * n * vd * h, Read: n*vd*2 + vd*h*2, Writes: n * h * 2},
		{Class: graph.ClassElementwise, FLOPs: 3 * n * h, Read: 2 * n * h * 2, Writes: 1.5 * n * h * 2},
	}
	var fwd, bwd float64
	for i, k := range ks {
		fwd += c.Run(k).Busy
		switch i {
		case 1, 5:
			bwd += 2 * c.Run(k).Busy
		case 3:
			bwd += c.Run(kernel{Class: graph.ClassMatMul, FLOPs: 2*n*524_288 + n*65_536, Read: n * (2*conv + 2*vh + 2*vd) * 2, Writes: n * (conv + 2*vh) * 2}).Busy
		default:
			bwd += c.Run(cost.Twice(k)).Busy
		}
	}
	gf, gb, _ := families.GatedDeltaNet{}.MixerBlock(&c.Shard)
	if math.Abs(gf.Busy/fwd-1) > 1e-12 || math.Abs(gb.Busy/bwd-1) > 1e-12 {
		t.Errorf("Gated DeltaNet: forward %g s, backward %g s; want %g, %g", gf.Busy, gb.Busy, fwd, bwd)
	}
	plain := c
	plain.M.Mixers = ""
	af, ab, _ := plain.attnBlock()
	gate := kernel{Class: graph.ClassMatMul, FLOPs: 2 * n * h * h, Read: n*h*2 + h*h*2, Writes: n * h * 2}
	mul := kernel{Class: graph.ClassElementwise, FLOPs: 5 * n * h, Read: 2 * n * h * 2, Writes: n * h * 2}
	af.Busy += c.Run(gate).Busy + c.Run(mul).Busy
	ab.Busy += 2*c.Run(gate).Busy + c.Run(cost.Twice(mul)).Busy
	f, b, _ := c.attnBlock()
	if want := (3*gf.Busy + af.Busy) / 4; math.Abs(f.Busy/want-1) > 1e-12 {
		t.Errorf("mixers' forward %g s, want the mean %g", f.Busy, want)
	}
	if want := (3*gb.Busy + ab.Busy) / 4; math.Abs(b.Busy/want-1) > 1e-12 {
		t.Errorf("mixers' backward %g s, want the mean %g", b.Busy, want)
	}
}

// TestQwen3NextPlans: Qwen3-Next-80B-A3B evaluates end to end on four
// DGX H100s, and a tensor degree that does not divide the Gated
// DeltaNet's heads is refused in one line.
func TestQwen3NextPlans(t *testing.T) {
	m, err := transformer.ReadHFConfig(filepath.Join("..", "graph", "transformer", "testdata", "hf", "qwen3-next-80b-a3b.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.Batch = 128
	p, err := plan.ParsePod("dgx-h100:4")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=2,pp=4,dp=4,mbs=1,sp=on,ep=8,etp=1")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.Step > 0) || math.IsInf(r.Step, 0) || !(r.MFU > 0 && r.MFU < 1) {
		t.Errorf("step %g s, MFU %g", r.Step, r.MFU)
	}
	small := mustSpec(t, "llama:layers=4,hidden=512,heads=8,seq=4096,vocab=1000,batch=8,experts=8,topk=2,expert_ffn=256,"+
		"mixers=GGG*,gdn_k_heads=2,gdn_v_heads=8,gdn_k_dim=64,gdn_v_dim=64,gdn_conv=4")
	s4, err := plan.ParseStrategy("tp=4,pp=1,dp=2,mbs=1,sp=on")
	if err != nil {
		t.Fatal(err)
	}
	p1, err := plan.ParsePod("dgx-h100:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Resolve(small, s4, p1); err == nil || !strings.Contains(err.Error(), "tp=4 does not divide the 2 key and 8 value heads of the Gated DeltaNet") {
		t.Errorf("tp=4 over 2 key heads: %v", err)
	}
}

// TestMixerExtensionPoints: a hybrid layer's mixers are asked of the
// registered families through their extension points, each implemented
// by one family alone: the state-space block (cost.SSMBlock) by mamba,
// the linear mixer and its gate (cost.LinearMixer) by gated-deltanet;
// the coster's are those (registered).
func TestMixerExtensionPoints(t *testing.T) {
	names := func(ps []cost.Plugin) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name())
		}
		return strings.Join(out, ",")
	}
	var ssm, lin []cost.Plugin
	for _, p := range cost.Each[cost.SSMBlock](families.Registered) {
		ssm = append(ssm, p)
	}
	for _, p := range cost.Each[cost.LinearMixer](families.Registered) {
		lin = append(lin, p)
	}
	if got := names(ssm); got != "mamba" {
		t.Errorf("state-space blocks registered: %q, want mamba alone", got)
	}
	if got := names(lin); got != "gated-deltanet" {
		t.Errorf("linear mixers registered: %q, want gated-deltanet alone", got)
	}
	if registered.SSMBlock == nil || registered.SSMBlock.Name() != "mamba" || registered.LinearMixer == nil || registered.LinearMixer.Name() != "gated-deltanet" {
		t.Errorf("the coster's mixers %v, %v: want mamba's and gated-deltanet's", registered.SSMBlock, registered.LinearMixer)
	}
}
