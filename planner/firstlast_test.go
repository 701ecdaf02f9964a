package planner

import (
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// TestFirstLastBF16Layers: how many of each stage's layers
// first-last-layers-bf16=S:E keeps in BF16, the model's first S and last
// E layers by their global numbers, by hand. 8 layers: pp=2 (4 + 4),
// 1:2: layer 0 on stage 0, layers 6 and 7 on stage 1; pp=4 with first=1,
// last=3 (stages of 1, 2, 2, 3 layers), 2:2: layer 0 on stage 0, layer 1
// on stage 1, layers 6 and 7 on stage 3; pp=2 with vp=2 (chunks of 2
// layers: 0-1 and 4-5 on stage 0, 2-3 and 6-7 on stage 1), 3:1: layers
// 0 and 1 on stage 0, 2 and 7 on stage 1.
func TestFirstLastBF16Layers(t *testing.T) {
	const w = "llama:layers=8,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=64"
	for _, c := range []struct {
		strategy string
		want     []int
	}{
		{"pp=2,dp=4,fp4=nvfp4,first-last-layers-bf16=1:2", []int{1, 2}},
		{"pp=4,first=1,last=3,dp=2,fp4=nvfp4,first-last-layers-bf16=2:2", []int{1, 1, 0, 2}},
		{"pp=2,vp=2,dp=4,fp8=current,first-last-layers-bf16=3:1", []int{2, 2}},
	} {
		c0 := stackCoster(t, w, c.strategy, "dgx-b200:1")
		for i, want := range c.want {
			if got := (mechanisms.FirstLastBF16{}).HighPrecisionLayers(&c0.Shard, i); got != want {
				t.Errorf("%s: stage %d holds %d BF16 layers, want %d", c.strategy, i, got, want)
			}
		}
	}
}

// TestFirstLastBF16Refused: what Megatron-Core refuses or ignores, and
// what placer does not cost, each in one line naming why.
func TestFirstLastBF16Refused(t *testing.T) {
	const w = "llama:layers=8,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=64"
	m := mustSpec(t, w)
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ strategy, want string }{
		{"dp=8,fp8=delayed,first-last-layers-bf16=1:1", "Delayed scaling does not support"},
		{"dp=8,first-last-layers-bf16=1:1", "every layer is BF16"},
		{"pp=2,dp=4,fp8=current,first-last-layers-bf16=5:0", "between 0 and a pipeline stage's layers (4)"},
		{"pp=2,dp=4,fp4=nvfp4,first-last-layers-bf16=5:4", "9 layers in BF16, the model has 8"},
		{"dp=8,fp8=current,stack=torchtitan-0.2,first-last-layers-bf16=1:1", "not under torchtitan"},
		{"dp=8,fp8=mxfp8,fp8-output-proj=on,first-last-layers-bf16=1:1", "fp8-output-proj"},
		{"pp=2,first=3,vp=2,dp=4,fp4=nvfp4,first-last-layers-bf16=1:1", "even split"},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err == nil {
			_, err = plan.Resolve(m, s, p)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", c.strategy, err, c.want)
		}
	}
	if _, err := plan.ParseStrategy("dp=8,fp8=current,first-last-layers-bf16=1"); err == nil {
		t.Error("first-last-layers-bf16=1 read")
	}
	if s, err := plan.ParseStrategy("dp=8,fp8=current,first-last-layers-bf16=0:0"); err != nil || s.String() != "dp=8,fp8=current" {
		t.Errorf("0:0 reads as %q (%v), want it off, not written", s.String(), err)
	}
}

// TestFirstLastBF16Time: a 4-layer Llama on two stages (pp=2, 2 layers
// each) under NVFP4 with first-last-layers-bf16=1:0 runs layer 0 in BF16:
// stage 0's forward and backward are one layer's BF16 forward and
// backward more than the plan without the key, less one NVFP4 layer's;
// stage 1 is unchanged (stage 0 holds 1, stage 1 none). The BF16 layer is the layer of the same plan in
// BF16 (no fp4=), the NVFP4 one the plan's own: each from a coster of
// its own plan.
func TestFirstLastBF16Time(t *testing.T) {
	const w = "llama:layers=4,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=64"
	const base = "pp=2,dp=4,mbs=1,fp4=nvfp4,recompute=none"
	m := mustSpec(t, w)
	off := stackCoster(t, w, base, "dgx-b200:1")
	on := stackCoster(t, w, base+",first-last-layers-bf16=1:0", "dgx-b200:1")
	bf := stackCoster(t, w, "pp=2,dp=4,mbs=1,recompute=none", "dgx-b200:1")
	loF, loB := off.layer()
	hiF, hiB := bf.layer()
	stages := func(c coster) []stageCost {
		k := appendKit(nil, c.Points, m, c.Plan, c.Pod, 1, c.Tokens, nil)
		st := make([]stageCost, 2)
		for i := range st {
			st[i].assemble(&k[0], &m, &c.Plan, i, float64(transformer.LayerParams(m)))
		}
		return st
	}
	a, b := stages(off), stages(on)
	for i, n := range []float64{1, 0} {
		wantF := a[i].fwd.Busy + n*(hiF.Busy-loF.Busy)
		wantB := a[i].bwd.Busy + n*(hiB.Busy-loB.Busy)
		if !near(b[i].fwd.Busy, wantF) || !near(b[i].bwd.Busy, wantB) {
			t.Errorf("stage %d: forward %g s, backward %g s; want %g, %g", i, b[i].fwd.Busy, b[i].bwd.Busy, wantF, wantB)
		}
		if b[i].BF16Layers != int(n) {
			t.Errorf("stage %d: %d BF16 layers held, want %g", i, b[i].BF16Layers, n)
		}
	}
	// At this width the NVFP4 casts outweigh the GEMMs' speedup: the
	// BF16 layer is the faster, but it must differ.
	if hiF.Busy == loF.Busy || hiB.Busy == loB.Busy {
		t.Errorf("a BF16 layer (%g + %g s) costs what an NVFP4 one does (%g + %g s)", hiF.Busy, hiB.Busy, loF.Busy, loB.Busy)
	}
}

// TestFirstLastBF16Memory: a 2-layer Llama (hidden 1,024, 8 heads and
// as many key-value heads, FFN 4,096) on 8 B200s, NVFP4 primary weights
// (fp8-params=on, distopt=on), one stage. A layer's parameters: the
// attention 4 x 1,024 x 1,024 = 4,194,304, the SwiGLU MLP 3 x 1,024 x
// 4,096 = 12,582,912, two norms 2,048: lp = 16,779,264. With layer 0 in
// BF16 (1:0) its weight is a BF16 tensor (2 lp = 33,558,528 bytes more
// of weights) and has no NVFP4 copies (1.125 lp = 18,876,672 bytes less
// of FP8 weight copies); its activations are the BF16 plan's layer's:
// half the two plans' difference, the layers being alike.
func TestFirstLastBF16Memory(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=8,ffn=4096,vocab=32000,seq=2048,batch=8")
	p, err := plan.ParsePod("dgx-b200:1")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(text string) Result {
		t.Helper()
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return r
	}
	part := func(r Result, name string) int64 {
		for _, q := range r.MemoryParts {
			if q.Name == name {
				return q.Bytes
			}
		}
		t.Fatalf("no part %q", name)
		return 0
	}
	const base = "dp=8,mbs=1,recompute=none,distopt=on"
	lo := eval(base + ",fp4=nvfp4,fp8-params=on")
	hi := eval(base + ",fp4=nvfp4,fp8-params=on,first-last-layers-bf16=1:0")
	bf := eval(base)
	if d := part(hi, "weights") - part(lo, "weights"); d != 33558528 {
		t.Errorf("weights %+d bytes, want +33,558,528", d)
	}
	if d := part(hi, "FP8 weight copies") - part(lo, "FP8 weight copies"); d != -18876672 {
		t.Errorf("FP8 weight copies %+d bytes, want -18,876,672", d)
	}
	if d, want := hi.Activations-lo.Activations, (bf.Activations-lo.Activations)/2; d != want || d <= 0 {
		t.Errorf("activations %+d bytes, want %+d", d, want)
	}
	if hi.Grads != lo.Grads || hi.OptState != lo.OptState {
		t.Errorf("gradients %d, optimizer %d; want %d, %d (the same either way)", hi.Grads, hi.OptState, lo.Grads, lo.OptState)
	}
}

// TestHighPrecisionKeyed: every registered cost.HighPrecisionLayers is
// switched on by a key a mechanism declares (a condition on a key held in
// plan.Strategy.Declared, not negated), so that a plan setting no
// declared key has no layers in BF16: the framework asks none for it
// (memoryStep, appendKit). A plan with the key set and one without:
// Declared says so.
func TestHighPrecisionKeyed(t *testing.T) {
	ps := registered.HighPrecisionLayers.Plugins()
	if len(ps) == 0 {
		t.Fatal("no cost.HighPrecisionLayers registered")
	}
	declared := map[string]bool{}
	for _, name := range strings.Split(mechanisms.Registered.Names(), ", ") {
		if k, ok := mechanisms.Registered.Lookup(name).(interface{ Keys() []plan.Key }); ok {
			for _, key := range k.Keys() {
				declared[key.Name] = true
			}
		}
	}
	for _, p := range ps {
		keyed := false
		for _, c := range p.When() {
			keyed = keyed || c.Of == cost.OfKey && !c.Not && declared[c.Key]
		}
		if !keyed {
			t.Errorf("%s: its declaration %v holds without a declared key", p.Name(), p.When())
		}
	}
	on, err := plan.ParseStrategy("dp=8,fp8=current,first-last-layers-bf16=1:1")
	if err != nil || on.Declared == "" {
		t.Errorf("first-last-layers-bf16=1:1: Declared %q (%v)", on.Declared, err)
	}
}
