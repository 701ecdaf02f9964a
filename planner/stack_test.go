package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// stackCoster is the coster of model m (workload text) under strategy
// text on pod pod, resolved, with its coster for the plan's degree.
func stackCoster(t *testing.T, workload, strategy, pod string) coster {
	t.Helper()
	return stackCosterOf(t, registered, workload, strategy, pod)
}

// stackCosterOf is stackCoster with the plug-ins of pts.
func stackCosterOf(t *testing.T, pts *cost.Points, workload, strategy, pod string) coster {
	t.Helper()
	m := mustSpec(t, workload)
	p, err := plan.ParsePod(pod)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy(strategy)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		t.Fatal(err)
	}
	pp := p
	return newCosterOf(pts, m, pl, &pp, pl.TP, float64(pl.MBS)*float64(m.Seq)/float64(pl.CP))
}

// asked is what the framework gets of plug-in p of pts at an extension
// point asked by the record (cost.EachPricing, cost.Pricing): at(), where
// shard s's record says p prices its step; zero phases elsewhere.
func asked(pts *cost.Points, s *cost.Shard, p cost.Plugin, at func() (fwd, bwd cost.Phase)) (fwd, bwd cost.Phase) {
	if s.Priced.Families&pts.Families.Bit(p)|s.Priced.Mechanisms&pts.Mechanisms.Bit(p) == 0 {
		return fwd, bwd
	}
	return at()
}

// replaced is the registered plug-ins with the mechanism registered
// under p's name replaced by p, in its place (its bit in a record the
// same), resolved anew: a test's own plug-in at a point asked by the
// record (cost.Pricing, cost.EachPricing).
func replaced(t *testing.T, p cost.Plugin) *cost.Points {
	t.Helper()
	ps := cost.Each[cost.Plugin](mechanisms.Registered)
	found := false
	for i, q := range ps {
		if q.Name() == p.Name() {
			ps[i], found = p, true
		}
	}
	mechs, err := cost.NewRegistry(ps...)
	if err != nil || !found {
		t.Fatalf("replacing %s: %v (registered: %v)", p.Name(), err, found)
	}
	return cost.Resolve(families.Registered, mechs, codebases.Registered)
}

// swapped is the registered plug-ins with edit made to a copy (the
// registered stay as they are): a test's own extension points.
func swapped(edit func(*cost.Points)) *cost.Points {
	p := *registered
	edit(&p)
	return &p
}

const stackMoE = "qwen3-30b-a3b:seq=4096,batch=512"

// TestStackLaunchesAndSyncs: one MoE layer's forward and backward, by
// hand against the default stack. Qwen3-30B-A3B, EP 8 (16 local experts),
// BF16 (no casts):
//   - grouped-gemm=off: each local expert its FC1, activation and FC2
//     (16 x 3 launches for the grouped 3) and the outputs' cat: +46
//     forward; the backward's 6 kernels per expert: +90;
//   - router-fusion=off: 6 kernels for the fused 1 forward (+5), 4 for 1
//     backward (+3); and the balancing loss's scores 6 for 1 and the
//     loss 4 for 1 forward (auxLoss: +8);
//   - permute-fusion=off: permute 11 for 1, unpermute 8 for 1 (+17)
//     forward and the counts per local expert copied to the host (+1,
//     a2aPreprocess); 5 and 6 for 1 and 1 backward (+9); and three syncs
//     more;
//   - the syncs: alltoall 1, none with capacity routing, allgather 2,
//     flex 1; allgather's collectives 4 launches for the all-to-all's 2;
//   - the alltoall dispatcher's bookkeeping (a2aBookkeeping): the sort by
//     local expert and its restore, the probabilities' all-to-all and the
//     counts' all-gather, 4 launches forward, 3 backward; before its
//     synchronization the preprocess's 6 small kernels and 4 copies to
//     the host (a2aPreprocess: 10 forward); capacity routing without the
//     gather and the preprocess (-1 - 10 forward); allgather and flex run
//     none of it (-4 - 10 and -3 on their own counts);
//   - capacity routing does not force balance: no random logits (the
//     clone and normal_ of auxLoss, -2 forward);
//   - DeepEP's received indices made into the multihot map unfused
//     (_indices_to_multihot: multihotRuns' 4 + 5 + 3 + 4 kernels and 3
//     syncs forward, 3 kernels backward) where permute-fusion=off or the
//     stack runs no --enable-experimental: flex with permute-fusion=off
//     -4 - 10 + 17 + 16 forward, -3 + 9 + 3 backward, 1 + 3 + 3 syncs;
//     stack=model-zoo-moe-dev (flex, router-fusion off, no experimental)
//     -4 - 10 + 5 + 8 + 16, -3 + 3 + 3, 4 syncs; its dispatcher=alltoall the
//     unfused router and its balancing loss alone (5 + 8, 3); HybridEP's manager runs no such conversion
//     (its own launches less the default's: TestMultihotStacks).
func TestStackLaunchesAndSyncs(t *testing.T) {
	base := "dp=8,ep=8,mbs=1"
	c0 := stackCoster(t, stackMoE, base, "dgx-h100:1")
	f0, b0, _ := c0.moe()
	for _, c := range []struct {
		keys                 string
		dFwd, dBwd, syncsFwd float64
	}{
		{"", 0, 0, 1},
		{"grouped-gemm=off", 3*15 + 1, 6 * 15, 1},
		{"router-fusion=off", 5 + 8, 3, 1},
		{"permute-fusion=off", 17 + 1, 9, 4},
		{"routing=capacity:1", -1 - 10 - 2, 0, 0},
		{"permute-fusion=off,routing=capacity:1", 17 - 1 - 10 - 2, 9, 0},
		{"dispatcher=allgather", 2 - 4 - 10, 2 - 3, 2},
		{"dispatcher=flex", -4 - 10, -3, 1},
		{"dispatcher=flex,permute-fusion=off", -4 - 10 + 17 + 16, -3 + 9 + 3, 7},
		{"stack=model-zoo-moe-dev", -4 - 10 + 5 + 8 + 16, -3 + 3 + 3, 4},
		{"stack=model-zoo-moe-dev,dispatcher=alltoall", 5 + 8, 3, 1},
	} {
		k := base
		if c.keys != "" {
			k += "," + c.keys
		}
		cc := stackCoster(t, stackMoE, k, "dgx-h100:1")
		f, b, _ := cc.moe()
		if f.Launches-f0.Launches != c.dFwd || b.Launches-b0.Launches != c.dBwd || f.Syncs != c.syncsFwd || b.Syncs != 0 {
			t.Errorf("%s: launches %+g forward, %+g backward, syncs %g, %g; want %+g, %+g, %g, 0", c.keys,
				f.Launches-f0.Launches, b.Launches-b0.Launches, f.Syncs, b.Syncs, c.dFwd, c.dBwd, c.syncsFwd)
		}
	}
}

// TestStackAllGatherVolume: the all-gather dispatcher moves every token of
// the expert-tensor x expert-parallel group, whatever the routing: EP 8
// in one node, 4,096 tokens a GPU, hidden 2,048, 128 experts: the tokens'
// all-gather of 8 x 4,096 x 2,048 x 2 bytes, the probabilities' and the
// map's of 8 x 4,096 x 128 x 3, and the outputs' reduce-scatter of the
// tokens' bytes; an imbalance of 2 changes none of it.
func TestStackAllGatherVolume(t *testing.T) {
	for _, imb := range []string{"", ",imbalance=2"} {
		c := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,dispatcher=allgather"+imb, "dgx-h100:1")
		got := dispatcherOf(c.Points, &c.Shard).DispatchComm(0, 0, 4096)
		grp := plan.Group{PerNode: 8, Nodes: 1}
		G := 8.0 * 4096
		ag, _ := c.Pod.Collective(roofline.AllGather, grp, G*2048*2)
		mp, _ := c.Pod.Collective(roofline.AllGather, grp, G*128*3)
		rs, _ := c.Pod.Collective(roofline.ReduceScatter, grp, G*2048*2)
		if !near(got.Busy, ag+mp+rs) || got.Launches != 4 {
			t.Errorf("imbalance %q: %g s in %g launches, want %g in 4", imb, got.Busy, got.Launches, ag+mp+rs)
		}
	}
}

// TestStackDeepEPReceived: the tokens DeepEP delivers, by hand. 128
// experts top-8 over EP 8 (16 a GPU): a GPU is missed by a token with
// probability (112/128)(111/127)...(105/121); over EP 32 on 4 nodes (32 a
// node) a node is missed with (96/128)...(89/121).
func TestStackDeepEPReceived(t *testing.T) {
	miss := func(E, per, k int) float64 {
		p := 1.0
		for i := range k {
			p *= float64(E-per-i) / float64(E-i)
		}
		return p
	}
	c := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,dispatcher=flex", "dgx-h100:1")
	recv, rdma := mechanisms.Dispatcher{Shard: &c.Shard}.DeepEPReceived(1000)
	if want := 1000 * 8 * (1 - miss(128, 16, 8)); !near(recv, want) || rdma != 0 {
		t.Errorf("EP 8: received %g, RDMA %g; want %g, 0", recv, rdma, want)
	}
	c = stackCoster(t, "qwen3-235b-a22b:seq=4096,batch=2048", "tp=2,pp=8,vp=4,ep=32,etp=1,dp=16,mbs=1,sp=on,dispatcher=flex,embedding-layer=on,loss-layer=on", "dgx-h100:32")
	recv, rdma = mechanisms.Dispatcher{Shard: &c.Shard}.DeepEPReceived(1000)
	if want := 1000 * 32 * (1 - miss(128, 4, 8)); !near(recv, want) {
		t.Errorf("EP 32: received %g, want %g", recv, want)
	}
	if want := 1000 * 4 * (1 - miss(128, 32, 8)); !near(rdma, want) {
		t.Errorf("EP 32: RDMA %g, want %g", rdma, want)
	}
}

// TestStackDefault: the default stack is placer's model as it was: a plan
// read with megatron-bridge-25.11 (which sets what placer costed) or with
// every default written out is costed to the bit as the plan without
// them; a dense model under megatron-core-0.16 (whose MoE settings it
// does not run, and no graphs) likewise. Under fp8=current the
// Megatron-Bridge stack keeps FP8 primary weights, and with experts its
// Megatron-Core keeps the routing weights in place of FC2's output, and
// its llama-family providers set no hidden dropout (no masks): the same
// step, less memory.
func TestStackDefault(t *testing.T) {
	p, _ := plan.PodOf("dgx-h100", 16)
	for _, c := range []struct{ workload, plan string }{
		{stackMoE, "pp=2,vp=24,dp=8,mbs=2,ep=8,distopt=on,fp8=current,grads=bf16"},
		{"qwen3-235b-a22b:seq=4096,batch=64", "tp=2,pp=8,ep=2,etp=1,sp=on,mbs=1,embedding-layer=on,loss-layer=on"},
		{"llama3-8b:seq=8192,batch=16", "tp=2,dp=8,sp=on,tpoverlap=on"},
	} {
		m := mustSpec(t, c.workload)
		s0, _ := plan.ParseStrategy(c.plan)
		r0, err := Evaluate(m, s0, p)
		if err != nil {
			t.Fatal(err)
		}
		others := []string{",stack=megatron-bridge-25.11"}
		if m.MoE() {
			others = append(others, ",dispatcher=alltoall,permute-fusion=on,router-fusion=on,grouped-gemm=on,cuda-graphs=off,routing=dropless")
		} else {
			others = append(others, ",stack=megatron-core-0.16", ",cuda-graphs=off")
		}
		for _, o := range others {
			s, err := plan.ParseStrategy(c.plan + o)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(m, s, p)
			if err != nil {
				t.Fatal(err)
			}
			// Megatron-Bridge's FP8 current-scaling runs keep FP8 primary
			// weights (memory's bridgeFP8Params), and its Megatron-Core
			// applies an MoE block's routing weights in the experts'
			// activation (memory's probsInActivation), and its providers
			// of the llama family set hidden_dropout 0.0 (memory's
			// dropoutFree): less memory, the same step; its FP8 primary
			// weights gathered in FP8 by the distributed optimizer
			// (fp8paramgather.go): a shorter step.
			less := strings.Contains(o, "megatron-bridge") && (strings.Contains(c.plan, "fp8=current") || m.MoE() || m.Family != "gpt")
			faster := strings.Contains(o, "megatron-bridge") && strings.Contains(c.plan, "fp8=current") && strings.Contains(c.plan, "distopt=on")
			sameStep := math.Float64bits(r.Step) == math.Float64bits(r0.Step)
			if !faster && !sameStep || faster && r.Step >= r0.Step || !less && r.Memory != r0.Memory || less && r.Memory >= r0.Memory {
				t.Errorf("%s %s%s: step %g, memory %d; without it %g, %d", c.workload, c.plan, o, r.Step, r.Memory, r0.Step, r0.Memory)
			}
		}
	}
}

// TestStackGraphs: CUDA graphs take the graphed kernels off the host's
// issue (a dense layer of a small model, host-bound: the step shortens
// and the launches drop), and cuda-graphs=dense leaves an MoE layer's
// experts eager (its syncs stay).
func TestStackGraphs(t *testing.T) {
	p, _ := plan.PodOf("dgx-h100", 8)
	small := mustSpec(t, "llama:layers=8,hidden=512,heads=8,seq=512,vocab=32000,batch=64")
	eager, _ := plan.ParseStrategy("dp=8,mbs=1")
	graphs, _ := plan.ParseStrategy("dp=8,mbs=1,cuda-graphs=dense")
	re, _ := Evaluate(small, eager, p)
	rg, err := Evaluate(small, graphs, p)
	if err != nil {
		t.Fatal(err)
	}
	if !(rg.Step < re.Step) || !(rg.HostStages[0].Launches < re.HostStages[0].Launches) {
		t.Errorf("graphs: step %g, launches %g; eager %g, %g", rg.Step, rg.HostStages[0].Launches, re.Step, re.HostStages[0].Launches)
	}
	c := stackCoster(t, stackMoE, "dp=8,ep=8,mbs=1,cuda-graphs=dense", "dgx-h100:1")
	f, _ := c.layer()
	if f.Syncs != 1 || f.Replays != 1 {
		t.Errorf("dense graphs on an MoE layer: %g syncs, %g replays; want 1 and 1 (the attention's)", f.Syncs, f.Replays)
	}
}

// TestStackRefused: each refusal is one line naming what and where.
func TestStackRefused(t *testing.T) {
	p, _ := plan.PodOf("dgx-h100", 8)
	for _, c := range []struct{ workload, plan, want string }{
		{stackMoE, "dp=8,ep=8,stack=megatron-bridge-99", `"megatron-bridge-99" is not a named stack (megatron-core-0.16, `},
		{"llama3-8b:seq=8192,batch=16", "dp=8,dispatcher=flex", "dispatcher, permute-fusion, router-fusion, grouped-gemm, routing or rank-capacity on a model without experts"},
		{stackMoE, "dp=8,ep=8,cuda-graphs=full", "cuda-graphs=full with dropless routing"},
		{stackMoE, "dp=8,ep=8,cuda-graphs=dense,recompute=full", "cuda-graphs=dense with recompute=full"},
		{stackMoE, "pp=2,vp=2,dp=4,ep=4,dispatcher=allgather,epoverlap=on", "epoverlap=on with dispatcher=allgather"},
		{stackMoE, "dp=8,ep=8,dispatcher=ring", `dispatcher "ring": want alltoall, allgather, flex (deepep) or hybridep`},
		{stackMoE, "dp=8,ep=8,routing=capacity:0", "want capacity:F"},
		{stackMoE, "dp=8,ep=8,permute-fusion=maybe", `"maybe" is not on or off`},
		{"llama3-8b:seq=8192,batch=16", "tp=8,sp=on,tpoverlap=on,stack=torchtitan-0.2,compile=off", "tpoverlap=on with compile=off"},
		{"llama3-8b:seq=8192,batch=16", "dp=4,cp=2,cp-rotate=alltoall", "cp-rotate=alltoall: the stack runs Transformer Engine's context-parallel ring"},
		{"llama3-8b:seq=8192,batch=16", "dp=4,cp=2,stack=torchtitan-0.2,cp-rotate=ring", `"ring": want allgather or alltoall`},
		{"llama3-8b:seq=8192,batch=16", "dp=4,cp=2,stack=torchtitan-0.2,cp-comm-type=all_gather", "cp-comm-type=all_gather: the stack runs torch's context_parallel"},
		{"llama3-8b:seq=8192,batch=16", "dp=4,cp=2,cp-comm-type=a2a+p2p", `"a2a+p2p": want p2p, all_gather or a2a`},
	} {
		m := mustSpec(t, c.workload)
		s, err := plan.ParseStrategy(c.plan)
		if err == nil {
			_, err = Evaluate(m, s, p)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.plan, err, c.want)
		}
	}
}

// TestStackRoundTrip: a plan with a stack and settings over it is written
// back as it is read.
func TestStackRoundTrip(t *testing.T) {
	for _, text := range []string{
		"dp=8,ep=8,stack=megatron-core-0.16,dispatcher=flex,grouped-gemm=on",
		"dp=8,ep=8,permute-fusion=off,router-fusion=off,cuda-graphs=dense,routing=capacity:1.25",
		"dp=8,stack=torchtitan-0.2,compile=on",
		"dp=4,cp=2,stack=torchtitan-0.2,compile=on,cp-rotate=alltoall",
		"dp=4,cp=2,cp-comm-type=all_gather",
		"dp=8,ep=8,stack=model-zoo-moe-dev,dispatcher=hybridep",
	} {
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		again, err := plan.ParseStrategy(s.String())
		if err != nil || !again.Equal(s) || again.Software.Settings() != s.Software.Settings() {
			t.Errorf("%s: written %q, read back %+v, %v", text, s.String(), again.Software, err)
		}
	}
	// dispatcher=hybridep is flex with HybridEP; deepep and flex are
	// flex with DeepEP.
	for _, c := range []struct {
		text   string
		hybrid bool
	}{{"ep=8,dispatcher=hybridep", true}, {"ep=8,dispatcher=deepep", false}, {"ep=8,dispatcher=flex", false}} {
		s, err := plan.ParseStrategy(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Software.Settings(); got.Dispatcher != plan.DispatcherFlex || got.HybridEP != c.hybrid {
			t.Errorf("%s: dispatcher %s, HybridEP %v; want flex, %v", c.text, got.Dispatcher, got.HybridEP, c.hybrid)
		}
	}
	s, _ := plan.ParseStrategy("stack=megatron-core-0.16,grouped-gemm=on")
	if got := s.Software.Settings(); got.Dispatcher != plan.DispatcherAllGather || got.ExpertLoop || !got.UnfusedPermute {
		t.Errorf("megatron-core-0.16 with grouped-gemm=on: %+v", got)
	}
}

// TestEagerStacks: what each eager stack and compile= set (the layer's
// ops, their precision, and the layer costs chosen: whose layer), and that an eager layer costs more
// than the fused one of the same plan, forward and backward, with more
// launches: Llama 3 8B at micro-batch 2 on 8 GPUs.
func TestEagerStacks(t *testing.T) {
	for _, c := range []struct {
		plan        string
		eager, fp32 bool
		layers      string
	}{
		{"dp=8", false, false, plan.LayersFused},
		{"dp=8,stack=torch-eager", true, true, plan.LayersLlamaPy},
		{"dp=8,stack=torch-eager-bf16", true, false, plan.LayersLlamaPy},
		{"dp=8,stack=hf-eager", true, true, plan.LayersHF},
		{"dp=8,stack=hf-eager-bf16", true, false, plan.LayersHF},
		{"dp=8,stack=torchtitan-0.2", true, false, plan.LayersTitan},
		{"dp=8,stack=torchtitan-0.2,compile=on", false, false, codebases.LayersTitanCompiled},
		{"dp=8,stack=torch-eager,compile=on", false, true, plan.LayersFused},
		{"dp=8,compile=off", true, false, plan.LayersLlamaPy},
		{"dp=8,stack=megatron-core-0.16,compile=off", true, false, plan.LayersLlamaPy},
		{"dp=8,stack=hf-eager,compile=off", true, true, plan.LayersHF},
	} {
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Software.Settings()
		if layers := layerCoster(&got).Name(); got.Eager != c.eager || got.FP32Weights != c.fp32 || layers != c.layers {
			t.Errorf("%s: eager %v fp32 weights %v layer costs %s, want %v %v %s", c.plan, got.Eager, got.FP32Weights, layers, c.eager, c.fp32, c.layers)
		}
	}
	const w, pod = "llama3-8b:seq=8192,batch=16", "grand-teton:1,attention=flash"
	fused := stackCoster(t, w, "dp=8,mbs=2,stack=torchtitan-0.2,compile=on", pod)
	ff, fb := fused.block(false)
	for _, plan := range []string{"dp=8,mbs=2,stack=torchtitan-0.2", "dp=8,mbs=2,stack=torch-eager", "dp=8,mbs=2,stack=hf-eager-bf16"} {
		c := stackCoster(t, w, plan, pod)
		ef, eb := c.block(false)
		if !(ef.Busy > ff.Busy && eb.Busy > fb.Busy && ef.Launches > ff.Launches && eb.Launches > fb.Launches) {
			t.Errorf("%s: eager %.2f/%.2f ms, %g/%g launches; fused %.2f/%.2f ms, %g/%g: want more of each",
				plan, ef.Busy*1e3, eb.Busy*1e3, ef.Launches, eb.Launches, ff.Busy*1e3, fb.Busy*1e3, ff.Launches, fb.Launches)
		}
	}
}
