package search

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"

	"github.com/placer/placer/planner/plan"
)

// TestLeversFor: each framework's levers are the keys its export writes
// (plan.Keys' Exports), a key the --strategy names (or one that fixes
// it: stack=, graph-pool=, fp8-transpose-cache=) leaves its lever as
// written.
func TestLeversFor(t *testing.T) {
	all := []string{LeverFP8Params, LeverFP8Activation, LeverOffload, LeverCPComm, LeverOutputProj, LeverGraphs}
	megatron := []string{LeverFP8Params, LeverOffload, LeverCPComm, LeverGraphs} // fp8-activation, fp8-output-proj: Bridge's alone
	for _, c := range []struct {
		target, strategy string
		want             []string
	}{
		{"megatron", "", megatron},
		{"megatron-bridge", "", all},
		{"any", "", all},
		{"torchtitan", "", nil},
		{"deepspeed", "", nil},
		{"", "", nil},
		{"megatron", "fp8=delayed,fp8-params=off", []string{LeverOffload, LeverCPComm, LeverGraphs}},
		{"megatron-bridge", "cp-comm-type=p2p,graphs=off", []string{LeverFP8Params, LeverFP8Activation, LeverOffload, LeverOutputProj}},
		{"megatron-bridge", "stack=megatron-bridge-26.06", []string{LeverFP8Params, LeverFP8Activation, LeverOffload, LeverOutputProj}},
		{"megatron-bridge", "fp8=mxfp8,fp8-output-proj=off", []string{LeverFP8Params, LeverFP8Activation, LeverOffload, LeverCPComm, LeverGraphs}},
		{"megatron", "fp8=delayed,fp8-params=on,fp8-transpose-cache=off", []string{LeverOffload, LeverCPComm, LeverGraphs}},
		{"megatron-bridge", "offload-layers=2,fp8-activation=off", []string{LeverFP8Params, LeverCPComm, LeverOutputProj, LeverGraphs}},
	} {
		sp, err := SpaceOf(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		if got := sp.WithLevers(c.target).Levers; !slices.Equal(got, c.want) {
			t.Errorf("--for %q --strategy %q: levers %v, want %v", c.target, c.strategy, got, c.want)
		}
	}
}

// TestNoLeverUnwritten: a recipe switch no export writes is no lever,
// whatever the target: fp8-dpa (Megatron-LM core_v0.16.1 has no flag
// for fp8_dot_product_attention, Megatron-Bridge 0.5.0's mixed-precision
// recipe copies its False over the model's) and lora-dropout-recompute
// (Bridge 0.5.0's ParallelLinearAdapter has no dropout_recompute), and
// the key table gives neither an export.
func TestNoLeverUnwritten(t *testing.T) {
	for _, key := range []string{"fp8-dpa", "lora-dropout-recompute"} {
		for _, k := range plan.Keys {
			if k.Name == key && len(k.Exports) > 0 {
				t.Errorf("%s: written by %v; a lever only with its mechanism in the search (levers.go)", key, k.Exports)
			}
		}
		for _, target := range []string{"megatron", "megatron-bridge", "torchtitan", "deepspeed", "any"} {
			if slices.Contains(LeversFor(target, func(string) bool { return false }), key) {
				t.Errorf("--for %s: %s a lever", target, key)
			}
		}
	}
}

// outputProjModel is a 2-block Llama 3 8B (hidden 4,096, 32 heads, 8
// of keys and values, FFN 14,336) with its 128,256-token vocabulary at
// sequence 8,192: its output layer a large share of its step.
const outputProjModel = "llama:layers=2,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256"

// TestOutputProjLever: under fp8=mxfp8 on a B200 server, with every
// degree fixed (tp=1, dp=8, mbs=1, no recomputation), the search for
// Megatron-Bridge turns fp8-output-proj on (the MXFP8 output layer is
// faster: planner's TestMXFP8OutputProjTime works its GEMMs and casts)
// and names it, its step the one Evaluate gives that plan (the search's
// phase cache keys the output layer's precision); for Megatron-LM (no
// argument for fp8_output_proj), with the switch written off, or under
// per-tensor FP8 (Megatron-Core refuses it), nothing is turned on. The
// bound the search prunes by, Result.OutputLayer, is the output phases'
// time a micro-batch times M + 1: 2 with one micro-batch a replica
// (batch 8), 5 with four (batch 32), 5/2 as much; the switch takes less
// than it off the step.
func TestOutputProjLever(t *testing.T) {
	const fixed = "tp=1,pp=1,dp=8,mbs=1,recompute=none,distopt=on"
	m := specOf(t, outputProjModel+",batch=8")
	p, err := plan.PodOf("dgx-b200", 8)
	if err != nil {
		t.Fatal(err)
	}
	off := evaluated(t, m, p, fixed+",fp8=mxfp8")
	on := evaluated(t, m, p, fixed+",fp8=mxfp8,fp8-output-proj=on")
	if !(on.Step < off.Step) || off.Step-on.Step > off.OutputLayer {
		t.Fatalf("fp8-output-proj=on: %g s against %g s, bound %g s", on.Step, off.Step, off.OutputLayer)
	}
	m4 := specOf(t, outputProjModel+",batch=32")
	if four := evaluated(t, m4, p, fixed+",fp8=mxfp8"); !nearly(four.OutputLayer, off.OutputLayer*5/2) {
		t.Errorf("OutputLayer with 4 micro-batches %g, want 5/2 x %g", four.OutputLayer, off.OutputLayer)
	}
	for _, c := range []struct {
		strategy, target string
		switches         []string
	}{
		{fixed + ",fp8=mxfp8", "megatron-bridge", []string{"fp8-output-proj=on"}},
		{fixed + ",fp8=mxfp8", "megatron", nil},
		{fixed + ",fp8=mxfp8,fp8-output-proj=off", "megatron-bridge", nil},
		{fixed + ",fp8=delayed", "megatron-bridge", nil},
	} {
		sp, err := SpaceOf(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		sp = sp.WithLevers(c.target)
		got, err := Search(context.Background(), m, p, sp)
		if err != nil || !got.Found {
			t.Fatalf("%s --for %s: found %v, %v", c.strategy, c.target, got.Found, err)
		}
		sw := sp.Switches(got.Best.Plan.Strategy)
		if !slices.Equal(sw, c.switches) {
			t.Errorf("%s --for %s: %s, switches %v; want %v", c.strategy, c.target, got.Best.Plan, sw, c.switches)
		}
		if want := evaluated(t, m, p, got.Best.Plan.String()); !nearly(got.Best.Step, want.Step) {
			t.Errorf("%s --for %s: the search's step %g s, Evaluate's %g s", c.strategy, c.target, got.Best.Step, want.Step)
		}
	}
}

// leverCase is a 4-block Llama (hidden 4,096, 32 heads, FFN 11,008: a
// block 4 x 4,096^2 + 3 x 4,096 x 11,008 = 202,375,168 parameters,
// 809,500,672 in the blocks) under fp8=delayed on one DGX H100, the
// plan held to tp=1, pp=1, dp=8, mbs=1, no recomputation, the
// distributed optimizer, no sequence parallelism.
const (
	leverModel  = "llama:layers=4,hidden=4096,heads=32,ffn=11008,seq=4096,vocab=32000,batch=8"
	leverPlan   = "tp=1,pp=1,dp=8,mbs=1,recompute=none,distopt=on,fp8=delayed"
	blockParams = 4 * (4*4096*4096 + 3*4096*11008)
)

// TestOnlyASwitchFits: a plan that fits only with FP8 primary weights.
// On a Hopper GPU fp8-params=on holds a block weight in 2 bytes (FP8
// and its transpose) where the recipe without it holds 4 (BF16 and the
// FP8 row- and column-wise copies): 2 x 809,500,672 = 1,619,001,344
// bytes less (memory/state.go). With the GPU's memory set half way
// between the two, the search without levers finds nothing; with the
// levers Megatron-LM's export writes, it finds the plan with
// fp8-params=on and names the switch; with fp8-params=off written, the
// switch is kept off and nothing fits.
func TestOnlyASwitchFits(t *testing.T) {
	m := specOf(t, leverModel)
	if got := m.Layers * (4*m.Hidden*m.Hidden + 3*m.Hidden*m.FFN); got != blockParams {
		t.Fatalf("block parameters %d, want %d", got, blockParams)
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	off := evaluated(t, m, p, leverPlan)
	on := evaluated(t, m, p, leverPlan+",fp8-params=on")
	// To the allocator's rounding of each tensor (4,096 bytes a block
	// linear's FP8 weight here).
	if d := off.Memory - on.Memory; d < 2*blockParams || d > 2*blockParams+1<<20 {
		t.Fatalf("fp8-params=on saves %d bytes, want 2 x %d", d, blockParams)
	}
	// The capacity whose usable memory is half way between (usable is
	// the capacity less what the allocator cannot use: the offset of
	// the evaluation's own).
	p.Hardware.Memory += (off.Memory+on.Memory)/2 - off.Usable
	if r := evaluated(t, m, p, leverPlan); r.Fits || !evaluated(t, m, p, leverPlan+",fp8-params=on").Fits {
		t.Fatalf("usable %d: want the plan over without fp8-params (%d) and fitting with it (%d)", r.Usable, off.Memory, on.Memory)
	}
	for _, c := range []struct {
		strategy, target string
		found            bool
		switches         []string
	}{
		{leverPlan, "", false, nil},
		{leverPlan, "megatron", true, []string{"fp8-params=on"}},
		{leverPlan + ",fp8-params=off", "megatron", false, nil},
		{leverPlan, "torchtitan", false, nil},
	} {
		sp, err := SpaceOf(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		sp.AllowTight = true
		sp = sp.WithLevers(c.target)
		got, err := Search(context.Background(), m, p, sp)
		if err != nil {
			t.Fatal(err)
		}
		if got.Found != c.found {
			t.Errorf("%s --for %q: found %v, want %v", c.strategy, c.target, got.Found, c.found)
			continue
		}
		if !got.Found {
			continue
		}
		if sw := sp.Switches(got.Best.Plan.Strategy); !slices.Equal(sw, c.switches) || !got.Best.Plan.FP8Params {
			t.Errorf("%s --for %q: %s, switches %v; want %v", c.strategy, c.target, got.Best.Plan, sw, c.switches)
		}
	}
}

// TestOffloadOnlyWhereNothingElseFits: offload, whose copies the step
// does not price, is turned on only where no plan fits without it. On
// the same model, tp=1,dp=8 without recomputation or fp8-params, the
// GPU's memory a quarter of the activations above what the plan needs
// without them offloaded: the search finds the plan with the fewest
// layers offloaded that fit, and none where it need not.
func TestOffloadOnlyWhereNothingElseFits(t *testing.T) {
	m := specOf(t, leverModel)
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	const fixed = "tp=1,pp=1,dp=8,mbs=1,recompute=none,distopt=on,fp8=delayed,fp8-params=off"
	off := evaluated(t, m, p, fixed)
	all := evaluated(t, m, p, fixed+",offload-layers=3")
	// Between offloading 3 layers and none: the fewest that fit is 1, 2
	// or 3, the search's answer that fits where one fewer does not.
	p.Hardware.Memory += (off.Memory+all.Memory)/2 - off.Usable
	sp, err := SpaceOf(fixed)
	if err != nil {
		t.Fatal(err)
	}
	sp.AllowTight = true
	got, err := Search(context.Background(), m, p, sp.WithLevers("megatron"))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.Best.Plan.OffloadLayers == 0 {
		t.Fatalf("found %v, %s: want a plan that offloads", got.Found, got.Best.Plan)
	}
	k := got.Best.Plan.OffloadLayers
	fewer := evaluated(t, m, p, fixed+",offload-layers="+strconv.Itoa(k-1))
	if k > 1 && fewer.Fits || k == 1 && off.Fits {
		t.Errorf("offload-layers=%d: one fewer fits too", k)
	}
	// On the whole memory nothing is offloaded.
	q, _ := plan.PodOf("dgx-h100", 8)
	got, err = Search(context.Background(), m, q, sp.WithLevers("megatron"))
	if err != nil || !got.Found || got.Best.Plan.OffloadLayers != 0 {
		t.Errorf("on 80 GB: %s, %v; want no offload", got.Best.Plan, err)
	}
}

// TestLeversPruneAsAll: the search that tries the speed levers only on
// plans whose step, less what the lever can save, beats the cutoff
// (speedLevers) answers as the one that tries them on every plan that
// fits: a LoRA run with cp > 1 on a Grace rack (the exchanges and the
// graphs both tried) and an MoE on an x86 node.
func TestLeversPruneAsAll(t *testing.T) {
	for _, c := range []struct {
		model, pod, strategy, target string
		nodes                        int
	}{
		{"llama:layers=8,hidden=2048,heads=16,kv_heads=8,ffn=5632,seq=16384,vocab=32000,batch=8", "gb200-nvl72", "peft=lora,fp8=delayed", "megatron-bridge", 16},
		{"llama:layers=8,hidden=2048,heads=16,kv_heads=8,ffn=5632,seq=16384,vocab=32000,batch=8", "dgx-h100", "", "megatron", 8},
		{smallMoESpec, "dgx-h100", "", "megatron", 8},
		{outputProjModel + ",batch=16", "dgx-b200", "fp8=mxfp8", "megatron-bridge", 16},
	} {
		m := specOf(t, c.model)
		p, err := plan.PodOf(c.pod, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := SpaceOf(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		sp = sp.WithLevers(c.target)
		sp.Top = 3
		pruned := newSearcher(m, p, sp)
		every := newSearcher(m, p, sp)
		every.allLevers = true
		for _, sr := range []*searcher{pruned, every} {
			if err := sr.run(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if !pruned.out.Found || pruned.out.Best.Plan.String() != every.out.Best.Plan.String() || pruned.out.Best.Step != every.out.Best.Step {
			t.Errorf("%s on %s: pruned %s (%g s), every plan %s (%g s)", c.model, c.pod, pruned.out.Best.Plan, pruned.out.Best.Step, every.out.Best.Plan, every.out.Best.Step)
		}
		if pruned.out.Evaluated > every.out.Evaluated {
			t.Errorf("%s: pruned evaluated %d > %d", c.model, pruned.out.Evaluated, every.out.Evaluated)
		}
		t.Logf("%s on %s: %s, %d plans evaluated (every: %d)", c.model, c.pod, pruned.out.Best.Plan, pruned.out.Evaluated, every.out.Evaluated)
	}
}

// TestDominantFP8Params: under LoRA with an FP8 recipe fp8-params=on is
// never slower and never needs more memory (what tryLevers turns it on
// at once for), on Hopper and Blackwell, per-tensor and block-scaled.
func TestDominantFP8Params(t *testing.T) {
	m := specOf(t, "llama:layers=4,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=32000,batch=16")
	for _, c := range []struct{ pod, strategy string }{
		{"dgx-h100", "tp=2,dp=4,mbs=1,peft=lora,fp8=delayed"},
		{"dgx-h100", "tp=1,dp=8,mbs=2,distopt=on,peft=lora,fp8=current"},
		{"dgx-b200", "tp=1,dp=8,mbs=1,peft=lora,fp8=delayed,recompute=full"},
		{"dgx-b200", "tp=2,cp=2,dp=2,mbs=1,sp=on,peft=lora,fp8=mxfp8"},
		{"dgx-b200", "tp=1,dp=8,mbs=1,peft=lora,fp4=nvfp4"},
	} {
		p, err := plan.PodOf(c.pod, 8)
		if err != nil {
			t.Fatal(err)
		}
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		if !dominantFP8Params(s) {
			t.Errorf("%s: not dominant", c.strategy)
		}
		base := evaluated(t, m, p, c.strategy)
		with := evaluated(t, m, p, c.strategy+",fp8-params=on")
		if with.Step > base.Step || with.Memory > base.Memory {
			t.Errorf("%s on %s: fp8-params=on %g s, %d B; without %g s, %d B", c.strategy, c.pod, with.Step, with.Memory, base.Step, base.Memory)
		}
	}
	for _, text := range []string{"peft=lora", "fp8=delayed", "peft=lora,fp8=delayed,fsdp=on", "peft=lora,fp8=blockwise"} {
		if s, err := plan.ParseStrategy(text); err != nil || dominantFP8Params(s) {
			t.Errorf("%s: dominant (%v); want not", text, err)
		}
	}
}

// TestSwitches: the switches are what a plan sets against the space's
// recipe, in Levers' order, with the graphs' buffers beside the graphs.
func TestSwitches(t *testing.T) {
	sp, err := SpaceOf("fp8=delayed,offload-layers=2")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("fp8=delayed,offload-layers=2,fp8-params=on,cp-comm-type=a2a,cuda-graphs=dense,graph-pool=layers,fp8-activation=on")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fp8-params=on", "fp8-activation=on", "cp-comm-type=a2a", "cuda-graphs=dense", "graph-pool=layers"}
	if got := sp.Switches(s); !slices.Equal(got, want) {
		t.Errorf("switches %v, want %v", got, want)
	}
	if got := sp.Switches(plan.Strategy{FP8: "delayed", MemoryRecipe: plan.MemoryRecipe{OffloadLayers: 2}}); got != nil {
		t.Errorf("the space's own recipe: %v, want none", got)
	}
}

// TestMustHoldSearches: issue's three searches each find a plan that
// fits with the switches it turned on named: Llama 2 70B LoRA (MLPerf's
// shape and adapters, FP8) on one 8-GPU B200 server, whose answer is
// MLPerf's own tp=1, dp=8 (with the distributed optimizer) once FP8
// weights and FP8 activation storage are both on (placer eval: 172.0 GB
// of 179.1 usable; 346.5 GB with neither, 209.6 GB with fp8-params
// alone, 308.9 GB with fp8-activation alone); the same on 72 GB300 GPUs (nine sequences, CP
// 2 by all-to-all); GPT-OSS 20B on 8 GB200 GPUs (Transformer Engine's
// graphs over the attention, the Grace host otherwise behind the GPU).
func TestMustHoldSearches(t *testing.T) {
	const lora70B = "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=32000,seq=8192"
	const keys = "peft=lora,lora-rank=16,lora-alpha=32,lora-targets=qkv+proj,fp8=delayed"
	for _, c := range []struct {
		model, pod string
		gpus       int
		strategy   string
		want       string // the answer's degrees, "" for any
		switches   []string
	}{
		{lora70B + ",batch=8", "dgx-b200", 8, keys, "tp=1,pp=1,dp=8,mbs=1", []string{"fp8-params=on", "fp8-activation=on"}},
		{lora70B + ",batch=9", "gb300-nvl72", 72, keys, "", []string{"fp8-params=on", "cp-comm-type=a2a"}},
		{"testdata/gpt-oss-20b.json", "gb200-nvl72", 8, "", "", []string{"cuda-graphs=dense"}},
	} {
		m := gptOSS20B(t)
		if !strings.HasSuffix(c.model, ".json") {
			m = specOf(t, c.model)
		}
		p, err := plan.PodOf(c.pod, c.gpus)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := SpaceOf(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		sp.Top = 6
		sp = sp.WithLevers("megatron-bridge")
		got, err := Search(context.Background(), m, p, sp)
		if err != nil || !got.Found || !got.Best.Fits {
			t.Errorf("%s on %d %s: found %v, %v", c.model, c.gpus, c.pod, got.Found, err)
			continue
		}
		sw := sp.Switches(got.Best.Plan.Strategy)
		if !slices.Equal(sw, c.switches) || c.want != "" && !strings.HasPrefix(got.Best.Plan.String(), c.want) {
			t.Errorf("%s on %d %s: %s, switches %v; want %s..., %v", c.model, c.gpus, c.pod, got.Best.Plan, sw, c.want, c.switches)
		}
	}
}

// gptOSS20B is GPT-OSS 20B (testdata/gpt-oss-20b.json: openai/gpt-oss-120b's
// config.json with gpt-oss-20b's 24 layers and 32 experts) at sequence
// 4,096 and 512 sequences a step (Megatron-Bridge 0.5.0's
// gpt_oss_20b_pretrain_config).
func gptOSS20B(t *testing.T) transformer.Spec {
	t.Helper()
	b, err := os.ReadFile("testdata/gpt-oss-20b.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.FromHFConfig(b, "testdata/gpt-oss-20b.json")
	if err != nil {
		t.Fatal(err)
	}
	m.Seq, m.Batch = 4096, 512
	return m
}
