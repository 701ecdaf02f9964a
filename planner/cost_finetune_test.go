package planner

import (
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/plan/adapters"
)

// fineTuneCoster is a one-GPU coster of GPT model m under strategy text
// on hardware where every kernel's time is its FLOPs at 1 TFLOP/s
// (flopHardware), attention at the matmul rate.
func fineTuneCoster(t *testing.T, m transformer.Spec, text string) coster {
	t.Helper()
	p, _ := plan.PodOf("dgx-h100", 1)
	p.Hardware = flopHardware()
	p.Kernels = kernels.Node{}
	s, err := plan.ParseStrategy(text)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	return newCoster(m, pl, &p, 1, float64(m.Seq))
}

// TestLoRALayerFLOPs: a GPT block of hidden h = 1,024 (FFN 4h, 16 heads)
// at n = s = 512 tokens, LoRA rank 16, by hand. Its linear layers' (in,
// out): qkv (1,024, 3,072), proj (1,024, 1,024), fc1 (1,024, 4,096), fc2
// (4,096, 1,024). An adapter's forward is 2 n r (in + out) of GEMMs, n
// out of the add and n out of its output's scaling by alpha / r; its
// backward twice the GEMMs, the scaling's gradient (n out), and for a
// target fed by a TE norm (qkv, fc1) the adapter's gradient of the norm
// output added into the layer's, n h. The frozen base loses
// its weight gradients, 24 n h^2 (the forward's GEMMs). Full training:
// forward 24 n h^2 + 2 n s h + 62 n h, backward 48 n h^2 + 5 n s h +
// 124 n h (TestLayerFLOPs).
func TestLoRALayerFLOPs(t *testing.T) {
	m := transformer.GPT(2, 1024, 16, 512, 1024, 8)
	const n, h, s, r = 512.0, 1024.0, 512.0, 16.0
	base := fineTuneCoster(t, m, "mbs=1")
	bf, bb := base.layer()
	if want := (24*n*h*h + 2*n*s*h + 62*n*h) / 1e12; !near(bf.Busy, want) {
		t.Fatalf("full training forward %g s, want %g", bf.Busy, want)
	}
	for _, c := range []struct {
		targets  string
		inOut    float64 // sum of (in + out) over the targets
		outs     float64 // sum of out: the adds
		adapters float64 // parameters: r x inOut
		norms    float64 // targets fed by a TE norm (qkv, fc1)
	}{
		{"qkv+proj+fc1+fc2", 4096 + 2048 + 5120 + 5120, 3072 + 1024 + 4096 + 1024, 262144, 2},
		{"qkv", 4096, 3072, 65536, 1},
		{"fc2", 5120, 1024, 81920, 0},
	} {
		lc := fineTuneCoster(t, m, "mbs=1,peft=lora,lora-rank=16,lora-targets="+c.targets)
		f, b := lc.layer()
		adapterF := 2*n*r*c.inOut + 2*n*c.outs
		if want := bf.Busy + adapterF/1e12; !near(f.Busy, want) {
			t.Errorf("%s: forward %g s, want %g (adapters %g FLOPs)", c.targets, f.Busy, want, adapterF)
		}
		if want := bb.Busy + (-24*n*h*h+4*n*r*c.inOut+n*c.outs+c.norms*n*h)/1e12; !near(b.Busy, want) {
			t.Errorf("%s: backward %g s, want %g", c.targets, b.Busy, want)
		}
		if got := adapters.Block(lc.Plan.FineTune, &m, 1); got != c.adapters {
			t.Errorf("%s: %g adapter parameters a block, want %g", c.targets, got, c.adapters)
		}
	}
}

// TestLoRAStepFLOPs: the step's FLOPs (TFLOP/s' numerator) of the GPT
// above, 2 layers, vocabulary 1,024, batch 8 x 512 tokens, by hand:
// full training 3 x tokens x (2 x (24 h^2 + 4 s h) + 2 h V); with LoRA
// the linear layers and the output layer backward once (their weight
// gradients, a third of 3, gone) and the adapters three times their 2 x
// 262,144 a token a block.
func TestLoRAStepFLOPs(t *testing.T) {
	m := transformer.GPT(2, 1024, 16, 512, 1024, 8)
	const tokens, h, s, V, L = 8 * 512.0, 1024.0, 512.0, 1024.0, 2.0
	linear := L*24*h*h + 2*h*V
	scores := L * 4 * s * h
	for _, c := range []struct {
		text string
		want float64
	}{
		{"mbs=1", 3 * tokens * (linear + scores)},
		{"mbs=1,peft=lora", tokens * (2*linear + 3*scores + 3*L*2*262144)},
		// Packed samples of 128 tokens: the scores over 128^2 / 128.
		{"mbs=1,pack-len=128", 3 * tokens * (linear + scores/4)},
	} {
		lc := fineTuneCoster(t, m, c.text)
		if got := stepFLOPs(&m, &lc.Plan); !near(got, c.want) {
			t.Errorf("%s: %g FLOPs a step, want %g", c.text, got, c.want)
		}
	}
}

// TestLoRAMemory: the GPT above on one GPU, its 2 blocks' adapters
// 2 x 262,144 = 524,288 parameters: weights the base's BF16 and the
// adapters' (2 bytes each more), gradients 4 bytes and optimizer state
// 12 bytes a parameter of the adapters only (none of the base's).
func TestLoRAMemory(t *testing.T) {
	m := transformer.GPT(2, 1024, 16, 512, 1024, 8)
	p, _ := plan.PodOf("dgx-h100", 1)
	full := evalText(t, m, p, "mbs=1")
	lora := evalText(t, m, p, "mbs=1,peft=lora")
	part := func(r Result, name string) float64 {
		for _, x := range r.MemoryParts {
			if x.Name == name {
				return float64(x.Bytes)
			}
		}
		t.Fatalf("no memory part %q in %+v", name, r.MemoryParts)
		return 0
	}
	const a = 524288.0
	if got, want := part(lora, "weights"), part(full, "weights")+2*a; got != want {
		t.Errorf("weights %g bytes, want %g", got, want)
	}
	if got := part(lora, "gradients"); got != 4*a {
		t.Errorf("gradients %g bytes, want %g (the adapters' FP32 main gradients)", got, 4*a)
	}
	if got := part(lora, "optimizer state"); got != 12*a {
		t.Errorf("optimizer state %g bytes, want %g", got, 12*a)
	}
	if got, want := part(full, "gradients"), 2*part(full, "weights"); got != want {
		t.Errorf("full training's gradients %g bytes, want every parameter's 4 bytes, %g", got, want)
	}
}

// TestPackedAttention: packing 4,096-token sequences with samples of
// 512 and 2,048 tokens, equally many of each: a query meets (512 x 256 +
// 2,048 x 1,024) / 2,560 = 870.4 causal keys, not 2,048; the forward's
// attention is 4 n keys h (n = 4,096, h = 512), so it is 4 n (2,048 -
// 870.4) h FLOPs less.
func TestPackedAttention(t *testing.T) {
	m := transformer.GPT(2, 512, 8, 4096, 1024, 8)
	const n, h = 4096.0, 512.0
	whole := fineTuneCoster(t, m, "mbs=1")
	packed := fineTuneCoster(t, m, "mbs=1,pack=on,pack-len=512:2048")
	if got := packed.Plan.PackedKeys(m); !near(got, 870.4) {
		t.Errorf("packed keys %g, want 870.4", got)
	}
	wf, _ := whole.layer()
	pf, _ := packed.layer()
	if want := 4 * n * (2048 - 870.4) * h / 1e12; !near(wf.Busy-pf.Busy, want) {
		t.Errorf("packing saves %g s of the forward, want %g", wf.Busy-pf.Busy, want)
	}
}

// TestFineTuneRefused: LoRA with experts off Megatron-Core, a rank
// not under the width, a sample longer than the sequence: one line each.
func TestFineTuneRefused(t *testing.T) {
	p, _ := plan.PodOf("dgx-h100", 1)
	for _, c := range []struct{ model, strategy, err string }{
		{"qwen3-30b-a3b:seq=4096,batch=64", "peft=lora,ep=8,stack=torchtitan-0.2", "peft=lora with experts on torchtitan"},
		{"gpt:layers=2,hidden=64,heads=4,seq=512,vocab=1024,batch=8", "peft=lora,lora-rank=64", "lora-rank=64: not under"},
		{"gpt:layers=2,hidden=64,heads=4,seq=512,vocab=1024,batch=8", "pack-len=1024", "longer than the packed sequence"},
	} {
		m := mustSpec(t, c.model)
		s, err := plan.ParseStrategy(c.strategy)
		if err == nil {
			_, err = Evaluate(m, s, p)
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s with %s: %v, want one line with %q", c.model, c.strategy, err, c.err)
		}
	}
}

// TestLoRATensorParallel: with tp=8 and sequence parallelism a block's
// backward all-gathers four times and reduce-scatters twice
// (TestTensorParallelComm); frozen, the column-parallel layers' inputs
// are not gathered again for their weight gradients: two all-gathers
// and two reduce-scatters. Without sequence parallelism the two
// all-reduces of the data gradients stay. The adapters of the four
// targets add theirs (mechanisms.LoRA's adapterComm), worked by hand at
// n = 512 tokens, rank r (the default), 2 bytes an element: each
// adapter's linear_out input gradient all-reduced (n x r: four); without
// sequence parallelism the two column-parallel adapters' linear_in input
// gradients too (n x hidden, as the layer's: two more all-reduces of
// act); with it and no TP overlap TE reduces those with the layer's.
func TestLoRATensorParallel(t *testing.T) {
	m := transformer.GPT(2, 1024, 16, 512, 1024, 8)
	p, _ := plan.PodOf("dgx-h100", 8)
	p.Kernels.Host = kernels.Host{}
	act := 512.0 * 1024 * 2
	g := plan.Group{PerNode: 8, Nodes: 1}
	ag, _ := p.Collective(roofline.AllGather, g, act)
	rs, _ := p.Collective(roofline.ReduceScatter, g, act)
	ar, _ := p.Collective(roofline.AllReduce, g, act)
	def, err := plan.ParseStrategy("peft=lora")
	if err != nil {
		t.Fatal(err)
	}
	r := float64(def.FineTune.LoRARank)
	if r <= 0 {
		t.Fatalf("default LoRA rank %g", r)
	}
	arR, _ := p.Collective(roofline.AllReduce, g, 512*r*2)
	for _, c := range []struct {
		text string
		want float64
	}{
		{"tp=8,sp=on,peft=lora", 2*ag + 2*rs + 4*arR},
		{"tp=8,peft=lora", 2*ar + 4*arR + 2*ar},
	} {
		s, err := plan.ParseStrategy(c.text)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		lc := newCoster(m, pl, &p, 8, 512)
		if _, bwd := lc.layer(); !near(bwd.TPAll, c.want) {
			t.Errorf("%s: backward's tensor-parallel communication %g s, want %g", c.text, bwd.TPAll, c.want)
		}
	}
}
