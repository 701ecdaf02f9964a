package planner

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

func mustSpec(t testing.TB, text string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// smallMoE is two MoE blocks of hidden 1,024, 8 heads, 8 experts of 512,
// top 2, sequence 1,024, vocabulary 1,024, 8 sequences a step.
const smallMoE = "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=8,experts=8,topk=2,expert_ffn=512"

// TestMoELayerMemory: one GPU's memory of the small MoE on 8 H100s, tp 1,
// ep 4 (expert-DP 2), dp 8, the distributed optimizer, micro-batch 1, by
// hand. Per block: attention 1,024 x 3,072 + 1,024 x 1,024 + two norms
// 2,048 = 4,196,352, the router 8,192, two local experts of 3 x 1,024 x
// 512 = 1,572,864 each; the embedding 1,048,576, the output layer and
// its norm 1,049,600: 16,798,720 parameters, 6,291,456 of them experts'.
// Weights x 2 bytes, FP32 gradients x 4, Adam's 12 bytes over dp 8 for
// the rest and expert-DP 2 for the experts. Activations (unit n h =
// 1,024 x 1,024): attention 15 units a block; the experts' (1,024
// tokens, 2,048 routed): FP32 scores 32,768, input 2,097,152, permuted
// tokens 4,194,304, FC1's output 2,048 x 1,024 x 2 = 4,194,304, FC2's
// input 2,097,152, FC2's output 4,194,304; two blocks, the embedding's 3
// units and 10 bytes a logit (1,024 x 1,024).
func TestMoELayerMemory(t *testing.T) {
	m := mustSpec(t, smallMoE)
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(m, plan.Strategy{Replicas: 8, Experts: 4, DistOpt: true, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	params, experts := 16798720.0, 6291456.0
	unit := 1024.0 * 1024
	moe := 32768.0 + 2097152 + 4194304 + 4194304 + 2097152 + 4194304
	want := []struct {
		name      string
		got, want int64
	}{
		{"weights", r.Weights, int64(params * 2)},
		{"gradients", r.Grads, int64(params * 4)},
		{"optimizer", r.OptState, int64((params-experts)*12/8 + experts*12/2)},
		{"activations", r.Activations, int64(2*(15*unit+moe) + 3*unit + 10*unit)},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("%s: %d bytes, want %d", w.name, w.got, w.want)
		}
	}
	if r.Plan.EP != 4 || r.Plan.ETP != 1 || r.Plan.EDP != 2 || r.EPExposed <= 0 {
		t.Errorf("plan %s: EP %d, ETP %d, EDP %d, exposed all-to-all %g", r.Plan, r.Plan.EP, r.Plan.ETP, r.Plan.EDP, r.EPExposed)
	}
}

// TestMoEProbsInActivation: where the stack's Megatron-Core multiplies
// the routing weights into the experts' activation (core_r0.12.0 on:
// megatron-core-0.16, Megatron-Bridge's), a block keeps the FP32
// weights of its 2,048 routed rows (8,192 bytes) in place of FC2's
// output (4,194,304 bytes); everything else as TestMoELayerMemory's but
// on Megatron-Bridge, whose llama-family providers set hidden_dropout
// 0.0: no attention dropout mask (1 unit a block) and no embedding
// output and mask on stage 0 (3 units): 5 units less. The step's time
// the same to the bit.
func TestMoEProbsInActivation(t *testing.T) {
	m := mustSpec(t, smallMoE)
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	unit := 1024.0 * 1024
	rest := 32768.0 + 2097152 + 4194304 + 4194304 + 2097152 // scores, input, permuted tokens, FC1's output, FC2's input
	base := evalText(t, m, p, "dp=8,ep=4,mbs=1,distopt=on")
	for _, c := range []struct {
		stack         string
		weights, drop float64
	}{
		{"", 4194304, 0},
		{"model-zoo-moe-dev", 4194304, 0},
		{"megatron-core-0.16", 2048 * 4, 0},
		{"megatron-bridge-25.11", 2048 * 4, 5 * unit},
		{"megatron-bridge-26.06", 2048 * 4, 5 * unit},
	} {
		text := "dp=8,ep=4,mbs=1,distopt=on"
		if c.stack != "" {
			text += ",stack=" + c.stack
		}
		r := evalText(t, m, p, text)
		want := int64(2*(15*unit+rest+c.weights) + 3*unit + 10*unit - c.drop)
		if r.Activations != want {
			t.Errorf("%s: activations %d bytes, want %d", text, r.Activations, want)
		}
		if c.stack == "megatron-bridge-25.11" && r.Step != base.Step {
			t.Errorf("%s: step %g s, default stack's %g s (bridgeH100 is the default's settings)", text, r.Step, base.Step)
		}
	}
}

// TestAllToAll: an all-to-all of 1 GB a GPU inside a node sends 7/8 of
// it over NVSwitch; over 4 nodes of 8, 7/32 over NVSwitch and 24/32 over
// the GPU's NIC (47 GB/s), at once.
func TestAllToAll(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	bi, li := p.Intra()
	be, le := p.Inter()
	if be != 47e9 {
		t.Fatalf("a GPU's share of the NICs: %g B/s, want 47e9", be)
	}
	for _, c := range []struct {
		g    plan.Group
		want float64
	}{
		{plan.Group{PerNode: 8, Nodes: 1}, 1e9*7/8/bi + li},
		{plan.Group{PerNode: 8, Nodes: 4}, max(1e9*7/32/bi+li, 1e9*24/32/be+le)},
		{plan.Group{PerNode: 1, Nodes: 1}, 0},
	} {
		if got := p.AllToAll(c.g, 1e9); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v: %g s, want %g", c.g, got, c.want)
		}
	}
}

// TestMoERefusals: each in one line naming what.
func TestMoERefusals(t *testing.T) {
	h100, _ := plan.PodOf("dgx-h100", 8)
	a100, _ := plan.PodOf("dgx-a100", 8)
	moe := mustSpec(t, smallMoE)
	dense := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=16")
	for _, c := range []struct {
		m    transformer.Spec
		s    string
		p    plan.Pod
		want string
	}{
		{moe, "ep=3", h100, "ep=3 does not divide the 8 experts"},
		{moe, "ep=8,etp=4,tp=2,sp=on", h100, "ep=8 x etp=4 does not divide a pipeline stage's 8 GPUs"},
		{moe, "tp=2,ep=2", h100, "needs sp=on"},
		{moe, "etp=3", h100, "etp=3 does not divide the 8 GPUs of a node"},
		{dense, "ep=2", h100, "without experts"},
		{dense, "fp8=current", a100, "no FP8 tensor cores"},
		{mustSpec(t, smallMoE+",mtp=1"), "cp=2", h100, "mtp=1 with cp=2"},
	} {
		s, err := plan.ParseStrategy(c.s)
		if err != nil {
			t.Fatalf("%s: %v", c.s, err)
		}
		_, err = Evaluate(c.m, s, c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.s, err, c.want)
		}
	}
	if _, err := plan.ParseStrategy("imbalance=0.5"); err == nil || !strings.Contains(err.Error(), "from 1 to 64") {
		t.Errorf("imbalance=0.5: %v", err)
	}
	if _, err := plan.ParseStrategy("fp8=e4m3"); err == nil || !strings.Contains(err.Error(), "want current, delayed, blockwise, mxfp8, rowwise or rowwise_with_gw_hp (fp4: nvfp4)") {
		t.Errorf("fp8=e4m3: %v", err)
	}
}

// TestMoEKnobs: an imbalance of 2 slows the step and takes more memory;
// FP8 keeps FP8 copies of the blocks' weights (2 bytes a parameter) and
// speeds Llama 3 8B's block up on an H100 (the small MoE's GEMMs are too
// small to win over the casts); a plan reads back from its String.
func TestMoEKnobs(t *testing.T) {
	m := mustSpec(t, smallMoE)
	p, _ := plan.PodOf("dgx-h100", 8)
	// The GPU's side alone: this small layer's kernels take less time
	// than their host takes to issue them (Host), which would hide what
	// each knob does to the kernels.
	p.Kernels.Host = kernels.Host{}
	eval := func(text string) Result {
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := plan.ParseStrategy(r.Plan.String())
		if err != nil {
			t.Fatalf("%s: %v", r.Plan, err)
		}
		if r2, err := Evaluate(m, back, p); err != nil || r2.Step != r.Step || r2.Memory != r.Memory {
			t.Errorf("%s reads back as %s: %v", text, back, err)
		}
		return r
	}
	base := eval("ep=4")
	if im := eval("ep=4,imbalance=2"); !(im.Step > base.Step && im.Activations > base.Activations) {
		t.Errorf("imbalance 2: %.6f s, %d bytes; balanced %.6f s, %d bytes", im.Step, im.Activations, base.Step, base.Activations)
	}
	f8 := eval("ep=4,fp8=current")
	if f8.Weights != base.Weights+2*int64(2*(4196352+8192+2*1572864)) {
		t.Errorf("fp8: weights %d, bf16 %d", f8.Weights, base.Weights)
	}
	if d := eval("ep=4,fp8=delayed"); !(d.LayerForward < f8.LayerForward) {
		t.Errorf("delayed scaling %.6g s, current %.6g s: current's amax pass is the difference", d.LayerForward, f8.LayerForward)
	}
	m = mustSpec(t, "llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=128")
	if l8, l16 := eval("dp=8,fp8=current"), eval("dp=8"); !(l8.LayerForward < 0.8*l16.LayerForward) {
		t.Errorf("Llama 3 8B's block in FP8 %.6g s, BF16 %.6g s", l8.LayerForward, l16.LayerForward)
	}
}

// BenchmarkEvaluateMoE1024: one plan of Qwen3-235B-A22B on 1,024 H100s
// (tp 2, pp 8, vp 4, ep 32, FP8).
func BenchmarkEvaluateMoE1024(b *testing.B) {
	m := mustSpec(b, "qwen3-235b-a22b:seq=4096,batch=2048")
	p, err := plan.PodOf("dgx-h100", 1024)
	if err != nil {
		b.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=2,pp=8,vp=4,ep=32,etp=1,sp=on,distopt=on,first=11,last=11,fp8=current")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Evaluate(m, s, p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFSDPMemory: FSDP on 8 GPUs shards a small Llama's 27,792,384
// parameters (two blocks of 4,196,352 attention and norms + 3 x 1,024 x
// 2,816 MLP = 12,847,104; embedding 1,048,576; output 1,049,600) over 8:
// BF16 weights plus two blocks gathered, FP32 gradients plus one block's
// before its reduce-scatter, Adam's 12 bytes; by hand.
func TestFSDPMemory(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=8")
	p, _ := plan.PodOf("dgx-h100", 8)
	r, err := Evaluate(m, plan.Strategy{Replicas: 8, FSDP: true, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	params, layer := 27792384.0, 12847104.0
	if r.Weights != int64(params*2/8+2*layer*2) || r.Grads != int64(params*4/8+layer*4) || r.OptState != int64(params*12/8) {
		t.Errorf("weights %d, gradients %d, optimizer %d; want %d, %d, %d", r.Weights, r.Grads, r.OptState,
			int64(params*2/8+2*layer*2), int64(params*4/8+layer*4), int64(params*12/8))
	}
	if r.DPExposed <= 0 {
		t.Errorf("FSDP's gathers and reduce-scatters: %g s exposed", r.DPExposed)
	}
	if _, err := plan.ParseStrategy("fsdp=on,distopt=on"); err == nil || !strings.Contains(err.Error(), "one or the other") {
		t.Errorf("fsdp=on,distopt=on: %v", err)
	}
	one, _ := plan.PodOf("dgx-h100", 1)
	if _, err := Evaluate(m, plan.Strategy{FSDP: true}, one); err == nil || !strings.Contains(err.Error(), "fsdp with dp=1") {
		t.Errorf("fsdp on one GPU: %v", err)
	}
}

// TestEPOverlap: epoverlap=on against the same plan without it, the small
// MoE on 16 H100s, ep 8 (all-to-alls over NVSwitch), tp 1, dp
// 16, no pipeline. Without a pipeline the first forward and the last
// backward run unpaired, so with M micro-batches the exposed all-to-all
// time is M E - (M - 1) S, E and S a micro-batch's exposure and what a
// pair saves, both the same at every M: the saving read off at M = 4
// predicts M = 8 (and M = 1 is the plan without the overlap). Memory
// holds one micro-batch more; Resolve refuses what Megatron-Core does.
func TestEPOverlap(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 16)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(batch int, on bool) Result {
		m := mustSpec(t, strings.Replace(smallMoE, "batch=8", "batch="+strconv.Itoa(batch), 1))
		r, err := Evaluate(m, plan.Strategy{Replicas: 16, MicroBatchSize: 1, DistOpt: true, Experts: 8, EPOverlap: on}, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	off1, on1 := eval(16, false), eval(16, true)
	if on1.Step != off1.Step || on1.Memory != off1.Memory {
		t.Errorf("M = 1: %v and %v, want the same step and memory", on1, off1)
	}
	off4, on4, off8, on8 := eval(64, false), eval(64, true), eval(128, false), eval(128, true)
	e := off4.EPExposed / 4
	if math.Abs(off8.EPExposed-8*e) > 1e-12 {
		t.Fatalf("without the overlap the exposure is not M x E: %g at 8, %g at 4", off8.EPExposed, off4.EPExposed)
	}
	s := (4*e - on4.EPExposed) / 3
	if !(s > 0 && s <= e) {
		t.Fatalf("a pair saves %g of a micro-batch's %g", s, e)
	}
	if want := 8*e - 7*s; math.Abs(on8.EPExposed-want) > 1e-9*want {
		t.Errorf("M = 8: exposed %g, want 8 E - 7 S = %g", on8.EPExposed, want)
	}
	// The step is shorter by the exposure saved, less what the
	// data-parallel collectives now add beside a window with fewer idle
	// exchanges in it (plan.Pod.BesideIn).
	saved := (off8.EPExposed - on8.EPExposed) - (on8.DPExposed - off8.DPExposed)
	if !(on8.Step < off8.Step) || math.Abs((off8.Step-on8.Step)-saved) > 1e-6*off8.Step {
		t.Errorf("M = 8: step %g against %g: not shorter by the exposure saved (%g)", on8.Step, off8.Step, saved)
	}
	if !(on8.Activations > off8.Activations) || on8.Weights != off8.Weights {
		t.Errorf("M = 8: activations %d against %d, weights %d against %d", on8.Activations, off8.Activations, on8.Weights, off8.Weights)
	}
	for _, c := range []struct{ model, strategy, want string }{
		{"gpt:layers=2,hidden=1024,heads=8,seq=1024,vocab=1024,batch=128", "dp=16,epoverlap=on", "on a model without experts"},
		{strings.Replace(smallMoE, "batch=8", "batch=128", 1), "dp=16,epoverlap=on", "without expert parallelism"},
		{strings.Replace(smallMoE, "batch=8", "batch=128", 1), "pp=2,dp=8,ep=8,epoverlap=on", "epoverlap=on with pp=2 and no virtual stages"},
		{strings.Replace(smallMoE, "batch=8", "batch=128", 1), "dp=16,ep=8,epoverlap=on,recompute=full", "epoverlap=on with recompute=full"},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err == nil {
			_, err = plan.Resolve(mustSpec(t, c.model), s, p)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: %v, want one line with %q", c.model, c.strategy, err, c.want)
		}
	}
}

// TestEPOverlapStage: epOverlap on one stage by hand. A micro-batch's
// forward busy 10 with 4 of all-to-alls exposed, its backward 20 with 4:
// paired, each side's 4 runs beside the other's computation (16 and 6,
// both longer), so each is charged k x 4 (k: what the SMs its CTAs hold cost)
// and a pair saves 8 - 8k. With pp 2 x vp 2 and 8 micro-batches, stage 0
// runs (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 chunks, 2 micro-batches, of
// warm-up unpaired (and as many of cool-down): 6 of the 8 pair, so each
// micro-batch is 6/8 of a pair's saving shorter, half of it the
// forward's (its exchanges are half the micro-batch's). Stage 1 warms up
// 2 chunks: 1 micro-batch, 7 of 8 pair.
func TestEPOverlapStage(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	// The exchanges of 8 ranks in a node run on NCCL's p2p channels, 24
	// rounded up to 32 CTAs; every window is SM-bound (fwdSM, bwdSM), so
	// the computation beside them runs at 100/132 and each side's 4 s
	// costs 4 x 32/132. With the flex dispatcher DeepEP's kernels take
	// Megatron-Core's 20 SMs: 4 x 20/132.
	for _, d := range []struct {
		dispatcher string
		k          float64
	}{{"", 32.0 / 132}, {plan.DispatcherFlex, 20.0 / 132}} {
		k := d.k
		pl := plan.Plan{PP: 2, VP: 2, NumMicro: 8, EP: 8, ETP: 1}
		pl.Run.Dispatcher = d.dispatcher
		for s, paired := range []float64{6, 7} {
			st := stageCost{fwd: phase{Busy: 10, EPExposed: 4}, bwd: phase{Busy: 20, EPExposed: 4}, fwdSM: 6, bwdSM: 16}
			epOverlap(registered, &st, pl, &p, s)
			cut := (8 - 8*k) * paired / 8
			if math.Abs(st.fwd.Busy-(10-cut/2)) > 1e-12 || math.Abs(st.bwd.Busy-(20-cut/2)) > 1e-12 ||
				math.Abs(st.fwd.EPExposed-(4-cut/2)) > 1e-12 || math.Abs(st.bwd.EPExposed-(4-cut/2)) > 1e-12 {
				t.Errorf("%q stage %d: %+v %+v, want each side %g shorter (k = %g)", d.dispatcher, s, st.fwd, st.bwd, cut/2, k)
			}
		}
	}
}

// TestEPOverlapPairs: epOverlap pairing each exchange with one node of
// the other pass (TransformerLayerSchedulePlan.run), worked by hand. A
// layer's forward runs attention attnF, experts mlpF and 4 of exchanges
// (dispatch 2, combine 2); its backward attention attnB, experts mlpB
// and 4. In a node of 8 (NCCL's 32 CTAs of 132 SMs, every window
// SM-bound) an exchange of 2 beside longer computation costs 2k, k =
// 32/132; beside shorter, what sticks out.
//   - attention 3 and 8, experts 3 and 8: the combine's backward beside
//     the forward's attention (3), the dispatch's forward beside the
//     experts' data gradient (4), the dispatch's backward beside their
//     weight gradient and the forward's experts (4 + 3), the combine's
//     forward beside the backward's attention (8): all fit, 8 - 8k saved.
//   - forward attention 0.5, experts 5.5: the combine's backward sticks
//     out of the attention by 1.5 (more than 2k = 0.48): 8 - 1.5 - 6k.
//   - backward attention 1, experts 15: the combine's forward sticks out
//     by 1: 8 - 1 - 6k.
//
// On a stage of 2 such layers (the second case), forward busy 2 x 10
// with 8 exposed, backward 2 x 20 with 8, pp 2 x vp 2, 8 micro-batches,
// stage 0 (6 of 8 pair: TestEPOverlapStage): each side is 2 x (6.5 - 6k)
// x 6/8 / 2 shorter. Pairing the whole forward with the whole backward
// instead hid all of it (16 - 16k).
func TestEPOverlapPairs(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	pl := plan.Plan{PP: 2, VP: 2, NumMicro: 8, EP: 8, ETP: 1}
	_, g, _ := pl.ExpertGroups(p)
	k := 32.0 / 132
	for _, c := range []struct {
		name string
		e    epParts
		want float64
	}{
		{"all fit", epParts{attnF: 3, mlpF: 3, commF: 4, attnB: 8, mlpB: 8, commB: 4}, 8 - 8*k},
		{"short forward attention", epParts{attnF: 0.5, mlpF: 5.5, commF: 4, attnB: 8, mlpB: 8, commB: 4}, 8 - 1.5 - 6*k},
		{"short backward attention", epParts{attnF: 3, mlpF: 3, commF: 4, attnB: 1, mlpB: 15, commB: 4}, 8 - 1 - 6*k},
	} {
		if got := c.e.pairSaving(&p, g, 0, 1, 1); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: a pair saves %g, want %g", c.name, got, c.want)
		}
	}
	st := stageCost{fwd: phase{Busy: 20, EPExposed: 8}, bwd: phase{Busy: 40, EPExposed: 8}, fwdSM: 12, bwdSM: 32,
		ep: epParts{attnF: 0.5, mlpF: 5.5, commF: 4, attnB: 8, mlpB: 8, commB: 4}, moeLayers: 2}
	epOverlap(registered, &st, pl, &p, 0)
	half := 2 * (6.5 - 6*k) * 6 / 8 / 2
	if math.Abs(st.fwd.Busy-(20-half)) > 1e-12 || math.Abs(st.bwd.Busy-(40-half)) > 1e-12 ||
		math.Abs(st.fwd.EPExposed-(8-half)) > 1e-12 || math.Abs(st.bwd.EPExposed-(8-half)) > 1e-12 {
		t.Errorf("stage: %+v %+v, want each side %g shorter", st.fwd, st.bwd, half)
	}
}
