package jobs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/profile"
)

// cpuMoEFP8 is a CPU profile placer profile wrote (one process of one
// thread on this project's 2-core machine, torch 2.14.1, 2026-11-27) of
// a Qwen2-MoE layer in small (query, key and value biases, 4 experts,
// top 2, one shared expert), in FP32 and under --fp8 current
// (placer_torch/profile/fp8.py's torchao-style path: its experts one
// torch._scaled_mm each, the CPU having no grouped kernel) at ep 1, 2
// and 4:
//
//	placer profile --workload hf:qmoe.json:seq=32,batch=2 --device cpu --tp 1 --mbs 1 --cp 1 \
//	  --recompute none --repeats 3 --fp8 current --out cpu-moe-fp8.json
var cpuMoEFP8 = filepath.Join("..", "evaluate", "profile", "testdata", "cpu-moe-fp8.json")

const cpuMoEFP8Model = "llama:layers=1,hidden=64,heads=4,kv_heads=2,ffn=128,seq=32,vocab=256,batch=2,experts=4,topk=2,expert_ffn=32,shared=1"

// TestEvalProfileFP8Experts: eval of the model with experts on its FP8
// profile prices fp8=current from the layers measured under it and
// says what ran them (the profile's software.fp8, in --json and in the
// text); fp8=delayed, which it did not measure, is the roofline's, and
// a plan without FP8 says nothing of FP8.
func TestEvalProfileFP8Experts(t *testing.T) {
	pr, err := profile.ReadFile(cpuMoEFP8)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		strategy string
		layers   profile.Source
		fp8      string
	}{
		{"tp=1,pp=1,dp=1,mbs=1,fp8=current", profile.Measured, pr.Software.FP8},
		{"tp=1,pp=1,dp=1,mbs=1,fp8=delayed", profile.Modelled, ""},
		{"tp=1,pp=1,dp=1,mbs=1", profile.Measured, ""},
	} {
		o := ScaleOptions{Workload: cpuMoEFP8Model, Profile: cpuMoEFP8, Strat: c.strategy}
		p, err := ScaleEval(t.Context(), o)
		if err != nil {
			t.Fatalf("%s: %v", c.strategy, err)
		}
		if p.Sources == nil || p.Sources.Layers != c.layers || p.ProfileFP8 != c.fp8 {
			t.Errorf("%s: layers %v, profile_fp8 %q: want %s, %q", c.strategy, p.Sources, p.ProfileFP8, c.layers, c.fp8)
		}
	}
	if !strings.Contains(pr.Software.FP8, "experts: one torch._scaled_mm per expert") {
		t.Errorf("software.fp8 %q: want the experts' path said", pr.Software.FP8)
	}
}
