package planner

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// fp8Profile is an H100 profile of the tiny Llama at tp 1, mbs 1, seq
// 256: the layer 4 + 8 ms in BF16 and, with current, 2.5 + 5 ms under
// fp8=current (hand-chosen, so that each plan's compute is checked by
// hand); the embedding 0.2 + 0.4 ms, the loss 3 + 6 ms. Without
// current: the same profile without the FP8 entry.
func fp8Profile(t *testing.T, current bool) *profile.Profile {
	t.Helper()
	layers := `{"tp":1,"mbs":1,"seq":256,"forward_s":0.004,"backward_s":0.008}`
	if current {
		layers += `,{"tp":1,"mbs":1,"seq":256,"fp8":"current","forward_s":0.0025,"backward_s":0.005}`
	}
	data := `{"format":"placer-profile","version":2,"kind":"layers","complete":true,
"device":{"kind":"cuda","name":"NVIDIA H100 80GB HBM3","count":1,"memory_bytes":85000000000},
"software":{"torch":"2.14.1","backend":"nccl","framework":"pytorch","fp8":"torchao-style"},
"model":"llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=2","dtype":"bf16",
"layers":[` + layers + `],
"embedding":[{"tp":1,"mbs":1,"seq":256,"forward_s":0.0002,"backward_s":0.0004}],
"loss":[{"tp":1,"mbs":1,"seq":256,"forward_s":0.003,"backward_s":0.006}],
"host":{"issue_s":3e-6,"issue_backward_s":4e-6}}`
	pr, err := profile.Decode([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// TestProfiledFP8: a plan with fp8=current takes the layers measured
// under current (measured at their shape, composed elsewhere by the
// same rules as BF16's), one with fp8=delayed, which the profile did not
// measure, the roofline's layers (Sources says modelled) whether the
// current entries are there or not, and a plan without FP8 is, to the
// bit, what it was on the profile without them. The embedding and the
// loss, which no recipe covers, are their measured times throughout.
func TestProfiledFP8(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=2")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := plan.PodOf("dgx-h100", 1)
	if err != nil {
		t.Fatal(err)
	}
	with, without := plan.WithProfile(pod, fp8Profile(t, true)), plan.WithProfile(pod, fp8Profile(t, false))
	ends := 0.0006 + 0.009 // the embedding's and the loss's forward and backward, a micro-batch
	cases := []struct {
		strategy string
		compute  float64 // 0: the roofline's layers, checked against the profile without current
		layers   profile.Source
		ends     profile.Source // the embedding's and the loss's
	}{
		// Two micro-batches, four BF16 layers of 4 + 8 ms.
		{"tp=1,pp=1,dp=1,mbs=1", 2 * (4*0.012 + ends), profile.Measured, profile.Measured},
		// Under current: four layers of 2.5 + 5 ms.
		{"tp=1,pp=1,dp=1,mbs=1,fp8=current", 2 * (4*0.0075 + ends), profile.Measured, profile.Measured},
		// Full recomputation under current: its backward 5 + 2.5 ms
		// (composed from current's own layer, not BF16's).
		{"tp=1,pp=1,dp=1,mbs=1,fp8=current,recompute=full", 2 * (4*0.01 + ends), profile.Composed, profile.Measured},
		// One micro-batch of 2: current's layer at twice the tokens
		// (proportional), the embedding and the loss likewise.
		{"tp=1,pp=1,dp=1,mbs=2,fp8=current", 4*0.015 + 2*ends, profile.Composed, profile.Composed},
		// Delayed was not measured: the roofline's layers.
		{"tp=1,pp=1,dp=1,mbs=1,fp8=delayed", 0, profile.Modelled, profile.Measured},
	}
	for _, c := range cases {
		t.Run(c.strategy, func(t *testing.T) {
			s, err := plan.ParseStrategy(c.strategy)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(m, s, with)
			if err != nil {
				t.Fatal(err)
			}
			if r.Sources == nil || r.Sources.Layers != c.layers || r.Sources.Embedding != c.ends || r.Sources.Loss != c.ends {
				t.Fatalf("sources %+v: want layers %s, embedding and loss %s", r.Sources, c.layers, c.ends)
			}
			if c.compute > 0 && math.Abs(r.Compute-c.compute) > 1e-12 {
				t.Errorf("compute %.9g, want %.9g", r.Compute, c.compute)
			}
			b, err := Evaluate(m, s, without)
			if err != nil {
				t.Fatal(err)
			}
			// A plan the current entries do not answer is the plan on
			// the profile without them, to the bit.
			if s.FP8 != plan.FP8Current {
				ja, _ := json.Marshal(r)
				jb, _ := json.Marshal(b)
				if string(ja) != string(jb) {
					t.Errorf("with the current entries:\n%s\nwithout:\n%s", ja, jb)
				}
			} else if b.Sources.Layers != profile.Modelled || b.Compute == r.Compute {
				t.Errorf("without the current entries: layers %s, compute %v (with them %v): want modelled, another time", b.Sources.Layers, b.Compute, r.Compute)
			}
		})
	}
}

// TestProfilePodFP8: a CPU profile's pod runs fp8= plans where the
// profile measured layers under a recipe (its FP8 peak its BF16 rate)
// and refuses them as before where it measured none; its rate is the
// first layer measured without a recipe's, wherever the FP8 ones lie.
func TestProfilePodFP8(t *testing.T) {
	base := `{"format":"placer-profile","version":2,"kind":"layers","complete":true,
"device":{"kind":"cpu","name":"Intel(R) Xeon(R) Processor","count":1,"memory_bytes":6000000000,"threads":1,"cores":2},
"software":{"torch":"2.14.1","backend":"gloo","framework":"pytorch"},
"model":"llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=2","dtype":"fp32",
"layers":[LAYERS],"optimizer":{"name":"adamw","params":1000000,"seconds":0.015}}`
	plain := `{"tp":1,"mbs":1,"seq":256,"forward_s":0.004,"backward_s":0.008}`
	scaled := `{"tp":1,"mbs":1,"seq":256,"fp8":"current","forward_s":0.4,"backward_s":0.8}`
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=2")
	if err != nil {
		t.Fatal(err)
	}
	read := func(layers string) *profile.Profile {
		pr, err := profile.Decode([]byte(strings.Replace(base, "LAYERS", layers, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	s, err := plan.ParseStrategy("tp=1,pp=1,dp=1,mbs=1,fp8=current")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Evaluate(m, s, plan.ProfilePod(read(plain), 1)); err == nil || !strings.Contains(err.Error(), "no FP8") {
		t.Errorf("fp8=current on a CPU profile without FP8 layers: %v, want refused (no FP8 tensor cores)", err)
	}
	a, b := plan.ProfilePod(read(plain+","+scaled), 1), plan.ProfilePod(read(scaled+","+plain), 1)
	if a.Hardware.FP32 != b.Hardware.FP32 || a.Hardware.FP32 != plan.ProfilePod(read(plain), 1).Hardware.FP32 {
		t.Errorf("the pod's rate %v and %v with the FP8 layer after and before, %v without: want one rate, the BF16 layer's", a.Hardware.FP32, b.Hardware.FP32, plan.ProfilePod(read(plain), 1).Hardware.FP32)
	}
	if a.Kernels.FP8Peak != a.Hardware.FP16Tensor || a.Kernels.FP8Peak <= 0 {
		t.Errorf("FP8 peak %v, want the pod's BF16 rate %v", a.Kernels.FP8Peak, a.Hardware.FP16Tensor)
	}
	r, err := Evaluate(m, s, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sources.Layers != profile.Measured || math.Abs(r.LayerForward-0.4) > 1e-12 {
		t.Errorf("layers %s, forward %v: want the measured current layer's 0.4 s", r.Sources.Layers, r.LayerForward)
	}
}

// TestProfiledFP8Experts: a model with experts (and biases: the profile
// of fp8.py's converted layer says nothing of them beyond its times)
// priced from the layers measured under its plan's recipe at the plan's
// expert-parallel degree: ep 1 takes the current layer of 3 + 6 ms (its
// BF16 one 5 + 10 ms), ep 2 has only a BF16 layer and so the roofline's
// under fp8=current, and delayed, never measured, the roofline's too.
// On one GPU nothing is communicated: the compute is the measured
// layers' and ends' times, by hand.
func TestProfiledFP8Experts(t *testing.T) {
	const model = "llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=2,experts=4,topk=2,expert_ffn=128"
	data := `{"format":"placer-profile","version":2,"kind":"layers","complete":true,
"device":{"kind":"cuda","name":"NVIDIA H100 80GB HBM3","count":1,"memory_bytes":85000000000},
"software":{"torch":"2.14.1","backend":"nccl","framework":"pytorch","fp8":"torchao-style (experts: torch._scaled_grouped_mm)"},
"model":"` + model + `","dtype":"bf16",
"layers":[{"tp":1,"mbs":1,"seq":256,"forward_s":0.005,"backward_s":0.010},
 {"tp":1,"mbs":1,"seq":256,"fp8":"current","forward_s":0.003,"backward_s":0.006},
 {"tp":1,"ep":2,"mbs":1,"seq":256,"forward_s":0.004,"backward_s":0.008}],
"embedding":[{"tp":1,"mbs":1,"seq":256,"forward_s":0.0002,"backward_s":0.0004}],
"loss":[{"tp":1,"mbs":1,"seq":256,"forward_s":0.003,"backward_s":0.006}],
"host":{"issue_s":3e-6,"issue_backward_s":4e-6}}`
	pr, err := profile.Decode([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.Parse(model)
	if err != nil {
		t.Fatal(err)
	}
	ends := 0.0006 + 0.009
	for _, c := range []struct {
		strategy string
		gpus     int
		compute  float64 // 0: not checked (the roofline's layers)
		layers   profile.Source
	}{
		{"tp=1,pp=1,dp=1,mbs=1", 1, 2 * (4*0.015 + ends), profile.Measured},
		{"tp=1,pp=1,dp=1,mbs=1,fp8=current", 1, 2 * (4*0.009 + ends), profile.Measured},
		{"tp=1,pp=1,dp=1,mbs=1,fp8=delayed", 1, 0, profile.Modelled},
		{"tp=1,pp=1,dp=2,ep=2,mbs=1,fp8=current", 2, 0, profile.Modelled},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			pod, err := plan.PodOf("dgx-h100", c.gpus)
			if err != nil {
				t.Fatal(err)
			}
			s, err := plan.ParseStrategy(c.strategy)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(m, s, plan.WithProfile(pod, pr))
			if err != nil {
				t.Fatal(err)
			}
			if r.Sources == nil || r.Sources.Layers != c.layers {
				t.Fatalf("sources %+v: want layers %s", r.Sources, c.layers)
			}
			if c.compute > 0 && math.Abs(r.Compute-c.compute) > 1e-12 {
				t.Errorf("compute %.9g, want %.9g", r.Compute, c.compute)
			}
		})
	}
}
