package planner

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
)

// TestFP8GatherSavingByHand: a stage of 100 parameters on a GPU, 90 of
// them its blocks' (Layers), 60 of those its experts'. At 2 bytes a
// parameter the distributed optimizer gathers 40 x 2 over the
// data-parallel group and 60 x 2 over the expert-data-parallel one;
// with per-tensor FP8 primary weights the blocks' 30 dense and 60
// expert weights one byte each: 30 and 60 bytes less. None under
// LoRA (the frozen weights are not gathered), MXFP8 (gathered in BF16),
// without the distributed optimizer, or without fp8-params (but on a
// Megatron-Bridge stack's fp8=current, whose recipe sets
// fp8_param_gather).
func TestFP8GatherSavingByHand(t *testing.T) {
	st := stageCost{Stage: memory.Stage{Params: 100, Experts: 60, Layers: 90}}
	for _, c := range []struct {
		strategy      string
		dense, expert float64
	}{
		{"dp=8,distopt=on,fp8=delayed,fp8-params=on", 30, 60},
		{"dp=8,distopt=on,fp8=current,fp8-params=on", 30, 60},
		{"dp=8,distopt=on,fp8=current,stack=megatron-bridge-25.09", 30, 60},
		{"dp=8,distopt=on,fp8=current", 0, 0},
		{"dp=8,distopt=on,fp8=delayed,fp8-params=on,peft=lora", 0, 0},
		{"dp=8,distopt=on,fp8=mxfp8,fp8-params=on", 0, 0},
		{"dp=8,distopt=off,fp8=delayed,fp8-params=on", 0, 0},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl := plan.Plan{Strategy: s}
		if d, e := fp8GatherSaving(&pl, &st, 2); d != c.dense || e != c.expert {
			t.Errorf("%s: %g and %g bytes less, want %g and %g", c.strategy, d, e, c.dense, c.expert)
		}
	}
}

// TestFP8ParamGatherWithExperts: Mixtral 8x7B on 4 DGX H100 nodes
// (tp=2, sp, pp=2: 8 data-parallel replicas; the experts ep=8, etp=1:
// an expert-data-parallel group of 2) with
// connections=1, so every data-parallel collective is exposed whole
// (Plan.Serialized). fp8-params=on takes from the parameters'
// all-gather the bytes fp8GatherSaving names and nothing else: the
// exposed time falls by the all-gathers' time at the BF16 bytes less
// their time at the bytes with the blocks' weights at one byte, on the
// busiest stage.
func TestFP8ParamGatherWithExperts(t *testing.T) {
	m := mustSpec(t, "mixtral-8x7b:seq=4096,batch=256")
	p, err := plan.ParsePod("dgx-h100:4")
	if err != nil {
		t.Fatal(err)
	}
	const base = "tp=2,sp=on,ep=8,etp=1,pp=2,distopt=on,fp8=delayed,recompute=full,connections=1"
	var got [2]Result
	var pls [2]plan.Plan
	for i, text := range []string{base, base + ",fp8-params=on"} {
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		if got[i], err = Evaluate(m, s, p); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if pls[i], err = plan.Resolve(m, s, p); err != nil {
			t.Fatal(err)
		}
	}
	pl := pls[1]
	if pl.DP != 8 || pl.EDP != 2 {
		t.Fatalf("dp %d, edp %d: want 8 and 2", pl.DP, pl.EDP)
	}
	_, _, edpG := pl.ExpertGroups(p)
	lp := float64(transformer.LayerParams(m))
	_, pm := memoryTraits(registered, &m, &pl, &p)
	var want float64
	for s := range pl.Stages {
		st := memory.StageOf(&m, &pl, s, lp, pm)
		_, dpG := pl.Groups(p, s)
		dense := st.Params - st.Experts
		ag := func(d, e float64) float64 {
			return p.StateComm(roofline.AllGather, dpG, d).Plus(p.StateComm(roofline.AllGather, edpG, e)).Time
		}
		bf := ag(dense*2, st.Experts*2)
		f8 := ag(dense*2-(st.Layers-st.Experts), st.Experts)
		want = max(want, bf-f8)
	}
	if d := got[0].DPExposed - got[1].DPExposed; want <= 0 || math.Abs(d-want) > 1e-12 {
		t.Errorf("fp8-params=on takes %g s off the exposed data-parallel time, want %g", d, want)
	}
}
