package planner

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
)

// smallMLA is two dense blocks of latent attention: hidden 64, 4 heads of
// 16 (+ 8 rotary), a query latent of 32, a key/value latent of 16,
// SwiGLU of 256; sequence 32.
const smallMLA = "llama:layers=2,hidden=64,heads=4,seq=32,vocab=128,batch=4,head_dim=16,q_lora=32,kv_lora=16,rope_dim=8"

// TestMLALayer: one latent-attention block on one GPU at 1 TFLOP/s with
// free memory traffic, by hand (n = 32 tokens, h 64, a 4 heads, d 16,
// r 8, q 32, k 16, f 256). GEMMs: the query's down 2 n h q and up 2 n q a
// (d+r), the keys' and values' down 2 n h (k+r) and up 2 n k a 2d, the
// output projection 2 n a d h, FC1 2 n h 2f, FC2 2 n f h; flash attention
// over the causal half, 2 n s a (2d+r) / 2; norms 8 a element (two of
// the block's, the two latents'), residuals 3 n h each, the rotary
// embedding 3 n (a+1) r, SwiGLU 6 n f. The backward: twice the GEMMs and
// elementwise work, 2.5x the attention. The projections' FLOPs are
// transformer's (AttentionFLOPs: what ModelFLOPs counts), and so are
// the block's parameters.
func TestMLALayer(t *testing.T) {
	m := mustSpec(t, smallMLA)
	p, _ := plan.PodOf("dgx-h100", 1)
	p.Hardware = flopHardware()
	p.Kernels = kernels.Node{} // attention at the matmul class's rate
	pl, err := plan.Resolve(m, plan.Strategy{}, p)
	if err != nil {
		t.Fatal(err)
	}
	n, h, a, d, r, q, k, f, s := 32.0, 64.0, 4.0, 16.0, 8.0, 32.0, 16.0, 256.0, 32.0
	proj := 2*n*h*q + 2*n*q*a*(d+r) + 2*n*h*(k+r) + 2*n*k*a*2*d + 2*n*a*d*h
	attn := 2 * n * s * a * (2*d + r) / 2
	elem := 8*n*h + 8*n*q + 8*n*k + 3*n*(a+1)*r + 3*n*h
	mlp := 2*n*h*2*f + 2*n*f*h
	mlpElem := 8*n*h + 6*n*f + 3*n*h
	wantProj, wantScores := transformer.AttentionFLOPs(m, s/2)
	if !near(proj, n*wantProj) || !near(attn, n*wantScores) {
		t.Errorf("projections %g, attention %g FLOPs; transformer counts %g, %g", proj, attn, n*wantProj, n*wantScores)
	}
	c := &coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, Tokens: n}, Points: registered}
	decide(c.Points, &c.Shard) // the record that asks families.LatentAttention
	fwd, bwd := c.layer()
	if want := (proj + attn + elem + mlp + mlpElem) / 1e12; !near(fwd.Busy, want) {
		t.Errorf("forward %g s, want %g", fwd.Busy, want)
	}
	if want := (2*(proj+elem+mlp+mlpElem) + 2.5*attn) / 1e12; !near(bwd.Busy, want) {
		t.Errorf("backward %g s, want %g", bwd.Busy, want)
	}
	// Parameters: the query's down, norm, up; the keys' and values'
	// down (with the rotary key), norm, up; the output projection; two
	// norms; the SwiGLU MLP.
	attnParams := h*q + q + q*a*(d+r) + h*(k+r) + k + k*a*2*d + a*d*h + 2*h
	if got := float64(transformer.AttentionParams(m)); got != attnParams {
		t.Errorf("attention parameters %g, want %g", got, attnParams)
	}
	res := evaluate(m, pl, p)
	params := 2*(attnParams+3*h*f) + 128*h + (h + 128*h)
	if res.Weights != int64(2*params) {
		t.Errorf("weights %d bytes, want %d", res.Weights, int64(2*params))
	}
	// Two tensor-parallel ranks split the heads: the up projections and
	// the output projection halve, the down projections (duplicated,
	// on the sequence shard with sp) halve with the tokens.
	p2, _ := plan.PodOf("dgx-h100", 2)
	p2.Hardware, p2.Kernels = flopHardware(), kernels.Node{}
	pl2, err := plan.Resolve(m, plan.Strategy{Tensor: 2, SequenceParallel: true}, p2)
	if err != nil {
		t.Fatal(err)
	}
	c2 := &coster{Shard: cost.Shard{M: m, Plan: pl2, H: &p2.Hardware, Pod: &p2, Tokens: n, NoComm: true}, Points: registered}
	c2.TPG = plan.Group{PerNode: 2, Nodes: 1}
	f2, _, _ := families.LatentAttention{}.AttentionBlock(&c2.Shard)
	f1, _, _ := families.LatentAttention{}.AttentionBlock(&c.Shard)
	// Everything halves but the rotary key's share of the rope (n r on
	// every rank): about half.
	if ratio := f2.Busy / f1.Busy; ratio < 0.49 || ratio > 0.52 {
		t.Errorf("tp=2's latent attention %g s, tp=1's %g: ratio %.3f, want about 0.5", f2.Busy, f1.Busy, ratio)
	}
}

// TestDenseMoEStageMix: a small MoE whose first layer is dense (FFN
// 2,816) on 8 H100s, ep 4 (expert-DP 2), dp 8, the distributed
// optimizer: one stage of a dense and an MoE block, its memory by hand.
// Parameters: the dense block 4,196,352 + 3 x 1,024 x 2,816 =
// 12,847,104; the MoE block 4,196,352 + the router 8,192 + two local
// experts of 1,572,864; the embedding 1,048,576, the output layer and
// its norm 1,049,600: 22,295,552, 3,145,728 of them experts'.
// Activations (unit n h = 1,024 x 1,024): the dense block 15 + 18.5
// units (SwiGLU: 2 + 6 f/h), the MoE block 15 units and its experts'
// bytes (TestMoELayerMemory's), the embedding's 3 units and 10 bytes a
// logit.
func TestDenseMoEStageMix(t *testing.T) {
	m := mustSpec(t, smallMoE+",dense_layers=1")
	p, _ := plan.PodOf("dgx-h100", 8)
	r, err := Evaluate(m, plan.Strategy{Replicas: 8, Experts: 4, DistOpt: true, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	params, experts := 22295552.0, 3145728.0
	unit := 1024.0 * 1024
	moe := 32768.0 + 2097152 + 4194304 + 4194304 + 2097152 + 4194304
	for _, w := range []struct {
		name      string
		got, want int64
	}{
		{"weights", r.Weights, int64(params * 2)},
		{"gradients", r.Grads, int64(params * 4)},
		{"optimizer", r.OptState, int64((params-experts)*12/8 + experts*12/2)},
		{"activations", r.Activations, int64((15+18.5)*unit + 15*unit + moe + 3*unit + 10*unit)},
	} {
		if w.got != w.want {
			t.Errorf("%s: %d bytes, want %d", w.name, w.got, w.want)
		}
	}
	// The dense block costs the dense MLP, not the experts: the stage
	// of one dense and one MoE block is neither two of one nor two of
	// the other.
	allMoE, err := Evaluate(mustSpec(t, smallMoE), plan.Strategy{Replicas: 8, Experts: 4, DistOpt: true, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.EPExposed >= allMoE.EPExposed || r.EPExposed <= 0 {
		t.Errorf("one MoE block's all-to-alls %g s, two's %g s", r.EPExposed, allMoE.EPExposed)
	}
}

// TestDenseOn: the dense layers land where Megatron's chunk order puts
// them. DeepSeek-V3's 61 layers over 16 stages of 3, 4 x 14, 2: without
// interleaving all three on stage 0; with two chunks a stage (Megatron-
// Core's layout "Et|(tt|)*30mL"), stage 0's first chunk holds one layer
// and stage 1's first chunk the next two; block recomputation of one
// layer a chunk recomputes the first of each chunk.
func TestDenseOn(t *testing.T) {
	m, _ := transformer.Preset("deepseek-v3")
	stages := []int{3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2}
	for _, c := range []struct {
		V, k      int
		rc        plan.Recompute
		want, rec [3]int
	}{
		{1, 0, plan.NoRecompute, [3]int{3, 0, 0}, [3]int{}},
		{2, 0, plan.NoRecompute, [3]int{1, 2, 0}, [3]int{}},
		{2, 1, plan.FullRecompute, [3]int{1, 2, 0}, [3]int{1, 1, 0}},
		{1, 0, plan.FullRecompute, [3]int{3, 0, 0}, [3]int{3, 0, 0}},
	} {
		pl := plan.Plan{VP: c.V, Stages: stages, PP: 16}
		pl.Recompute, pl.RecomputeLayers = c.rc, c.k
		for s := range 3 {
			d, rc := pl.DenseOn(&m, s)
			if d != c.want[s] || rc != c.rec[s] {
				t.Errorf("V %d, %s k %d: stage %d has %d dense layers (%d recomputed), want %d (%d)", c.V, c.rc, c.k, s, d, rc, c.want[s], c.rec[s])
			}
		}
	}
}

// TestMTPLastStage: multi-token prediction adds its module to the last
// stage only: its projection of 2h to h, two norms, an MoE block (the
// attention and router, two local experts) and a copy of the embedding
// (1,024 x 1,024) on the last of two stages, the first stage unchanged;
// the copy's gradient all-reduced between the two; the step longer.
func TestMTPLastStage(t *testing.T) {
	base := mustSpec(t, smallMoE)
	mtp := mustSpec(t, smallMoE+",mtp=1")
	p, _ := plan.PodOf("dgx-h100", 8)
	s := plan.Strategy{Pipeline: 2, Replicas: 4, Experts: 4, DistOpt: true, MicroBatchSize: 1}
	pb, err := plan.Resolve(base, s, p)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := plan.Resolve(mtp, s, p)
	if err != nil {
		t.Fatal(err)
	}
	lp := float64(transformer.LayerParams(base))
	_, modules := memoryTraits(registered, &mtp, &pm, &p)
	_, none := memoryTraits(registered, &base, &pb, &p)
	if modules == nil || none != nil {
		t.Fatalf("prediction modules' memory %v with MTP, %v without: want the trait's and none", modules, none)
	}
	h := 1024.0
	module := 2*h*h + 2*h + (4196352 + 8192 + 2*1572864)
	if got, want := memory.StageOf(&mtp, &pm, 0, lp, modules).Params, memory.StageOf(&base, &pb, 0, lp, none).Params; got != want {
		t.Errorf("first stage: %g parameters with MTP, %g without", got, want)
	}
	if got, want := memory.StageOf(&mtp, &pm, 1, lp, modules).Params, memory.StageOf(&base, &pb, 1, lp, none).Params+module+1024*h; got != want {
		t.Errorf("last stage: %g parameters with MTP, want %g", got, want)
	}
	rb, rm := evaluate(base, pb, p), evaluate(mtp, pm, p)
	if rb.Embedding != 0 || rm.Embedding <= 0 {
		t.Errorf("embedding all-reduce %g s without MTP, %g s with", rb.Embedding, rm.Embedding)
	}
	if !(rm.Step > rb.Step && rm.Memory > rb.Memory) {
		t.Errorf("MTP: %g s, %d bytes; without %g s, %d bytes", rm.Step, rm.Memory, rb.Step, rb.Memory)
	}
}

// deepSeekV3Published is DeepSeek-V3's training as its report states
// it (arXiv 2412.19437, section 3.2 and Table 1): 2,048 H800s, PP 16,
// EP 64 over 8 nodes, ZeRO-1 data parallelism (128 here), no TP, FP8
// with blockwise scales, sequence 4,096, batch 15,360 (section 4.2,
// after its ramp); 180K H800 GPU hours per trillion tokens, 1,543
// tokens/s a GPU. Assumed: micro-batch 1 (M = 120, not a multiple of 16:
// no interleaving), the layers 3, 4 x 14, 2 (Megatron-Core's DeepSeek-V3
// layout's per stage: "Et|(tt|)*30mL"), and the least recomputation that
// fits 80 GB (block recomputation of 3 layers a stage), as
// MegatronDefault reads unstated knobs.
const deepSeekV3Published = "pp=16,dp=128,ep=64,mbs=1,distopt=on,first=3,last=2,fp8=blockwise,recompute=full,recompute-layers=3"

// TestDeepSeekV3: the published plan resolves on 256 H800 nodes as
// stated and fits; without recomputation it does not (its activations
// of 15 micro-batches on stage 1 exceed 80 GB in placer's model).
func TestDeepSeekV3(t *testing.T) {
	m := mustSpec(t, "deepseek-v3:seq=4096,batch=15360")
	p, err := plan.PodOf("dgx-h800", 2048)
	if err != nil {
		t.Fatal(err)
	}
	if p.Hardware.Name != "h800" || p.Hardware.NVLinks != 8 || p.Kernels.IntraBus != 160e9 {
		t.Fatalf("dgx-h800: %s, %d NVLinks, %g B/s", p.Hardware.Name, p.Hardware.NVLinks, p.Kernels.IntraBus)
	}
	s, err := plan.ParseStrategy(deepSeekV3Published)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	pl := r.Plan
	if pl.TP != 1 || pl.PP != 16 || pl.DP != 128 || pl.EP != 64 || pl.EDP != 2 || pl.NumMicro != 120 {
		t.Errorf("%s: EP %d, EDP %d, M %d", pl, pl.EP, pl.EDP, pl.NumMicro)
	}
	if d, _ := pl.DenseOn(&m, 0); d != 3 {
		t.Errorf("stage 0 holds %d dense layers, want 3", d)
	}
	if !r.Fits || r.Step <= 0 || r.EPExposed <= 0 {
		t.Errorf("%s", r)
	}
	tokens := 15360.0 * 4096 / r.Step / 2048
	t.Logf("%s: %.0f tokens/s a GPU (published 1,543: %+.1f%%), all-to-alls exposed %.2f s of %.2f", r, tokens, 100*(tokens/1543-1), r.EPExposed, r.Step)
	s.Recompute, s.RecomputeLayers = plan.NoRecompute, 0
	if r, err := Evaluate(m, s, p); err != nil || r.Fits {
		t.Errorf("without recomputation: %v, %v", r, err)
	}
}
