package memory

import (
	"math"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestKorthikantiTable2 checks one layer's activations against
// Korthikanti et al. (arXiv 2205.05198), table 2, for a GPT layer with
// unfused attention (Megatron-LM of 2022: the dgx-a100 pod), per GPU,
// bytes: tensor parallelism sbh(10 + 24/t + 5as/(ht)), with sequence
// parallelism sbh(34/t + 5as/(ht)). The 22B model of its table 3: h
// 6,144, a 64, s 2,048, b 1, t 8: sbh = 12,582,912, 5as/h = 106.67.
func TestKorthikantiTable2(t *testing.T) {
	p, err := plan.PodOf("dgx-a100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "gpt:layers=48,hidden=6144,heads=64,seq=2048,vocab=51200,batch=1")
	for _, c := range []struct {
		name string
		s    plan.Strategy
		want float64 // by hand from the table's formula
	}{
		{"tensor parallel", plan.Strategy{Tensor: 8, Replicas: 1, MicroBatchSize: 1}, 331_350_016},                             // 12,582,912 x 26.333
		{"+ sequence parallel", plan.Strategy{Tensor: 8, Replicas: 1, MicroBatchSize: 1, SequenceParallel: true}, 221_249_536}, // x 17.583
	} {
		pl, err := plan.Resolve(m, c.s, p)
		if err != nil {
			t.Fatal(err)
		}
		co := counterAt(m, pl, &p, 8, 2048)
		if got := co.layerMemory().perLayer; math.Abs(got/c.want-1) > 1e-9 {
			t.Errorf("%s: %.0f bytes a layer, Korthikanti's table 2 %.0f", c.name, got, c.want)
		}
	}
}

// TestTitanParts: torchtitan's parts as its source holds them, by hand
// for Llama 3.1 70B (hidden 8,192, 64 heads, 8 key/value heads, head
// 128) at 8,192 tokens: the loss's bytes a logit (12 eager on one GPU's
// vocabulary, 16 with loss parallel, 2 more under a pipeline), the
// gathered inputs of a sequence-parallel block (4 units of s h whole,
// 2 with Float8, less the 1/T Megatron-Core's count has) and the keys
// and values repeat_kv widens to every head.
func TestTitanParts(t *testing.T) {
	m := mustSpec(t, "llama3-70b:seq=8192,batch=8")
	const n, h = 8192.0, 8192.0
	unit := n * h
	kvWide := 2 * 2 * (64 - 8) * 128 / h // 14 units of s h, over T
	for _, c := range []struct {
		name      string
		pl        plan.Plan
		loss      float64
		extra     float64
		buffersS0 float64 // titanStageBuffers of stage 0 with 1 in flight
	}{
		{"fsdp", plan.Plan{TP: 1, PP: 1, NumMicro: 1}, 12, kvWide * unit, 0},
		{"tp 8 sp", plan.Plan{TP: 8, PP: 1, NumMicro: 1, Strategy: plan.Strategy{SequenceParallel: true}}, 16, 4*unit*7/8 + kvWide*unit/8, 0},
		{"tp 8 sp fp8", plan.Plan{TP: 8, PP: 1, NumMicro: 1, Strategy: plan.Strategy{SequenceParallel: true, FP8: "current"}}, 16, 2*unit*7/8 + kvWide*unit/8, 0},
		// 8 micro-batches: stage 0 receives the gradient of each and
		// keeps the output of the one in flight, 2 s h / T bytes each.
		{"tp 8 sp pp 4", plan.Plan{TP: 8, PP: 4, NumMicro: 8, Strategy: plan.Strategy{SequenceParallel: true}}, 18, 4*unit*7/8 + kvWide*unit/8, (8 + 1) * 2 * unit / 8},
	} {
		c.pl.Software.Stack = "torchtitan-0.2"
		if got := titanLossBytes(&c.pl); got != c.loss {
			t.Errorf("%s: %g bytes a logit, want %g", c.name, got, c.loss)
		}
		co := counter{m: m, pl: c.pl, tokens: n}
		if got := co.titanBlockExtra(); math.Abs(got/c.extra-1) > 1e-12 {
			t.Errorf("%s: %.0f bytes beyond Megatron-Core's count, want %.0f", c.name, got, c.extra)
		}
		if got := co.titanStageBuffers(0, 1); math.Abs(got-c.buffersS0) > 1e-3 {
			t.Errorf("%s: stage 0's buffers %.0f bytes, want %.0f", c.name, got, c.buffersS0)
		}
	}
}

// TestMoEDistOptShards: Megatron-Core's distributed optimizer shards a
// model with experts' dense parameters over the data-parallel and
// context ranks and its experts' over the expert-data-parallel ranks
// (megatron/core/optimizer: the dense and expert parameter groups'
// buffers, each over its own data-parallel group). By hand, a stage of
// 1e9 parameters of which 6e8 experts' and 9e8 in its blocks, D 8, C 2,
// EDP 4, BF16 weights and gradients: optimizer 4e8 x 12 / 16 + 6e8 x
// 12 / 4 = 2.1e9 bytes, weights and gradients 2e9 each (unsharded).
func TestMoEDistOptShards(t *testing.T) {
	m := mustSpec(t, "qwen3-30b-a3b:seq=4096,batch=64")
	pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 2, EP: 4, EDP: 4, ETP: 1, Stages: []int{48}, Strategy: plan.Strategy{DistOpt: true, GradBF16: true}}
	co := counter{m: m, pl: pl}
	st := Stage{Params: 1e9, Experts: 6e8, Layers: 9e8}
	w, fp8, g, o := co.stageState(0, &st)
	if w != 2e9 || fp8 != 0 || g != 2e9 || math.Abs(o-2.1e9) > 1 {
		t.Errorf("weights %.0f, FP8 copies %.0f, gradients %.0f, optimizer %.0f; want 2e9, 0, 2e9, 2.1e9", w, fp8, g, o)
	}
	// Without the distributed optimizer every GPU keeps all 12 bytes.
	co.pl.DistOpt = false
	if _, _, _, o := co.stageState(0, &st); o != 12e9 {
		t.Errorf("optimizer without distopt %.0f, want 1.2e10", o)
	}
}

// TestDistLAMBStateByHand: apex's DistributedFusedLAMB keeps its FP32
// master weights, moments and update term (16 bytes a parameter) for the
// node's share of the parameters, however many nodes. By hand, a stage
// of 1e9 parameters, dp=16 on 2 nodes of 8 GPUs: 1e9 x 16 / 8 = 2e9
// bytes (sharded over every replica as Megatron's: 1e9 x 12 / 16 =
// 7.5e8); dp=4 on one node of 8: 1e9 x 16 / 4 = 4e9.
func TestDistLAMBStateByHand(t *testing.T) {
	m := mustSpec(t, "bert-large:seq=512,batch=64")
	for _, c := range []struct {
		dp, nodes int
		lamb      bool
		want      float64
	}{
		{16, 2, true, 2e9},
		{4, 1, true, 4e9},
		{16, 2, false, 7.5e8},
	} {
		pl := plan.Plan{TP: 1, PP: 1, DP: c.dp, CP: 1, VP: 1, TPs: []int{1}, Stages: []int{24},
			Strategy: plan.Strategy{DistOpt: true}, Run: plan.Settings{LAMB: c.lamb}}
		co := counter{m: m, pl: pl, pod: &plan.Pod{Name: "hand", Nodes: c.nodes, PerNode: 8}}
		if _, _, _, o := co.stageState(0, &Stage{Params: 1e9}); math.Abs(o-c.want) > 1 {
			t.Errorf("dp=%d on %d nodes, LAMB %t: optimizer state %.0f, want %.0f", c.dp, c.nodes, c.lamb, o, c.want)
		}
	}
}

// TestInflightInterleaved checks the micro-batches in flight on a
// stage, by hand: 1F1B min(M, P - s); interleaved Megatron-Core's (and
// torch's ScheduleInterleaved1F1B's) warm-up of (P-s-1)2 + (V-1)P model
// chunks and the one it runs, each 1/V of the stage, at most the step's
// M V chunks (M micro-batches of the whole stage): on the first stage
// P (1 + (P-1)/(P V)).
func TestInflightInterleaved(t *testing.T) {
	for _, c := range []struct {
		p, v, m, s int
		want       float64
	}{
		{8, 1, 32, 0, 8},    // 1F1B: P
		{8, 1, 32, 5, 3},    // 1F1B, stage 5: P - s
		{8, 1, 4, 0, 4},     // fewer micro-batches than stages
		{8, 2, 32, 0, 11.5}, // (14 + 8 + 1) chunks / 2
		{8, 2, 8, 0, 8},     // torchtitan's default M = P: all 16 chunks, 8 micro-batches
		{8, 2, 10, 0, 10},   // 20 chunks < 23
		{4, 3, 16, 0, 5},    // (6 + 8 + 1) / 3
		{4, 3, 4, 0, 4},     // 12 chunks < 15
		{8, 2, 8, 7, 4.5},   // the last stage: (8 + 1) chunks / 2, not 1
		{8, 2, 32, 3, 8.5},  // stage 3: (8 + 8 + 1) / 2
		{4, 3, 16, 3, 3},    // the last stage: (8 + 1) / 3
		{8, 1, 8, 7, 1},     // 1F1B's last stage: 1
	} {
		pl := plan.Plan{PP: c.p, VP: c.v, NumMicro: c.m}
		pl.Schedule = decision.OneFOneB
		pl.Software.Stack = "torchtitan-0.2"
		if got := inflight(&pl, c.s); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P %d V %d M %d stage %d: %g micro-batches in flight, want %g", c.p, c.v, c.m, c.s, got, c.want)
		}
	}
	// Megatron-Core's stack: the first stage's count alike, the others
	// 1F1B's P - s (Plan.inflight says why).
	for _, c := range []struct {
		s    int
		want float64
	}{{0, 11.5}, {3, 5}, {7, 1}} {
		pl := plan.Plan{PP: 8, VP: 2, NumMicro: 32}
		pl.Schedule = decision.OneFOneB
		if got := inflight(&pl, c.s); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Megatron-Core, stage %d: %g micro-batches in flight, want %g", c.s, got, c.want)
		}
	}
}

// TestTitanPipelineBuffers: torch's pipelining as torchtitan runs it, by
// hand for Llama 3.1 405B (hidden 16,384, vocabulary 128,256) at 8,192
// tokens a micro-batch, T 8 with sequence parallelism, P 8, M 8: a
// stage boundary's tensor is 2 x 8,192 x 16,384 / 8 = 33,554,432
// bytes; the last stage keeps the other 7 micro-batches' BF16 logits
// (output_chunks) beside the one whose loss runs, 8,192 x 16,032 x 2
// bytes each; with V 2 each of a rank's two chunks has its buffers.
func TestTitanPipelineBuffers(t *testing.T) {
	m := mustSpec(t, "llama3.1-405b:seq=8192,batch=64")
	const n, boundary = 8192.0, 33554432.0
	for _, c := range []struct {
		name     string
		v, s     int
		inflight float64
		want     float64 // boundaries
	}{
		// 1F1B: stage 0 receives 8 gradients and keeps 8 outputs; the
		// last receives 8 activations, 1 of them in flight.
		{"1f1b first", 1, 0, 8, 8 + 8},
		{"1f1b last", 1, 7, 1, 8 - 1},
		{"1f1b middle", 1, 3, 5, (8 - 5) + 8 + 5},
		// Interleaved: rank 0's second chunk receives activations (8, 16
		// chunks in flight, 8 of them its), both chunks gradients (16),
		// both keep outputs (16); the last rank's first chunk receives
		// and sends, its second receives only: 9 chunks in flight.
		{"interleaved first", 2, 0, 8, (8 - 8) + 16 + 16},
		{"interleaved last", 2, 7, 4.5, (16 - 9) + 8 + 4.5},
	} {
		pl := plan.Plan{TP: 8, PP: 8, VP: c.v, NumMicro: 8, Strategy: plan.Strategy{SequenceParallel: true}}
		pl.Software.Stack = "torchtitan-0.2"
		co := counter{m: m, pl: pl, tokens: n}
		if got := co.titanStageBuffers(c.s, c.inflight); math.Abs(got-c.want*boundary) > 1e-3 {
			t.Errorf("%s: %.0f bytes of buffers, want %.0f", c.name, got, c.want*boundary)
		}
	}
	pl := plan.Plan{TP: 8, PP: 8, NumMicro: 8}
	pl.Software.Stack = "torchtitan-0.2"
	if got := titanOutputChunks(&pl); got != 7 {
		t.Errorf("P 8 M 8: %g output chunks held, want 7", got)
	}
	pl.PP = 1
	if got := titanOutputChunks(&pl); got != 0 {
		t.Errorf("no pipeline: %g output chunks held, want 0", got)
	}
}

// TestTitanUnitOrder: torch's ScheduleInterleaved1F1B's order of units
// (chunk x M + micro-batch), by hand for P 2, V 2, M 4: the forwards a
// round of P micro-batches a chunk at a time (c0 0 1, c1 0 1, c0 2 3,
// c1 2 3), the backwards from the last chunk (c1 0 1, c0 0 1, c1 2 3,
// c0 2 3); none for 1F1B or another stack.
func TestTitanUnitOrder(t *testing.T) {
	pl := plan.Plan{PP: 2, VP: 2, NumMicro: 4}
	pl.Software.Stack = "torchtitan-0.2"
	ord := titanUnitOrder(&pl)
	if ord == nil {
		t.Fatal("no order for torchtitan's interleaved schedule")
	}
	fwd, bwd := []int{0, 1, 4, 5, 2, 3, 6, 7}, []int{4, 5, 0, 1, 6, 7, 2, 3}
	for k := range 8 {
		if got := ord(k, false); got != fwd[k] {
			t.Errorf("forward %d: unit %d, want %d", k, got, fwd[k])
		}
		if got := ord(k, true); got != bwd[k] {
			t.Errorf("backward %d: unit %d, want %d", k, got, bwd[k])
		}
	}
	pl.VP = 1
	if titanUnitOrder(&pl) != nil {
		t.Error("1F1B: an order, want none")
	}
	pl.VP, pl.Software.Stack = 2, ""
	if titanUnitOrder(&pl) != nil {
		t.Error("Megatron-Core: an order, want none")
	}
}

// TestTitanFP8Weights: torchao's Float8Linear (eab345c) saves its
// weight's float8 transpose for the backward, one byte a block
// parameter a micro-batch in flight, unless a checkpoint drops it. By
// hand, a stage of 8e9 block parameters on this GPU: 8e9 bytes without
// recomputation; none with full or per-op recomputation, without Float8
// or on another stack.
func TestTitanFP8Weights(t *testing.T) {
	m := mustSpec(t, "llama3-70b:seq=8192,batch=8")
	st := Stage{Params: 9e9, Layers: 8e9}
	for _, c := range []struct {
		name, stack, fp8 string
		rec              plan.Recompute
		want             float64
	}{
		{"float8, no recomputation", "torchtitan-0.2", "current", plan.NoRecompute, 8e9},
		{"float8, full", "torchtitan-0.2", "current", plan.FullRecompute, 0},
		{"float8, per-op", "torchtitan-0.2", "current", plan.SelectiveRecompute, 0},
		{"bf16", "torchtitan-0.2", "", plan.NoRecompute, 0},
		{"megatron-core", "", "current", plan.NoRecompute, 0},
	} {
		pl := plan.Plan{TP: 1, PP: 1, NumMicro: 1, Strategy: plan.Strategy{FP8: c.fp8, Recompute: c.rec}}
		pl.Software.Stack = c.stack
		co := counter{m: m, pl: pl}
		if got := co.titanFP8Weights(&st); got != c.want {
			t.Errorf("%s: %.0f bytes, want %.0f", c.name, got, c.want)
		}
	}
}

// TestSquaredReLUUnits: Nemotron's MLP without a gate keeps GeLU's
// activations without its dropout mask, in units of s b h: its input 2,
// the activation's input and the second GEMM's 2 f/h each (Korthikanti
// et al.'s count): hidden 512, ffn 2,048: 2 + 16 = 18 (a SwiGLU's of the
// same ffn: 2 + 24 = 26).
func TestSquaredReLUUnits(t *testing.T) {
	relu2 := mustSpec(t, "llama:layers=2,hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8,act=relu2")
	swiglu := mustSpec(t, "llama:layers=2,hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8")
	for _, c := range []struct {
		m    transformer.Spec
		want float64
	}{{relu2, 18}, {swiglu, 26}} {
		if _, mlp, _ := blockUnits(&c.m, bf16, true, nil); mlp != c.want {
			t.Errorf("%s: MLP keeps %g units, want %g", c.m, mlp, c.want)
		}
	}
}

// TestBlockScaledCopies: a stage of 1e9 block weights keeps copies of
// 2 x (1 + 1/32) = 2.0625 bytes an element under MXFP8 (both copies
// with their scales), 2 x (1/2 + 1/16) = 1.125 under NVFP4, 2 under
// per-tensor FP8 (row- and column-wise, one byte each) beside its BF16
// weights: 2.0625e9, 1.125e9 and 2e9 bytes.
func TestBlockScaledCopies(t *testing.T) {
	for _, c := range []struct {
		recipe string
		stage  float64
	}{
		{plan.FP8MX, 2.0625e9},
		{plan.FP4NV, 1.125e9},
		{plan.FP8Delayed, 2e9},
	} {
		co := counter{m: mustSpec(t, "llama3-8b:seq=4096,batch=8"), pl: plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, Stages: []int{32}, Strategy: plan.Strategy{FP8: c.recipe, DistOpt: true}}}
		st := Stage{Params: 1e9, Layers: 1e9}
		w, fp8, _, _ := co.stageState(0, &st)
		if w != 2e9 || math.Abs(fp8-c.stage) > 1e-9*c.stage {
			t.Errorf("%s: weights %g, copies %g; want 2e9, %g", c.recipe, w, fp8, c.stage)
		}
	}
}

// oneGPU is model m's counter on one H100 of dgx-h100 (8 replicas,
// micro-batch 1), at m.Seq tokens.
func oneGPU(t *testing.T, m transformer.Spec) counter {
	t.Helper()
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, plan.Strategy{Replicas: 8, MicroBatchSize: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	return counterAt(m, pl, &p, pl.TP, float64(m.Seq))
}

// TestPostNormsActivations: Gemma's four norms a block keep two norms'
// inputs more than two, 2 x 2 bytes of s b h: 4 x 4,096 x 512 bytes.
func TestPostNormsActivations(t *testing.T) {
	two := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=4096,vocab=1000,batch=8")
	four := two
	four.Norms = 4
	const n, h = 4096.0, 512.0
	c2, c4 := oneGPU(t, two), oneGPU(t, four)
	if got, want := c4.layerMemory().perLayer-c2.layerMemory().perLayer, 4*n*h; got != want {
		t.Errorf("activations: %g bytes more, want %g", got, want)
	}
}

// TestHybridLayerMemory: a hybrid's layer keeps the mean of its blocks'
// activations, by hand for a small hybrid (hidden 512, 8 heads, ffn
// 2,048, squared ReLU, 16 Mamba-2 heads of 64: d_inner 1,024, state 64,
// 2 groups) of pattern M*- at 4,096 tokens: the Mamba-2 block's units
// 2 + 2 + 2 x 2,320/512 + 2 x 1,280/512 + 8 x 16/512 + 4 x 1,024/512 =
// 26.3125, an attention block's (8 key/value heads) its norm's input 2,
// its input 2, Q, K and V 2 x 24/8, its output 2 and mask 1 = 13, the
// MLP's 2 + 2 + 4 x 2,048/512 = 20, of s b h.
func TestHybridLayerMemory(t *testing.T) {
	m := mustSpec(t, "llama:layers=3,hidden=512,heads=8,ffn=2048,seq=4096,vocab=1000,batch=8,act=relu2,pattern=M*-"+
		",ssm_heads=16,ssm_head_dim=64,ssm_state=64,ssm_groups=2,ssm_conv=4,ssm_chunk=128")
	if u, _ := mambaUnits(&m, false); u != 26.3125 {
		t.Errorf("Mamba-2 block keeps %g units, want 26.3125", u)
	}
	c := oneGPU(t, m)
	unit := 4096.0 * 512
	if got, want := c.layerMemory().perLayer, (26.3125+13+20)/3*unit; math.Abs(got/want-1) > 1e-12 {
		t.Errorf("a layer keeps %g bytes, want %g", got, want)
	}
}

// TestMixerUnits: what the mixers keep, in units of s b h, by hand for
// a model of three Gated DeltaNet layers (4 key heads, 8 value heads of
// 64, hidden 512) and a gated attention layer (8 heads): the gated
// attention's 2 + 2 x 24/8 + 2 + 1 = 11 and the gate's input and
// product 4, 15; the Gated DeltaNet's 2 + 2 x 1,552/512 + 2 x 1,024/512
// + 8 x 8/512 + 4 x 512/512 = 16.1875; the mean (3 x 16.1875 + 15)/4.
func TestMixerUnits(t *testing.T) {
	m := mustSpec(t, "llama:layers=4,hidden=512,heads=8,seq=4096,vocab=1000,batch=8,experts=8,topk=2,expert_ffn=256,"+
		"mixers=GGG*,gdn_k_heads=4,gdn_v_heads=8,gdn_k_dim=64,gdn_v_dim=64,gdn_conv=4")
	if got, want := mixerUnits(&m), (3*16.1875+15)/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("mixers keep %g units, want %g", got, want)
	}
}
