package plan

import (
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
)

// llama8B is Llama 3 8B at seq 4096 and a batch of 512: 32 heads, 8
// key/value heads, 32 layers.
const llama8B = "llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=4096,vocab=128256,batch=512"

// TestWrittenCheck: the keys written, each checked against the model and
// the pod whatever the keys left out (placer search's --strategy before
// it searches, placer eval's before it resolves), by hand on 4 DGX H100
// nodes (32 GPUs). Every refusal is also Resolve's of the same plan with
// the keys left out at their defaults (eval's), with the same line: the
// check refuses nothing eval would take.
func TestWrittenCheck(t *testing.T) {
	dense := mustSpec(t, llama8B)
	long := mustSpec(t, strings.Replace(llama8B, "seq=4096", "seq=16384", 1))
	moe := mustSpec(t, "llama:layers=32,hidden=1024,heads=16,kv_heads=8,seq=2048,vocab=1024,batch=512,experts=32,topk=2,expert_ffn=512")
	pod, err := PodOf("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	a100, err := PodOf("dgx-a100", 32)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		model string
		text  string
		pod   Pod
		want  string // "": every key may be kept
	}{
		{"dense", "", pod, ""},
		{"dense", "tp=8", pod, ""},
		{"dense", "tp=3", pod, "strategy tp=3: tp=3 does not divide the 32 attention heads"},
		{"dense", "tp=16", pod, "tp=16 does not divide the 8 key/value heads"},
		{"dense", "pp=5", pod, "strategy pp=5: pp=5 does not divide the 32 GPUs"},
		{"dense", "pp=64", pod, "pp=64 is more than the 32 layers"},
		{"dense", "tp=2,pp=2,dp=2", pod, "strategy dp=2,tp=2,pp=2: tp=2 x pp=2 x dp=2 is 8 GPUs, the cluster has 32: give tp, cp and pp whose product with dp=2 is 32, or leave dp out"},
		{"dense", "tp=1,pp=1,dp=1", pod, "tp=1 x pp=1 x dp=1 is 1 GPU, the cluster has 32"},
		{"dense", "tp=4,pp=4,dp=2", pod, ""},
		{"dense", "tp=2,dp=3", pod, "tp=2 x dp=3 does not divide the 32 GPUs"},
		{"dense", "tp=8,pp=2,dp=3", pod, "tp=8 x pp=2 x dp=3 is 48 GPUs, the cluster has 32"},
		// dp alone, or with tp: the search finds the pipeline (eval's
		// defaults refuse it: Resolve, below).
		{"dense", "dp=1", pod, ""},
		{"dense", "dp=2", pod, ""},
		{"dense", "tp=8,dp=1", pod, ""},
		// Context parallelism left out makes up the rest where the search
		// tries it (long sequences): tp=2 x pp=2 x dp=2 with cp=4.
		{"long", "tp=2,pp=2,dp=2", pod, ""},
		{"long", "tp=2,pp=2,dp=2,cp=1", pod, "tp=2 x cp=1 x pp=2 x dp=2 is 8 GPUs, the cluster has 32"},
		{"dense", "cp=3", pod, "cp=3: the sequence of 4096 does not split into 2 x cp = 6 equal chunks"},
		{"dense", "dp=32,mbs=3", pod, "the batch of 512 is not divisible by dp=32 x mbs=3"},
		{"dense", "mbs=3", pod, "strategy mbs=3: the batch of 512 is not divisible by mbs=3"},
		{"dense", "pp=3,stage-tp=2:4:2", pod, ""},
		{"dense", "pp=2,stage-tp=4:8", pod, "strategy pp=2,stage-tp=4:8: the 12 GPUs of stage-tp do not divide the 32 GPUs"},
		{"dense", "pp=2,stage-tp=3:8", pod, "stage 0's tp=3 does not divide the 32 attention heads"},
		{"dense", "pp=2,stage-tp=4:4,dp=2", pod, "dp=2 x the 8 GPUs of stage-tp is 16 GPUs, the cluster has 32"},
		{"dense", "ep=2", pod, "ep, etp, imbalance or epoverlap on a model without experts"},
		{"dense", "fp8=current", a100, "fp8=current on a100: its GPUs have no FP8 tensor cores"},
		{"moe", "ep=3", pod, "ep=3 does not divide the 32 experts"},
		{"moe", "ep=8,etp=16", pod, "etp=16 does not divide the 8 GPUs of a node"},
		{"moe", "ep=8", pod, ""},
		// LoRA where it is not modelled: the line eval gives, so that
		// search says it rather than that no plan fits.
		{"moe", "peft=lora,stack=torchtitan-0.2", pod, "strategy peft=lora,lora-rank=16,stack=torchtitan-0.2: peft=lora with experts on torchtitan: LoRA over experts is modelled on Megatron-Core's layers (Megatron-Bridge's PEFT) only"},
		{"moe", "peft=lora", pod, ""},
		{"dense", "peft=lora,lora-rank=4096", pod, "lora-rank=4096: not under the model's hidden size 4096"},
		{"dense", "peft=lora", pod, ""},
	}
	models := map[string]transformer.Spec{"dense": dense, "long": long, "moe": moe}
	for _, c := range cases {
		spec := models[c.model]
		w, err := ParseWritten(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		err = w.Check(spec, c.pod)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %s: %v; want every key kept", c.model, c.text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: %v; want one line with %q", c.model, c.text, err, c.want)
			continue
		}
		// eval's plan, the keys left out at their defaults, is refused
		// too (the check refuses nothing eval takes).
		if _, rerr := Resolve(spec, w.Strategy, c.pod); rerr == nil {
			t.Errorf("%s %s: Check refuses (%v), Resolve takes it", c.model, c.text, err)
		}
	}
}

// TestResolveKeepsDP: a dp written is the plan's, never replaced by what
// the other degrees leave (eval --strategy dp=1 on 32 GPUs was tp=1,pp=1,
// dp=32), and the line names the strategy as written (it was "strategy
// :" for dp=1).
func TestResolveKeepsDP(t *testing.T) {
	m := mustSpec(t, llama8B)
	small := mustSpec(t, "gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=16")
	pod, err := PodOf("dgx-h100", 32)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		small bool
		text  string
		want  string // the plan, or the error's line
		err   bool
	}{
		{false, "dp=1", "strategy dp=1: tp=1 x pp=1 x dp=1 is 1 GPU, the cluster has 32: give tp, cp and pp whose product with dp=1 is 32, or leave dp out (it is then what they leave)", true},
		{true, "dp=1", "strategy dp=1: tp=1 x pp=1 x dp=1 is 1 GPU, the cluster has 32", true},
		{false, "dp=2", "strategy dp=2: tp=1 x pp=1 x dp=2 is 2 GPUs, the cluster has 32", true},
		{false, "mb=1", "strategy mb=1: mb=1, but the batch of 512 over dp=32 x mbs=1 is 16 micro-batches", true},
		{false, "tp=8,pp=4,dp=1", "tp=8,pp=4,dp=1,mbs=1", false},
		{false, "tp=8,pp=4", "tp=8,pp=4,dp=1,mbs=1", false},
		{false, "", "tp=1,pp=1,dp=32,mbs=1", false},
		{false, "tp=8,pp=4,dp=1,mb=512", "tp=8,pp=4,dp=1,mbs=1", false},
	}
	for _, c := range cases {
		spec := m
		if c.small {
			spec = small
		}
		s, err := ParseStrategy(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		pl, err := Resolve(spec, s, pod)
		switch {
		case c.err && (err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, %v; want one line starting %q", c.text, pl, err, c.want)
		case !c.err && (err != nil || pl.String() != c.want):
			t.Errorf("%s: %v, %v; want %s", c.text, pl, err, c.want)
		}
	}
}
