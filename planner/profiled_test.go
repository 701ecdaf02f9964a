package planner

import (
	"math"
	"slices"
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// A CPU profile that measured every part at tp 1, mbs 1, seq 256
// (testdata/profile-cpu.json): layer 4 + 8 ms, embedding 0.2 + 0.4 ms,
// loss 3 + 6 ms, AdamW 15 ms over 1e6 parameters, a 131,072-byte send
// 0.5 ms. A plan of that shape is the profile's parts summed as the
// schedule runs them, nothing of the roofline.
func TestProfiledPlans(t *testing.T) {
	pr, err := profile.ReadFile("testdata/profile-cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=2")
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.Check(m, "cpu"); err != nil {
		t.Fatal(err)
	}
	adam := 0.015 / 1e6
	lp, emb, out := float64(transformer.LayerParams(m)), float64(transformer.EmbeddingParams(m)), float64(transformer.OutputParams(m))
	cases := []struct {
		strategy                  string
		compute, bubble, opt      float64
		layers, pipeline, optFrom profile.Source
	}{
		// Two micro-batches on one process: 2 x (4 x 12 + 0.6 + 9) ms.
		{"tp=1,pp=1,dp=1,mbs=1", 2 * (4*0.012 + 0.0006 + 0.009), 0, adam * (4*lp + emb + out), profile.Measured, profile.Modelled, profile.Composed},
		// Two stages of two layers: the last (24 + 9 ms) the busiest,
		// twice; the bubble the first's 24.6 ms and a send each way.
		{"tp=1,pp=2,dp=1,mbs=1", 2 * (2*0.012 + 0.009), 2*0.012 + 0.0006 + 2*0.0005, adam * (2*lp + out), profile.Measured, profile.Measured, profile.Composed},
		// Full recomputation: each backward 8 + 4 ms (composed).
		{"tp=1,pp=1,dp=1,mbs=1,recompute=full", 2 * (4*0.016 + 0.0006 + 0.009), 0, adam * (4*lp + emb + out), profile.Composed, profile.Modelled, profile.Composed},
	}
	for _, c := range cases {
		t.Run(c.strategy, func(t *testing.T) {
			s, err := plan.ParseStrategy(c.strategy)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(m, s, plan.ProfilePod(pr, s.PipelineDegree()))
			if err != nil {
				t.Fatal(err)
			}
			near := func(name string, got, want float64) {
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("%s %.9g, want %.9g", name, got, want)
				}
			}
			near("compute", r.Compute, c.compute)
			near("bubble", r.Bubble, c.bubble)
			near("optimizer", r.Optimizer, c.opt)
			near("step", r.Step, c.compute+c.bubble+c.opt)
			if r.Sources == nil || r.Sources.Layers != c.layers || r.Sources.Optimizer != c.optFrom || r.Sources.Host != profile.Measured {
				t.Fatalf("sources %+v", r.Sources)
			}
			if s.PipelineDegree() > 1 && r.Sources.Pipeline != c.pipeline {
				t.Errorf("pipeline %s, want %s", r.Sources.Pipeline, c.pipeline)
			}
		})
	}
}

// Without a profile a pod's figures are the roofline's: the same plan on
// the same pod with and without WithProfile of an empty profile of no
// figures differs in nothing.
func TestNoProfileNoChange(t *testing.T) {
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=16")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	empty := &profile.Profile{}
	for _, st := range []string{"tp=2,pp=2,dp=2,mbs=1,sp=on", "tp=1,pp=1,dp=8,mbs=2,distopt=on", "tp=2,pp=1,dp=4,mbs=1,recompute=full"} {
		s, err := plan.ParseStrategy(st)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Evaluate(m, s, plan.WithProfile(p, empty))
		if err != nil {
			t.Fatal(err)
		}
		b.Sources = nil
		if a.Step != b.Step || a.Compute != b.Compute || a.DPExposed != b.DPExposed || a.Bubble != b.Bubble || a.Optimizer != b.Optimizer {
			t.Errorf("%s: %v without a profile, %v with an empty one", st, a, b)
		}
	}
}

// TestCPUCommunicationSerial: on a CPU profile's pod gloo moves the bytes
// with the cores that compute, so the data-parallel all-reduce of the
// gradients is exposed whole (the profile's all-reduce over 4 of their
// bytes), where a GPU pod's rule would hide it behind the backward pass.
func TestCPUCommunicationSerial(t *testing.T) {
	pr, err := profile.ReadFile("testdata/profile-cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=1,pp=1,dp=4,mbs=1")
	if err != nil {
		t.Fatal(err)
	}
	pod := plan.ProfilePod(pr, 4)
	if !pod.Kernels.Serial {
		t.Fatal("a CPU profile's pod overlaps communication with compute")
	}
	r, err := Evaluate(m, s, pod)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, pod)
	if err != nil {
		t.Fatal(err)
	}
	_, dpG := pl.Groups(pod, 0)
	params := 4*float64(transformer.LayerParams(m)) + float64(transformer.EmbeddingParams(m)) + float64(transformer.OutputParams(m))
	ar, _ := pod.Collective(roofline.AllReduce, dpG, params*pl.GradBytes())
	if ar <= 0 || math.Abs(r.DPExposed-ar) > 1e-12 {
		t.Errorf("data-parallel exposed %.9g s, want the whole all-reduce's %.9g", r.DPExposed, ar)
	}
	gpu := pod
	gpu.Kernels.Serial = false
	if r2, err := Evaluate(m, s, gpu); err != nil || r2.DPExposed >= r.DPExposed {
		t.Errorf("with overlap the all-reduce is exposed %.9g s (%v), want less than the whole %.9g", r2.DPExposed, err, r.DPExposed)
	}
}

// TestCPUWeightsGatheredFP32: on an FP32 profile's pod FSDP gathers each
// micro-batch's weights as FP32 (the CPU runs keep them so), on a BF16
// profile's as BF16; the reduce-scatter is the FP32 gradients' in both.
func TestCPUWeightsGatheredFP32(t *testing.T) {
	pr, err := profile.ReadFile("testdata/profile-cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	if pr.DType != "fp32" {
		t.Fatalf("testdata/profile-cpu.json is %s, want fp32", pr.DType)
	}
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=1,pp=1,dp=4,mbs=1,fsdp=on")
	if err != nil {
		t.Fatal(err)
	}
	params := 4*float64(transformer.LayerParams(m)) + float64(transformer.EmbeddingParams(m)) + float64(transformer.OutputParams(m))
	for _, tc := range []struct {
		dtype string
		bytes float64
	}{{"fp32", 4}, {"bf16", 2}} {
		p := *pr
		p.DType = tc.dtype
		pod := plan.ProfilePod(&p, 4)
		r, err := Evaluate(m, s, pod)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, pod)
		if err != nil {
			t.Fatal(err)
		}
		_, dpG := pl.Groups(pod, 0)
		ag, _ := pod.Collective(roofline.AllGather, dpG, params*tc.bytes)
		rs, _ := pod.Collective(roofline.ReduceScatter, dpG, params*pl.GradBytes())
		// Serial: every micro-batch's two gathers and its reduce-scatter exposed whole.
		want := float64(pl.NumMicro) * (2*ag + rs)
		if math.Abs(r.DPExposed-want) > 1e-9*want {
			t.Errorf("%s profile: FSDP exposed %.9g s, want %d x (2 gathers of %g bytes a weight + the reduce-scatter) = %.9g",
				tc.dtype, r.DPExposed, pl.NumMicro, tc.bytes, want)
		}
	}
}

// TestProfiledInPlace: where the profile timed a tensor-parallel layer
// with its collectives in place, the layer costs that time and its
// tensor-parallel communication is what the in-place timing added to
// the kernels alone; the sources say measured. Without the in-place
// timing the collectives are the profile's, composed beside the kernels;
// with tpoverlap (which the plain layer does not run) the in-place
// timing is not used.
func TestProfiledInPlace(t *testing.T) {
	pr, err := profile.ReadFile("testdata/profile-cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	alone := profile.Layer{TP: 2, MBS: 1, Seq: 256, Recompute: "none", Forward: 0.002, Backward: 0.004}
	inPlace := alone
	inPlace.ForwardInPlace, inPlace.BackwardInPlace = 0.005, 0.0075
	layer := func(l profile.Layer, overlap bool) (phase, phase, *Sources) {
		p := *pr
		p.Layers = append(append([]profile.Layer(nil), pr.Layers...), l)
		pod := plan.ProfilePod(&p, 4)
		pl, err := plan.Resolve(m, plan.Strategy{Tensor: 2, Replicas: 2, MicroBatchSize: 1}, pod)
		if err != nil {
			t.Fatal(err)
		}
		c := newCoster(m, pl, &pod, 2, float64(m.Seq))
		c.Plan.TPOverlap = overlap
		f, b := c.layer()
		return f, b, sources(&c.Plan, &c, &pod, float64(transformer.LayerParams(m)))
	}
	f, b, src := layer(inPlace, false)
	if !near(f.Busy, 0.005) || !near(b.Busy, 0.0075) || !near(f.TPExposed, 0.003) || !near(b.TPExposed, 0.0035) {
		t.Errorf("in place: forward %.6g s (tp %.6g), backward %.6g s (tp %.6g); want 0.005 (0.003), 0.0075 (0.0035)",
			f.Busy, f.TPExposed, b.Busy, b.TPExposed)
	}
	if src.TP != profile.Measured || src.Layers != profile.Measured {
		t.Errorf("sources: layers %s, tensor-parallel %s; want measured, measured", src.Layers, src.TP)
	}
	f, b, src = layer(alone, false)
	if f.TPExposed <= 0 || !near(f.Busy, 0.002+f.TPExposed) || !near(b.Busy, 0.004+b.TPExposed) {
		t.Errorf("alone: forward %.6g s with %.6g s of collectives, want the kernels' 0.002 plus them", f.Busy, f.TPExposed)
	}
	if src.TP != profile.Modelled {
		t.Errorf("alone: tensor-parallel %s, want modelled (the profile timed no all-reduce over 2)", src.TP)
	}
	fo, _, _ := layer(inPlace, true)
	if near(fo.Busy, 0.005) {
		t.Errorf("tpoverlap: forward %.6g s, the in-place timing's (the plain layer runs no overlap)", fo.Busy)
	}
}

// TestProfiledExperts: a model with experts is priced from a profile of
// its layer (a CPU profile of the tiny MoE, 2 processes: measured alone
// at ep 1, 2, 4 and 8, in place at ep 2) where the plan runs its experts
// as the profile did, and by the roofline where it does not (an
// imbalance, tensor parallelism).
func TestProfiledExperts(t *testing.T) {
	pr, err := profile.ReadFile("testdata/profile-cpu-moe.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.Parse(pr.Model)
	if err != nil {
		t.Fatal(err)
	}
	pod := plan.ProfilePod(pr, 2)
	for _, c := range []struct {
		plan       string
		layers, ep profile.Source
	}{
		{"tp=1,pp=1,dp=2,mbs=1", profile.Measured, profile.Modelled},
		{"tp=1,pp=1,dp=2,ep=2,mbs=1", profile.Measured, profile.Measured},
		// The layer modelled, the all-to-alls the profile's (composed).
		{"tp=1,pp=1,dp=2,ep=2,mbs=1,imbalance=1.5", profile.Modelled, profile.Composed},
	} {
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		if r.Sources == nil || r.Sources.Layers != c.layers || r.Sources.Embedding != profile.Measured || c.ep != profile.Modelled && r.Sources.EP != c.ep {
			t.Errorf("%s: sources %+v, want layers %s, expert-parallel %s", c.plan, r.Sources, c.layers, c.ep)
		}
	}
	// At ep 2 the layer is its in-place time, the all-to-alls what that
	// added to the kernels alone.
	pl, err := plan.Resolve(m, plan.Strategy{Replicas: 2, Experts: 2, MicroBatchSize: 1}, pod)
	if err != nil {
		t.Fatal(err)
	}
	c := newCoster(m, pl, &pod, 1, float64(m.Seq))
	f, b := c.layer()
	af, ab, _ := pr.Layer(profile.Shape{TP: 1, EP: 2, MBS: 1, Seq: m.Seq})
	pf, pb, src := pr.LayerInPlace(profile.Shape{TP: 1, EP: 2, MBS: 1, Seq: m.Seq})
	if src != profile.Measured || !near(f.Busy, pf) || !near(b.Busy, pb) || !near(f.EPExposed, pf-af) || !near(b.EPExposed, pb-ab) {
		t.Errorf("ep 2: forward %.6g s (all-to-all %.6g), backward %.6g (%.6g); want the in-place %.6g (%.6g), %.6g (%.6g)",
			f.Busy, f.EPExposed, b.Busy, b.EPExposed, pf, pf-af, pb, pb-ab)
	}
}

// TestProfiledSelective: selective recomputation of the attention core
// (the default's) is the profile's where it timed it; other modules
// recomputed are the roofline's.
func TestProfiledSelective(t *testing.T) {
	pr, err := profile.ReadFile("testdata/profile-cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	p := *pr
	p.Layers = append(append([]profile.Layer(nil), pr.Layers...),
		profile.Layer{TP: 1, MBS: 1, Seq: 256, Recompute: "selective", Forward: 0.004, Backward: 0.0095})
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	pod := plan.ProfilePod(&p, 4)
	for _, c := range []struct {
		plan string
		want profile.Source
		bwd  float64
	}{
		{"tp=1,pp=1,dp=4,mbs=1,recompute=selective", profile.Measured, 0.0095},
		{"tp=1,pp=1,dp=4,mbs=1,recompute-modules=core_attn", profile.Measured, 0.0095},
		{"tp=1,pp=1,dp=4,mbs=1,recompute-modules=mlp", profile.Modelled, 0},
	} {
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		if r.Sources.Layers != c.want {
			t.Errorf("%s: layers %s, want %s", c.plan, r.Sources.Layers, c.want)
		}
		if c.bwd > 0 && !near(r.LayerBackward, c.bwd) {
			t.Errorf("%s: a layer's backward %.6g s, want the profile's %.6g", c.plan, r.LayerBackward, c.bwd)
		}
	}
}

// TestCPUStateCollectivesUncast: on an FP32 profile's pod the
// data-parallel all-reduce of the gradients is priced from the
// collectives timed uncast (wire fp32), not from the activations'
// (cast to BF16 and back); on a BF16 profile, and an FP32 one without
// them, from the activations'.
func TestCPUStateCollectivesUncast(t *testing.T) {
	pr, err := profile.ReadFile("testdata/profile-cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.Parse("llama:layers=4,hidden=256,heads=4,kv_heads=2,ffn=512,seq=256,vocab=1024,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseStrategy("tp=1,pp=1,dp=4,mbs=1")
	if err != nil {
		t.Fatal(err)
	}
	params := 4*float64(transformer.LayerParams(m)) + float64(transformer.EmbeddingParams(m)) + float64(transformer.OutputParams(m))
	uncast := profile.Collective{Op: profile.AllReduce, Group: 4, Bytes: 1 << 20, Seconds: 0.002, Wire: profile.WireFP32}
	cast, _ := pr.CollectiveTime(profile.AllReduce, 4, params*4)
	for _, tc := range []struct {
		name  string
		dtype string
		extra []profile.Collective
		want  float64
	}{
		{"fp32, uncast timed", "fp32", []profile.Collective{uncast}, 0.002 * params * 4 / (1 << 20)},
		{"fp32, none uncast", "fp32", nil, cast},
		{"bf16", "bf16", []profile.Collective{uncast}, cast},
	} {
		p := *pr
		p.DType = tc.dtype
		p.Collectives = append(slices.Clone(pr.Collectives), tc.extra...)
		r, err := Evaluate(m, s, plan.ProfilePod(&p, 4))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.DPExposed-tc.want) > 1e-9*tc.want {
			t.Errorf("%s: DDP's all-reduce exposed %.9g s, want %.9g", tc.name, r.DPExposed, tc.want)
		}
	}
}
